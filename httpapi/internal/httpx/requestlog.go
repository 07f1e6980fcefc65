package httpx

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"time"
)

// RequestLog wraps next (a mux with this package's routes) so that every
// request is logged once, when it ends, at level Info: its request id,
// method, route (the path of the pattern the request matched, e.g.
// "/public/community/suppliers/{id}"; never the raw path or query, which
// may hold personal data or a secret), status, duration in milliseconds
// and the community the caller authenticated as (empty when
// authentication failed). Headers are never logged. It is Observe with
// a logger alone.
func RequestLog(log *slog.Logger, next http.Handler) http.Handler {
	return Observe(next, log, nil)
}

// Observe wraps next so that every request gets an id (requestID),
// returned in the X-Request-Id header; is logged as RequestLog says when
// log is not nil; and is counted in m when m is not nil.
//
// The request is not cloned to carry what handlers learn (its community,
// the route behind a prefix, the API): they tell the response writer
// Observe gives them, found through any wrapper's Unwrap (a wrapper
// between Observe and the API without Unwrap, such as
// http.TimeoutHandler's, hides them: the line then has no community). A
// clone per request (WithContext) cost a request more than the rest of
// the line (BenchmarkRequestLog; bench/README.md).
func Observe(next http.Handler, log *slog.Logger, m *Metrics) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		id := requestID(r)
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK, id: id}
		sw.idHeader[0] = id
		w.Header()[HeaderRequestID] = sw.idHeader[:] // no slice of its own to allocate
		if m != nil {
			m.inFlight.Add(1)
			defer m.inFlight.Add(-1)
		}
		next.ServeHTTP(sw, r)
		end := time.Now()
		pattern := r.Pattern
		if sw.route != "" {
			pattern = sw.route // set by a handler behind a prefix
		}
		if m != nil {
			route := pattern
			if route == "" {
				route = noRoute
			}
			api := sw.api
			if api == "" {
				api = otherAPI
			}
			m.observe(sw.stats, api, route, sw.status, end.Sub(start).Seconds(), sw.route == "")
		}
		if log == nil {
			return
		}
		ctx := r.Context()
		h := log.Handler()
		if !h.Enabled(ctx, slog.LevelInfo) {
			return
		}
		route := patternPath(pattern)
		if route == "" {
			route = noRoute
		}
		logRequest(ctx, h, &requestLine{end: end, id: id, method: r.Method, route: route,
			status: sw.status, durationMS: Milliseconds(end.Sub(start)), community: sw.community})
	})
}

// logRequest writes l to h, an enabled handler: through LogHandler's
// fast path when h is one and it can, else as a slog record.
func logRequest(ctx context.Context, h slog.Handler, l *requestLine) {
	if lh, ok := h.(*LogHandler); ok && lh.writeRequest(l) {
		return
	}
	// The record is built here rather than by log.LogAttrs, which
	// would read the clock again and walk the stack for a source
	// position that is always this function.
	rec := slog.NewRecord(l.end, slog.LevelInfo, "request", 0)
	rec.AddAttrs(
		slog.String("request_id", l.id),
		slog.String("method", l.method),
		slog.String("route", l.route),
		slog.Int("status", l.status),
		slog.Float64("duration_ms", l.durationMS),
		slog.String("community", l.community),
	)
	_ = h.Handle(ctx, rec) // a handler's write error has nowhere to go
}

// noRoute is the route of a request no pattern matched; otherAPI the API
// of a route none of the API packages serves (a host's own).
const (
	noRoute  = "(no route)"
	otherAPI = "other"
)

// Milliseconds is d in milliseconds, to the microsecond: how the logs
// give durations (docs: operations.md "Logs").
func Milliseconds(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

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

// noteRoute records for RequestLog the API serving r and, when its mux
// is behind a prefix (an API's Handler), the route r matched there with
// the prefix put back; under Mount the outer request's pattern says it
// already.
func noteRoute(w http.ResponseWriter, r *http.Request, api string, stats *routeStats) {
	sw := logged(w)
	if sw == nil {
		return
	}
	sw.api, sw.stats = api, stats
	if sw.prefix != "" {
		if method, path, found := strings.Cut(r.Pattern, " "); found {
			sw.route = method + " " + sw.prefix + path
		} else {
			sw.route = sw.prefix + r.Pattern
		}
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
// handlers tell RequestLog about the request: the API serving it, the
// caller's community; and,
// for an API served by its Handler behind a prefix-stripping router, the
// prefix and the route as the API's own mux matched it with the prefix
// put back.
type statusWriter struct {
	http.ResponseWriter
	status                        int
	wrote                         bool
	id                            string    // the request id
	idHeader                      [1]string // the X-Request-Id header's value
	community, prefix, route, api string
	stats                         *routeStats // of the Routed handler that served the request
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
