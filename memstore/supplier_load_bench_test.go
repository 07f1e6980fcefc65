package memstore_test

import (
	"bytes"
	"testing"

	"github.com/procurekit/procure/datafile"
	"github.com/procurekit/procure/memstore"
)

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
