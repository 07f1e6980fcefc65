package admin

import (
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/procurekit/procure/auth"
	"github.com/procurekit/procure/httpapi/internal/httpx"
)

// Guard checks the admin token of a request as the admin API does:
// `Authorization: Bearer <token>`, compared by hash in constant time,
// with the failed-attempt limit (docs: admin.md "Failed attempts"). A
// host protects its own routes on the admin listener with Wrap - the
// metrics and profiles of docs: operations.md - and passes the same
// Guard in Options, so that one limit counts every failure.
type Guard struct {
	tokenHash auth.Hash
	fails     *failLimiter
	log       *slog.Logger
}

// NewGuard returns the check of opts' Token, with the limit of its
// FailedAuthBurst and FailedAuthEvery; failures are logged at Info to
// its Logger (nil: slog.Default()). It panics when the token is shorter
// than MinTokenBytes.
func NewGuard(opts Options) *Guard {
	if len(opts.Token) < MinTokenBytes {
		panic("admin: Options.Token is " + strconv.Itoa(len(opts.Token)) + " bytes long; it must have at least " + strconv.Itoa(MinTokenBytes))
	}
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	return &Guard{tokenHash: auth.HashSecret(opts.Token), fails: newFailLimiter(opts, time.Now), log: log}
}

// Wrap returns h behind the token: a request without it is answered 401
// with `WWW-Authenticate: Bearer realm="admin"` (429 with Retry-After
// for a client past the limit), in the JSON error model, and never
// reaches h.
func (g *Guard) Wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if g.check(w, r) {
			h.ServeHTTP(w, r)
		}
	})
}

var hdrAdminChallenge = []string{`Bearer realm="admin"`}

// check reports whether r carries the admin token, and answers it
// otherwise. Every answer it lets through is marked never to be stored
// or sniffed.
func (g *Guard) check(w http.ResponseWriter, r *http.Request) bool {
	hdr := w.Header()
	hdr["Cache-Control"] = httpx.HdrNoStore
	hdr["X-Content-Type-Options"] = httpx.HdrNoSniff
	client := clientKey(r)
	if wait := g.fails.blocked(client); wait > 0 {
		tooManyAttempts(w, wait)
		return false
	}
	token, ok := auth.BearerToken(r.Header.Get("Authorization"))
	if !ok || !auth.HashSecret(token).Equal(g.tokenHash) {
		g.fails.failed(client)
		g.log.InfoContext(r.Context(), "admin API authentication failed", "request_id", httpx.RequestID(w), "method", r.Method, "path", r.URL.Path, "client", r.RemoteAddr)
		hdr["Www-Authenticate"] = hdrAdminChallenge
		httpx.WriteError(w, r, g.log, auth.ErrUnauthenticated)
		return false
	}
	return true
}
