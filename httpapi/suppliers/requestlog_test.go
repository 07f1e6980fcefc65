package suppliers_test

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/procurekit/procure/httpapi/internal/httpx"
	"github.com/procurekit/procure/httpapi/suppliers"
	"github.com/procurekit/procure/internal/syncbuf"
)

// TestRequestLog: one line per request with its request id (also in the
// X-Request-Id header), method, route (the pattern's path: the method
// is its own attribute), status, duration in milliseconds and
// community; never the token, the raw path or a query value.
func TestRequestLog(t *testing.T) {
	store := loadTestStore(t)
	mux := http.NewServeMux()
	suppliers.Mount(mux, suppliers.Options{Store: store, Tokens: store, Logger: slog.New(slog.DiscardHandler)})

	tests := []struct {
		name, target, token string
		status              int
		route, community    string
	}{
		{"list", base + "/suppliers?query=secretquery", alphaToken, 200, base + "/suppliers", "alpha"},
		{"one supplier", base + "/suppliers/" + acmeOffice, alphaToken, 200, base + "/suppliers/{id}", "alpha"},
		{"bad token", base + "/suppliers", "not-a-token", 401, base + "/suppliers", ""},
		{"no route", base + "/nowhere", alphaToken, 404, base + "/", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf syncbuf.Buffer
			h := httpx.RequestLog(slog.New(slog.NewJSONHandler(&buf, nil)), mux)
			req := httptest.NewRequest(http.MethodGet, tt.target, nil)
			req.Header.Set("Authorization", "Bearer "+tt.token)
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != tt.status {
				t.Fatalf("status %d, want %d", rec.Code, tt.status)
			}
			lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
			if len(lines) != 1 {
				t.Fatalf("%d log lines, want 1:\n%s", len(lines), buf.String())
			}
			var got map[string]any
			if err := json.Unmarshal([]byte(lines[0]), &got); err != nil {
				t.Fatal(err)
			}
			if got["method"] != "GET" || got["route"] != tt.route || got["status"] != float64(tt.status) || got["community"] != tt.community {
				t.Errorf("log line %s, want route %q status %d community %q", lines[0], tt.route, tt.status, tt.community)
			}
			if ms, ok := got["duration_ms"].(float64); !ok || ms < 0 {
				t.Errorf("duration_ms %v in the log line; want milliseconds", got["duration_ms"])
			}
			if id := rec.Header().Get("X-Request-Id"); len(id) != 32 || got["request_id"] != id {
				t.Errorf("request_id %v in the log line, X-Request-Id %q; want one generated id in both", got["request_id"], id)
			}
			for _, secret := range []string{tt.token, "secretquery", acmeOffice} {
				if strings.Contains(lines[0], secret) {
					t.Errorf("the log line holds %q: %s", secret, lines[0])
				}
			}
		})
	}
}
