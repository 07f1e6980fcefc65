package main

import (
	"bufio"
	"encoding/json"
	"math"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/procurekit/procure/internal/pgtest"
)

// Issue 11: hostile input gets the same 4xx on both stores, never a 500.

// rawRequest sends the request line, headers and body byte for byte (so
// that a header may hold bytes net/http's client refuses to send) and
// returns the status and the body.
func rawRequest(t *testing.T, base, method, target string, header []string, body string) (int, string) {
	t.Helper()
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.DialTimeout("tcp", u.Host, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(20 * time.Second)); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString(method + " " + target + " HTTP/1.1\r\nHost: " + u.Host + "\r\nConnection: close\r\n")
	for i := 0; i+1 < len(header); i += 2 {
		b.WriteString(header[i] + ": " + header[i+1] + "\r\n")
	}
	if body != "" {
		b.WriteString("Content-Type: application/json\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n")
	}
	b.WriteString("\r\n" + body)
	if _, err := conn.Write([]byte(b.String())); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("%s %q: %v", method, target, err)
	}
	defer resp.Body.Close()
	var out strings.Builder
	if _, err := bufio.NewReader(resp.Body).WriteTo(&out); err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, out.String()
}

const (
	demoToken   = "demo-acme-read-token"
	demoAccount = "acme-au-hris"
	demoKey     = "pk_demo_acme_hris_2026_Qm7vX2"
)

// hostileCases are requests no store can hold the data of, with the
// status every store answers.
var hostileCases = []struct {
	name, method, target string
	header               []string
	body                 string
	status               int
}{
	// Bearer tokens are looked up by hash: any bytes are just unknown.
	{"bearer token with invalid UTF-8", "GET", "/public/community/suppliers", []string{"Authorization", "Bearer \xff\xfe"}, "", 401},
	{"bearer token with a NUL", "GET", "/public/community/suppliers", []string{"Authorization", "Bearer a\x00b"}, "", 400},
	// Service account ids are looked up as text.
	{"account id with invalid UTF-8", "GET", "/v1/users/username/jsmith", []string{"Service-Account-ID", "acme\xff", "Service-API-Key", demoKey}, "", 401},
	{"account id with a NUL", "GET", "/v1/users/username/jsmith", []string{"Service-Account-ID", "acme\x00", "Service-API-Key", demoKey}, "", 400},
	{"key with invalid UTF-8", "GET", "/v1/users/username/jsmith", []string{"Service-Account-ID", demoAccount, "Service-API-Key", "\xc0\xae"}, "", 401},
	// Usernames in the path.
	{"username with a NUL", "GET", "/v1/users/username/js%00mith", []string{"Service-Account-ID", demoAccount, "Service-API-Key", demoKey}, "", 404},
	{"username with invalid UTF-8", "GET", "/v1/users/username/js%FFmith", []string{"Service-Account-ID", demoAccount, "Service-API-Key", demoKey}, "", 404},
	{"username of raw bytes", "GET", "/v1/users/username/js\xffmith", []string{"Service-Account-ID", demoAccount, "Service-API-Key", demoKey}, "", 404},
	// User bodies.
	{"user body with a NUL", "POST", "/v1/users", []string{"Service-Account-ID", demoAccount, "Service-API-Key", demoKey}, `{"username":"nul\u0000user"}`, 400},
	{"user body with invalid UTF-8", "POST", "/v1/users", []string{"Service-Account-ID", demoAccount, "Service-API-Key", demoKey}, "{\"username\":\"bad\xffutf\"}", 400},
	{"update with a NUL id", "PUT", "/v1/users", []string{"Service-Account-ID", demoAccount, "Service-API-Key", demoKey}, `{"id":"x\u0000","username":"jsmith"}`, 400},
	// Supplier query parameters.
	{"query with a NUL", "GET", "/public/community/suppliers?query=a%00b", []string{"Authorization", "Bearer " + demoToken}, "", 400},
	{"query with invalid UTF-8", "GET", "/public/community/suppliers?query=%FF", []string{"Authorization", "Bearer " + demoToken}, "", 400},
	{"sort with a NUL", "GET", "/public/community/suppliers?sort=name%00", []string{"Authorization", "Bearer " + demoToken}, "", 400},
	{"modifiedSince with a NUL", "GET", "/public/community/suppliers?modifiedSince=2026-01-01%00", []string{"Authorization", "Bearer " + demoToken}, "", 400},
	{"supplier id with a NUL", "GET", "/public/community/suppliers/e7420bd2-2732-5444-91f0-e275c82ebc64%00", []string{"Authorization", "Bearer " + demoToken}, "", 400},
	// Paging: the largest page with a filter must not overflow. It is in
	// range (docs: paging.md: page >= 0), so it is a page past the
	// end: 200 with empty content and the true totals (emptyPage below).
	{"page max int64 with a filter", "GET", "/public/community/suppliers?query=a&page=9223372036854775807", []string{"Authorization", "Bearer " + demoToken}, "", 200},
	{"page max int64 with modifiedSince", "GET", "/public/community/suppliers?modifiedSince=2020-01-01&page=9223372036854775807&size=100", []string{"Authorization", "Bearer " + demoToken}, "", 200},
	{"page max int64 sorted by date", "GET", "/public/community/suppliers?sort=modifiedDate,desc&page=9223372036854775807&size=100", []string{"Authorization", "Bearer " + demoToken}, "", 200},
	{"page max int64 of contacts", "GET", "/public/community/suppliers/e7420bd2-2732-5444-91f0-e275c82ebc64/contacts?page=9223372036854775807", []string{"Authorization", "Bearer " + demoToken}, "", 200},
	{"page max int64 of addresses", "GET", "/public/community/suppliers/e7420bd2-2732-5444-91f0-e275c82ebc64/remittance-addresses?page=9223372036854775807&size=1", []string{"Authorization", "Bearer " + demoToken}, "", 200},
	{"page past int64", "GET", "/public/community/suppliers?page=9223372036854775808", []string{"Authorization", "Bearer " + demoToken}, "", 400},
}

