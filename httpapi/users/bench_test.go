package users_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/procurekit/procure/httpapi/internal/apitest"
	"github.com/procurekit/procure/httpapi/users"
	"github.com/procurekit/procure/internal/cputime"
	"github.com/procurekit/procure/memstore"
	"github.com/procurekit/procure/user"
)

// Benchmarks of the user API. Run them with
//
//	go test ./httpapi/users -run '^$' -bench 'Users' -benchmem
//
// BenchmarkUsersBulkLoad is the figure of the issue: 100,000 users created
// through real HTTP over loopback by 16 concurrent clients. Its allocs/user
// count both sides (client and server share the process); the handler
// benchmarks give the server's share alone.

// benchUsersMux returns the user API over apitest.BenchUserStore.
func benchUsersMux(b *testing.B) (*http.ServeMux, *memstore.Store) {
	b.Helper()
	store := apitest.BenchUserStore(b)
	mux := http.NewServeMux()
	users.Mount(mux, users.Options{
		Users: user.NewService(store), Accounts: store,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	return mux, store
}

func BenchmarkUsersBulkLoad(b *testing.B) {
	const users, workers = 100_000, 16
	bodies := make([][]byte, users)
	for i := range bodies {
		bodies[i] = apitest.BenchUserBody(i)
	}
	var totalElapsed time.Duration
	var totalMallocs, totalBytes uint64
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		mux, store := benchUsersMux(b)
		srv := httptest.NewServer(mux)
		client := &http.Client{Transport: &http.Transport{MaxIdleConns: workers, MaxIdleConnsPerHost: workers, MaxConnsPerHost: workers}}
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		b.StartTimer()

		start := time.Now()
		var next atomic.Int64
		var failed atomic.Int64
		var wg sync.WaitGroup
		for range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					i := int(next.Add(1)) - 1
					if i >= users {
						return
					}
					req, err := http.NewRequest(http.MethodPost, srv.URL+"/v1/users", bytes.NewReader(bodies[i]))
					if err != nil {
						failed.Add(1)
						return
					}
					req.Header["Content-Type"] = []string{"application/json; charset=utf-8"}
					req.Header["Service-Account-Id"] = []string{apitest.BenchAccount}
					req.Header["Service-Api-Key"] = []string{apitest.BenchKey}
					resp, err := client.Do(req)
					if err != nil {
						failed.Add(1)
						continue
					}
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.StatusCode != http.StatusOK {
						failed.Add(1)
					}
				}
			}()
		}
		wg.Wait()
		elapsed := time.Since(start)

		b.StopTimer()
		runtime.ReadMemStats(&after)
		totalElapsed += elapsed
		totalMallocs += after.Mallocs - before.Mallocs
		totalBytes += after.TotalAlloc - before.TotalAlloc
		if n := failed.Load(); n != 0 {
			b.Fatalf("%d of %d creates failed", n, users)
		}
		if _, err := store.UserByUsername(context.Background(), "bench", "USER0099999@example.com"); err != nil {
			b.Fatalf("last user not stored: %v", err)
		}
		client.CloseIdleConnections()
		srv.Close()
		b.StartTimer()
	}
	n := float64(b.N * users)
	b.ReportMetric(n/totalElapsed.Seconds(), "users/s")
	b.ReportMetric(float64(totalMallocs)/n, "allocs/user")
	b.ReportMetric(float64(totalBytes)/n, "B/user")
}

func benchServe(b *testing.B, mux http.Handler, method, target string, body func(i int) []byte) {
	b.Helper()
	w := &apitest.NullWriter{H: http.Header{}}
	b.ReportAllocs()
	// The thread's CPU per request as well (cpu-ns/op): on a shared
	// machine, ns/op measures the scheduler as much as the handler.
	b.ResetTimer()
	defer cputime.PerOp(b)()
	for i := range b.N {
		var rd io.Reader
		if body != nil {
			rd = bytes.NewReader(body(i))
		}
		// http.NewRequest, not httptest.NewRequest, whose request parsing
		// would add its own allocations to the server's.
		req, err := http.NewRequest(method, target, rd)
		if err != nil {
			b.Fatal(err)
		}
		req.RemoteAddr = "192.0.2.1:40000"
		req.Header["Content-Type"] = []string{"application/json; charset=utf-8"}
		req.Header["Service-Account-Id"] = []string{apitest.BenchAccount}
		req.Header["Service-Api-Key"] = []string{apitest.BenchKey}
		clear(w.H)
		w.Status = 0
		mux.ServeHTTP(w, req)
		if w.Status != http.StatusOK {
			b.Fatalf("status %d", w.Status)
		}
	}
}

// BenchmarkUsersCreateHandler is the server's share of a create: routing,
// authentication, decoding, validation, the store, encoding. (Building the
// request and its body adds a few allocations of the benchmark's own.)
func BenchmarkUsersCreateHandler(b *testing.B) {
	mux, _ := benchUsersMux(b)
	bodies := make([][]byte, 0, 1024)
	for i := range cap(bodies) {
		bodies = append(bodies, apitest.BenchUserBody(i))
	}
	// Each iteration needs a new username: rewrite the digits in place.
	body := func(i int) []byte {
		p := bytes.Clone(bodies[i%len(bodies)])
		id := []byte(strconv.Itoa(1_000_000 + i))
		copy(p[len(`{"username":"user`):], id[len(id)-7:])
		return p
	}
	benchServe(b, mux, http.MethodPost, "/v1/users", body)
}

// BenchmarkUsersGetHandler is the server's share of the pre-check.
func BenchmarkUsersGetHandler(b *testing.B) {
	mux, store := benchUsersMux(b)
	svc := user.NewService(store)
	for i := range 1000 {
		in, err := user.ParseInput(apitest.BenchUserBody(i))
		if err != nil {
			b.Fatal(err)
		}
		if _, err := svc.Create(context.Background(), "bench", in); err != nil {
			b.Fatal(err)
		}
	}
	benchServe(b, mux, http.MethodGet, "/v1/users/username/USER0000500@EXAMPLE.COM", nil)
}
