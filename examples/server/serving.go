package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/procurekit/procure"
	"github.com/procurekit/procure/httpapi"
	"github.com/procurekit/procure/httpapi/health"
)

// storeCheck is the readiness check of the store, which exists only once
// the data has loaded: until then the node is "loading data".
type storeCheck struct {
	r atomic.Pointer[procure.Readier]
}

func (c *storeCheck) set(r procure.Readier) { c.r.Store(&r) }

func (c *storeCheck) ready(ctx context.Context) error {
	r := c.r.Load()
	if r == nil {
		return procure.NotReady("starting: loading data", nil)
	}
	return (*r).Ready(ctx)
}

// handlerSwitch serves the handler set last: a listener's routes, which
// exist only once the data has loaded.
type handlerSwitch struct{ h atomic.Pointer[http.Handler] }

func newSwitch(h http.Handler) *handlerSwitch {
	s := &handlerSwitch{}
	s.set(h)
	return s
}

func (s *handlerSwitch) set(h http.Handler) { s.h.Store(&h) }

func (s *handlerSwitch) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	(*s.h.Load()).ServeHTTP(w, r)
}

// starting answers every request while the data loads: 503 UNAVAILABLE
// with Retry-After, as the APIs answer when their backend is down.
func starting() http.Handler {
	body := []byte(`{"code":"` + httpapi.CodeUnavailable + `","message":"the server is starting: its data is loading; retry later"}` + "\n")
	retry := strconv.Itoa(httpapi.RetryAfterSeconds)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Type", "application/json")
		h.Set("Retry-After", retry)
		h.Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write(body)
	})
}

// hostMux is a listener's routes: the probes (docs: operations.md
// "Health"), and everything else from routes; with routes nil, the
// probes alone, for the caller to mount its routes beside them.
func hostMux(probes *health.Probes, routes http.Handler) *http.ServeMux {
	mux := http.NewServeMux()
	probes.Mount(mux)
	if routes != nil {
		mux.Handle("/", routes)
	}
	return mux
}

// serving is the servers running on their listeners.
type serving struct {
	servers []*http.Server
	errc    chan error // what each Serve returned
	pending int        // Serves whose return has not been read
}

// startServing runs each server on its listener.
func startServing(servers []*http.Server, listeners []net.Listener) *serving {
	sv := &serving{servers: servers, errc: make(chan error, len(servers)), pending: len(servers)}
	for i, srv := range servers {
		go func() { sv.errc <- srv.Serve(listeners[i]) }()
	}
	return sv
}

// wait serves until ctx is done or a server fails, then shuts down (stop).
func (sv *serving) wait(ctx context.Context, log *slog.Logger, probes *health.Probes, delay time.Duration) error {
	var failed error
	select {
	case failed = <-sv.errc: // a Serve failed before any shutdown
		sv.pending--
	case <-ctx.Done():
	}
	if err := sv.stop(log, probes, delay); failed == nil {
		failed = err
	}
	if failed != nil && !errors.Is(failed, http.ErrServerClosed) {
		return failed
	}
	log.Info("stopped")
	return nil
}

// stop shuts the servers down: /readyz answers 503 at once; after delay,
// while everything else is still served, the listeners close and
// requests in flight get up to shutdownTimeout to finish.
func (sv *serving) stop(log *slog.Logger, probes *health.Probes, delay time.Duration) error {
	probes.Shutdown()
	if delay > 0 {
		log.Info("shutting down: not ready, still serving", "delay_ms", delay.Milliseconds())
		time.Sleep(delay)
	}
	log.Info("shutting down", "grace_ms", shutdownTimeout.Milliseconds())
	sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	var failed error
	for _, srv := range sv.servers {
		if err := srv.Shutdown(sctx); err != nil && failed == nil {
			failed = fmt.Errorf("shutdown: %w", err)
		}
	}
	for ; sv.pending > 0; sv.pending-- {
		if err := <-sv.errc; err != nil && !errors.Is(err, http.ErrServerClosed) && failed == nil {
			failed = err
		}
	}
	return failed
}