// emptyPage checks a page past the end: no content, the page number
// echoed, and true totals.
func emptyPage(t *testing.T, body string) {
	t.Helper()
	var p struct {
		Content []json.RawMessage `json:"content"`
		Page    struct {
			Number        int64 `json:"number"`
			TotalElements int64 `json:"totalElements"`
			TotalPages    int64 `json:"totalPages"`
		} `json:"page"`
	}
	if err := json.Unmarshal([]byte(body), &p); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	if len(p.Content) != 0 || p.Page.Number != math.MaxInt64 || p.Page.TotalElements < 0 || p.Page.TotalPages > p.Page.TotalElements {
		t.Errorf("page past the end: %s", body)
	}
}

func TestHostileInputBothStores(t *testing.T) {
	stores := []struct {
		name string
		args func(t *testing.T) []string
	}{
		{"memstore", func(*testing.T) []string { return nil }},
		{"pgstore", func(t *testing.T) []string { return []string{"-postgres", pgtest.NewDatabase(t)} }},
	}
	for _, s := range stores {
		t.Run(s.name, func(t *testing.T) {
			r := start(t, s.args(t)...)
			for _, c := range hostileCases {
				t.Run(c.name, func(t *testing.T) {
					status, body := rawRequest(t, r.base, c.method, c.target, c.header, c.body)
					if status != c.status {
						t.Errorf("status %d; want %d\n%.300s", status, c.status, body)
					}
					if status == 200 && strings.Contains(c.target, "page=9223372036854775807") {
						emptyPage(t, body)
					}
				})
			}
			if strings.Contains(r.stderr.String(), "level=ERROR") {
				t.Errorf("the server logged errors:\n%s", r.stderr.String())
			}
		})
	}
}
