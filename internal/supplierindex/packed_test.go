package supplierindex

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/procurekit/procure/supplier"
	"github.com/procurekit/procure/supplier/suppliertest"
)

// packCases are records whose parts take every branch of the format:
// each part present and absent, a default contact and address of their
// own or equal to one of the list's, texts with no value, the empty value
// and a value, nil and empty slices, and lists of zero, one and several.
func packCases(t testing.TB) map[string]supplier.Record {
	rng := rand.New(rand.NewPCG(11, 13))
	full := func() supplier.Record {
		r := suppliertest.FullRecord(rng)
		r.Normalize()
		return r
	}
	cases := map[string]supplier.Record{}
	cases["every field"] = full()

	r := full()
	c, a := r.Contacts[1], r.RemittanceAddresses[0]
	r.DefaultContact, r.DefaultRemittanceAddress = &c, &a
	cases["defaults equal to the lists'"] = r

	r = full()
	r.DefaultContact, r.DefaultRemittanceAddress, r.BankAccount, r.Emails, r.Settings = nil, nil, nil, nil, nil
	r.Contacts, r.RemittanceAddresses = nil, nil
	cases["no parts"] = r

	r = full()
	r.DefaultContact.Phone = nil
	r.DefaultContact.Email = supplier.Text{}
	r.DefaultRemittanceAddress.Address.Region = nil
	r.DefaultRemittanceAddress.Code = supplier.NewText("")
	r.BankAccount.Address = nil
	r.BankAccount.BankName = supplier.NewText("")
	r.Emails = &supplier.Emails{OrdersEmailAddress: supplier.NewText("")}
	r.Settings.PaymentTerm.Days = nil
	r.Settings.BuyerGroups = []supplier.BuyerGroup{}
	r.Settings.Tags = nil
	r.Contacts[0].ManagedBy = ""
	cases["absent, empty and nil values"] = r

	r = full()
	r.Settings.PaymentTerm = nil
	zero := 0
	r.Settings = &supplier.Settings{PaymentTerm: &supplier.PaymentTerm{ID: r.ID, Code: "N", Days: &zero, TermType: supplier.DaysAfterInvoiceDate}}
	r.ModifiedDate = time.Unix(-1, 999_999_000).UTC() // before 1970: a negative varint
	cases["zero days, a date before 1970"] = r

	r = full()
	for i := range 7 {
		x := r.RemittanceAddresses[i%2]
		x.ID[15] = byte(i)
		x.CompanyName = supplier.NewText(string(rune('a' + (i*3)%7)))
		x.ModifiedDate = time.Unix(int64(1_700_000_000+(i*5)%7), 0).UTC()
		r.RemittanceAddresses = append(r.RemittanceAddresses, x)
		y := r.Contacts[i%2]
		y.ID[15] = byte(i)
		r.Contacts = append(r.Contacts, y)
	}
	cases["nine contacts and addresses"] = r
	return cases
}

// Every value packed reads back as it was, part by part and list item by
// list item, whatever the branch; equal values pack to equal strings
// (sameRecord's premise) and a changed value to another.
func TestPackedRoundTrip(t *testing.T) {
	for name, r := range packCases(t) {
		t.Run(name, func(t *testing.T) {
			rec := newSupplierRec(&r, nil)
			var got supplier.Detail
			detailOf(&got, &rec.summary, rec.parts)
			if diff := cmp.Diff(r.Detail, got); diff != "" {
				t.Errorf("detail (-packed +read):\n%s", diff)
			}
			// The lists come back in their stored orders: what
			// Record returns of the same supplier through an index.
			ix, err := New([]supplier.Record{r.Clone()})
			if err != nil {
				t.Fatal(err)
			}
			stored, _ := ix.Record(r.ID)
			if n := numContacts(rec.parts); n != len(r.Contacts) || len(stored.Contacts) != n {
				t.Fatalf("%d contacts packed, %d read, want %d", n, len(stored.Contacts), len(r.Contacts))
			}
			for i := range stored.Contacts {
				var c supplier.Contact
				var ph supplier.Phone
				contactAt(rec.parts, i, &c, &ph)
				if !c.Equal(&stored.Contacts[i]) || !hasEqual(r.Contacts, &c) {
					t.Errorf("contact %d: %+v is not the stored one nor one of the given", i, c)
				}
			}
			if n := numAddrs(rec.parts); n != len(r.RemittanceAddresses) || len(stored.RemittanceAddresses) != n {
				t.Fatalf("%d addresses packed, %d read, want %d", n, len(stored.RemittanceAddresses), len(r.RemittanceAddresses))
			}
			for i := range stored.RemittanceAddresses {
				a := stored.RemittanceAddresses[i]
				if !hasEqualAddr(r.RemittanceAddresses, &a) {
					t.Errorf("address %d: %+v is none of the given", i, a)
				}
			}

			again := newSupplierRec(new(r.Clone()), nil)
			if again.parts != rec.parts {
				t.Error("a copy of the record packs to other bytes")
			}
			changed := r.Clone()
			if changed.Settings != nil && changed.Settings.PaymentTerm != nil {
				changed.Settings.PaymentTerm.Active = !changed.Settings.PaymentTerm.Active
			} else {
				changed.Emails = &supplier.Emails{}
			}
			if newSupplierRec(&changed, nil).parts == rec.parts {
				t.Error("a changed record packs to the same bytes")
			}
		})
	}
}

