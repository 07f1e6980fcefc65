package httpx

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"syscall"
	"testing"

	"github.com/procurekit/procure"
	"github.com/procurekit/procure/user"
)

// sqlStateError has the shape of a driver's server error (pgconn.PgError,
// lib/pq's Error): an SQLSTATE.
type sqlStateError string

func (e sqlStateError) Error() string    { return "server error " + string(e) }
func (e sqlStateError) SQLState() string { return string(e) }

// retryable has the shape of pgconn's errors that never reached the server.
type retryable bool

func (e retryable) Error() string     { return "connect failed" }
func (e retryable) SafeToRetry() bool { return bool(e) }

type timeoutError struct{}

func (timeoutError) Error() string   { return "i/o timeout" }
func (timeoutError) Timeout() bool   { return true }
func (timeoutError) Temporary() bool { return true }

func TestClassifyUnavailable(t *testing.T) {
	// docs: errors.md and "Limits": a backend that is down or timed
	// out is a 503 UNAVAILABLE, never a 500.
	wrap := func(err error) error { return fmt.Errorf("pgstore: user: %w", err) }
	unavailableErrs := map[string]error{
		"the sentinel":          wrap(procure.ErrUnavailable),
		"a deadline":            wrap(context.DeadlineExceeded),
		"a statement timeout":   wrap(sqlStateError("57014")),
		"an admin shutdown":     wrap(sqlStateError("57P01")),
		"a server starting up":  wrap(sqlStateError("57P03")),
		"a connection failure":  wrap(sqlStateError("08006")),
		"too many connections":  wrap(sqlStateError("53300")),
		"connection refused":    wrap(&net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}),
		"a bare ECONNREFUSED":   wrap(syscall.ECONNREFUSED),
		"a reset connection":    wrap(syscall.ECONNRESET),
		"a dropped connection":  wrap(io.ErrUnexpectedEOF),
		"a network timeout":     wrap(timeoutError{}),
		"nothing reached it":    wrap(retryable(true)),
		"joined with a message": errors.Join(errors.New("context"), sqlStateError("57014")),
	}
	for name, err := range unavailableErrs {
		status, code, msg := Classify(err)
		if status != http.StatusServiceUnavailable || code != CodeUnavailable || msg != "the service is temporarily unavailable: retry after 5 seconds" {
			t.Errorf("%s: %d %s %q; want 503 UNAVAILABLE", name, status, code, msg)
		}
	}
	others := map[string]struct {
		err    error
		status int
	}{
		"a unique violation":   {wrap(sqlStateError("23505")), 500},
		"a syntax error":       {wrap(sqlStateError("42601")), 500},
		"not safe to retry":    {wrap(retryable(false)), 500},
		"a plain error":        {errors.New("boom"), 500},
		"a cancelled request":  {wrap(context.Canceled), 500},
		"not found stays 404":  {wrap(user.ErrNotFound), 404},
		"invalid stays 400":    {procure.Invalid(procure.SourceBody, "username", "is required"), 400},
		"unavailable and 404?": {errors.Join(user.ErrNotFound, procure.ErrUnavailable), 404},
	}
	for name, c := range others {
		if status, _, _ := Classify(c.err); status != c.status {
			t.Errorf("%s: %d; want %d", name, status, c.status)
		}
	}
}

// A request whose client went away (its context canceled) while the store
// worked is not logged as a server failure; a cancellation the client did
// not cause (the store's own) still is.
func TestWriteErrorClientGone(t *testing.T) {
	tests := []struct {
		name       string
		cancel     bool
		err        error
		wantStatus int
		wantLevel  slog.Level
		wantMsg    string
	}{
		{"client gone", true, fmt.Errorf("pgstore: token: %w", context.Canceled), http.StatusServiceUnavailable, slog.LevelInfo, "request abandoned by the client"},
		{"canceled without the client", false, fmt.Errorf("pgstore: token: %w", context.Canceled), http.StatusInternalServerError, slog.LevelError, "request failed"},
		{"another failure of a gone client", true, errors.New("boom"), http.StatusInternalServerError, slog.LevelError, "request failed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var logged []slog.Record
			log := slog.New(recordHandler{&logged})
			ctx, cancel := context.WithCancel(context.Background())
			if tt.cancel {
				cancel()
			} else {
				defer cancel()
			}
			r := httptest.NewRequestWithContext(ctx, http.MethodGet, "/public/community/suppliers", nil)
			w := httptest.NewRecorder()
			WriteError(w, r, log, tt.err)
			if w.Code != tt.wantStatus {
				t.Errorf("status %d, want %d", w.Code, tt.wantStatus)
			}
			if len(logged) != 1 || logged[0].Level != tt.wantLevel || logged[0].Message != tt.wantMsg {
				t.Fatalf("logged %v, want one %s %q", logged, tt.wantLevel, tt.wantMsg)
			}
		})
	}
}

// recordHandler keeps every record logged through it.
type recordHandler struct{ rs *[]slog.Record }

func (h recordHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h recordHandler) Handle(_ context.Context, r slog.Record) error {
	*h.rs = append(*h.rs, r)
	return nil
}
func (h recordHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h recordHandler) WithGroup(string) slog.Handler      { return h }
