package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/procurekit/procure/bench/internal/fixture"
)

var recorded = []fixture.Response{
	{Method: "GET", Target: "/public/community/suppliers?query=sun", Status: 200,
		Header: http.Header{"Content-Type": {"application/json"}, "X-Extra": {"a", "b"}}, Body: []byte(`{"content":[]}` + "\n")},
	{Method: "POST", Target: "/v1/users", Status: 200, Header: http.Header{"Content-Type": {"application/json"}}, Body: []byte(`{"id":"1"}`)},
	{Method: "GET", Target: "/missing", Status: 404, Body: []byte(`{"code":"NOT_FOUND"}`)},
}

func TestHandlerReplaysRecordedResponses(t *testing.T) {
	srv := httptest.NewServer(newHandler(recorded))
	t.Cleanup(srv.Close)
	tests := []struct {
		name, method, target string
		body                 string
		wantStatus           int
		wantBody             string
		wantHeader           http.Header
	}{
		{"GET with query", "GET", "/public/community/suppliers?query=sun", "", 200, `{"content":[]}` + "\n",
			http.Header{"Content-Type": {"application/json"}, "X-Extra": {"a", "b"}, "Content-Length": {"15"}}},
		{"POST reads the body", "POST", "/v1/users", strings.Repeat("x", 100000), 200, `{"id":"1"}`,
			http.Header{"Content-Type": {"application/json"}, "Content-Length": {"10"}}},
		{"recorded error status", "GET", "/missing", "", 404, `{"code":"NOT_FOUND"}`, http.Header{"Content-Length": {"20"}}},
		{"other query", "GET", "/public/community/suppliers?query=moon", "", 404, "baseline: no recorded response for GET /public/community/suppliers?query=moon\n", nil},
		{"other method", "PUT", "/v1/users", "{}", 404, "baseline: no recorded response for PUT /v1/users\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := http.NewRequest(tt.method, srv.URL+tt.target, strings.NewReader(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			resp, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != tt.wantStatus || string(b) != tt.wantBody {
				t.Fatalf("got %d %q, want %d %q", resp.StatusCode, b, tt.wantStatus, tt.wantBody)
			}
			for k, v := range tt.wantHeader {
				if got := resp.Header.Values(k); strings.Join(got, ",") != strings.Join(v, ",") {
					t.Errorf("header %s = %q, want %q", k, got, v)
				}
			}
		})
	}
}

func TestRunNeedsFixtures(t *testing.T) {
	var out, errOut bytes.Buffer
	err := run(context.Background(), []string{"-addr", "127.0.0.1:0"}, &out, &errOut)
	if err == nil || err.Error() != "-fixtures: is required" {
		t.Fatalf("run = %v, want -fixtures: is required", err)
	}
	err = run(context.Background(), []string{"-fixtures", filepath.Join(t.TempDir(), "none.json")}, &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Fatalf("run = %v, want a missing-file error", err)
	}
}

// run serves until its context ends, then shuts down cleanly.
func TestRunServesUntilCancelled(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f.json")
	if err := fixture.Write(path, recorded); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"-addr", "127.0.0.1:0", "-fixtures", path}, pw, io.Discard) }()
	line := make([]byte, 200)
	n, err := pr.Read(line)
	if err != nil {
		t.Fatal(err)
	}
	msg := string(line[:n])
	_, url, ok := strings.Cut(strings.TrimSpace(msg), " on ")
	if !ok || !strings.HasPrefix(msg, "baseline: serving 3 recorded responses on http://127.0.0.1:") {
		t.Fatalf("banner %q", msg)
	}
	resp, err := http.Get(url + "/missing")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Fatalf("status %d, want the recorded 404", resp.StatusCode)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("run after cancel = %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("run did not return after cancel")
	}
}

// loadHandler streams a fixture file: responses with equal headers share
// one header map (the random sets: every supplier of a community), each
// keeps its own Content-Length, and a second response for a request is
// refused.
func TestLoadHandler(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f.jsonl")
	hdr := http.Header{"Content-Type": {"application/json"}, "X-Request-Id": {"r1"}}
	rs := []fixture.Response{
		{Method: "GET", Target: "/s/1", Status: 200, Header: hdr, Body: []byte(`{"id":"1"}`)},
		{Method: "GET", Target: "/s/2", Status: 200, Header: hdr, Body: []byte(`{"id":"2"}`)},
		{Method: "GET", Target: "/s/33", Status: 200, Header: hdr, Body: []byte(`{"id":"33"}`)},
		{Method: "GET", Target: "/s/4", Status: 200, Header: http.Header{"Content-Type": {"text/plain"}}, Body: []byte(`{"id":"4"}`)},
	}
	if err := fixture.Write(path, rs); err != nil {
		t.Fatal(err)
	}
	h, err := loadHandler(path)
	if err != nil {
		t.Fatal(err)
	}
	p1, p2, p33, p4 := h["GET /s/1"], h["GET /s/2"], h["GET /s/33"], h["GET /s/4"]
	if p1 == nil || p2 == nil || p33 == nil || p4 == nil || len(h) != 4 {
		t.Fatalf("handler holds %d responses: %v", len(h), h)
	}
	if !sameMap(p1.header, p2.header) || sameMap(p1.header, p33.header) || sameMap(p1.header, p4.header) {
		t.Errorf("header maps: 1 and 2 should share one, 33 (another length) and 4 (another type) not")
	}
	if string(p33.body) != `{"id":"33"}` || p33.header.Get("Content-Length") != "11" || p33.status != 200 {
		t.Errorf("response 33: %d %v %s", p33.status, p33.header, p33.body)
	}

	if err := fixture.Write(path, append(rs, rs[1])); err != nil {
		t.Fatal(err)
	}
	if _, err := loadHandler(path); err == nil || !strings.Contains(err.Error(), "[4]: a second response for GET /s/2") {
		t.Fatalf("loadHandler with a duplicate = %v", err)
	}
}

func sameMap(a, b http.Header) bool {
	a["X-Probe"] = []string{"x"}
	defer delete(a, "X-Probe")
	return b.Get("X-Probe") == "x"
}