func hasEqual(cs []supplier.Contact, c *supplier.Contact) bool {
	for i := range cs {
		if cs[i].Equal(c) {
			return true
		}
	}
	return false
}

func hasEqualAddr(as []supplier.RemittanceAddress, a *supplier.RemittanceAddress) bool {
	for i := range as {
		if as[i].Equal(a) {
			return true
		}
	}
	return false
}

// The addresses' orders packed are the orders the address list serves:
// every order a permutation of the companyName order, sorted by its key.
func TestPackedAddressOrders(t *testing.T) {
	r := packCases(t)["nine contacts and addresses"]
	rec := newSupplierRec(&r, nil)
	k := numAddrs(rec.parts)
	for _, o := range []int{addrByName, addrByNameDesc, addrByDateAsc, addrByDateDesc} {
		seen := make([]bool, k)
		var prev supplier.RemittanceAddress
		for i := range k {
			j := addrOrderAt(rec.parts, o, i)
			if seen[j] {
				t.Fatalf("order %d: address %d twice", o, j)
			}
			seen[j] = true
			var a supplier.RemittanceAddress
			var rg supplier.Region
			addrAt(rec.parts, j, &a, &rg)
			if got := addrModified(rec.parts, j); got != a.ModifiedDate.UnixMicro() {
				t.Fatalf("addrModified(%d) = %d, want %d", j, got, a.ModifiedDate.UnixMicro())
			}
			if i > 0 {
				var bad bool
				switch o {
				case addrByName:
					bad = prev.CompanyName.String() > a.CompanyName.String()
				case addrByNameDesc:
					bad = prev.CompanyName.String() < a.CompanyName.String()
				case addrByDateAsc:
					bad = prev.ModifiedDate.After(a.ModifiedDate)
				case addrByDateDesc:
					bad = prev.ModifiedDate.Before(a.ModifiedDate)
				}
				if bad {
					t.Fatalf("order %d: %d-th address out of order", o, i)
				}
			}
			prev = a
		}
	}
}

// partsMaxModified sees the dates of the contacts, the addresses and the
// default ones of their own.
func TestPartsMaxModified(t *testing.T) {
	for name, r := range packCases(t) {
		want := int64(math.MinInt64)
		for i := range r.Contacts {
			want = max(want, r.Contacts[i].ModifiedDate.UnixMicro())
		}
		for i := range r.RemittanceAddresses {
			want = max(want, r.RemittanceAddresses[i].ModifiedDate.UnixMicro())
		}
		if c := r.DefaultContact; c != nil {
			want = max(want, c.ModifiedDate.UnixMicro())
		}
		if a := r.DefaultRemittanceAddress; a != nil {
			want = max(want, a.ModifiedDate.UnixMicro())
		}
		rec := newSupplierRec(&r, nil)
		if got := partsMaxModified(rec.parts); got != want {
			t.Errorf("%s: partsMaxModified = %d, want %d", name, got, want)
		}
		late := r.Clone()
		if late.DefaultRemittanceAddress != nil {
			late.DefaultRemittanceAddress.ModifiedDate = time.UnixMicro(want + 1).UTC()
			rec := newSupplierRec(&late, nil)
			if got := partsMaxModified(rec.parts); got != want+1 {
				t.Errorf("%s: a later default address of its own: %d, want %d", name, got, want+1)
			}
		}
	}
}

var sink *supplier.Emails

// BenchmarkUnpack is the cost of reading a supplier in full from its
// packed parts (Supplier's), against decoding the same from JSON with
// encoding/json (the library a hand-written format must beat, as it must
// run on every read): packed/detail is a read, json/detail the
// alternative.
func BenchmarkUnpack(b *testing.B) {
	r := packCases(b)["every field"]
	rec := newSupplierRec(&r, nil)
	js, err := json.Marshal(&r.Detail)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("packed/detail", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var d supplier.Detail
			detailOf(&d, &rec.summary, rec.parts)
			sink = d.Emails
		}
	})
	b.Run("packed/contacts", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			contactsOf(rec.parts, 0, numContacts(rec.parts))
		}
	})
	b.Run("json/detail", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var d supplier.Detail
			if err := json.Unmarshal(js, &d); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.ReportMetric(float64(len(rec.parts)), "packed-bytes")
}
