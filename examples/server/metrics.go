package main

import (
	"context"
	"net"
	"net/http"
	"net/http/pprof"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/procurekit/procure/httpapi"
)

// newMetrics is the registry of the server's metrics (docs:
// operations.md "Metrics"): the Go runtime's and the process's, and the
// request metrics of both listeners; pgstore adds its own at Open.
func newMetrics() (*prometheus.Registry, *httpapi.RequestMetrics, error) {
	reg := prometheus.NewRegistry()
	for _, c := range []prometheus.Collector{
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	} {
		if err := reg.Register(c); err != nil {
			return nil, nil, err
		}
	}
	m, err := httpapi.NewRequestMetrics(reg)
	if err != nil {
		return nil, nil, err
	}
	return reg, m, nil
}

// operatorRoutes registers the operator's routes of the admin listener
// (docs: operations.md): GET /metrics, behind the admin token unless
// open, and the profiles of net/http/pprof under /debug/pprof/, always
// behind it. They are served from the start, while the data loads.
func operatorRoutes(mux *http.ServeMux, guard *httpapi.AdminGuard, reg *prometheus.Registry, open bool) {
	metrics := promhttp.HandlerFor(reg, promhttp.HandlerOpts{
		ErrorHandling: promhttp.ContinueOnError, // a failed collector must not hide the rest
		// A scrape walks every series: a few at once are plenty, and
		// an open /metrics must not be a way to load the node.
		MaxRequestsInFlight: 4,
		Timeout:             10 * time.Second,
	})
	if !open {
		metrics = guard.Wrap(metrics)
	}
	mux.Handle("GET /metrics", httpapi.Routed("metrics", metrics))

	profile := func(h http.HandlerFunc, defaultSeconds int) http.Handler {
		return httpapi.Routed("pprof", guard.Wrap(longWrite(h, defaultSeconds)))
	}
	// Index serves every named profile (heap, goroutine, allocs, block,
	// mutex, threadcreate) at /debug/pprof/NAME.
	mux.Handle("GET /debug/pprof/", profile(pprof.Index, 0))
	mux.Handle("GET /debug/pprof/cmdline", profile(pprof.Cmdline, 0))
	mux.Handle("GET /debug/pprof/profile", profile(pprof.Profile, 30))
	mux.Handle("GET /debug/pprof/trace", profile(pprof.Trace, 1))
	mux.Handle("GET /debug/pprof/symbol", profile(pprof.Symbol, 0))
	mux.Handle("POST /debug/pprof/symbol", profile(pprof.Symbol, 0))
}

// longWrite lets a profile or trace that records for ?seconds=N (or
// defaultSeconds) run past the server's write timeout: its write
// deadline moves to the end of the recording plus writeTimeout.
// net/http/pprof refuses a duration at or above the server's
// WriteTimeout, which it reads from the request's context, so the
// handler sees a server without one; the deadline set here bounds it
// instead.
func longWrite(h http.HandlerFunc, defaultSeconds int) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		secs := defaultSeconds
		if v := r.URL.Query().Get("seconds"); v != "" {
			if n, err := strconv.Atoi(v); err == nil && n > 0 {
				secs = n
			}
		}
		if secs > 0 {
			_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(time.Duration(secs)*time.Second + writeTimeout))
			r = r.WithContext(context.WithValue(r.Context(), http.ServerContextKey, &http.Server{}))
		}
		h(w, r)
	})
}

// closeAll closes the listeners.
func closeAll(ls []net.Listener) {
	for _, l := range ls {
		l.Close()
	}
}
