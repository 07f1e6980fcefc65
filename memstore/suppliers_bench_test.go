package memstore_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/procurekit/procure/internal/cputime"
	"github.com/procurekit/procure/memstore"
	"github.com/procurekit/procure/paging"
	"github.com/procurekit/procure/supplier"
	"github.com/procurekit/procure/supplier/suppliertest"
)

// benchRecords generates n suppliers (suppliertest.Synthetic). About 10%
// are modified on or after benchSince.
func benchRecords(n int) []supplier.Record { return suppliertest.Synthetic(n) }

// benchSince is the day from which about a tenth of benchRecords' suppliers
// are modified.
var benchSince = suppliertest.SyntheticSince

type benchData struct {
	store    *memstore.Store
	n        int
	someID   uuid.UUID
	someSID  string // the supplierId of someID
	ids      []uuid.UUID
	perSupp  float64 // heap bytes per supplier held by the store
	loadTime time.Duration
	heapBase uint64 // HeapAlloc before the store was built
}

var benchSets = map[int]*benchData{}

// benchSet builds (once per n) a store holding n suppliers in community
// "bench".
func benchSet(b *testing.B, n int) *benchData {
	b.Helper()
	if d := benchSets[n]; d != nil {
		return d
	}
	// Free the previous, smaller sets: only one is used at a time.
	clear(benchSets)
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	recs := benchRecords(n)
	someID, someSID := recs[n/3].ID, recs[n/3].SupplierID
	ids := make([]uuid.UUID, n)
	for i := range recs {
		ids[i] = recs[i].ID
	}
	t0 := time.Now()
	s := memstore.New()
	if err := s.LoadRecords("bench", recs); err != nil {
		b.Fatal(err)
	}
	load := time.Since(t0)
	recs = nil
	runtime.GC()
	runtime.ReadMemStats(&after)
	d := &benchData{store: s, n: n, someID: someID, someSID: someSID.String(), ids: ids, loadTime: load, heapBase: before.HeapAlloc,
		perSupp: float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / float64(n)}
	runtime.KeepAlive(recs)
	benchSets[n] = d
	return d
}

var benchSizes = []int{10_000, 100_000, 1_000_000}

