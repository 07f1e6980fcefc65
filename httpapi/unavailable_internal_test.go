package httpapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
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
		status, code, msg := classify(err)
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
		if status, _, _ := classify(c.err); status != c.status {
			t.Errorf("%s: %d; want %d", name, status, c.status)
		}
	}
}
