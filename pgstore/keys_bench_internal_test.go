package pgstore

import (
	"strings"
	"testing"
)

// BenchmarkSupplierKeys is what the collation and match keys cost an
// import or a write per supplier in Go: the name's sort key, the search
// terms, and the sort keys of one contact and one address, over the
// synthetic suppliers (ASCII names, as most are). "lower" is the same
// work with the lower-cased keys of schema versions before 0009, for
// comparison.
func BenchmarkSupplierKeys(b *testing.B) {
	recs := syntheticCommunity("k", 10_000).Suppliers
	b.Run("collation", func(b *testing.B) {
		var ts []string
		var lcps []int32
		i := 0
		b.ReportAllocs()
		for b.Loop() {
			r := &recs[i%len(recs)]
			i++
			_ = nullKey(r.Name.String())
			ts, lcps = terms(r, ts, lcps)
			_ = nullKey(r.Contacts[0].Name)
			_ = nullKey(r.RemittanceAddresses[0].CompanyName.String())
		}
	})
	b.Run("lower", func(b *testing.B) {
		var ts []string
		i := 0
		b.ReportAllocs()
		for b.Loop() {
			r := &recs[i%len(recs)]
			i++
			_ = strings.ToLower(r.Name.String())
			ts = append(ts[:0], strings.ToLower(r.Name.String()), strings.ToLower(r.LegalBusinessName.String()), strings.ToLower(r.SupplierID.String()))
			for _, k := range r.Keywords {
				ts = append(ts, strings.ToLower(k))
			}
			_ = strings.ToLower(r.Contacts[0].Name)
			_ = strings.ToLower(r.RemittanceAddresses[0].CompanyName.String())
		}
	})
}
