//go:build goexperiment.jsonv2

package supplierjson

import (
	"bytes"
	"encoding/json/jsontext"
	jsonv2 "encoding/json/v2"
	"fmt"
	"testing"
)

// BenchmarkEncodeSummaryPageJSONv2 is the evaluation of encoding/json/v2
// (the package github.com/go-json-experiment/json became; in Go 1.26 it
// is built with GOEXPERIMENT=jsonv2, so this file is too) as the one JSON
// engine for the supplier pages, against the hand-written encoder:
//
//	GOEXPERIMENT=jsonv2 go test ./httpapi/internal/supplierjson -run '^$' -bench 'EncodeSummaryPage'
//
// Its figures decide whether the hand-written encoder stays (doc comment
// of supplierjson.go).
func BenchmarkEncodeSummaryPageJSONv2(b *testing.B) {
	for _, n := range []int{20, 100} {
		p := benchSummaries(n)
		want, err := appendSummaryPage(nil, p)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("json-v2/%d", n), func(b *testing.B) {
			var buf bytes.Buffer
			// The options that give encoding/json's bytes (HTML
			// characters escaped, invalid UTF-8 replaced), so the
			// output is the same as the hand-written encoder's.
			opts := jsonv2.JoinOptions(jsontext.EscapeForHTML(true), jsontext.AllowInvalidUTF8(true))
			if err := jsonv2.MarshalWrite(&buf, p, opts); err != nil {
				b.Fatal(err)
			}
			if !bytes.Equal(buf.Bytes(), want) {
				b.Logf("encoding/json/v2 differs from the hand-written encoder:\n%s\n%s", buf.Bytes(), want)
			}
			b.SetBytes(int64(len(want)))
			b.ReportAllocs()
			for b.Loop() {
				buf.Reset()
				if err := jsonv2.MarshalWrite(&buf, p, opts); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
