package supplierindex

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/procurekit/procure/supplier"
	"github.com/procurekit/procure/supplier/suppliertest"
)

// layoutRecords are records with every field set (suppliertest.FullRecord:
// default contact and address of their own or one of the supplier's, bank
// account, e-mails, settings, a TIN date) and synthetic ones, with names
// in no particular order.
func layoutRecords(t *testing.T) []supplier.Record {
	t.Helper()
	rng := rand.New(rand.NewPCG(3, 5))
	var recs []supplier.Record
	for i := range 300 {
		r := suppliertest.FullRecord(rng)
		r.Name = supplier.NewText(fmt.Sprintf("Name %04d", rng.IntN(10000)))
		if i%3 == 0 && len(r.Contacts) > 0 {
			c := r.Contacts[0]
			r.DefaultContact = &c // equal to one of its own: packed as its index
		}
		if i%4 == 0 && len(r.RemittanceAddresses) > 0 {
			a := r.RemittanceAddresses[1]
			a.CompanyName = r.Name // a company name that repeats the name
			r.RemittanceAddresses[1] = a
			r.DefaultRemittanceAddress = &a
		}
		if i%5 == 0 {
			r.Emails.OrdersEmailAddress = r.DefaultEmailAddress
		}
		if i%7 == 0 {
			r.Name = supplier.NewText("") // the empty name sorts last
		}
		recs = append(recs, r)
	}
	return append(recs, suppliertest.Synthetic(700)...)
}

// Moving the records into name order and packing their texts changes no
// record: each reads back as it was given.
func TestLayOutKeepsRecords(t *testing.T) {
	recs := layoutRecords(t)
	want := make([]supplier.Record, len(recs))
	for i := range recs {
		recs[i].Normalize()
		want[i] = recs[i].Clone()
	}
	ix, err := New(recs)
	if err != nil {
		t.Fatal(err)
	}
	byID := func(a, b supplier.Contact) bool { return bytes.Compare(a.ID[:], b.ID[:]) < 0 }
	addrByID := func(a, b supplier.RemittanceAddress) bool { return bytes.Compare(a.ID[:], b.ID[:]) < 0 }
	for i := range want {
		got, ok := ix.Record(want[i].ID)
		if !ok {
			t.Fatalf("record %d (%s) is missing", i, want[i].ID)
		}
		if diff := cmp.Diff(want[i], got, cmpopts.SortSlices(byID), cmpopts.SortSlices(addrByID), cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("record %d differs after the layout (-given +stored):\n%s", i, diff)
		}
	}
}

// After a build, the records follow one another in memory in name order,
// and the texts of the summaries of a batch of records lie in one run of
// memory, record after record.
func TestLayOutOrder(t *testing.T) {
	recs := layoutRecords(t)
	for i := range recs {
		recs[i].Normalize()
	}
	ix, err := New(recs)
	if err != nil {
		t.Fatal(err)
	}
	set := ix.ov.base
	order := set.orders[byNameAsc]
	size := unsafe.Sizeof(supplierRec{})
	for r := 1; r < len(order); r++ {
		prev, cur := set.rec(int(order[r-1])), set.rec(int(order[r]))
		if r%(1<<recChunkBits) != 0 && uintptr(unsafe.Pointer(cur))-uintptr(unsafe.Pointer(prev)) != size {
			t.Fatalf("the records of ranks %d and %d are not neighbours in memory", r-1, r)
		}
	}
	for lo := 0; lo < len(order); lo += layoutBatch {
		var start, end uintptr
		total := uintptr(0)
		for r := lo; r < min(len(order), lo+layoutBatch); r++ {
			forSummaryTexts(&set.rec(int(order[r])).summary, func(text *supplier.Text) {
				s := text.String()
				p := uintptr(unsafe.Pointer(unsafe.StringData(s)))
				if start == 0 {
					start, end = p, p
				}
				if p != end && !t.Failed() {
					t.Errorf("rank %d: a summary text at %#x, want the run's end %#x", r, p, end)
				}
				end += uintptr(len(s))
				total += uintptr(len(s))
			})
		}
		if end-start != total {
			t.Fatalf("batch at rank %d: texts over %d bytes, want %d", lo, end-start, total)
		}
	}
}
