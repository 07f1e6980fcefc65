package supplierindex

import (
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/procurekit/procure/paging"
	"github.com/procurekit/procure/supplier"
)

// Records packed on several goroutines (Pack), in chunks of any size, and
// added in order (AddPacked) build the index Add builds from the
// same records normalized, and Pack leaves each record zeroed.
func TestPackAddPacked(t *testing.T) {
	recs := layoutRecords(t) // full records and synthetic ones, 1,000
	east := time.FixedZone("UTC+10", 10*3600)
	want := make([]supplier.Record, len(recs))
	for i := range recs {
		// Not in normal form: another zone, nanoseconds.
		recs[i].ModifiedDate = recs[i].ModifiedDate.In(east).Add(123)
		want[i] = recs[i].Clone()
		want[i].Normalize()
	}
	ref, err := New(want)
	if err != nil {
		t.Fatal(err)
	}
	for _, size := range []int{1, 7, 64, 1000} {
		var b Builder
		for lo := 0; lo < len(recs); lo += size {
			chunk := make([]supplier.Record, 0, size)
			for i := lo; i < min(len(recs), lo+size); i++ {
				chunk = append(chunk, recs[i].Clone()) // not normalized: Pack does it
			}
			packed := make([]Packed, len(chunk))
			var wg sync.WaitGroup
			for i := range chunk {
				wg.Go(func() { packed[i] = Pack(&chunk[i]) })
			}
			wg.Wait()
			for i := range chunk {
				if chunk[i].ID != [16]byte{} || chunk[i].Contacts != nil {
					t.Fatalf("chunks of %d: a record was not zeroed once packed", size)
				}
			}
			for _, p := range packed {
				b.AddPacked(p)
			}
		}
		if b.Len() != len(recs) {
			t.Fatalf("chunks of %d: %d records added, want %d", size, b.Len(), len(recs))
		}
		ix, err := b.Build()
		if err != nil {
			t.Fatal(err)
		}
		for i := range want {
			got, _ := ix.Record(want[i].ID)
			exp, _ := ref.Record(want[i].ID)
			if diff := cmp.Diff(exp, got); diff != "" {
				t.Fatalf("chunks of %d: record %d differs (-New +AddPacked):\n%s", size, i, diff)
			}
		}
		for _, sort := range []paging.Sort{{Field: "name"}, {Field: "modifiedDate", Desc: true}} {
			q := supplier.ListQuery{Page: paging.Request{Size: 100, Page: 3, Sort: sort}}
			a, err1 := ref.List(q, nil)
			b, err2 := ix.List(q, nil)
			if err1 != nil || err2 != nil {
				t.Fatal(err1, err2)
			}
			if diff := cmp.Diff(a, b); diff != "" {
				t.Fatalf("chunks of %d, %v: the page differs (-New +AddPacked):\n%s", size, sort, diff)
			}
		}
	}
}
