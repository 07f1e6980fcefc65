package supplierindex

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/procurekit/procure/paging"
	"github.com/procurekit/procure/supplier"
)

// AddChunks builds the index Add builds from the same records in the same
// order, whatever the chunks' sizes, normalizing each record first, and
// leaves each chunk's records zeroed.
func TestAddChunks(t *testing.T) {
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
		var chunks [][]supplier.Record
		for lo := 0; lo < len(recs); lo += size {
			var chunk []supplier.Record
			for i := lo; i < min(len(recs), lo+size); i++ {
				chunk = append(chunk, recs[i].Clone()) // not normalized: AddChunks does it
			}
			chunks = append(chunks, chunk)
		}
		var b Builder
		b.AddChunks(chunks)
		if b.Len() != len(recs) {
			t.Fatalf("chunks of %d: %d records added, want %d", size, b.Len(), len(recs))
		}
		for _, chunk := range chunks {
			for i := range chunk {
				if chunk[i].ID != [16]byte{} || chunk[i].Contacts != nil {
					t.Fatalf("chunks of %d: a record was not zeroed once packed", size)
				}
			}
		}
		ix, err := b.Build()
		if err != nil {
			t.Fatal(err)
		}
		for i := range want {
			got, _ := ix.Record(want[i].ID)
			exp, _ := ref.Record(want[i].ID)
			if diff := cmp.Diff(exp, got); diff != "" {
				t.Fatalf("chunks of %d: record %d differs (-New +AddChunks):\n%s", size, i, diff)
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
				t.Fatalf("chunks of %d, %v: the page differs (-New +AddChunks):\n%s", size, sort, diff)
			}
		}
	}
}
