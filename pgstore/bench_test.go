package pgstore

import (
	"context"
	"os"
	"runtime"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/procurekit/procure/datafile"
	"github.com/procurekit/procure/internal/pgtest"
	"github.com/procurekit/procure/paging"
	"github.com/procurekit/procure/supplier"
)

// benchSuppliers is the size of the benchmark community: 1,000,000, or
// PGSTORE_BENCH_SUPPLIERS for a quicker run.
func benchSuppliers(b *testing.B) int {
	n := 1_000_000
	if v := os.Getenv("PGSTORE_BENCH_SUPPLIERS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1000 {
			b.Fatalf("PGSTORE_BENCH_SUPPLIERS=%q: want an integer >= 1000", v)
		}
	}
	return n
}

// BenchmarkPostgres measures the store at 1,000,000 suppliers (one contact
// and one remittance address each): the import (rows/s counts suppliers),
// and the list queries on the imported data. Run it with
//
//	go test -run '^$' -bench BenchmarkPostgres -benchmem ./pgstore
//
// The import runs once per iteration into a fresh database; use
// -benchtime=1x for it at this size.
func BenchmarkPostgres(b *testing.B) {
	ctx := context.Background()
	n := benchSuppliers(b)
	c := syntheticCommunity("bench", n)
	f := &datafile.File{Communities: []datafile.Community{c}}

	// The list benchmarks use the store of the last import; when -bench
	// leaves the import out, the data is imported untimed.
	var s *Store
	var dsn string
	defer func() {
		if s != nil {
			s.Close()
		}
	}()
	// The databases belong to the parent benchmark, so that the last one
	// outlives the Import sub-benchmark.
	parent := b
	open := func(b *testing.B) {
		b.Helper()
		if s != nil {
			s.Close()
		}
		var err error
		dsn = pgtest.NewDatabase(parent)
		if s, err = Open(ctx, dsn); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("Import", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			open(b)
			b.StartTimer()
			if err := s.Import(ctx, f); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	})
	if s == nil {
		open(b)
		if err := s.Import(ctx, f); err != nil {
			b.Fatal(err)
		}
	}
	// All-visible pages for index-only scans, as on a server that has been
	// up for a while (autovacuum does this after an import). The test
	// server commits asynchronously, and VACUUM cannot mark a page
	// all-visible before the WAL of its rows is flushed: CHECKPOINT first.
	if _, err := s.pool.Exec(ctx, "CHECKPOINT"); err != nil {
		b.Fatal(err)
	}
	if _, err := s.pool.Exec(ctx, "VACUUM (ANALYZE)"); err != nil {
		b.Fatal(err)
	}

	// A modifiedSince that keeps about 10% of the suppliers.
	dates := make([]time.Time, 0, n)
	for i := range c.Suppliers {
		dates = append(dates, c.Suppliers[i].ModifiedDate)
	}
	since := nth(dates, n*9/10)
	page := func(p int, sort paging.Sort) paging.Request { return paging.Request{Page: p, Size: 20, Sort: sort} }
	byName := paging.Sort{Field: "name"}
	cases := []struct {
		name string
		q    supplier.ListQuery
	}{
		{"ListDefault/Page0", supplier.ListQuery{Page: page(0, byName)}},
		{"ListDefault/Page1000", supplier.ListQuery{Page: page(1000, byName)}},
		{"ListModifiedDesc/Page0", supplier.ListQuery{Page: page(0, paging.Sort{Field: "modifiedDate", Desc: true})}},
		{"ListModifiedDesc/Page1000", supplier.ListQuery{Page: page(1000, paging.Sort{Field: "modifiedDate", Desc: true})}},
		{"QueryBroad/Page0", supplier.ListQuery{Query: "tor", Page: page(0, byName)}},
		{"QueryBroad/Page1000", supplier.ListQuery{Query: "tor", Page: page(1000, byName)}},
		{"QueryOneLetter/Page0", supplier.ListQuery{Query: "t", Page: page(0, byName)}},
		{"QueryOneLetter/Page1000", supplier.ListQuery{Query: "t", Page: page(1000, byName)}},
		{"QueryNarrow", supplier.ListQuery{Query: "torvanel", Page: page(0, byName)}},
		{"QuerySupplierID", supplier.ListQuery{Query: "SUP-00012", Page: page(0, byName)}},
		{"ModifiedSince/Page0", supplier.ListQuery{ModifiedSince: since, Page: page(0, byName)}},
		{"ModifiedSince/Page1000", supplier.ListQuery{ModifiedSince: since, Page: page(1000, byName)}},
		{"ModifiedSinceByDate/Page1000", supplier.ListQuery{ModifiedSince: since, Page: page(1000, paging.Sort{Field: "modifiedDate"})}},
		{"QueryAndModifiedSince", supplier.ListQuery{Query: "tor", ModifiedSince: since, Page: page(0, byName)}},
	}
	// listCases runs every case on reader (s, or a store with the
	// supplier cache), under prefix; check, when not nil, runs after
	// each case's loop.
	listCases := func(prefix string, reader *Store, check func(b *testing.B)) {
		for _, tc := range cases {
			b.Run(prefix+tc.name, func(b *testing.B) {
				var total int
				for b.Loop() {
					p, err := reader.ListSuppliers(ctx, "bench", tc.q)
					if err != nil {
						b.Fatal(err)
					}
					total = p.Page.TotalElements
				}
				b.ReportMetric(float64(total), "matches")
				if check != nil {
					check(b)
				}
			})
		}
	}
	// whileWriting measures page 1,000 of the default list on reader
	// while 200 writes a second run through s on other connections,
	// renaming every step-th supplier.
	whileWriting := func(name string, reader *Store, step int, rename string) {
		b.Run(name, func(b *testing.B) {
			stop := make(chan struct{})
			done := make(chan struct{})
			go func() {
				defer close(done)
				tick := time.NewTicker(5 * time.Millisecond)
				defer tick.Stop()
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					case <-tick.C:
					}
					r := c.Suppliers[(i*step)%n]
					r.Contacts, r.RemittanceAddresses = nil, nil
					r.Name = supplier.NewText(rename + strconv.Itoa(i))
					if _, err := s.PutSupplier(ctx, "bench", r); err != nil {
						b.Error(err)
						return
					}
				}
			}()
			q := supplier.ListQuery{Page: page(1000, byName)}
			for b.Loop() {
				if _, err := reader.ListSuppliers(ctx, "bench", q); err != nil {
					b.Fatal(err)
				}
			}
			close(stop)
			<-done
		})
	}
	listCases("", s, nil)
	// Writes: PutSupplier of an existing supplier with a new name (a
	// change, so it is stamped and its terms rewritten), then the same
	// call again (equal content: nothing is written).
	b.Run("PutSupplier", func(b *testing.B) {
		var ds []time.Duration
		i := 0
		for b.Loop() {
			r := c.Suppliers[(i*7919)%n]
			r.Contacts, r.RemittanceAddresses = nil, nil
			r.Name = supplier.NewText("Bench " + strconv.Itoa(i))
			start := time.Now()
			if _, err := s.PutSupplier(ctx, "bench", r); err != nil {
				b.Fatal(err)
			}
			ds = append(ds, time.Since(start))
			i++
		}
		reportPercentiles(b, ds)
	})
	// Sixteen writers on the community at once, as an admin API under
	// load sees them: their puts serialise on the community's lock, so
	// ns/op is the time a put holds it (issue 22: the optimistic plan
	// holds it for the database's work only, write_fast.go). redone/op is
	// the share redone under the lock.
	b.Run("PutSupplierConcurrent", func(b *testing.B) {
		var seq atomic.Int64
		raced := s.writesRaced.Load()
		b.SetParallelism(16 / runtime.GOMAXPROCS(0))
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				i := int(seq.Add(1))
				r := c.Suppliers[(i*7919)%n]
				r.Contacts, r.RemittanceAddresses = nil, nil
				r.Name = supplier.NewText("Concurrent " + strconv.Itoa(i))
				if _, err := s.PutSupplier(ctx, "bench", r); err != nil {
					b.Error(err)
					return
				}
			}
		})
		b.ReportMetric(float64(s.writesRaced.Load()-raced)/float64(b.N), "redone/op")
	})
	b.Run("PutSupplierUnchanged", func(b *testing.B) {
		r := c.Suppliers[1]
		r.Contacts, r.RemittanceAddresses = nil, nil
		if _, err := s.PutSupplier(ctx, "bench", r); err != nil {
			b.Fatal(err)
		}
		var ds []time.Duration
		for b.Loop() {
			start := time.Now()
			if _, err := s.PutSupplier(ctx, "bench", r); err != nil {
				b.Fatal(err)
			}
			ds = append(ds, time.Since(start))
		}
		reportPercentiles(b, ds)
	})
	b.Run("PutContact", func(b *testing.B) {
		var ds []time.Duration
		i := 0
		for b.Loop() {
			sup := c.Suppliers[(i*7919)%n]
			ct := sup.Contacts[0]
			ct.Name = "Bench " + strconv.Itoa(i)
			start := time.Now()
			if _, err := s.PutContact(ctx, "bench", sup.ID, ct); err != nil {
				b.Fatal(err)
			}
			ds = append(ds, time.Since(start))
			i++
		}
		reportPercentiles(b, ds)
	})
	// The default list while 200 writes a second run on other
	// connections.
	whileWriting("ListDefaultWhileWriting/Page1000", s, 104729, "Busy ")
	// The same lists from a store with the supplier cache, on the same
	// database: its load (time and heap), then each case.
	cached := func() *Store {
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		start := time.Now()
		cs, err := Open(ctx, dsn, WithSupplierCache())
		if err != nil {
			b.Fatal(err)
		}
		for cs.cache.reader("bench") == nil {
			time.Sleep(20 * time.Millisecond)
		}
		took := time.Since(start)
		runtime.GC()
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		b.Logf("supplier cache of %d suppliers: loaded in %v; heap %d MB, %d bytes per supplier", n, took.Round(time.Millisecond),
			(int64(after.HeapAlloc)-int64(before.HeapAlloc))>>20, (int64(after.HeapAlloc)-int64(before.HeapAlloc))/int64(n))
		return cs
	}()
	defer cached.Close()
	listCases("Cached/", cached, func(b *testing.B) {
		if cached.cache.served.Load() == 0 {
			b.Fatal("the cache served no read")
		}
	})
	whileWriting("Cached/ListDefaultWhileWriting/Page1000", cached, 15485863, "Cached busy ")
	b.Run("Supplier", func(b *testing.B) {
		i := 0
		for b.Loop() {
			if _, err := s.Supplier(ctx, "bench", c.Suppliers[i%n].ID); err != nil {
				b.Fatal(err)
			}
			i += 7919
		}
	})
	b.Run("Contacts", func(b *testing.B) {
		i := 0
		for b.Loop() {
			if _, err := s.ListContacts(ctx, "bench", c.Suppliers[i%n].ID, page(0, paging.Sort{})); err != nil {
				b.Fatal(err)
			}
			i += 7919
		}
	})
}

// nth returns the k-th smallest of ts (it reorders ts).
func nth(ts []time.Time, k int) time.Time {
	slices.SortFunc(ts, func(a, b time.Time) int { return a.Compare(b) })
	return ts[k]
}

// reportPercentiles reports the p50 and p99 of ds in microseconds.
func reportPercentiles(b *testing.B, ds []time.Duration) {
	if len(ds) == 0 {
		return
	}
	slices.Sort(ds)
	b.ReportMetric(float64(ds[len(ds)/2].Microseconds()), "p50-us")
	b.ReportMetric(float64(ds[len(ds)*99/100].Microseconds()), "p99-us")
}
