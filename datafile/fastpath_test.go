package datafile

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/procurekit/procure/supplier"
)

// randomRecord makes a supplier record from pools of good and bad values,
// so that every rule of supplier.Record.Validate is met or broken at
// random: lengths at and around their limits (in characters, multi-byte
// ones too), emails of many shapes, enums valid, unknown and empty, nil
// ids, zero dates, dates outside the years 1 to 9999 in UTC (at and just
// past either end, in other zones too) and empty required fields.
func randomRecord(rng *rand.Rand, bad int) supplier.Record {
	pick := func(xs ...string) string { return xs[rng.IntN(len(xs))] }
	broken := func() bool { return rng.IntN(100) < bad }
	text := func(limit int) string {
		if !broken() {
			s := []rune(pick("", "Kōwhai Plumbing", "ACME", "Zoë", strings.Repeat("x", limit), strings.Repeat("é", limit)))
			return string(s[:min(len(s), limit)])
		}
		return pick(strings.Repeat("x", limit+1), strings.Repeat("é", limit+1), strings.Repeat("ü", limit-1)+"ab")
	}
	req := func(limit int) string {
		if broken() && rng.IntN(2) == 0 {
			return ""
		}
		if s := text(limit); s != "" {
			return s
		}
		return "R"
	}
	email := func() string {
		if !broken() {
			return pick("", "ann@example.com", "a.b+c_d-e@mail.co.nz", "X9@Sub-Domain.Example.ORG")
		}
		return pick("a@b", "a..b@c.com", ".a@b.com", "a.@b.com", "a@-b.com", "a@b-.com", "a@b.c1", "a@b.1c", "a@1.2.3.4",
			"a@b.com.", "\"q s\"@ex.com", "ü@ex.com", "a@ex.cöm", "a b@ex.com", "a@@ex.com", "@ex.com", "a@", "a@.com",
			"a@ex..com", "a!#$%&'*/=?^`{|}~@ex.com", "a@ex.c-m", "a@ex.co-", strings.Repeat("a", 250)+"@ex.com", "Ann <ann@ex.com>")
	}
	id := func() uuid.UUID {
		if broken() && rng.IntN(4) == 0 {
			return uuid.Nil
		}
		return uuid.New()
	}
	minus1, plus1 := time.FixedZone("", -3600), time.FixedZone("", 3600)
	date := func() time.Time {
		if broken() && rng.IntN(4) == 0 {
			if rng.IntN(2) == 0 {
				return time.Time{}
			}
			return []time.Time{
				time.Date(9999, 12, 31, 23, 30, 0, 0, minus1), // year 10000 in UTC
				time.Date(1, 1, 1, 0, 30, 0, 0, plus1),        // year 0 in UTC
				time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
				time.Date(9999, 12, 31, 23, 59, 59, 999_999_999, time.UTC), // the last valid one
				time.Date(9999, 12, 31, 23, 30, 0, 0, plus1),               // valid
				time.Date(1, 1, 1, 0, 30, 0, 0, minus1),                    // valid
			}[rng.IntN(6)]
		}
		return time.Date(2020+rng.IntN(6), 1, 1, 0, 0, 0, rng.IntN(1e9), time.UTC)
	}
	enum := func(allowed []string, optional bool) string {
		if broken() {
			return pick("BOGUS", "company", "")
		}
		if optional && rng.IntN(3) == 0 {
			return ""
		}
		return allowed[rng.IntN(len(allowed))]
	}
	address := func() supplier.Address {
		a := supplier.Address{Line1: req(200), Line2: supplier.NewText(text(200)), City: req(200), Postcode: supplier.NewText(text(20)), Country: req(255)}
		if rng.IntN(2) == 0 {
			a.Region = &supplier.Region{Name: supplier.NewText(text(255)), Code: supplier.NewText(text(100))}
		}
		return a
	}
	contact := func() supplier.Contact {
		c := supplier.Contact{ID: id(), Name: req(255), Email: supplier.NewText(email()), ManagedBy: supplier.TenantType(enum(supplier.TenantType("").Allowed(), true)),
			ModifiedDate: date(), CreatedDate: date()}
		if rng.IntN(2) == 0 {
			c.Phone = &supplier.Phone{Prefix: supplier.NewText(text(5)), Number: supplier.NewText(text(20)), Extension: supplier.NewText(text(20))}
		}
		return c
	}
	remittance := func() supplier.RemittanceAddress {
		return supplier.RemittanceAddress{ID: id(), Code: supplier.NewText(text(255)), CompanyName: supplier.NewText(text(255)), Address: address(),
			ManagedBy: supplier.TenantType(enum(supplier.TenantType("").Allowed(), true)), ModifiedDate: date(), CreatedDate: date()}
	}
	var r supplier.Record
	r.ID = id()
	r.CommunitySupplierID, r.SupplierID, r.Name = supplier.NewText(text(255)), supplier.NewText(text(255)), supplier.NewText(text(255))
	r.ProfileType = supplier.ProfileType(enum(r.ProfileType.Allowed(), false))
	r.LegalBusinessName, r.FirstName, r.LastName = supplier.NewText(text(255)), supplier.NewText(text(255)), supplier.NewText(text(255))
	r.TaxIdentificationType = supplier.TaxIdentificationType(enum(r.TaxIdentificationType.Allowed(), true))
	r.TaxIdentificationNumber = supplier.NewText(text(255))
	r.TinVerificationStatus = supplier.TinVerificationStatus(enum(r.TinVerificationStatus.Allowed(), true))
	r.ConnectionState = supplier.ConnectionState(enum(r.ConnectionState.Allowed(), true))
	r.BusinessNumber, r.DefaultEmailAddress = supplier.NewText(text(255)), supplier.NewText(email())
	r.ModifiedDate, r.CreatedDate = date(), date()
	if rng.IntN(2) == 0 {
		t := date()
		r.TinLastVerifiedDate = &t
	}
	if rng.IntN(2) == 0 {
		c := contact()
		r.DefaultContact = &c
	}
	if rng.IntN(2) == 0 {
		a := remittance()
		r.DefaultRemittanceAddress = &a
	}
	if rng.IntN(2) == 0 {
		b := &supplier.BankAccount{ID: id(), Country: req(255), BankName: supplier.NewText(text(255)), AccountName: supplier.NewText(text(255)), AccountNumber: supplier.NewText(text(255)),
			RoutingNumber: supplier.NewText(text(255)), LocalAccountNumber: supplier.NewText(text(255)),
			BankAccountType: supplier.BankAccountType(enum(supplier.BankAccountType("").Allowed(), true)),
			DepositFormat:   supplier.DepositFormat(enum(supplier.DepositFormat("").Allowed(), true))}
		if rng.IntN(2) == 0 {
			a := address()
			b.Address = &a
		}
		r.BankAccount = b
	}
	if rng.IntN(2) == 0 {
		r.Emails = &supplier.Emails{DefaultEmailAddress: supplier.NewText(email()), RemittanceEmailAddress: supplier.NewText(email()), OrdersEmailAddress: supplier.NewText(email()),
			InvoicingEmailAddress: supplier.NewText(email()), RfqsEmailAddress: supplier.NewText(email()), BidRequestsEmailAddress: supplier.NewText(email()),
			IntegrationEmailAddress: supplier.NewText(email()), CustomerCommentsEmailAddress: supplier.NewText(email())}
	}
	if rng.IntN(2) == 0 {
		s := &supplier.Settings{}
		if rng.IntN(2) == 0 {
			days := rng.IntN(90) - 5
			s.PaymentTerm = &supplier.PaymentTerm{ID: id(), Code: req(35), Active: rng.IntN(2) == 0, Days: &days,
				TermType: supplier.TermType(enum(supplier.TermType("").Allowed(), false)), Description: supplier.NewText(text(2000))}
		}
		for range rng.IntN(3) {
			s.BuyerGroups = append(s.BuyerGroups, supplier.BuyerGroup{ID: id(), Name: req(255)})
			s.Tags = append(s.Tags, supplier.Tag{ID: id(), Name: req(255)})
		}
		r.Settings = s
	}
	for range rng.IntN(3) {
		r.Keywords = append(r.Keywords, text(255))
		r.Contacts = append(r.Contacts, contact())
		r.RemittanceAddresses = append(r.RemittanceAddresses, remittance())
	}
	return r
}

