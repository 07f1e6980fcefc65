package memstore_test

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/procurekit/procure/internal/cputime"
	"github.com/procurekit/procure/paging"
	"github.com/procurekit/procure/supplier"
)

// writeSize is the community size of the write benchmarks (issue 9: 1M;
// -writesize changes it for a quicker look).
var writeSizeFlag = flag.Int("writesize", 1_000_000, "suppliers in the community of the write benchmarks")

// benchIDs returns the ids of the bench community, in list order.
func benchIDs(b *testing.B, d *benchData) []uuid.UUID {
	b.Helper()
	ids := make([]uuid.UUID, 0, d.n)
	for p := 0; ; p++ {
		page, err := d.store.ListSuppliers(context.Background(), "bench", supplier.ListQuery{Page: paging.Request{Page: p, Size: 100}})
		if err != nil {
			b.Fatal(err)
		}
		for _, s := range page.Content {
			ids = append(ids, s.ID)
		}
		if len(page.Content) < 100 || len(ids) >= 200_000 {
			return ids
		}
	}
}

// The words of rewritten names and keywords (those of
// suppliertest.Synthetic).
var (
	rewritePlaces = []string{"Harbour", "Kiwi", "Southern", "Pacific", "Totara", "Matai", "Rimu", "Coastal", "Summit", "Alpine",
		"Northern", "Central", "Capital", "Urban", "Metro", "Island", "Golden", "Silver", "Bay", "River",
		"Lake", "Valley", "Mountain", "Forest", "Ocean", "Sunrise", "Sunset", "Eastern", "Western", "Pioneer",
		"Heritage", "Premier", "Quality", "Reliable", "Rapid", "Smart", "Apex", "Atlas", "Beacon", "Cedar",
		"Delta", "Ember", "Falcon", "Granite", "Horizon", "Ironbark", "Jade", "Kauri", "Lumen", "Meridian",
		"Nova", "Orchard", "Pinnacle", "Quartz", "Redwood", "Sterling", "Tui", "Unity", "Vista", "Willow"}
	rewriteTrades = []string{"Plumbing", "Electrical", "Logistics", "Foods", "Print", "Security", "Cleaning", "Catering",
		"Consulting", "Engineering", "Construction", "Landscaping", "Freight", "Stationery", "Furniture", "Hardware",
		"Software", "Medical", "Laboratory", "Uniforms", "Signage", "Roofing", "Painting", "Glazing",
		"Timber", "Steel", "Concrete", "Scaffolding", "Plant Hire", "Couriers", "Travel", "Events",
		"Marketing", "Recruitment", "Legal", "Accounting", "Insurance", "Telecoms", "Data", "Energy"}
)

// rewrite replaces the supplier id with a new name and keywords.
func rewrite(ctx context.Context, d *benchData, id uuid.UUID, i int) error {
	old, err := d.store.Supplier(ctx, "bench", id)
	if err != nil {
		return err
	}
	r := supplier.Record{Detail: old, Keywords: []string{"written", rewriteTrades[i%len(rewriteTrades)]}}
	r.Name = supplier.NewText(fmt.Sprintf("%s Rewritten %d", rewritePlaces[i%len(rewritePlaces)], i))
	_, err = d.store.PutSupplier(ctx, "bench", r)
	return err
}

var writeViewsFlag = flag.Bool("writeviews", false, "BenchmarkSupplierWrite: list every filter of BenchmarkListWriteRatio twice first, so that each write also updates their views")

// BenchmarkSupplierWrite measures PutSupplier replacing a random supplier
// of a 1,000,000-supplier community (a new name: it moves in the name
// orders and the text index), reporting the latency's p50 and p99. The
// writes accumulate in the overlay and start compactions as they would
// in service. With -writeviews the community has the filter views of
// BenchmarkListWriteRatio's filtered lists (seven), which every write
// keeps up to date.
func BenchmarkSupplierWrite(b *testing.B) {
	d := benchSet(b, *writeSizeFlag)
	ids := benchIDs(b, d)
	ctx := context.Background()
	if *writeViewsFlag {
		for _, c := range ratioCases() {
			if c.q.Query == "" && c.q.ModifiedSince.IsZero() {
				continue
			}
			for range 2 {
				if _, err := d.store.ListSuppliers(ctx, "bench", c.q); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	lat := make([]time.Duration, 0, b.N)
	cpu := make([]time.Duration, 0, b.N)
	// The thread's CPU time as well as the wall time: on a machine whose
	// other load preempts the benchmark, the wall percentiles measure the
	// scheduler as much as the write.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		id := ids[rng.IntN(len(ids))]
		c0 := cputime.Thread()
		t0 := time.Now()
		if err := rewrite(ctx, d, id, i); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
		cpu = append(cpu, cputime.Thread()-c0)
	}
	b.StopTimer()
	slices.Sort(cpu)
	b.ReportMetric(float64(cpu[len(cpu)/2].Nanoseconds())/1e3, "cpu-p50-us")
	b.ReportMetric(float64(cpu[len(cpu)*99/100].Nanoseconds())/1e3, "cpu-p99-us")
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds())/1e3, "p50-us")
	b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds())/1e3, "p99-us")
	b.ReportMetric(float64(lat[len(lat)-1].Nanoseconds())/1e3, "max-us")
	b.ReportMetric(d.perSupp, "B/supplier-loaded")
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(int64(ms.HeapAlloc)-int64(d.heapBase))/float64(d.n), "B/supplier-now")
	b.ReportMetric(float64(d.store.OverlaySize("bench")), "overlay")
}

