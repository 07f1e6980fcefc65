package suppliers_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/procurekit/procure/datafile"
	"github.com/procurekit/procure/httpapi/internal/httpx"
	"github.com/procurekit/procure/httpapi/suppliers"
	"github.com/procurekit/procure/internal/cputime"
	"github.com/procurekit/procure/memstore"
	"github.com/procurekit/procure/supplier"
)

// benchStore is a community of n suppliers, each as full as the test data's
// Acme Office Supplies (every field, contacts, addresses, bank account,
// emails, settings), with distinct names and dates.
func benchStore(b *testing.B, n int) (*memstore.Store, string) {
	b.Helper()
	f, err := datafile.ReadFile("testdata/suppliers.json")
	if err != nil {
		b.Fatal(err)
	}
	full := f.Communities[0].Suppliers[0]
	c := f.Communities[0]
	c.Suppliers = make([]supplier.Record, n)
	for i := range c.Suppliers {
		r := full
		r.ID = uuid.NewSHA1(uuid.NameSpaceOID, fmt.Appendf(nil, "bench-%d", i))
		r.Name = supplier.NewText(fmt.Sprintf("Supplier %05d Pty Ltd", (i*7919)%n))
		r.SupplierID = supplier.NewText(fmt.Sprintf("SUP-%05d", i))
		r.ModifiedDate = r.ModifiedDate.Add(time.Duration(i) * time.Minute)
		c.Suppliers[i] = r
	}
	s, err := memstore.LoadReader((&datafile.File{Communities: []datafile.Community{c}}).Reader())
	if err != nil {
		b.Fatal(err)
	}
	return s, c.Suppliers[n/2].ID.String()
}

func benchMux(b *testing.B) (*http.ServeMux, string) {
	b.Helper()
	store, id := benchStore(b, 1000)
	mux := http.NewServeMux()
	suppliers.Mount(mux, suppliers.Options{Store: store, Tokens: store, Logger: discard})
	return mux, id
}

// nullWriter is a ResponseWriter that keeps nothing, so that the
// benchmarks measure the handler rather than a recorder's copying.
type nullWriter struct {
	h      http.Header
	status int
	n      int
}

func (w *nullWriter) Header() http.Header         { return w.h }
func (w *nullWriter) WriteHeader(status int)      { w.status = status }
func (w *nullWriter) Write(p []byte) (int, error) { w.n += len(p); return len(p), nil }

func benchHandler(b *testing.B, mux http.Handler, target string) {
	req := httptest.NewRequest(http.MethodGet, target, nil)
	req.Header.Set("Authorization", "Bearer "+alphaToken)
	w := &nullWriter{h: http.Header{}}
	mux.ServeHTTP(w, req)
	if w.status != http.StatusOK {
		b.Fatalf("status %d", w.status)
	}
	b.SetBytes(int64(w.n))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		clear(w.h)
		w.n = 0
		mux.ServeHTTP(w, req)
	}
}

// The default page of the supplier list: 20 full summaries.
func BenchmarkListSuppliersDefaultPage(b *testing.B) {
	mux, _ := benchMux(b)
	benchHandler(b, mux, base+"/suppliers")
}

// A page with every parameter: query, modifiedSince, page, size and sort.
func BenchmarkListSuppliersFiltered(b *testing.B) {
	mux, _ := benchMux(b)
	benchHandler(b, mux, base+"/suppliers?query=supplier+0&modifiedSince=2026-04-30T10:00:00%2B00:00&page=1&size=20&sort=modifiedDate,desc")
}

// One supplier in full.
func BenchmarkGetSupplier(b *testing.B) {
	mux, id := benchMux(b)
	benchHandler(b, mux, base+"/suppliers/"+id)
}

func BenchmarkListContacts(b *testing.B) {
	mux, id := benchMux(b)
	benchHandler(b, mux, base+"/suppliers/"+id+"/contacts")
}

