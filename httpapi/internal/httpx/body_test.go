package httpx_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/procurekit/procure/httpapi/internal/httpx"
)

// The one reader of JSON request bodies, as the user, SCIM and admin APIs
// call it.
func TestReadBody(t *testing.T) {
	const max = 1 << 10
	big := strings.Repeat("x", max+1)
	for _, tt := range []struct {
		name, what string
		body       io.Reader
		length     int64 // -1: unknown (chunked)
		status     int   // 0: read
		message    string
	}{
		{"JSON", "a JSON User object", strings.NewReader(` {"a": 1} `), -1, 0, ""},
		{"at the bound", "", strings.NewReader(`"` + strings.Repeat("x", max-2) + `"`), max, 0, ""},
		{"declared too large", "", strings.NewReader(big), max + 1, 413, "the request body is larger than 1024 bytes"},
		{"sent too large", "", strings.NewReader(big), -1, 413, "the request body is larger than 1024 bytes"},
		{"broken", "", iotest.ErrReader(errors.New("connection reset")), -1, 400, "the request body could not be read"},
		{"empty, what wanted", "a JSON User object", strings.NewReader(" \n\t"), -1, 400, "the request body is empty: send a JSON User object"},
		{"empty", "", strings.NewReader(""), -1, 400, "the request body is empty"},
		{"not UTF-8", "", strings.NewReader("\"caf\xe9\""), -1, 400, "the request body is not valid UTF-8 (JSON must be UTF-8)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPost, "/", tt.body)
			r.ContentLength = tt.length
			body, release, err := httpx.ReadBody(httptest.NewRecorder(), r, max, tt.what)
			if tt.status == 0 {
				if err != nil {
					t.Fatalf("ReadBody: %v", err)
				}
				if len(body) == 0 {
					t.Error("no body")
				}
				release()
				return
			}
			status, code, msg := httpx.Classify(err)
			wantCode := httpx.CodeMalformedRequest
			if tt.status == 413 {
				wantCode = httpx.CodePayloadTooLarge
			}
			if status != tt.status || code != wantCode || msg != tt.message || body != nil {
				t.Errorf("ReadBody = %q, %d %s %q; want %d %s %q", body, status, code, msg, tt.status, wantCode, tt.message)
			}
		})
	}
	// A whole MiB reads as such.
	r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader("x"))
	r.ContentLength = 2<<20 + 1
	if _, _, msg := httpx.Classify(func() error { _, _, err := httpx.ReadBody(httptest.NewRecorder(), r, 2<<20, ""); return err }()); msg != "the request body is larger than 2097152 bytes (2 MiB)" {
		t.Errorf("2 MiB bound: %q", msg)
	}
	// No body at all, when the caller names nothing it wants, is
	// ErrEmptyBody itself.
	if _, _, err := httpx.ReadBody(httptest.NewRecorder(), httptest.NewRequest(http.MethodPut, "/", http.NoBody), max, ""); err != httpx.ErrEmptyBody {
		t.Errorf("no body: %v; want ErrEmptyBody", err)
	}
}