// BenchmarkListWhileWriting measures list pages of a 1,000,000-supplier
// community, first with no writes, then while a goroutine writes 1,000
// suppliers a second (issue 9: within 1.5x of the figure without
// writes). The overlay metric is the number of changes merged at read
// time when the run ended.
func BenchmarkListWhileWriting(b *testing.B) {
	d := benchSet(b, *writeSizeFlag)
	ids := benchIDs(b, d)
	ctx := context.Background()
	req := func(page int, field string, desc bool) paging.Request {
		return paging.Request{Page: page, Size: 20, Sort: paging.Sort{Field: field, Desc: desc}}
	}
	cases := []struct {
		name string
		q    supplier.ListQuery
	}{
		{"default", supplier.ListQuery{Page: req(0, "name", false)}},
		{"page=1000", supplier.ListQuery{Page: req(1000, "name", false)}},
		{"sort=createdDate,desc", supplier.ListQuery{Page: req(0, "createdDate", true)}},
		{"modifiedSince", supplier.ListQuery{ModifiedSince: benchSince, Page: req(0, "name", false)}},
		{"modifiedSince/sort=modifiedDate", supplier.ListQuery{ModifiedSince: benchSince, Page: req(0, "modifiedDate", false)}},
		{"query=ma", supplier.ListQuery{Query: "ma", Page: req(0, "name", false)}},
		{"query=tot", supplier.ListQuery{Query: "tot", Page: req(0, "name", false)}},
	}
	var written atomic.Int64
	for _, rate := range []int{0, 1000} {
		for _, c := range cases {
			b.Run(fmt.Sprintf("writes=%d/%s", rate, c.name), func(b *testing.B) {
				stop := make(chan struct{})
				var wg sync.WaitGroup
				if rate > 0 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						tick := time.NewTicker(time.Second / time.Duration(rate))
						defer tick.Stop()
						rng := rand.New(rand.NewPCG(3, uint64(written.Load())))
						for {
							select {
							case <-stop:
								return
							case <-tick.C:
								i := int(written.Add(1))
								if err := rewrite(ctx, d, ids[rng.IntN(len(ids))], i); err != nil {
									b.Error(err)
									return
								}
							}
						}
					}()
					time.Sleep(100 * time.Millisecond)
				}
				b.ReportAllocs()
				b.ResetTimer()
				for b.Loop() {
					if _, err := d.store.ListSuppliers(ctx, "bench", c.q); err != nil {
						b.Fatal(err)
					}
				}
				b.StopTimer()
				close(stop)
				wg.Wait()
				b.ReportMetric(float64(d.store.OverlaySize("bench")), "overlay")
			})
		}
	}
	runtime.KeepAlive(d)
}

var prefillFlag = flag.Int("overlay", 30_000, "supplier writes BenchmarkListWriteRatio makes before measuring with writes (the overlay a community carries in service)")

type ratioCase struct {
	name string
	q    supplier.ListQuery
}

// ratioCases are the lists of BenchmarkListWriteRatio.
func ratioCases() []ratioCase {
	req := func(page int, field string, desc bool) paging.Request {
		return paging.Request{Page: page, Size: 20, Sort: paging.Sort{Field: field, Desc: desc}}
	}
	return []ratioCase{
		{"default", supplier.ListQuery{Page: req(0, "name", false)}},
		{"page=1000", supplier.ListQuery{Page: req(1000, "name", false)}},
		{"sort=createdDate,desc", supplier.ListQuery{Page: req(0, "createdDate", true)}},
		{"modifiedSince", supplier.ListQuery{ModifiedSince: benchSince, Page: req(0, "name", false)}},
		{"modifiedSince/sort=modifiedDate", supplier.ListQuery{ModifiedSince: benchSince, Page: req(0, "modifiedDate", false)}},
		{"modifiedSince/page=100", supplier.ListQuery{ModifiedSince: benchSince, Page: req(100, "name", false)}},
		{"query=ma", supplier.ListQuery{Query: "ma", Page: req(0, "name", false)}},
		{"query=tot", supplier.ListQuery{Query: "tot", Page: req(0, "name", false)}},
		{"query=s/page=100", supplier.ListQuery{Query: "s", Page: req(100, "name", false)}},
	}
}

