package suppliers_test

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"runtime"
	"testing"

	"github.com/procurekit/procure/datafile"
	"github.com/procurekit/procure/httpapi/suppliers"
	"github.com/procurekit/procure/internal/cputime"
	"github.com/procurekit/procure/memstore"
	"github.com/procurekit/procure/supplier/suppliertest"
)

var randomReads = flag.Int("randomreads", 100_000, "suppliers in BenchmarkRandomReads' community")

// BenchmarkRandomReads is the load test's random-supplier and random-page
// scenarios in process: a community of -randomreads distinct synthetic
// suppliers (suppliertest.Synthetic: every text its own allocation, as a
// data file's decoder leaves them), loaded from a data file as
// examples/server loads one, and 65,536 requests drawn at random over all
// of them, so that the reads miss the CPU's caches as users' do and the
// encoded-supplier memo rarely holds what is asked. cpu-ns/op is the
// benchmark thread's CPU time per request.
func BenchmarkRandomReads(b *testing.B) {
	n := *randomReads
	recs := suppliertest.Synthetic(n)
	ids := make([]string, n)
	for i := range recs {
		ids[i] = recs[i].ID.String()
	}
	f := &datafile.File{Communities: []datafile.Community{{
		ID: "bench", Name: "Bench", Region: datafile.NZ, Suppliers: recs,
		Tokens: []datafile.Token{{Token: alphaToken, Scopes: []string{"suppliers:read"}}},
	}}}
	store, err := memstore.LoadReader(f.Reader())
	if err != nil {
		b.Fatal(err)
	}
	recs, f = nil, nil
	runtime.GC()
	mux := http.NewServeMux()
	suppliers.Mount(mux, suppliers.Options{Store: store, Tokens: store, Logger: discard})
	targets := func(f func(rng *rand.Rand) string) []*http.Request {
		rng := rand.New(rand.NewPCG(7, 7))
		reqs := make([]*http.Request, 1<<16)
		for i := range reqs {
			reqs[i] = httptest.NewRequest(http.MethodGet, f(rng), nil)
			reqs[i].Header.Set("Authorization", "Bearer "+alphaToken)
		}
		return reqs
	}
	for _, tc := range []struct {
		name string
		reqs []*http.Request
	}{
		{"supplier", targets(func(rng *rand.Rand) string { return base + "/suppliers/" + ids[rng.IntN(n)] })},
		{"page", targets(func(rng *rand.Rand) string { return fmt.Sprintf("%s/suppliers?page=%d", base, rng.IntN(n/20)) })},
	} {
		b.Run(tc.name, func(b *testing.B) {
			w := &nullWriter{h: http.Header{}}
			b.ReportAllocs()
			defer cputime.PerOp(b)()
			i := 0
			for b.Loop() {
				clear(w.h)
				w.status = 0
				mux.ServeHTTP(w, tc.reqs[i%len(tc.reqs)])
				if w.status != http.StatusOK {
					b.Fatalf("status %d", w.status)
				}
				i++
			}
		})
	}
}