// Random access over 100,000 suppliers: a random supplier in full, and a
// random page of the list by name (the requests a sync client or a user
// paging through the list makes, which the encoded-supplier memo does not
// serve from its slots and the caches of the first page do not help).
func BenchmarkRandomAccess(b *testing.B) {
	const n = 100_000
	store, _ := benchStore(b, n)
	mux := http.NewServeMux()
	suppliers.Mount(mux, suppliers.Options{Store: store, Tokens: store, Logger: discard})
	targets := func(f func(rng *rand.Rand) string) []*http.Request {
		rng := rand.New(rand.NewPCG(7, 7))
		reqs := make([]*http.Request, 4096)
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
		{"supplier", targets(func(rng *rand.Rand) string {
			return base + "/suppliers/" + uuid.NewSHA1(uuid.NameSpaceOID, fmt.Appendf(nil, "bench-%d", rng.IntN(n))).String()
		})},
		{"page", targets(func(rng *rand.Rand) string {
			return fmt.Sprintf("%s/suppliers?page=%d", base, rng.IntN(n/20))
		})},
	} {
		b.Run(tc.name, func(b *testing.B) {
			w := &nullWriter{h: http.Header{}}
			b.ReportAllocs()
			// The thread's CPU per request as well: on a machine whose
			// other load preempts the benchmark, ns/op measures the
			// scheduler as much as the handler.
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

// Over loopback TCP, against the floor the later performance check uses: a
// minimal net/http handler that writes precomputed bytes of the same
// response. The ratio of the two ns/op is what that check measures.
func BenchmarkLoopback(b *testing.B) {
	mux, id := benchMux(b)
	for _, tc := range []struct{ name, target string }{
		{"list", base + "/suppliers"},
		{"get", base + "/suppliers/" + id},
	} {
		// The precomputed answer: exactly what the API sends.
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodGet, tc.target, nil)
		req.Header.Set("Authorization", "Bearer "+alphaToken)
		mux.ServeHTTP(rec, req)
		body := rec.Body.Bytes()
		if !json.Valid(body) {
			b.Fatal("not JSON")
		}
		baseline := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Length", fmt.Sprint(len(body)))
			w.Write(body)
		})
		b.Run(tc.name+"/baseline", func(b *testing.B) { loopback(b, baseline, tc.target, len(body)) })
		b.Run(tc.name+"/api", func(b *testing.B) { loopback(b, mux, tc.target, len(body)) })
	}
}

func loopback(b *testing.B, h http.Handler, target string, size int) {
	srv := httptest.NewServer(h)
	defer srv.Close()
	client := srv.Client()
	client.Transport.(*http.Transport).MaxIdleConnsPerHost = 64
	req, err := http.NewRequest(http.MethodGet, srv.URL+target, nil)
	if err != nil {
		b.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+alphaToken)
	b.SetBytes(int64(size))
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		var buf bytes.Buffer
		for pb.Next() {
			res, err := client.Do(req)
			if err != nil {
				b.Error(err)
				return
			}
			buf.Reset()
			_, err = io.Copy(&buf, res.Body)
			res.Body.Close()
			if err != nil || res.StatusCode != http.StatusOK || buf.Len() != size {
				b.Errorf("status %d, %d bytes, err %v", res.StatusCode, buf.Len(), err)
				return
			}
		}
	})
}

// The default page through RequestLog with a text log (to io.Discard):
// what the request log adds to a request, against
// BenchmarkListSuppliersDefaultPage.
func BenchmarkRequestLog(b *testing.B) {
	mux, _ := benchMux(b)
	benchHandler(b, httpx.RequestLog(slog.New(slog.NewTextHandler(io.Discard, nil)), mux), base+"/suppliers")
}

// The same with the request metrics too (httpx.Observe): what the
// metrics add, against BenchmarkRequestLog.
func BenchmarkRequestLogAndMetrics(b *testing.B) {
	mux, _ := benchMux(b)
	m, err := httpx.NewMetrics(prometheus.NewRegistry())
	if err != nil {
		b.Fatal(err)
	}
	benchHandler(b, httpx.Observe(mux, slog.New(slog.NewTextHandler(io.Discard, nil)), m), base+"/suppliers")
}

// BenchmarkOpenAPIProxy is what the proxy adds to a test's request: a
// default page of suppliers served directly and through the proxy.
func BenchmarkOpenAPIProxy(b *testing.B) {
	ts := newServer(b, nil, nil)
	for name, h := range map[string]http.Handler{"direct": ts.mux, "proxied": ts.handler} {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				req := httptest.NewRequest(http.MethodGet, base+"/suppliers", nil)
				req.Header.Set("Authorization", "Bearer "+alphaToken)
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				if rec.Code != http.StatusOK {
					b.Fatalf("status %d", rec.Code)
				}
			}
		})
	}
}
