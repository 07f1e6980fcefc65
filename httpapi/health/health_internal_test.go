package health

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/procurekit/procure"
	"github.com/procurekit/procure/internal/syncbuf"
)

// fakeClock is a clock the test moves.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time      { return c.t }
func (c *fakeClock) add(d time.Duration) { c.t = c.t.Add(d) }
func get(t *testing.T, h http.Handler) (int, string, http.Header) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/readyz", nil))
	return rec.Code, rec.Body.String(), rec.Header()
}

// A round of checks answers the probes of the next ReuseFor: the store's
// check runs once however many probes arrive, and a change shows once
// that time has passed. Shutdown shows at once.
func TestReadyReusesAndShutdownIsImmediate(t *testing.T) {
	var calls atomic.Int32
	var fail atomic.Bool
	clock := &fakeClock{t: time.Unix(1_000_000, 0)}
	var logs syncbuf.Buffer
	p := New(slog.New(slog.NewTextHandler(&logs, nil)), Check{Name: "store", Check: func(context.Context) error {
		calls.Add(1)
		if fail.Load() {
			return procure.NotReady("database does not answer", errors.New("dial tcp 10.1.2.3:5432: connection refused"))
		}
		return nil
	}})
	p.now = clock.now
	ready := p.Ready()

	for range 3 {
		if code, body, _ := get(t, ready); code != 200 || body != "ready\nok store\n" {
			t.Fatalf("ready: %d %q", code, body)
		}
	}
	if calls.Load() != 1 {
		t.Errorf("the check ran %d times for three probes within ReuseFor; want 1", calls.Load())
	}

	fail.Store(true)
	if code, _, _ := get(t, ready); code != 200 {
		t.Errorf("a reused round answered %d; want 200", code)
	}
	clock.add(ReuseFor)
	code, body, _ := get(t, ready)
	if code != http.StatusServiceUnavailable || body != "not ready\nfail store: database does not answer\n" {
		t.Errorf("after ReuseFor: %d %q", code, body)
	}
	if strings.Contains(body, "10.1.2.3") {
		t.Errorf("the answer shows the cause: %q", body)
	}
	if !strings.Contains(logs.String(), "store_cause=\"dial tcp 10.1.2.3:5432: connection refused\"") {
		t.Errorf("the log lacks the cause:\n%s", logs.String())
	}

	fail.Store(false)
	clock.add(ReuseFor)
	if code, _, _ := get(t, ready); code != 200 {
		t.Errorf("recovered: %d; want 200", code)
	}
	p.Shutdown()
	before := calls.Load()
	if code, body, _ := get(t, ready); code != http.StatusServiceUnavailable || body != "not ready: shutting down\n" {
		t.Errorf("after Shutdown (within ReuseFor of a ready round): %d %q", code, body)
	}
	if calls.Load() != before {
		t.Errorf("checks ran after Shutdown")
	}
	if code, body, _ := get(t, p.Live()); code != 200 || body != "ok\n" {
		t.Errorf("livez after Shutdown: %d %q; want 200 ok", code, body)
	}
	for _, want := range []string{"ready=true", "ready=false", `reason="shutting down"`} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("the log lacks %s:\n%s", want, logs.String())
		}
	}
}
