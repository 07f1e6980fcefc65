package httpx

import (
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

// The request id comes from a well-formed traceparent, else from a
// well-formed X-Request-Id, else is made; a malformed header is never
// taken (docs: operations.md "Request ids").
func TestRequestID(t *testing.T) {
	const trace = "4bf92f3577b34da6a3ce929d0e0e4736"
	generated := regexp.MustCompile(`^[0-9a-f]{32}$`)
	tests := []struct {
		name        string
		traceparent string
		requestID   string
		want        string // "" means a generated id
	}{
		{"none", "", "", ""},
		{"traceparent", "00-" + trace + "-00f067aa0ba902b7-01", "", trace},
		{"traceparent wins over X-Request-Id", "00-" + trace + "-00f067aa0ba902b7-00", "abc", trace},
		{"a later version may add fields", "01-" + trace + "-00f067aa0ba902b7-01-extra", "", trace},
		{"version 00 has no more fields", "00-" + trace + "-00f067aa0ba902b7-01-extra", "", ""},
		{"version ff is invalid", "ff-" + trace + "-00f067aa0ba902b7-01", "", ""},
		{"upper-case hex", "00-" + strings.ToUpper(trace) + "-00f067aa0ba902b7-01", "", ""},
		{"zero trace id", "00-00000000000000000000000000000000-00f067aa0ba902b7-01", "", ""},
		{"zero parent id", "00-" + trace + "-0000000000000000-01", "", ""},
		{"short", "00-" + trace[:31] + "-00f067aa0ba902b7-01", "", ""},
		{"bad traceparent falls back to X-Request-Id", "garbage", "req-42", "req-42"},
		{"X-Request-Id", "", "9f1c2a7e-6b1d-4c1a-9d0e-2f9e8b7a6c5d", "9f1c2a7e-6b1d-4c1a-9d0e-2f9e8b7a6c5d"},
		{"X-Request-Id characters", "", "Az09-_.:", "Az09-_.:"},
		{"X-Request-Id at the bound", "", strings.Repeat("a", MaxRequestIDLength), strings.Repeat("a", MaxRequestIDLength)},
		{"X-Request-Id too long", "", strings.Repeat("a", MaxRequestIDLength+1), ""},
		{"X-Request-Id with a space", "", "a b", ""},
		{"X-Request-Id with a quote", "", `a"b`, ""},
		{"X-Request-Id with a newline escape", "", "a%0Ab", ""},
		{"X-Request-Id not ASCII", "", "réq", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodGet, "/", nil)
			if tc.traceparent != "" {
				r.Header.Set("Traceparent", tc.traceparent)
			}
			if tc.requestID != "" {
				r.Header.Set("X-Request-Id", tc.requestID)
			}
			got := requestID(r)
			switch {
			case tc.want == "" && !generated.MatchString(got):
				t.Errorf("id %q; want a generated one", got)
			case tc.want == "" && (got == tc.requestID || strings.Contains(tc.traceparent, got)):
				t.Errorf("id %q taken from a malformed header", got)
			case tc.want != "" && got != tc.want:
				t.Errorf("id %q; want %q", got, tc.want)
			}
		})
	}
	// Two headers of one name: neither is taken.
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.Header.Add("X-Request-Id", "one")
	r.Header.Add("X-Request-Id", "two")
	if got := requestID(r); got == "one" || got == "two" {
		t.Errorf("id %q from a repeated header", got)
	}
	// Generated ids differ.
	seen := map[string]bool{}
	for range 1000 {
		id := newRequestID()
		if seen[id] {
			t.Fatalf("id %s made twice", id)
		}
		seen[id] = true
	}
}

// Observe returns the id in X-Request-Id whether or not it logs, and
// handlers find it through their writer.
func TestObserveRequestIDHeader(t *testing.T) {
	var seen string
	h := Observe(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = RequestID(w)
		w.WriteHeader(http.StatusTeapot)
	}), nil, nil)
	rec := httptest.NewRecorder()
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.Header.Set("X-Request-Id", "from-the-caller")
	h.ServeHTTP(rec, r)
	if got := rec.Header().Get("X-Request-Id"); got != "from-the-caller" || seen != got {
		t.Errorf("X-Request-Id %q, seen by the handler %q; want from-the-caller", got, seen)
	}
}
