package memstore_test

import (
	"bytes"
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

// BenchmarkLoadReader measures the streaming path end to end: decoding,
// validating, and indexing 20,000 suppliers of a data file in memory.
func BenchmarkLoadReader(b *testing.B) {
	data := encode(b, &datafile.File{Communities: []datafile.Community{
		{ID: "bench", Name: "Bench", Region: datafile.NZ, Suppliers: benchRecords(20_000)},
	}})
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for b.Loop() {
		if _, err := memstore.LoadReader(bytes.NewReader(data)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLoadCopy is the same file through datafile.Parse and Load, the
// copying path, for comparison.
func BenchmarkLoadCopy(b *testing.B) {
	data := encode(b, &datafile.File{Communities: []datafile.Community{
		{ID: "bench", Name: "Bench", Region: datafile.NZ, Suppliers: benchRecords(20_000)},
	}})
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for b.Loop() {
		f, err := datafile.Parse(bytes.NewReader(data))
		if err != nil {
			b.Fatal(err)
		}
		if _, err := memstore.Load(f); err != nil {
			b.Fatal(err)
		}
	}
}
