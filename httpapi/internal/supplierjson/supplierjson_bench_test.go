package supplierjson

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/procurekit/procure/paging"
	"github.com/procurekit/procure/supplier"
)

// benchSummaries is a page of n realistic summaries: every field set, as
// the generator's suppliers have them, with a few names that need
// escaping or are not ASCII.
func benchSummaries(n int) *paging.Page[supplier.Summary] {
	names := []string{"Tasman Office Supplies Pty Ltd", "Café Müller & Söhne", "Ōtaki Organics", "Smith <Bros> Hardware", "北京 Trading Co."}
	verified := time.Date(2026, 3, 14, 2, 0, 0, 0, time.UTC)
	items := make([]supplier.Summary, n)
	for i := range items {
		name := names[i%len(names)]
		items[i] = supplier.Summary{
			ID:                      uuid.NewSHA1(uuid.NameSpaceOID, fmt.Appendf(nil, "bench-%d", i)),
			CommunitySupplierID:     supplier.NewText(fmt.Sprintf("CS0-%07d", i)),
			SupplierID:              supplier.NewText(fmt.Sprintf("V%06d", i)),
			Name:                    supplier.NewText(name),
			ProfileType:             supplier.ProfileType("COMPANY"),
			LegalBusinessName:       supplier.NewText(name + " Limited"),
			TaxIdentificationType:   supplier.TaxIdentificationType("FOREIGN_TIN"),
			TaxIdentificationNumber: supplier.NewText(fmt.Sprintf("NZ-%09d", i*7919)),
			TinVerificationStatus:   supplier.TinVerificationStatus("VERIFIED"),
			TinLastVerifiedDate:     &verified,
			ConnectionState:         supplier.ConnectionState("CONNECTED"),
			BusinessNumber:          supplier.NewText(fmt.Sprintf("%011d", i*104729)),
			DefaultEmailAddress:     supplier.NewText(fmt.Sprintf("accounts%d@supplier.example.com", i)),
			ModifiedDate:            time.Date(2026, 5, 1, 9, 30, 0, i*1000, time.UTC),
			CreatedDate:             time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC),
		}
	}
	p := paging.NewPage(items, 100000, paging.Request{Page: 0, Size: n, Sort: paging.Sort{Field: "name"}})
	return &p
}

// BenchmarkEncodeSummaryPage compares the hand-written encoder with
// encoding/json (the bytes are the same: TestEncoderMatchesEncodingJSON)
// on a default page of 20 and a largest page of 100 suppliers.
func BenchmarkEncodeSummaryPage(b *testing.B) {
	for _, n := range []int{20, 100} {
		p := benchSummaries(n)
		want, err := json.Marshal(p)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("hand/%d", n), func(b *testing.B) {
			buf := make([]byte, 0, 64<<10)
			got, err := appendSummaryPage(buf, p)
			if err != nil || !bytes.Equal(got, want) {
				b.Fatalf("hand-written encoding differs from encoding/json (err %v)", err)
			}
			b.SetBytes(int64(len(want)))
			b.ReportAllocs()
			for b.Loop() {
				buf, _ = appendSummaryPage(buf[:0], p)
			}
		})
		b.Run(fmt.Sprintf("encoding-json/%d", n), func(b *testing.B) {
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			b.SetBytes(int64(len(want)))
			b.ReportAllocs()
			for b.Loop() {
				buf.Reset()
				if err := enc.Encode(p); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
