// Package health serves the two probes an orchestrator or a load balancer
// asks a node (docs: operations.md "Health"): GET /livez, answered 200
// while the process serves HTTP at all, and GET /readyz, answered 200 when
// every check passes and 503 otherwise - at once when the host begins to
// shut down, before its connections drain, so that traffic moves to other
// nodes first. Both are plain text, need no authentication and are never
// cached.
//
//	probes := health.New(logger, health.Store("store", store))
//	probes.Mount(mux)
//	...
//	probes.Shutdown() // on SIGTERM, before http.Server.Shutdown
//
// A check is a function that returns nil or an error saying what is
// missing; Store makes one of a procure.Readier (memstore and pgstore
// are). The answer of /readyz names every check with ok or fail and the
// error's message - which is why a Readier's messages never hold a
// secret - and the first line says ready or not ready. Results are
// reused for ReuseFor, so that a flood of unauthenticated probes costs
// the database at most one round trip a second; Shutdown takes effect
// at once whatever was reused.
package health

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/procurekit/procure"
	"github.com/procurekit/procure/httpapi/internal/httpx"
)

// The paths Mount serves.
const (
	LivePath  = "/livez"
	ReadyPath = "/readyz"
)

// ReuseFor is how long a readiness result answers later probes.
const ReuseFor = time.Second

// Timeout bounds one round of checks; a check still running then fails
// with "no answer".
const Timeout = 2 * time.Second

// Check is one condition of readiness.
type Check struct {
	// Name names the check in the answer and the log ("store").
	Name string
	// Check returns nil when the condition holds, and otherwise an error
	// whose message (shown to any caller) says what is missing. It must
	// return soon after ctx is done.
	Check func(ctx context.Context) error
}

// Store is a check named name that asks r.Ready.
func Store(name string, r procure.Readier) Check {
	return Check{Name: name, Check: r.Ready}
}

// Probes answers /livez and /readyz over its checks. It is safe for
// concurrent use.
type Probes struct {
	checks   []Check
	log      *slog.Logger
	shutdown atomic.Bool
	now      func() time.Time // time.Now; tests move it

	mu   sync.Mutex // one round of checks at a time
	last *result    // the latest round; nil before the first
}

// result is one round of checks.
type result struct {
	at    time.Time
	ready bool
	body  string
	errs  []error // of each check, in order
}

// New returns the probes of checks, which run in the order given. log
// receives a line when readiness changes (nil: slog.Default()), with
// each failing check's error in full - a driver's message included,
// which the answer leaves out.
func New(log *slog.Logger, checks ...Check) *Probes {
	if log == nil {
		log = slog.Default()
	}
	return &Probes{checks: checks, log: log, now: time.Now}
}

// Shutdown makes /readyz answer 503 "shutting down" from now on, without
// running the checks; /livez still answers 200. Call it when shutdown
// begins, before the server stops accepting connections.
func (p *Probes) Shutdown() {
	if !p.shutdown.Swap(true) {
		p.log.Info("readiness changed", "ready", false, "reason", "shutting down")
	}
}

// ShuttingDown reports whether Shutdown has been called.
func (p *Probes) ShuttingDown() bool { return p.shutdown.Load() }

// Mount registers GET /livez and GET /readyz (and HEAD) on mux; the
// request metrics count them under the API "health".
func (p *Probes) Mount(mux *http.ServeMux) {
	mux.Handle("GET "+LivePath, httpx.Routed("health", p.Live()))
	mux.Handle("GET "+ReadyPath, httpx.Routed("health", p.Ready()))
}

var (
	hdrText = []string{"text/plain; charset=utf-8"}
	okBody  = []byte("ok\n")
)

// Live is the handler of /livez: 200 "ok" whenever it is asked.
func (p *Probes) Live() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		headers(w)
		if r.Method != http.MethodHead {
			_, _ = w.Write(okBody)
		}
	})
}

// Ready is the handler of /readyz: 200 when every check passes and
// Shutdown has not been called, 503 otherwise; the body lists the
// checks.
func (p *Probes) Ready() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ready, body := p.Check(r.Context())
		headers(w)
		if !ready {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		if r.Method != http.MethodHead {
			_, _ = w.Write([]byte(body))
		}
	})
}

func headers(w http.ResponseWriter) {
	h := w.Header()
	h["Content-Type"] = hdrText
	h["Cache-Control"] = httpx.HdrNoStore
	h["X-Content-Type-Options"] = httpx.HdrNoSniff
}

// Check runs the checks (or reuses a round younger than ReuseFor) and
// returns whether the node is ready with the text /readyz answers.
func (p *Probes) Check(ctx context.Context) (ready bool, body string) {
	if p.shutdown.Load() {
		return false, "not ready: shutting down\n"
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.last != nil && p.now().Sub(p.last.at) < ReuseFor {
		return p.last.ready, p.last.body
	}
	res := p.run(ctx)
	if p.shutdown.Load() {
		return false, "not ready: shutting down\n"
	}
	if p.last == nil || p.last.ready != res.ready {
		p.logChange(res)
	}
	p.last = res
	return res.ready, res.body
}

// run runs every check at once, within Timeout. The probe's own context
// is not used beyond its values: a prober that hangs up must not leave a
// failure to be reused by the next one.
func (p *Probes) run(ctx context.Context) *result {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), Timeout)
	defer cancel()
	errs := make([]error, len(p.checks))
	var wg sync.WaitGroup
	for i, c := range p.checks {
		wg.Go(func() { errs[i] = c.Check(ctx) })
	}
	wg.Wait()
	res := &result{at: p.now(), ready: true, errs: errs}
	var b strings.Builder
	for i, c := range p.checks {
		if errs[i] != nil {
			res.ready = false
			b.WriteString("fail " + c.Name + ": " + oneLine(errs[i].Error()) + "\n")
		} else {
			b.WriteString("ok " + c.Name + "\n")
		}
	}
	head := "ready\n"
	if !res.ready {
		head = "not ready\n"
	}
	res.body = head + b.String()
	return res
}

// logChange logs a change of readiness, with the failing checks' errors
// in full.
func (p *Probes) logChange(res *result) {
	if res.ready {
		p.log.Info("readiness changed", "ready", true)
		return
	}
	attrs := []any{"ready", false}
	for i, c := range p.checks {
		if err := res.errs[i]; err != nil {
			attrs = append(attrs, slog.String(c.Name, err.Error()))
			if cause := causes(err); cause != "" {
				attrs = append(attrs, slog.String(c.Name+"_cause", cause))
			}
		}
	}
	p.log.Warn("readiness changed", attrs...)
}

// causes is the text of the errors err wraps beside procure.ErrNotReady
// (procure.NotReady's cause), which its own message leaves out.
func causes(err error) string {
	u, ok := err.(interface{ Unwrap() []error })
	if !ok {
		return ""
	}
	var parts []string
	for _, e := range u.Unwrap() {
		if e != nil && e != procure.ErrNotReady {
			parts = append(parts, e.Error())
		}
	}
	return strings.Join(parts, "; ")
}

// oneLine keeps a message on one line of the answer.
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' {
			return ' '
		}
		return r
	}, s)
}
