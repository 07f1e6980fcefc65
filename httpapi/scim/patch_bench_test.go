package scim_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/procurekit/procure/httpapi/internal/apitest"
	"github.com/procurekit/procure/httpapi/scim"
	"github.com/procurekit/procure/httpapi/users"
	"github.com/procurekit/procure/internal/pgtest"
	"github.com/procurekit/procure/memstore"
	"github.com/procurekit/procure/pgstore"
	"github.com/procurekit/procure/user"
)

// BenchmarkSCIMPatchWorstCase measures the costliest SCIM PATCH bodies of
// issue 19 item 1, in process, over memstore and PostgreSQL (pgtest):
//
//   - refused: 70,000 distinct role codes in one add (the body of the
//     report), refused before the store is called;
//   - accepted: 1,000 adds of 120 codes each (the most a 1 MiB body holds)
//     into a list of 930 that holds them all, applied under the user's
//     update;
//   - reads: another community's GET /v1/users/username/{u} while 5
//     goroutines send the refused or the accepted body without pause;
//     p50-ms and p99-ms are the reads' latencies.
//
// Run it with
//
//	go test ./httpapi/scim -run '^$' -bench SCIMPatchWorstCase -benchtime 200x
//
// The targets (issue 19): a PATCH under 50 ms, the other community's
// reads under 20 ms at p99.
func BenchmarkSCIMPatchWorstCase(b *testing.B) {
	b.Run("memstore", func(b *testing.B) {
		store, err := memstore.LoadReader(scimFixture().Reader())
		if err != nil {
			b.Fatal(err)
		}
		benchSCIMPatchWorstCase(b, store, store)
	})
	b.Run("postgres", func(b *testing.B) {
		store, err := pgstore.Open(context.Background(), pgtest.NewDatabase(b))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(store.Close)
		if err := store.Import(context.Background(), scimFixture()); err != nil {
			b.Fatal(err)
		}
		benchSCIMPatchWorstCase(b, store, store)
	})
}

func benchSCIMPatchWorstCase(b *testing.B, store user.Store, accounts scimAccounts) {
	svc := user.NewService(store)
	mux := http.NewServeMux()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	scim.Mount(mux, scim.Options{Users: svc, Accounts: accounts, Logger: log})
	users.Mount(mux, users.Options{Users: svc, Accounts: accounts, Logger: log})
	// alice holds 930 roles, R0 to R929 (and the auto-role).
	if _, err := svc.Modify(context.Background(), "community-a", "a-0001", 0, func(u *user.User) error {
		u.Roles = nil
		for i := range 930 {
			u.Roles = append(u.Roles, user.Code{Code: "R" + strconv.Itoa(i)})
		}
		return nil
	}); err != nil {
		b.Fatal(err)
	}
	refused := []byte(patchBody(`[{"op":"add","path":"` + scimExt + `:roleCodes","value":` + codeStrings(70000) + `}]`))
	var ops strings.Builder
	held := make([]string, 120)
	for i := range held {
		held[i] = `"R` + strconv.Itoa(i) + `"`
	}
	op := `{"op":"add","path":"` + scimExt + `:roleCodes","value":[` + strings.Join(held, ",") + `]}`
	for i := range 1000 {
		if i > 0 {
			ops.WriteByte(',')
		}
		ops.WriteString(op)
	}
	accepted := []byte(patchBody("[" + ops.String() + "]"))
	if len(accepted) > users.MaxBodyBytes || len(refused) > users.MaxBodyBytes {
		b.Fatalf("bodies of %d and %d bytes: over the limit", len(accepted), len(refused))
	}
	patch := func(body []byte) *http.Request {
		r, _ := http.NewRequest(http.MethodPatch, "/scim/v2/Users/a-0001", bytes.NewReader(body))
		r.RemoteAddr = "192.0.2.1:40000"
		r.Header["Authorization"] = []string{"Bearer " + apitest.KeyA}
		r.Header["Content-Type"] = []string{"application/scim+json"}
		return r
	}
	read := func() *http.Request {
		r, _ := http.NewRequest(http.MethodGet, "/v1/users/username/carol", nil)
		r.RemoteAddr = "192.0.2.2:40000"
		r.Header["Service-Account-Id"] = []string{apitest.AccountB}
		r.Header["Service-Api-Key"] = []string{apitest.KeyB}
		return r
	}
	serve := func(r *http.Request, want int) {
		w := &apitest.NullWriter{H: http.Header{}}
		mux.ServeHTTP(w, r)
		if w.Status != want {
			b.Errorf("%s %s: status %d; want %d", r.Method, r.URL.Path, w.Status, want)
		}
	}
	for _, body := range []struct {
		name   string
		body   []byte
		status int
	}{{"refused-70000-codes", refused, 400}, {"accepted-1000-adds", accepted, 200}} {
		b.Run(body.name, func(b *testing.B) {
			b.SetBytes(int64(len(body.body)))
			for b.Loop() {
				serve(patch(body.body), body.status)
			}
		})
		b.Run("reads-during-5/"+body.name, func(b *testing.B) {
			stop := make(chan struct{})
			var wg sync.WaitGroup
			for range 5 {
				wg.Go(func() {
					for {
						select {
						case <-stop:
							return
						default:
							serve(patch(body.body), body.status)
						}
					}
				})
			}
			lat := make([]time.Duration, 0, b.N)
			for b.Loop() {
				start := time.Now()
				serve(read(), 200)
				lat = append(lat, time.Since(start))
			}
			close(stop)
			wg.Wait()
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2])/1e6, "p50-ms")
			b.ReportMetric(float64(lat[len(lat)*99/100])/1e6, "p99-ms")
		})
	}
}
