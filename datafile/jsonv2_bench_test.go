//go:build goexperiment.jsonv2

package datafile

import (
	jsonv2 "encoding/json/v2"
	"testing"

	"github.com/procurekit/procure/supplier"
)

// BenchmarkDecodeSupplierJSONv2 is the evaluation of encoding/json/v2 (the
// package github.com/go-json-experiment/json became; Go 1.26 builds it with
// GOEXPERIMENT=jsonv2, and this file with it) as the decoder of data-file
// suppliers, beside BenchmarkDecodeSupplier's two:
//
//	GOEXPERIMENT=jsonv2 go test ./datafile -run '^$' -bench 'DecodeSupplier'
func BenchmarkDecodeSupplierJSONv2(b *testing.B) {
	raws, recs := benchRecords(b)
	var r supplier.Record
	if err := jsonv2.Unmarshal(raws[0], &r); err != nil {
		b.Fatal(err)
	}
	if r.ID != recs[0].ID {
		b.Fatalf("decoded id %v; want %v", r.ID, recs[0].ID)
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		var r supplier.Record
		raw := raws[i%len(raws)]
		if err := jsonv2.Unmarshal(raw, &r); err != nil {
			b.Fatal(err)
		}
	}
}
