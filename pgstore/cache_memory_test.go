package pgstore

import (
	"context"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/procurekit/procure/datafile"
	"github.com/procurekit/procure/internal/pgtest"
)

// TestSupplierCacheMemory measures the supplier cache of a community of
// PGSTORE_CACHE_SUPPLIERS synthetic suppliers (one contact and one
// address each): how long it takes to load, and the memory it holds - the
// live heap, and the process's resident memory (VmRSS) - measured after
// the imported data has been let go, so that only the cache counts; also
// the peak while loading (VmHWM). It is skipped without the variable.
//
//	PGSTORE_CACHE_SUPPLIERS=1000000 go test -run TestSupplierCacheMemory -v ./pgstore
func TestSupplierCacheMemory(t *testing.T) {
	v := os.Getenv("PGSTORE_CACHE_SUPPLIERS")
	if v == "" {
		t.Skip("set PGSTORE_CACHE_SUPPLIERS to a number of suppliers to measure the cache's memory")
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		t.Fatalf("PGSTORE_CACHE_SUPPLIERS=%q: want a positive integer", v)
	}
	ctx := context.Background()
	dsn := pgtest.NewDatabase(t)
	func() {
		s, err := Open(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		f := &datafile.File{Communities: []datafile.Community{syntheticCommunity("mem", n)}}
		if err := s.Import(ctx, f); err != nil {
			t.Fatal(err)
		}
	}()
	// The generated data is garbage now: give its memory back.
	runtime.GC()
	debug.FreeOSMemory()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	// Reset the peak (Linux: 5 to clear_refs), so that VmHWM is the load's.
	_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
	rssBefore, hwmBefore := procStatus(t, "VmRSS"), procStatus(t, "VmHWM")

	start := time.Now()
	s, err := Open(ctx, dsn, WithSupplierCache())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for s.cache.reader("mem") == nil {
		time.Sleep(20 * time.Millisecond)
	}
	took := time.Since(start)
	hwm := procStatus(t, "VmHWM")
	runtime.GC()
	debug.FreeOSMemory()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	rss := procStatus(t, "VmRSS")
	heap := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("%d suppliers loaded in %v", n, took.Round(time.Millisecond))
	t.Logf("live heap %d MB (%d bytes per supplier); resident %d MB -> %d MB (%d bytes per supplier); peak resident %d MB -> %d MB while loading",
		heap>>20, heap/int64(n), rssBefore>>10, rss>>10, (rss-rssBefore)*1024/int64(n), hwmBefore>>10, hwm>>10)
}

// procStatus returns a field of /proc/self/status in kB (0 when unknown).
func procStatus(t *testing.T, field string) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return n
		}
	}
	return 0
}

// BenchmarkCacheLoad measures the supplier cache's load of a community of
// PGSTORE_BENCH_SUPPLIERS synthetic suppliers (1,000,000 without it; one
// contact and one address each), imported once: the read in one snapshot
// and the index built from it. Profile it with -cpuprofile.
//
//	PGSTORE_BENCH_SUPPLIERS=200000 go test -run '^$' -bench BenchmarkCacheLoad -benchtime 3x ./pgstore
func BenchmarkCacheLoad(b *testing.B) {
	ctx := context.Background()
	n := benchSuppliers(b)
	s, err := Open(ctx, pgtest.NewDatabase(b), WithSupplierCache())
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	if err := s.Import(ctx, &datafile.File{Communities: []datafile.Community{syntheticCommunity("load", n)}}); err != nil {
		b.Fatal(err)
	}
	runtime.GC()
	cc := &cachedCom{id: "load"}
	for b.Loop() {
		if _, _, err := s.cache.read(cc, s.pool); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "suppliers/s")
}
