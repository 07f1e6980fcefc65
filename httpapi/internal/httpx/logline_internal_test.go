package httpx

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestLogHandlerMatchesSlog writes request lines through LogHandler and
// through the slog handler it wraps, as records, and requires the same
// bytes; and that the fast path took the lines it should (a LogHandler
// that sent every line through slog would pass the comparison alone).
func TestLogHandlerMatchesSlog(t *testing.T) {
	at := time.Date(2026, 11, 30, 4, 19, 33, 207_123_456, time.UTC)
	typical := requestLine{end: at, id: "da6b2bb0bba6acd91f70e3b43e24b92d", method: "GET",
		route: "/public/community/suppliers/{id}", status: 200, durationMS: 0.097, community: "tasman-health"}
	with := func(f func(*requestLine)) requestLine { l := typical; f(&l); return l }
	cases := []struct {
		name       string
		line       requestLine
		text, json bool // the fast path is expected to take it
	}{
		{"typical", typical, true, true},
		{"no community", with(func(l *requestLine) { l.community = "" }), true, true},
		{"no route", with(func(l *requestLine) { l.route = noRoute }), false, false},
		{"a caller's id with =", with(func(l *requestLine) { l.id = "a=b" }), false, false},
		{"a caller's id with a quote", with(func(l *requestLine) { l.id = `a"b` }), false, false},
		{"non-ASCII community", with(func(l *requestLine) { l.community = "café" }), false, false},
		{"zero duration", with(func(l *requestLine) { l.durationMS = 0 }), true, true},
		{"long duration", with(func(l *requestLine) { l.durationMS = 1234567.891 }), true, true},
		{"a million milliseconds", with(func(l *requestLine) { l.durationMS = 1e6 }), true, true},
		{"a tiny duration", with(func(l *requestLine) { l.durationMS = 1e-7 }), true, false},
		{"whole millisecond", with(func(l *requestLine) { l.end = at.Truncate(time.Millisecond) }), true, true},
		{"whole second", with(func(l *requestLine) { l.end = at.Truncate(time.Second) }), true, true},
		{"offset zone", with(func(l *requestLine) { l.end = at.In(time.FixedZone("X", 5*3600+30*60)) }), true, true},
		{"local clock", with(func(l *requestLine) { l.end = time.Now() }), true, true},
		{"year 10000", with(func(l *requestLine) { l.end = at.AddDate(8000, 0, 0) }), false, false},
		{"status 503", with(func(l *requestLine) { l.status = 503 }), true, true},
	}
	for _, json := range []bool{false, true} {
		for _, opts := range []*slog.HandlerOptions{nil, {ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr { return a }}} {
			for _, c := range cases {
				var want, got bytes.Buffer
				var ref slog.Handler
				if json {
					ref = slog.NewJSONHandler(&want, opts)
				} else {
					ref = slog.NewTextHandler(&want, opts)
				}
				logRequest(context.Background(), ref, &c.line)
				h := NewLogHandler(&got, opts, json)
				l := c.line
				fast := h.writeRequest(&l)
				if !fast {
					logRequest(context.Background(), h, &c.line)
				}
				if got.String() != want.String() {
					t.Errorf("json %v, options %v, %s:\n got %q\nwant %q", json, opts != nil, c.name, got.String(), want.String())
				}
				expect := c.text
				if json {
					expect = c.json
				}
				if opts != nil {
					expect = false // ReplaceAttr: slog's alone
				}
				if fast != expect {
					t.Errorf("json %v, options %v, %s: fast path %v, want %v", json, opts != nil, c.name, fast, expect)
				}
			}
		}
	}
}

// TestObserveLogHandler logs requests through Observe with a LogHandler:
// one line each, as slog parses it, with Observe's attributes; none
// below the handler's level; and WithAttrs keeps its attributes (the
// fast path does not drop them).
func TestObserveLogHandler(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /things/{id}", func(w http.ResponseWriter, r *http.Request) {
		NoteCommunity(w, "acme")
		w.WriteHeader(http.StatusTeapot)
	})
	serve := func(log *slog.Logger, path string) {
		rec := httptest.NewRecorder()
		Observe(mux, log, nil).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	}
	var buf bytes.Buffer
	h := NewLogHandler(&buf, nil, true)
	serve(slog.New(h), "/things/1")
	serve(slog.New(h), "/nothing")
	serve(slog.New(h).With("node", "n1"), "/things/2")
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d lines, want 3:\n%s", len(lines), buf.String())
	}
	for i, want := range []string{
		`"msg":"request","request_id":"`,
		`"method":"GET","route":"(no route)","status":404,`,
		`"node":"n1","request_id":"`,
	} {
		if !strings.Contains(lines[i], want) {
			t.Errorf("line %d %s: no %s", i, lines[i], want)
		}
	}
	if !strings.Contains(lines[0], `"route":"/things/{id}","status":418,"duration_ms":`) ||
		!strings.HasSuffix(lines[0], `,"community":"acme"}`) {
		t.Errorf("line 0: %s", lines[0])
	}

	buf.Reset()
	serve(slog.New(NewLogHandler(&buf, &slog.HandlerOptions{Level: slog.LevelWarn}, false)), "/things/1")
	if buf.Len() != 0 {
		t.Errorf("a request logged below the level: %q", buf.String())
	}
}

// BenchmarkRequestLine is one request line through LogHandler's fast
// path and through slog's handler, both to io.Discard.
func BenchmarkRequestLine(b *testing.B) {
	l := requestLine{end: time.Now(), id: "da6b2bb0bba6acd91f70e3b43e24b92d", method: "GET",
		route: "/public/community/suppliers/{id}", status: 200, durationMS: 0.097, community: "tasman-health"}
	for _, json := range []bool{false, true} {
		name := "text"
		if json {
			name = "json"
		}
		b.Run(name+"/slog", func(b *testing.B) {
			var h slog.Handler = slog.NewTextHandler(io.Discard, nil)
			if json {
				h = slog.NewJSONHandler(io.Discard, nil)
			}
			b.ReportAllocs()
			for b.Loop() {
				logRequest(context.Background(), h, &l)
			}
		})
		b.Run(name+"/fast", func(b *testing.B) {
			h := NewLogHandler(io.Discard, nil, json)
			b.ReportAllocs()
			for b.Loop() {
				logRequest(context.Background(), h, &l)
			}
		})
	}
}

// TestLogHandlerConcurrent logs from many goroutines through both paths
// at once (a route that needs quoting takes slog's): every line whole,
// none lost; under -race, the two paths share the writer's lock.
func TestLogHandlerConcurrent(t *testing.T) {
	var buf bytes.Buffer
	h := NewLogHandler(&buf, nil, false)
	const workers, each = 8, 200
	done := make(chan struct{})
	for w := range workers {
		go func() {
			defer func() { done <- struct{}{} }()
			for i := range each {
				l := requestLine{end: time.Now(), id: "id", method: "GET", route: "/a", status: 200, community: "c"}
				if (w+i)%2 == 0 {
					l.route = noRoute
				}
				logRequest(context.Background(), h, &l)
			}
		}()
	}
	for range workers {
		<-done
	}
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != workers*each {
		t.Fatalf("%d lines, want %d", len(lines), workers*each)
	}
	quoted := 0
	for _, l := range lines {
		if !strings.HasPrefix(l, "time=") || !strings.HasSuffix(l, " community=c") {
			t.Fatalf("a broken line: %q", l)
		}
		if strings.Contains(l, `route="(no route)"`) {
			quoted++
		}
	}
	if quoted != workers*each/2 {
		t.Errorf("%d lines through slog, want %d", quoted, workers*each/2)
	}
}
