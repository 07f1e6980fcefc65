// Command baseline is the yardstick of the load harness: a minimal net/http
// server that answers each recorded request (method and request URI) with
// the recorded status, headers and body, precomputed. It does no routing
// beyond one map lookup, no authentication, no encoding: whatever it
// reaches is the ceiling any handler on the same net/http stack, machine
// and client can reach.
//
//	go run ./bench/baseline -addr 127.0.0.1:8091 -fixtures responses.json
//
// bench/cmd/loadtest records the fixtures from the real server and starts
// this program itself; see bench/README.md.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/procurekit/procure/bench/internal/fixture"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "baseline:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("baseline", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:8091", "listen `address`")
	path := fs.String("fixtures", "", "recorded responses (JSON, bench/internal/fixture) to serve")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *path == "" {
		return errors.New("-fixtures: is required")
	}
	h, err := loadHandler(*path)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second, IdleTimeout: 120 * time.Second}
	fmt.Fprintf(stdout, "baseline: serving %d recorded responses on http://%s\n", len(h), ln.Addr())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return srv.Shutdown(sctx)
}

// prepared is a response ready to write: nothing is computed per request.
type prepared struct {
	status int
	header http.Header
	body   []byte
}

// handler serves the recorded responses. Its maps are built once and only
// read afterwards, so it is safe for concurrent use; the header value
// slices are shared between requests, which net/http only reads.
type handler map[string]*prepared

// builder fills a handler, sharing one header map between the responses
// whose headers are equal (the random scenarios record every supplier of
// a community, each with the same headers), so that the baseline's memory
// is its bodies.
type builder struct {
	h       handler
	headers map[string]http.Header
}

func newBuilder() *builder { return &builder{h: handler{}, headers: map[string]http.Header{}} }

func (b *builder) add(r fixture.Response) error {
	k := fixture.Key(r.Method, r.Target)
	if _, dup := b.h[k]; dup {
		return fmt.Errorf("a second response for %s", k)
	}
	hdr := r.Header.Clone()
	if hdr == nil {
		hdr = http.Header{}
	}
	hdr["Content-Length"] = []string{strconv.Itoa(len(r.Body))}
	var sig strings.Builder
	_ = hdr.Write(&sig) // a strings.Builder does not fail
	if shared, ok := b.headers[sig.String()]; ok {
		hdr = shared
	} else {
		b.headers[sig.String()] = hdr
	}
	b.h[k] = &prepared{status: r.Status, header: hdr, body: r.Body}
	return nil
}

func newHandler(rs []fixture.Response) handler {
	b := newBuilder()
	for _, r := range rs {
		_ = b.add(r) // a duplicate: the first one stays (fixture.Read refuses them)
	}
	return b.h
}

// loadHandler streams the fixture file at path into a handler.
func loadHandler(path string) (handler, error) {
	b := newBuilder()
	n := 0
	err := fixture.Each(path, func(r fixture.Response) error {
		if err := b.add(r); err != nil {
			return fmt.Errorf("%s: [%d]: %w", path, n, err)
		}
		n++
		return nil
	})
	return b.h, err
}

func (h handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// Read the request body as the real server must, so that both pay
	// for it.
	if r.Body != nil {
		_, _ = io.Copy(io.Discard, r.Body) // a broken body only ends this exchange
	}
	p, ok := h[fixture.Key(r.Method, r.RequestURI)]
	if !ok {
		http.Error(w, "baseline: no recorded response for "+r.Method+" "+r.RequestURI, http.StatusNotFound)
		return
	}
	dst := w.Header()
	for k, v := range p.header {
		dst[k] = v
	}
	w.WriteHeader(p.status)
	_, _ = w.Write(p.body) // the client has gone; nothing to do
}
