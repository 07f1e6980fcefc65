package pgstore_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/procurekit/procure/paging"
	"github.com/procurekit/procure/pgstore"
	"github.com/procurekit/procure/supplier"
)

// BenchmarkReadAfterWrite measures, on a node with the supplier cache, a
// supplier write followed by a read of the first page: the case of a node
// that takes writes and serves reads (issue 22). ns/op is the pair;
// served/op is the share of the reads answered by the cache.
//
//	go test -run '^$' -bench BenchmarkReadAfterWrite -count 6 ./pgstore
func BenchmarkReadAfterWrite(b *testing.B) {
	ctx := context.Background()
	s, _ := openStore(b, fixture(), pgstore.WithSupplierCache())
	q := supplier.ListQuery{Page: paging.Request{Size: 20}}
	if _, err := s.ListSuppliers(ctx, "c1", q); err != nil { // loads c1
		b.Fatal(err)
	}
	served := pgstore.CacheServed(s)
	i := 0
	for b.Loop() {
		i++
		r := supplier.Record{Detail: supplier.Detail{Summary: supplier.Summary{ID: id(50 + i%20), Name: supplier.NewText(fmt.Sprint("Writer ", i)),
			ProfileType: supplier.ProfileCompany}}}
		if _, err := s.PutSupplier(ctx, "c1", r); err != nil {
			b.Fatal(err)
		}
		if _, err := s.ListSuppliers(ctx, "c1", q); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(pgstore.CacheServed(s)-served)/float64(b.N), "served/op")
}
