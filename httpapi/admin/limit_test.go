package admin_test

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/procurekit/procure/httpapi/admin"
	"github.com/procurekit/procure/httpapi/internal/httpx"
	"github.com/procurekit/procure/memstore"
)

// A client that fails the admin token AdminFailBurst times is answered 429
// with Retry-After, before its token is looked at (the right token too);
// another client is not affected (docs: admin.md "Failed attempts").
func TestAdminFailedAttempts(t *testing.T) {
	store := memstore.New()
	h := admin.Handler(admin.Options{Token: adminTestToken, Store: store, Logger: slog.New(slog.DiscardHandler)})
	do := func(client, token string) *httptest.ResponseRecorder {
		t.Helper()
		r := httptest.NewRequest("GET", "/communities/acme", nil)
		r.RemoteAddr = client
		r.Header.Set("Authorization", "Bearer "+token)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	const guesser, other = "192.0.2.7:40000", "198.51.100.9:40000"
	for i := range admin.FailBurst {
		if w := do(guesser, "guess-0123456789abcdef"); w.Code != http.StatusUnauthorized {
			t.Fatalf("failure %d: %d, want 401", i+1, w.Code)
		}
	}
	for _, token := range []string{"guess-0123456789abcdef", adminTestToken} {
		w := do(guesser, token)
		if w.Code != http.StatusTooManyRequests {
			t.Fatalf("after %d failures, token %.5s...: %d, want 429", admin.FailBurst, token, w.Code)
		}
		if got := w.Header().Get("Retry-After"); got != "6" {
			t.Errorf("Retry-After %q, want 6 (one attempt per %v)", got, admin.FailEvery)
		}
		var body httpx.ErrorBody
		if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil || body.Code != httpx.CodeTooManyRequests {
			t.Errorf("body %s (%v), want code %s", w.Body, err, httpx.CodeTooManyRequests)
		}
	}
	// The same host on another port is the same client; another host is not.
	if w := do("192.0.2.7:40001", adminTestToken); w.Code != http.StatusTooManyRequests {
		t.Errorf("the guesser from another port: %d, want 429", w.Code)
	}
	if w := do(other, adminTestToken); w.Code != http.StatusNotFound { // authenticated: the community is unknown
		t.Errorf("another client with the token: %d, want 404 (authenticated)", w.Code)
	}
	// The document needs no token and is never limited.
	r := httptest.NewRequest("GET", "/openapi.json", nil)
	r.RemoteAddr = guesser
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != http.StatusOK {
		t.Errorf("GET /openapi.json from the limited client: %d", w.Code)
	}

	// With the limit off, failures go on being 401s.
	off := admin.Handler(admin.Options{Token: adminTestToken, Store: store, Logger: slog.New(slog.DiscardHandler), FailedAuthBurst: -1})
	for i := range 3 * admin.FailBurst {
		r := httptest.NewRequest("GET", "/communities/acme", nil)
		r.RemoteAddr = guesser
		w := httptest.NewRecorder()
		off.ServeHTTP(w, r)
		if w.Code != http.StatusUnauthorized {
			t.Fatalf("limit off, failure %d: %d, want 401", i+1, w.Code)
		}
	}
}
