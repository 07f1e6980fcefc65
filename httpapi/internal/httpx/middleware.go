package httpx

import (
	"log/slog"
	"net/http"
	"sort"
	"strings"
)

// recoverer turns a panic in next into a 500 with the JSON error body and
// logs the panic value. http.ErrAbortHandler is re-raised, as net/http
// expects.
func recoverer(log *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			v := recover()
			if v == nil {
				return
			}
			if v == http.ErrAbortHandler {
				panic(v)
			}
			log.ErrorContext(r.Context(), "panic serving request", "request_id", RequestID(w), "method", r.Method, "path", r.URL.Path, "panic", v)
			WriteJSON(w, http.StatusInternalServerError, ErrorBody{Code: CodeInternal, Message: "internal server error"})
		}()
		next.ServeHTTP(w, r)
	})
}

// methodNotAllowed answers any method outside allowed with 405, an Allow
// header and the JSON error body. GET implies HEAD.
func methodNotAllowed(allowed ...string) http.Handler {
	set := map[string]bool{}
	for _, m := range allowed {
		set[m] = true
		if m == http.MethodGet {
			set[http.MethodHead] = true
		}
	}
	list := make([]string, 0, len(set))
	for m := range set {
		list = append(list, m)
	}
	sort.Strings(list)
	allow := strings.Join(list, ", ")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Allow", allow)
		WriteJSON(w, http.StatusMethodNotAllowed, ErrorBody{
			Code:    CodeMethodNotAllowed,
			Message: "method " + r.Method + " is not allowed on this path; allowed: " + allow,
		})
	})
}

// NotFound answers an unknown path under an API's prefix with the JSON
// error body.
func NotFound() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		WriteJSON(w, http.StatusNotFound, ErrorBody{Code: CodeNotFound, Message: "no route for " + r.URL.Path})
	})
}

// Router registers an API's routes on a mux, each handler behind a
// recoverer that logs a panic to Log and answers it 500. API names the
// API in the request metrics ("suppliers").
type Router struct {
	Mux *http.ServeMux
	Log *slog.Logger
	API string
}

// Handle registers the handler of each method on path, and the 405
// answer for every other method on the same path.
func (rt Router) Handle(path string, methods map[string]http.Handler) {
	names := make([]string, 0, len(methods))
	for m, h := range methods {
		names = append(names, m)
		rt.Mux.Handle(m+" "+path, Routed(rt.API, recoverer(rt.Log, h)))
	}
	rt.Mux.Handle(path, Routed(rt.API, methodNotAllowed(names...)))
}

// NotFound registers the JSON 404 of the API's unknown paths at path.
func (rt Router) NotFound(path string) {
	rt.Mux.Handle(path, Routed(rt.API, NotFound()))
}

// Routed tells RequestLog the API and the route h serves (noteRoute).
func Routed(api string, h http.Handler) http.Handler {
	stats := &routeStats{}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		noteRoute(w, r, api, stats)
		h.ServeHTTP(w, r)
	})
}
