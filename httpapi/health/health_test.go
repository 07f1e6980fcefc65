package health_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/procurekit/procure"
	"github.com/procurekit/procure/httpapi/health"
	"github.com/procurekit/procure/memstore"
)

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func TestProbes(t *testing.T) {
	failing := health.Check{Name: "cache", Check: func(context.Context) error {
		return procure.NotReady("supplier cache loading: 1 of 2 communities loaded", nil)
	}}
	slow := health.Check{Name: "slow", Check: func(ctx context.Context) error {
		<-ctx.Done() // gives up when the round's timeout passes
		return errors.New("no answer\nwithin the timeout")
	}}
	store := health.Store("store", memstore.New())
	tests := []struct {
		name   string
		checks []health.Check
		method string
		path   string
		status int
		body   string
	}{
		{"live", nil, "GET", "/livez", 200, "ok\n"},
		{"live head", nil, "HEAD", "/livez", 200, ""},
		{"no checks", nil, "GET", "/readyz", 200, "ready\n"},
		{"memstore", []health.Check{store}, "GET", "/readyz", 200, "ready\nok store\n"},
		{"one fails", []health.Check{store, failing}, "GET", "/readyz", 503,
			"not ready\nok store\nfail cache: supplier cache loading: 1 of 2 communities loaded\n"},
		{"head not ready", []health.Check{failing}, "HEAD", "/readyz", 503, ""},
		{"live while not ready", []health.Check{failing}, "GET", "/livez", 200, "ok\n"},
		{"a check that times out, on one line", []health.Check{slow, store}, "GET", "/readyz", 503,
			"not ready\nfail slow: no answer within the timeout\nok store\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			mux := http.NewServeMux()
			health.New(quiet(), tc.checks...).Mount(mux)
			rec := httptest.NewRecorder()
			mux.ServeHTTP(rec, httptest.NewRequest(tc.method, tc.path, nil))
			if rec.Code != tc.status || rec.Body.String() != tc.body {
				t.Errorf("%s %s: %d %q; want %d %q", tc.method, tc.path, rec.Code, rec.Body.String(), tc.status, tc.body)
			}
			for k, v := range map[string]string{"Content-Type": "text/plain; charset=utf-8", "Cache-Control": "no-store"} {
				if got := rec.Header().Get(k); got != v {
					t.Errorf("%s: %q; want %q", k, got, v)
				}
			}
		})
	}
}

// Only GET and HEAD are served.
func TestProbesMethods(t *testing.T) {
	mux := http.NewServeMux()
	health.New(quiet()).Mount(mux)
	for _, path := range []string{"/livez", "/readyz"} {
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, path, nil))
		if rec.Code != http.StatusMethodNotAllowed {
			t.Errorf("POST %s: %d; want 405", path, rec.Code)
		}
	}
}
