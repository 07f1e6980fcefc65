package httpx

import (
	"log/slog"
	"net/http"
	"strings"
	"time"
)

// RequestLog wraps next (a mux with this package's routes) so that every
// request is logged once, when it ends, at level Info: method, route
// (the path of the pattern the request matched, e.g.
// "/public/community/suppliers/{id}"; never the raw path or query, which
// may hold personal data or a secret), status, duration and
// the community the caller authenticated as (empty when authentication
// failed). Headers are never logged.
//
// The request is not cloned to carry what handlers learn (its community,
// the route behind a prefix): they tell the response writer RequestLog
// gives them, found through any wrapper's Unwrap (a wrapper between
// RequestLog and the API without Unwrap, such as http.TimeoutHandler's,
// hides them: the line then has no community). A clone per request
// (WithContext) cost a request more than the rest of the line
// (BenchmarkRequestLog; bench/README.md).
func RequestLog(log *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(sw, r)
		ctx := r.Context()
		h := log.Handler()
		if !h.Enabled(ctx, slog.LevelInfo) {
			return
		}
		route := r.Pattern
		if sw.route != "" {
			route = sw.route // set by a handler behind a prefix
		}
		route = patternPath(route)
		if route == "" {
			route = "(no route)"
		}
		// The record is built here rather than by log.LogAttrs, which
		// would read the clock again and walk the stack for a source
		// position that is always this function.
		end := time.Now()
		rec := slog.NewRecord(end, slog.LevelInfo, "request", 0)
		rec.AddAttrs(
			slog.String("method", r.Method),
			slog.String("route", route),
			slog.Int("status", sw.status),
			slog.Duration("duration", end.Sub(start)),
			slog.String("community", sw.community),
		)
		_ = h.Handle(ctx, rec) // a handler's write error has nowhere to go
	})
}

// logged returns the writer RequestLog gave the request, looking through
// wrappers that offer Unwrap (as http.ResponseController does), or nil
// when the request is not logged.
func logged(w http.ResponseWriter) *statusWriter {
	for {
		switch x := w.(type) {
		case *statusWriter:
			return x
		case interface{ Unwrap() http.ResponseWriter }:
			w = x.Unwrap()
		default:
			return nil
		}
	}
}

// patternPath is the path of a ServeMux pattern: without its method,
// which the line has as its own attribute (and whose space would have
// the text log quote the route: a third of the line's cost).
func patternPath(pattern string) string {
	if _, path, found := strings.Cut(pattern, " "); found {
		return path
	}
	return pattern
}

// noteRoute records for RequestLog the route r matched on an API's own
// mux, when that mux is behind a prefix (an API's Handler);
// under Mount the outer request's pattern says it already.
func noteRoute(w http.ResponseWriter, r *http.Request) {
	if sw := logged(w); sw != nil && sw.prefix != "" {
		sw.route = sw.prefix + patternPath(r.Pattern)
	}
}

// NoteCommunity records the caller's community for RequestLog, when the
// request is being logged.
func NoteCommunity(w http.ResponseWriter, community string) {
	if sw := logged(w); sw != nil {
		sw.community = community
	}
}

// notePrefix records for RequestLog the prefix a router stripped before
// an API's own mux saw the request.
func notePrefix(w http.ResponseWriter, r *http.Request) {
	if sw := logged(w); sw != nil {
		sw.prefix = MountPrefix(r)
	}
}

// statusWriter remembers the status a handler wrote, and what the
// handlers tell RequestLog about the request: the caller's community; and,
// for an API served by its Handler behind a prefix-stripping router, the
// prefix and the route as the API's own mux matched it with the prefix
// put back.
type statusWriter struct {
	http.ResponseWriter
	status                   int
	wrote                    bool
	community, prefix, route string
}

func (w *statusWriter) WriteHeader(code int) {
	if !w.wrote {
		w.status, w.wrote = code, true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	w.wrote = true
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
