package scim_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"testing"

	"github.com/procurekit/procure/httpapi/internal/apitest"
	"github.com/procurekit/procure/httpapi/scim"
	"github.com/procurekit/procure/httpapi/users"
	"github.com/procurekit/procure/user"
)

// Benchmarks of the SCIM endpoint against the equivalent /v1/users calls,
// in process (the handlers, routing and authentication included; no
// network). Issue 13's target: a SCIM create and a filtered lookup cost at
// most 1.5x the /v1/users create and get. Run them with
//
//	go test ./httpapi/scim -run '^$' -bench 'SCIMvsUsers' -benchmem
//
// On the shared 2-core development machine wall times swing by 2-3x from
// run to run; the CPU profile of the handlers (go test -cpuprofile, the
// authed wrappers' cumulative time over 30,000 calls each) is steadier:
// create 0.67 s SCIM vs 0.72 s /v1/users, lookup 0.11 s vs 0.11 s. Server
// allocations per call: create 94 vs 79, lookup 21 vs 25.

// benchSCIMMux mounts SCIM and /v1/users over apitest.BenchUserStore,
// with 1,000 users created through the service.
func benchSCIMMux(b *testing.B) http.Handler {
	b.Helper()
	store := apitest.BenchUserStore(b)
	svc := user.NewService(store)
	mux := http.NewServeMux()
	users.Mount(mux, users.Options{Users: svc, Accounts: store, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	scim.Mount(mux, scim.Options{Users: svc, Accounts: store, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	for i := range 1000 {
		in, err := user.ParseInput(apitest.BenchUserBody(i))
		if err != nil {
			b.Fatal(err)
		}
		if _, err := svc.Create(context.Background(), "bench", in); err != nil {
			b.Fatal(err)
		}
	}
	return mux
}

// benchSCIMBody is benchUserBody's user as a SCIM client sends it.
func benchSCIMBody(i int) []byte {
	return fmt.Appendf(nil, `{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User","urn:procurekit:params:scim:schemas:extension:procure:2.0:User"],`+
		`"userName":"user%07d@example.com","externalId":"E%07d","name":{"givenName":"First%d","familyName":"Last%d"},`+
		`"displayName":"First%d Last%d (OU-%d)","emails":[{"value":"user%07d@example.com","type":"work","primary":true}],`+
		`"phoneNumbers":[{"value":"+64 4 555 %04d","type":"work"}],"active":true,`+
		`"urn:procurekit:params:scim:schemas:extension:procure:2.0:User":{"organisationUnits":[{"code":"OU-%d"}],`+
		`"roles":[{"code":"BUYER"},{"code":"APPROVER"}],"buyerGroups":[{"code":"BG-%d"}],`+
		`"attributes":[{"name":"costCentre","value":"CC-%d"}],"approverGroups":[{"code":"AG-%d"}]}}`,
		i, i, i, i, i, i, i%50, i, i%10000, i%50, i%20, i%300, i%10)
}

// benchRun serves b.N requests built by next and checks each status.
func benchRun(b *testing.B, h http.Handler, want int, next func(i int) *http.Request) {
	b.Helper()
	w := &apitest.NullWriter{H: http.Header{}}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		req := next(i)
		clear(w.H)
		w.Status = 0
		h.ServeHTTP(w, req)
		if w.Status != want {
			b.Fatalf("status %d; want %d", w.Status, want)
		}
	}
}

func benchRequest(b *testing.B, method, target string, body []byte, scim bool) *http.Request {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, target, rd)
	if err != nil {
		b.Fatal(err)
	}
	req.RemoteAddr = "192.0.2.1:40000"
	if scim {
		req.Header["Authorization"] = []string{"Bearer " + apitest.BenchKey}
		req.Header["Content-Type"] = []string{"application/scim+json"}
	} else {
		req.Header["Service-Account-Id"] = []string{apitest.BenchAccount}
		req.Header["Service-Api-Key"] = []string{apitest.BenchKey}
		req.Header["Content-Type"] = []string{"application/json; charset=utf-8"}
	}
	return req
}

// uniqueBody rewrites the 7 digits after prefix so that each iteration
// creates a new username.
func uniqueBody(body []byte, prefix string, i int) []byte {
	p := bytes.Clone(body)
	at := bytes.Index(p, []byte(prefix)) + len(prefix)
	id := strconv.Itoa(10_000_000 + i)
	copy(p[at:], id[len(id)-7:])
	return p
}

func BenchmarkSCIMvsUsersCreate(b *testing.B) {
	b.Run("users", func(b *testing.B) {
		h := benchSCIMMux(b)
		body := apitest.BenchUserBody(5)
		benchRun(b, h, http.StatusOK, func(i int) *http.Request {
			return benchRequest(b, http.MethodPost, "/v1/users", uniqueBody(body, `"username":"user`, 1000+i), false)
		})
	})
	b.Run("scim", func(b *testing.B) {
		h := benchSCIMMux(b)
		body := benchSCIMBody(5)
		benchRun(b, h, http.StatusCreated, func(i int) *http.Request {
			return benchRequest(b, http.MethodPost, "/scim/v2/Users", uniqueBody(body, `"userName":"user`, 1000+i), true)
		})
	})
}

func BenchmarkSCIMvsUsersLookup(b *testing.B) {
	b.Run("users", func(b *testing.B) {
		h := benchSCIMMux(b)
		benchRun(b, h, http.StatusOK, func(int) *http.Request {
			return benchRequest(b, http.MethodGet, "/v1/users/username/USER0000500@EXAMPLE.COM", nil, false)
		})
	})
	b.Run("scim", func(b *testing.B) {
		h := benchSCIMMux(b)
		target := "/scim/v2/Users?filter=" + url.QueryEscape(`userName eq "USER0000500@EXAMPLE.COM"`)
		benchRun(b, h, http.StatusOK, func(int) *http.Request {
			return benchRequest(b, http.MethodGet, target, nil, true)
		})
	})
}

// The same calls over real HTTP on loopback (an httptest.Server in the
// benchmark's process, one keep-alive connection): what a client sees,
// connection handling and both sides' encoding included.
func benchHTTP(b *testing.B, want int, next func(i int) *http.Request) {
	b.Helper()
	srv := httptest.NewServer(benchSCIMMux(b))
	defer srv.Close()
	client := srv.Client()
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		req := next(i)
		u, err := url.Parse(srv.URL + req.URL.RequestURI())
		if err != nil {
			b.Fatal(err)
		}
		req.URL, req.Host = u, u.Host
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want {
			b.Fatalf("status %d; want %d", resp.StatusCode, want)
		}
	}
}

func BenchmarkSCIMvsUsersHTTPCreate(b *testing.B) {
	b.Run("users", func(b *testing.B) {
		body := apitest.BenchUserBody(5)
		benchHTTP(b, http.StatusOK, func(i int) *http.Request {
			return benchRequest(b, http.MethodPost, "/v1/users", uniqueBody(body, `"username":"user`, 1000+i), false)
		})
	})
	b.Run("scim", func(b *testing.B) {
		body := benchSCIMBody(5)
		benchHTTP(b, http.StatusCreated, func(i int) *http.Request {
			return benchRequest(b, http.MethodPost, "/scim/v2/Users", uniqueBody(body, `"userName":"user`, 1000+i), true)
		})
	})
}

func BenchmarkSCIMvsUsersHTTPLookup(b *testing.B) {
	b.Run("users", func(b *testing.B) {
		benchHTTP(b, http.StatusOK, func(int) *http.Request {
			return benchRequest(b, http.MethodGet, "/v1/users/username/USER0000500@EXAMPLE.COM", nil, false)
		})
	})
	b.Run("scim", func(b *testing.B) {
		target := "/scim/v2/Users?filter=" + url.QueryEscape(`userName eq "USER0000500@EXAMPLE.COM"`)
		benchHTTP(b, http.StatusOK, func(int) *http.Request {
			return benchRequest(b, http.MethodGet, target, nil, true)
		})
	})
}
