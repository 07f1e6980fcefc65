package memstore_test

import (
	"testing"

	"github.com/procurekit/procure/datafile"
	"github.com/procurekit/procure/memstore"
)

// BenchmarkLoadSuppliers measures building the indexes of a community.
func BenchmarkLoadSuppliers(b *testing.B) {
	recs := benchRecords(100_000)
	b.ResetTimer()
	for b.Loop() {
		s := memstore.New()
		if err := s.AddCommunity(&datafile.Community{ID: "bench", Name: "Bench", Region: datafile.NZ, Suppliers: recs}); err != nil {
			b.Fatal(err)
		}
	}
}
