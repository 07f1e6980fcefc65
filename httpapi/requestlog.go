package httpapi

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"time"
)

// RequestLog wraps next (a mux with this package's routes) so that every
// request is logged once, when it ends, at level Info: method, route
// pattern (e.g. "GET /public/community/suppliers/{id}", never the raw path
// or query, which may hold personal data or a secret), status, duration and
// the community the caller authenticated as (empty when authentication
// failed). Headers are never logged.
func RequestLog(log *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		info := &requestInfo{}
		r = r.WithContext(context.WithValue(r.Context(), requestInfoKey{}, info))
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(sw, r)
		pattern := r.Pattern
		if info.route != "" {
			pattern = info.route // set by a handler behind a prefix
		}
		if pattern == "" {
			pattern = "(no route)"
		}
		log.LogAttrs(r.Context(), slog.LevelInfo, "request",
			slog.String("method", r.Method),
			slog.String("route", pattern),
			slog.Int("status", sw.status),
			slog.Duration("duration", time.Since(start)),
			slog.String("community", info.community),
		)
	})
}

type requestInfoKey struct{}

// requestInfo is what handlers tell RequestLog about a request: the
// caller's community; and, for an API served by its Handler behind a
// prefix-stripping router, the prefix and the route as the API's own mux
// matched it with the prefix put back.
type requestInfo struct{ community, prefix, route string }

// noteRoute records for RequestLog the route pattern r matched on an
// API's own mux, when that mux is behind a prefix (SupplierHandler,
// UserHandler); under MountX the outer request's pattern says it already.
func noteRoute(r *http.Request) {
	info, ok := r.Context().Value(requestInfoKey{}).(*requestInfo)
	if !ok || info.prefix == "" {
		return
	}
	method, path, found := strings.Cut(r.Pattern, " ")
	if !found {
		method, path = "", r.Pattern
	} else {
		method += " "
	}
	info.route = method + info.prefix + path
}

// noteCommunity records the caller's community for RequestLog, when the
// request is being logged.
func noteCommunity(r *http.Request, community string) {
	if info, ok := r.Context().Value(requestInfoKey{}).(*requestInfo); ok {
		info.community = community
	}
}

// statusWriter remembers the status a handler wrote.
type statusWriter struct {
	http.ResponseWriter
	status int
	wrote  bool
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
