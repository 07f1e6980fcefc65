package supplierindex_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/procurekit/procure/internal/supplierindex"
	"github.com/procurekit/procure/supplier"
	"github.com/procurekit/procure/supplier/suppliertest"
)

// BenchmarkNew measures building the index of 100,000 suppliers
// (suppliertest.Synthetic) from their records: the orders, the text
// index, the wavelet matrices and the names' sort keys and the terms'
// match keys they need.
func BenchmarkNew(b *testing.B) {
	recs := suppliertest.Synthetic(100_000)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := supplierindex.New(slices.Clone(recs)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkApply measures one change to an index of 100,000 suppliers: a
// supplier replaced by a version with a new name and keywords (placed in
// every order, its terms indexed). The changes accumulate in the overlay,
// and start compactions, as in service.
func BenchmarkApply(b *testing.B) {
	recs := suppliertest.Synthetic(100_000)
	x, err := supplierindex.New(slices.Clone(recs))
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	words := []string{"Harbour", "Ōtaki", "Kiwi", "Zürich", "Totara", "Café", "Matai", "Pōneke"}
	stamp := suppliertest.SyntheticSince.Add(400 * 24 * time.Hour)
	put := make([]supplier.Record, 1)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		r := recs[rng.IntN(len(recs))]
		r.Name = supplier.NewText(fmt.Sprintf("%s Rewritten %d", words[i%len(words)], i))
		r.Keywords = []string{"written", words[(i+3)%len(words)]}
		stamp = stamp.Add(time.Microsecond)
		r.ModifiedDate = stamp
		put[0] = r
		x.Apply(put, nil)
		i++
	}
}
