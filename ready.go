package procure

import (
	"context"
	"errors"
)

// ErrNotReady is matched (with errors.Is) by the error of Readier.Ready
// when the backend cannot answer correctly now.
var ErrNotReady = errors.New("not ready")

// Readier is a backend that can say whether it can answer correctly now:
// what a readiness probe asks before it sends the node traffic
// (docs: operations.md "Health"). memstore and pgstore implement it;
// httpapi/health turns it into GET /readyz.
type Readier interface {
	// Ready returns nil when the backend can serve reads and writes
	// correctly now, and otherwise an error matching ErrNotReady whose
	// message says, in a few words meant for an operator, what is
	// missing ("database does not answer", "supplier cache loading: 2 of
	// 3 communities"). The message never holds a secret or a connection
	// string: probes are answered without authentication. Ready is
	// cheap (at most one round trip to a database) and returns within
	// ctx's deadline; it is safe for concurrent use.
	Ready(ctx context.Context) error
}

// NotReady returns an error matching ErrNotReady with the message msg,
// and matching cause (when not nil) too, whose text it does not show: a
// driver's message may name hosts and users, which a probe must not
// tell an unauthenticated caller. Log the cause where it is known.
func NotReady(msg string, cause error) error { return &notReady{msg: msg, cause: cause} }

type notReady struct {
	msg   string
	cause error
}

func (e *notReady) Error() string { return e.msg }

func (e *notReady) Unwrap() []error {
	if e.cause == nil {
		return []error{ErrNotReady}
	}
	return []error{ErrNotReady, e.cause}
}