// BenchmarkRandomAccess measures reads at random over 100,000 suppliers: a
// random supplier, its contacts, and a random page of the list by name in
// either direction. Unlike the fixed requests of BenchmarkListSuppliers,
// these miss the CPU caches as a sync client's or a paging user's do.
// cpu-ns/op is the benchmark thread's CPU time per read: on a machine
// whose other load preempts the benchmark, ns/op measures the scheduler
// as much as the read.
func BenchmarkRandomAccess(b *testing.B) {
	const n = 100_000
	d := benchSet(b, n)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(7, 7))
	pick := make([]int, 4096)
	for i := range pick {
		pick[i] = rng.IntN(n)
	}
	b.Run("supplier", func(b *testing.B) {
		b.ReportAllocs()
		defer cputime.PerOp(b)()
		i := 0
		for b.Loop() {
			if _, err := d.store.Supplier(ctx, "bench", d.ids[pick[i%len(pick)]]); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
	b.Run("contacts", func(b *testing.B) {
		b.ReportAllocs()
		defer cputime.PerOp(b)()
		i := 0
		for b.Loop() {
			if _, err := d.store.ListContacts(ctx, "bench", d.ids[pick[i%len(pick)]], paging.Request{Size: 20}); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
	for _, desc := range []bool{false, true} {
		name := "page"
		if desc {
			name = "page/sort=name,desc"
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			defer cputime.PerOp(b)()
			buf := make([]supplier.Summary, 0, 20)
			i := 0
			for b.Loop() {
				q := supplier.ListQuery{Page: paging.Request{Page: pick[i%len(pick)] % (n / 20), Size: 20, Sort: paging.Sort{Field: "name", Desc: desc}}}
				p, err := d.store.AppendSuppliers(ctx, "bench", q, buf)
				if err != nil || len(p.Content) != 20 {
					b.Fatal(len(p.Content), err)
				}
				i++
			}
		})
	}
}

// BenchmarkListSuppliers measures one page (size 20) of the supplier list
// at 10k, 100k and 1M suppliers. The figures at 1M should be within 2x of
// those at 10k.
func BenchmarkListSuppliers(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) { benchList(b, n) })
	}
}

func benchList(b *testing.B, n int) {
	ctx := context.Background()
	{
		d := benchSet(b, n)
		b.Logf("n=%d: load %s, %.0f heap bytes per supplier", n, d.loadTime.Round(time.Millisecond), d.perSupp)
		lastPage := (n+19)/20 - 1
		req := func(page int, field string, desc bool) paging.Request {
			return paging.Request{Page: page, Size: 20, Sort: paging.Sort{Field: field, Desc: desc}}
		}
		cases := []struct {
			name string
			q    supplier.ListQuery
		}{
			{"default", supplier.ListQuery{Page: req(0, "name", false)}},
			{"sort=name,desc", supplier.ListQuery{Page: req(0, "name", true)}},
			{"sort=createdDate,asc", supplier.ListQuery{Page: req(0, "createdDate", false)}},
			{"sort=createdDate,desc", supplier.ListQuery{Page: req(0, "createdDate", true)}},
			{"sort=modifiedDate,asc", supplier.ListQuery{Page: req(0, "modifiedDate", false)}},
			{"sort=modifiedDate,desc", supplier.ListQuery{Page: req(0, "modifiedDate", true)}},
			{"query=s", supplier.ListQuery{Query: "s", Page: req(0, "name", false)}},
			{"query=m/sort=createdDate,desc", supplier.ListQuery{Query: "m", Page: req(0, "createdDate", true)}},
			{"query=ma", supplier.ListQuery{Query: "ma", Page: req(0, "name", false)}},
			{"query=Totara_Kauri_Tim", supplier.ListQuery{Query: "Totara Kauri Tim", Page: req(0, "name", false)}},
			{"query=sup-00012", supplier.ListQuery{Query: "sup-00012", Page: req(0, "name", false)}},
			{"query=one-supplierId", supplier.ListQuery{Query: d.someSID, Page: req(0, "name", false)}},
			{"query=s/page=100", supplier.ListQuery{Query: "s", Page: req(100, "name", false)}},
			{"modifiedSince/sort=name", supplier.ListQuery{ModifiedSince: benchSince, Page: req(0, "name", false)}},
			{"modifiedSince/sort=modifiedDate", supplier.ListQuery{ModifiedSince: benchSince, Page: req(0, "modifiedDate", false)}},
			{"modifiedSince/sort=modifiedDate,desc", supplier.ListQuery{ModifiedSince: benchSince, Page: req(0, "modifiedDate", true)}},
			{"query=s+modifiedSince/sort=name", supplier.ListQuery{Query: "s", ModifiedSince: benchSince, Page: req(0, "name", false)}},
			{"query=ma+modifiedSince/sort=modifiedDate", supplier.ListQuery{Query: "ma", ModifiedSince: benchSince, Page: req(0, "modifiedDate", false)}},
			{"page=1000", supplier.ListQuery{Page: req(1000, "name", false)}},
			{"page=last", supplier.ListQuery{Page: req(lastPage, "name", false)}},
			{"page=last/sort=modifiedDate,desc", supplier.ListQuery{Page: req(lastPage, "modifiedDate", true)}},
		}
		for _, c := range cases {
			b.Run(c.name, func(b *testing.B) {
				p, err := d.store.ListSuppliers(ctx, "bench", c.q)
				if err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				b.ResetTimer()
				for b.Loop() {
					if _, err := d.store.ListSuppliers(ctx, "bench", c.q); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(p.Page.TotalElements), "matches")
			})
		}
		b.Run("Supplier", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := d.store.Supplier(ctx, "bench", d.someID); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("ListContacts", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := d.store.ListContacts(ctx, "bench", d.someID, paging.Request{Size: 20}); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("ListRemittanceAddresses", func(b *testing.B) {
			b.ReportAllocs()
			q := supplier.AddressQuery{Page: paging.Request{Size: 20}}
			for b.Loop() {
				if _, err := d.store.ListRemittanceAddresses(ctx, "bench", d.someID, q); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