// surelyValid never accepts a record that supplier.Record.Validate (the
// definition of the rules) rejects, and accepts the ordinary valid ones.
func TestSurelyValidAgreesWithValidate(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 1))
	accepted, rejected := 0, 0
	for i := range 10000 {
		bad := []int{0, 2, 10}[i%3]
		r := randomRecord(rng, bad)
		fast := surelyValid(&r)
		err := r.Validate()
		if fast && err != nil {
			t.Fatalf("record %d: surelyValid accepts what Validate rejects: %v\n%+v", i, err, r)
		}
		if bad == 0 && !fast {
			t.Fatalf("record %d: a valid record of the common shape takes the slow path (Validate: %v)", i, err)
		}
		if fast {
			accepted++
		}
		if err != nil {
			rejected++
		}
	}
	if accepted < 2500 || rejected < 2500 {
		t.Errorf("the random set is lopsided: %d accepted by surelyValid, %d rejected by Validate", accepted, rejected)
	}
}

// decodeRecord gives exactly what json.Unmarshal gives whenever it answers
// true, and answers false whenever json.Unmarshal fails; the records that
// data files hold take the fast path.
func TestDecodeRecordAgreesWithUnmarshal(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 2))
	// mutations turn a record's JSON into something encoding/json may
	// read differently, or refuse.
	mutations := []func(s string) string{
		func(s string) string { return s },
		func(s string) string { return strings.Replace(s, `"name":"`, `"name":"\u00e9\"`, 1) },
		// Escapes, decoded as encoding/json decodes them: the simple ones,
		// a surrogate pair, a rune past U+FFFF in the raw, and the ones
		// the fast path leaves to encoding/json (a lone or reversed
		// surrogate, a short or bad \u, an unknown escape, one in a key).
		func(s string) string {
			return strings.Replace(s, `"name":"`, `"name":"\"\\\/\b\f\n\r\t\u0026\u003c\u003E\u00E9\u2028\u0000x`, 1)
		},
		func(s string) string { return strings.Replace(s, `"city":"`, `"city":"\ud83c\udf3f 🌿 `, 1) },
		func(s string) string { return strings.Replace(s, `"bankName":"`, `"bankName":"a\u0026`, 1) },
		func(s string) string { return strings.Replace(s, `"keywords":["`, `"keywords":["\u00e9`, 1) },
		func(s string) string { return strings.Replace(s, `"name":"`, `"name":"\ud83c x`, 1) },
		func(s string) string { return strings.Replace(s, `"name":"`, `"name":"\ud83c\u0041`, 1) },
		func(s string) string { return strings.Replace(s, `"name":"`, `"name":"\udf3f\ud83c`, 1) },
		func(s string) string { return strings.Replace(s, `"name":"`, `"name":"\u12"`, 1) },
		func(s string) string { return strings.Replace(s, `"name":"`, `"name":"\u12g4`, 1) },
		func(s string) string { return strings.Replace(s, `"name":"`, `"name":"\x`, 1) },
		func(s string) string { return strings.Replace(s, `"name":"`, `"name":"\u00e9\`+"\x01", 1) },
		func(s string) string { return strings.Replace(s, `"name":"`, `"name":"\u00e9`+"\xff", 1) },
		func(s string) string { return strings.Replace(s, `"name":`, `"na\u006De":`, 1) },
		func(s string) string { return strings.Replace(s, `"id":"`, `"id":"\u0030`, 1) },
		func(s string) string { return strings.Replace(s, `"profileType":"`, `"profileType":"\u0043`, 1) },
		func(s string) string { return strings.Replace(s, `"modifiedDate":"2`, `"modifiedDate":"\u0032`, 1) },
		func(s string) string { return strings.Replace(s, `"name":`, `"Name":`, 1) },
		func(s string) string { return strings.Replace(s, `{"id"`, `{"unknown":[1,{"a":null}],"id"`, 1) },
		func(s string) string {
			return strings.Replace(s, `"supplierId":"`, `"supplierId":null,"supplierId":"`, 1)
		},
		func(s string) string { return strings.Replace(s, `"contacts":[`, `"contacts":null,"contacts":[`, 1) },
		func(s string) string { return strings.Replace(s, `"phone":{`, `"phone":{"prefix":"1"},"phone":{`, 1) },
		func(s string) string {
			return strings.Replace(s, `"address":{`, `"address":{"line3":"x"},"address":{`, 1)
		},
		func(s string) string { return strings.Replace(s, `"address":{`, `"address":null,"x":{`, 1) },
		func(s string) string { return strings.ReplaceAll(s, `,"`, ` ,	"`) },
		func(s string) string { return strings.Replace(s, `"profileType":"`, `"profileType":null,"x":"`, 1) },
		func(s string) string { return strings.Replace(s, `"profileType":"`, `"profileType":7,"x":"`, 1) },
		func(s string) string { return strings.Replace(s, `"id":"`, `"id":null,"x":"`, 1) },
		func(s string) string { return strings.Replace(s, `"modifiedDate":"`, `"modifiedDate":null,"x":"`, 1) },
		func(s string) string { return strings.Replace(s, `"modifiedDate":"20`, `"modifiedDate":"19`, 1) },
		func(s string) string { return strings.Replace(s, `"modifiedDate":"2`, `"modifiedDate":"x`, 1) },
		func(s string) string { return strings.Replace(s, `"active":`, `"active":null,"x":`, 1) },
		func(s string) string { return strings.Replace(s, `"active":true`, `"active":"true"`, 1) },
		func(s string) string {
			return strings.Replace(s, `"tinLastVerifiedDate":"`, `"tinLastVerifiedDate":null,"x":"`, 1)
		},
		func(s string) string { return strings.Replace(s, `"keywords":[`, `"keywords":[null,`, 1) },
		func(s string) string { return strings.Replace(s, `"keywords":[`, `"keywords":[],"x":[`, 1) },
		func(s string) string { return strings.Replace(s, `"tags":[`, `"tags":[null,`, 1) },
		func(s string) string { return strings.Replace(s, `"days":`, `"days":1e2,"x":`, 1) },
		func(s string) string { return strings.Replace(s, `"days":`, `"days":30.0,"x":`, 1) },
		func(s string) string { return strings.Replace(s, `"days":`, `"days":-0,"x":`, 1) },
		func(s string) string { return strings.Replace(s, `"days":`, `"days":01,"x":`, 1) },
		func(s string) string { return strings.Replace(s, `"days":`, `"days":99999999999999999999,"x":`, 1) },
		func(s string) string { return strings.Replace(s, `"days":`, `"days":null,"x":`, 1) },
		func(s string) string { return strings.Replace(s, `"city":"`, "\"city\":\"\x01", 1) },
		func(s string) string { return strings.Replace(s, `"city":"`, "\"city\":\"\xff", 1) },
		func(s string) string { return strings.Replace(s, `}`, `},`, 1) },
		func(s string) string { return s[:len(s)-1] },
		func(s string) string { return s + " x" },
		func(s string) string { return strings.Replace(s, `"bankAccount":{`, `"bankAccount":[`, 1) },
		func(s string) string {
			return strings.Replace(s, `"emails":{`, `"emails":{"ordersEmailAddress":"a@b.com"},"emails":{`, 1)
		},
	}
	fast := 0
	for i := range 10000 {
		r := randomRecord(rng, 5)
		b, err := json.Marshal(&r)
		if err != nil {
			continue // an enum outside its set does not encode
		}
		m := i % len(mutations)
		raw := []byte(mutations[m](string(b)))
		var want supplier.Record
		werr := json.Unmarshal(raw, &want)
		var got supplier.Record
		ok := decodeRecord(raw, &got, newMemo())
		if ok && werr != nil {
			t.Fatalf("record %d, mutation %d: decodeRecord accepts what json.Unmarshal refuses (%v):\n%s", i, m, werr, raw)
		}
		if ok {
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("record %d, mutation %d: decodeRecord differs from json.Unmarshal (-want +got):\n%s\n%s", i, m, diff, raw)
			}
			fast++
		}
		// Every record json.Marshal writes (and encoding/json reads)
		// takes the fast path, escapes and all.
		if m == 0 && !ok && werr == nil {
			t.Fatalf("record %d: an ordinary record takes the slow path:\n%s", i, raw)
		}
		// decodeSupplier is the pair: always json.Unmarshal's answer.
		var both supplier.Record
		berr := decodeSupplier(raw, &both, newMemo())
		if (berr == nil) != (werr == nil) || berr == nil && !cmp.Equal(want, both) {
			t.Fatalf("record %d, mutation %d: decodeSupplier = %v, json.Unmarshal = %v", i, m, berr, werr)
		}
	}
	if fast < 1500 {
		t.Errorf("only %d records took the fast path", fast)
	}
}

// A rule, or a type, the fast check's plan cannot check is named, so
// that surelyValid answers false rather than let a value through
// unchecked.
func TestFastCheckPlanUnknown(t *testing.T) {
	for _, tc := range []struct {
		name string
		typ  reflect.Type
	}{
		{"an unknown rule", reflect.TypeFor[struct {
			A string `validate:"url"`
		}]()},
		{"a rule on a kind without rules", reflect.TypeFor[struct {
			N int `validate:"max=5"`
		}]()},
		{"a rule on the elements of a slice of structs", reflect.TypeFor[struct {
			S []supplier.Tag `validate:"dive,required"`
		}]()},
		{"a struct it does not know inside", reflect.TypeFor[struct {
			T []time.Time
		}]()},
		{"an unknown rule deeper down", reflect.TypeFor[struct {
			P *struct {
				A string `validate:"uuid"`
			}
		}]()},
	} {
		if p := compile(tc.typ); p.unknown == "" {
			t.Errorf("%s: the plan of %s knows every rule", tc.name, tc.typ)
		}
	}
	if p := compile(reflect.TypeFor[supplier.Record]()); p.unknown != "" {
		t.Errorf("supplier.Record: the plan cannot check %s", p.unknown)
	}
}
