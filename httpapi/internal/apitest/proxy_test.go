package apitest

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

// The proxy has teeth: each kind of mismatch fails.
func TestOpenAPIProxyCatches(t *testing.T) {
	const doc = `{"openapi": "3.1.0", "info": {"title": "t", "version": "1"},
	  "servers": [{"url": "/api"}],
	  "paths": {"/things/{id}": {"get": {"operationId": "getThing", "description": "Reads a thing.",
	    "parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "string", "format": "uuid"}}],
	    "responses": {
	      "200": {"description": "ok", "headers": {"ETag": {"required": true, "schema": {"type": "string"}}},
	        "content": {"application/json": {"schema": {"type": "object", "required": ["id"], "properties": {"id": {"type": "string"}}, "additionalProperties": false}}}},
	      "404": {"description": "none", "content": {"application/json": {"schema": {"type": "object"}}}}}},
	    "put": {"operationId": "putThing", "description": "Writes a thing.",
	      "parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "string", "format": "uuid"}}],
	      "requestBody": {"required": true, "content": {"application/json": {"schema": {"type": "object", "required": ["name"]}}}},
	      "responses": {"204": {"description": "written"}, "400": {"description": "refused", "content": {"application/json": {"schema": {"type": "object"}}}}}}}}}`
	const id = "/api/things/3f2b8a4e-1c2d-4e5f-8a9b-0c1d2e3f4a5b"
	d := func(tb testing.TB) *Doc { return DocFor(tb, "test.json", []byte(doc)) }
	answer := func(status int, ctype, etag, body string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Body != nil {
				io.Copy(io.Discard, r.Body)
			}
			if ctype != "" {
				w.Header().Set("Content-Type", ctype)
			}
			if etag != "" {
				w.Header().Set("ETag", etag)
			}
			w.WriteHeader(status)
			io.WriteString(w, body)
		})
	}
	good := answer(200, "application/json", `"1"`, `{"id": "x"}`)
	for _, tt := range []struct {
		name, method, path string
		h                  http.Handler
		want               string // in the failure; "" for none
	}{
		{"valid", "GET", id, good, ""},
		{"valid 404", "GET", id, answer(404, "application/json", "", `{}`), ""},
		{"undocumented status", "GET", id, answer(500, "application/json", "", `{}`), "does not list status 500"},
		{"body off schema", "GET", id, answer(200, "application/json", `"1"`, `{"id": "x", "extra": 1}`), "doesn't match schema"},
		{"content type", "GET", id, answer(200, "text/plain", `"1"`, `{"id": "x"}`), "text/plain"},
		{"required header", "GET", id, answer(200, "application/json", "", `{"id": "x"}`), "ETag"},
		{"invalid request accepted", "GET", "/api/things/not-a-uuid", good, "refuses the request, yet the server accepted it"},
		{"invalid request refused", "GET", "/api/things/not-a-uuid", answer(404, "application/json", "", `{}`), ""},
		{"unknown path not 404", "GET", "/api/nothing", good, "no document has this path"},
		{"unknown path 404", "GET", "/api/nothing", answer(404, "application/json", "", `{}`), ""},
		{"other method not 405", "DELETE", id, answer(200, "application/json", "", `{}`), "has no DELETE operation"},
		{"405 without Allow", "DELETE", id, answer(405, "application/json", "", `{}`), "without an Allow header"},
		{"valid body", "PUT", id, answer(204, "", "", ""), ""},
		{"invalid body accepted", "PUT", id + "?body=none", answer(204, "", "", ""), "refuses the request, yet the server accepted it"},
		{"invalid body refused", "PUT", id + "?body=none", answer(400, "application/json", "", `{}`), ""},
		{"204 with a body", "PUT", id, answer(204, "", "", "x"), "a 204 answer with a body"},
		{"HEAD checks headers", "HEAD", id, answer(200, "application/json", "", ""), "no ETag header"},
		{"HEAD", "HEAD", id, answer(200, "application/json", `"1"`, ""), ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var rec recordingTB
			var body io.Reader
			if tt.method == "PUT" {
				body = strings.NewReader(`{"name": "n"}`)
				if strings.HasSuffix(tt.path, "?body=none") {
					body = strings.NewReader(`{"label": "n"}`)
				}
			}
			req, _ := http.NewRequest(tt.method, "http://example.test"+tt.path, body)
			req.Header.Set("Content-Type", "application/json")
			ValidatedBy(&rec, tt.h, d).ServeHTTP(discardWriter{h: http.Header{}}, req)
			got := strings.Join(rec.errors, "\n")
			switch {
			case tt.want == "" && got != "":
				t.Errorf("a matching exchange failed: %s", got)
			case tt.want != "" && !strings.Contains(got, tt.want):
				t.Errorf("failure %q, want one with %q", got, tt.want)
			}
		})
	}
}

// recordingTB keeps the failures reported to it.
type recordingTB struct {
	testing.TB
	errors []string
}

func (r *recordingTB) Helper()                   {}
func (r *recordingTB) Errorf(f string, a ...any) { r.errors = append(r.errors, fmt.Sprintf(f, a...)) }
func (r *recordingTB) Fatalf(f string, a ...any) { panic(fmt.Sprintf(f, a...)) }

type discardWriter struct{ h http.Header }

func (d discardWriter) Header() http.Header         { return d.h }
func (d discardWriter) Write(p []byte) (int, error) { return len(p), nil }
func (d discardWriter) WriteHeader(int)             {}
