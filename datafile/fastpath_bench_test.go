package datafile

import (
	"encoding/json"
	"math/rand/v2"
	"testing"

	"github.com/procurekit/procure/supplier"
)

// benchRecords are valid records of the shape data files hold, encoded.
func benchRecords(b *testing.B) ([][]byte, []supplier.Record) {
	b.Helper()
	rng := rand.New(rand.NewPCG(7, 7))
	var raws [][]byte
	var recs []supplier.Record
	for len(raws) < 512 {
		r := randomRecord(rng, 0)
		if r.Validate() != nil {
			continue
		}
		raw, err := json.Marshal(&r)
		if err != nil {
			continue
		}
		var back supplier.Record
		if !decodeRecord(raw, &back, newMemo()) {
			continue // the comparison is on records both paths take
		}
		raws, recs = append(raws, raw), append(recs, back)
	}
	return raws, recs
}

// BenchmarkDecodeSupplier compares the hand-written decoder of
// fastdecode.go with encoding/json on the same records: the figures its
// doc comment quotes.
func BenchmarkDecodeSupplier(b *testing.B) {
	raws, _ := benchRecords(b)
	b.Run("fastdecode", func(b *testing.B) {
		m := newMemo()
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			var r supplier.Record
			if !decodeRecord(raws[i%len(raws)], &r, m) {
				b.Fatal("slow path")
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			var r supplier.Record
			raw := raws[i%len(raws)]
			if err := json.Unmarshal(raw, &r); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkCheckSupplier compares the hand-written rules of fastcheck.go
// with supplier.Record.Validate (go-playground/validator) on the same
// valid records: the figures its doc comment quotes.
func BenchmarkCheckSupplier(b *testing.B) {
	_, recs := benchRecords(b)
	b.Run("fastcheck", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if !surelyValid(&recs[i%len(recs)]) {
				b.Fatal("not surely valid")
			}
		}
	})
	b.Run("validator", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if err := recs[i%len(recs)].Validate(); err != nil {
				b.Fatal(err)
			}
		}
	})
}