// BenchmarkListWriteRatio compares list pages of an unchanged community
// (no overlay, no writes: the figures before live data) with the same
// pages while 1,000 writes/s run, after -overlay writes (30,000 by
// default: about 60,000 changes, half the 125,000 that start a
// compaction at 1,000,000 suppliers). Both sides are the fastest of ten
// batches of 2,000 pages, which keeps the machine's other load out of
// the ratio (issue 9: at most 1.5). A filtered list goes through its
// filter view from its second request on, so the batches measure the
// view; the first request costs the per-request plan (see the package
// documentation).
//
// Figures (median of three runs at 1,000,000 on 2 shared cores, CPU
// ratio): default 1.09, page=1000 1.35, sort=createdDate,desc 1.13,
// modifiedSince 1.17, modifiedSince/sort=modifiedDate 1.30,
// modifiedSince/page=100 1.31, query=ma 1.07, query=tot 1.06,
// query=s/page=100 1.55. The last is at the edge: "s" matches every
// supplier (its supplierId), so its view holds all 60,000 changes, and a
// CPU profile of that page alone shows mergeWalk.visit about a quarter
// of the time, the wavelet's rank1 a fifth (as in the base's own walk),
// the view's split searches a quarter to a third, and
// the page's allocation the rest.
func BenchmarkListWriteRatio(b *testing.B) {
	d := benchSet(b, *writeSizeFlag)
	ids := benchIDs(b, d)
	ctx := context.Background()
	cases := ratioCases()
	const batch, rounds = 2000, 10
	// best returns the fastest batch's wall time and thread CPU time per
	// page: the CPU time leaves out the time the machine's other load
	// (or a compaction on the other core) kept the reader off the CPU.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	best := func(q supplier.ListQuery) (wall, cpu float64) {
		t, c := time.Hour, time.Hour
		for range rounds {
			t0, c0 := time.Now(), cputime.Thread()
			for range batch {
				if _, err := d.store.ListSuppliers(ctx, "bench", q); err != nil {
					b.Fatal(err)
				}
			}
			t, c = min(t, time.Since(t0)), min(c, cputime.Thread()-c0)
		}
		return float64(t.Nanoseconds()) / batch, float64(c.Nanoseconds()) / batch
	}
	if d.store.OverlaySize("bench") != 0 {
		b.Fatal("run BenchmarkListWriteRatio in a process of its own: the community has been written to")
	}
	before, beforeCPU := make([]float64, len(cases)), make([]float64, len(cases))
	for i, c := range cases {
		before[i], beforeCPU[i] = best(c.q)
	}
	var written atomic.Int64
	for i := range *prefillFlag {
		if err := rewrite(ctx, d, ids[(i*7919)%len(ids)], i); err != nil {
			b.Fatal(err)
		}
		written.Add(1)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		rng := rand.New(rand.NewPCG(3, 4))
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				i := int(written.Add(1))
				if err := rewrite(ctx, d, ids[rng.IntN(len(ids))], i); err != nil {
					b.Error(err)
					return
				}
			}
		}
	}()
	defer func() { close(stop); wg.Wait() }()
	time.Sleep(100 * time.Millisecond)
	for i, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			runtime.LockOSThread() // a sub-benchmark runs on a goroutine of its own
			defer runtime.UnlockOSThread()
			w0 := written.Load()
			t0 := time.Now()
			during, duringCPU := best(c.q)
			rate := float64(written.Load()-w0) / time.Since(t0).Seconds()
			for b.Loop() {
			}
			b.ReportMetric(before[i], "ns/op-unchanged")
			b.ReportMetric(during, "ns/op-writing")
			b.ReportMetric(during/before[i], "ratio")
			b.ReportMetric(beforeCPU[i], "cpu-ns/op-unchanged")
			b.ReportMetric(duringCPU, "cpu-ns/op-writing")
			b.ReportMetric(duringCPU/beforeCPU[i], "cpu-ratio")
			b.ReportMetric(rate, "writes/s")
			b.ReportMetric(float64(d.store.OverlaySize("bench")), "overlay")
		})
	}
}
