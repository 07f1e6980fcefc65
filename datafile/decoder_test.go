package datafile

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/procurekit/procure/supplier"
)

// Decoder gives json.Unmarshal's result and error for contacts, remittance
// addresses and the nested objects of a supplier (the documents pgstore
// keeps), whichever path takes them; the ordinary ones take the fast path.
func TestDecoderAgreesWithUnmarshal(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, 1))
	mutations := []func(s string) string{
		func(s string) string { return s },
		func(s string) string { return strings.Replace(s, `"name":"`, `"name":"\u0026\"\u00e9`, 1) },
		func(s string) string { return strings.Replace(s, `"id":"`, `"x":1,"id":"`, 1) },
		func(s string) string { return strings.Replace(s, `"modifiedDate":"2`, `"modifiedDate":"x`, 1) },
		func(s string) string { return strings.Replace(s, `{`, `{"city":7,`, 1) },
		func(s string) string { return strings.Replace(s, `"`, `"\ud83c`, 3) },
		func(s string) string { return s + "x" },
		func(s string) string { return "null" },
	}
	dec := NewDecoder() // one for all: what it keeps from value to value must not leak into the next
	fast := map[string]int{}
	check := func(kind string, i, m int, raw []byte, want, got any, werr, gerr error) {
		t.Helper()
		if (werr == nil) != (gerr == nil) {
			t.Fatalf("%s %d, mutation %d: Decoder error %v, json.Unmarshal %v:\n%s", kind, i, m, gerr, werr, raw)
		}
		if werr == nil {
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("%s %d, mutation %d: Decoder differs from json.Unmarshal (-want +got):\n%s\n%s", kind, i, m, diff, raw)
			}
		}
	}
	for i := range 3000 {
		r := randomRecord(rng, 2)
		m := i % len(mutations)
		for _, c := range r.Contacts {
			b, err := json.Marshal(c)
			if err != nil {
				continue
			}
			raw := []byte(mutations[m](string(b)))
			var want, got supplier.Contact
			werr := json.Unmarshal(raw, &want)
			got.Name = "left over" // Decoder overwrites
			check("contact", i, m, raw, want, got, werr, dec.Contact(raw, &got))
			if m == 0 && werr == nil {
				d := fastDecoder{b: raw, m: newMemo()}
				var c supplier.Contact
				if d.contact(&c) {
					fast["contact"]++
				}
			}
		}
		for _, a := range r.RemittanceAddresses {
			b, err := json.Marshal(a)
			if err != nil {
				continue
			}
			raw := []byte(mutations[m](string(b)))
			var want, got supplier.RemittanceAddress
			werr := json.Unmarshal(raw, &want)
			got.Code = supplier.NewText("left over")
			check("address", i, m, raw, want, got, werr, dec.RemittanceAddress(raw, &got))
			if m == 0 && werr == nil {
				d := fastDecoder{b: raw, m: newMemo()}
				var a supplier.RemittanceAddress
				if d.remittance(&a) {
					fast["address"]++
				}
			}
		}
		// pgstore's details document: the nested objects alone.
		b, err := json.Marshal(struct {
			DefaultContact           *supplier.Contact           `json:"defaultContact,omitempty"`
			DefaultRemittanceAddress *supplier.RemittanceAddress `json:"defaultRemittanceAddress,omitempty"`
			BankAccount              *supplier.BankAccount       `json:"bankAccount,omitempty"`
			Emails                   *supplier.Emails            `json:"emails,omitempty"`
			Settings                 *supplier.Settings          `json:"settings,omitempty"`
		}{r.DefaultContact, r.DefaultRemittanceAddress, r.BankAccount, r.Emails, r.Settings})
		if err != nil {
			continue
		}
		raw := []byte(mutations[m](string(b)))
		var want, got supplier.Record
		werr := json.Unmarshal(raw, &want)
		got.Name = supplier.NewText("left over")
		check("details", i, m, raw, want, got, werr, dec.Record(raw, &got))
		if m == 0 && werr == nil && decodeRecord(raw, &supplier.Record{}, newMemo()) {
			fast["details"]++
		}
	}
	for _, kind := range []string{"contact", "address", "details"} {
		if fast[kind] < 200 {
			t.Errorf("only %d ordinary %ss took the fast path", fast[kind], kind)
		}
	}
}
