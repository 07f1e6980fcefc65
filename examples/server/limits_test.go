package main

import (
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/procurekit/procure/httpapi"
)

// docs: limits.md, as the example server applies them: each bound
// at the limit and one past it.

// padFor returns the padding that makes a request's head (request line,
// headers and the blank line) exactly n bytes, with rawRequest's headers.
func padFor(t *testing.T, base, target string, header []string, n int) string {
	t.Helper()
	host := strings.TrimPrefix(base, "http://")
	head := "GET " + target + " HTTP/1.1\r\nHost: " + host + "\r\nConnection: close\r\n"
	for i := 0; i+1 < len(header); i += 2 {
		head += header[i] + ": " + header[i+1] + "\r\n"
	}
	head += "X-Pad: \r\n\r\n"
	if len(head) > n {
		t.Fatalf("the head is %d bytes without padding", len(head))
	}
	return strings.Repeat("p", n-len(head))
}

func TestHeaderLimit(t *testing.T) {
	r := start(t)
	target := "/public/community/suppliers"
	auth := []string{"Authorization", "Bearer " + demoToken}
	// net/http reads up to MaxHeaderBytes plus 4 KiB of slack before it
	// answers 431 Request Header Fields Too Large.
	for _, c := range []struct {
		size   int
		status int
	}{
		{maxHeaderBytes, 200},
		{maxHeaderBytes + 4096 + 1, http.StatusRequestHeaderFieldsTooLarge},
		{4 * maxHeaderBytes, http.StatusRequestHeaderFieldsTooLarge},
	} {
		pad := padFor(t, r.base, target, auth, c.size)
		status, body := rawRequest(t, r.base, "GET", target, append(auth, "X-Pad", pad), "")
		if status != c.status {
			t.Errorf("a head of %d bytes: %d; want %d\n%.200s", c.size, status, c.status, body)
		}
	}
}

func TestBodyLimits(t *testing.T) {
	// 1 MiB on the user API and the demo checkout: a body of exactly
	// 1 MiB is read, one byte more is 413.
	r := start(t)
	userAuth := []string{"Service-Account-ID", demoAccount, "Service-API-Key", demoKey}
	cases := []struct {
		name, path string
		header     []string
		body       func(n int) string
		ok         int
	}{
		{"user API", "/v1/users", userAuth, func(n int) string {
			b := `{"username":"limit-user"}`
			return b + strings.Repeat(" ", n-len(b))
		}, 200},
		{"demo checkout", "/demo/checkout", []string{"Authorization", "Bearer " + demoToken}, func(n int) string {
			b := `{"requisitionId":"R","lines":[{"lineNumber":1,"account":"9999-999","amount":"1"}]}`
			return b + strings.Repeat(" ", n-len(b))
		}, 200},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status, body := rawRequest(t, r.base, "POST", c.path, c.header, c.body(httpapi.MaxUserBodyBytes))
			if status != c.ok {
				t.Errorf("a body of exactly 1 MiB: %d; want %d\n%.300s", status, c.ok, body)
			}
			status, body = rawRequest(t, r.base, "POST", c.path, c.header, c.body(httpapi.MaxUserBodyBytes+1))
			if status != http.StatusRequestEntityTooLarge || !strings.Contains(body, httpapi.CodePayloadTooLarge) {
				t.Errorf("a body of 1 MiB + 1 byte: %d; want 413 %s\n%.300s", status, httpapi.CodePayloadTooLarge, body)
			}
		})
	}
	if got := strconv.Itoa(httpapi.MaxUserBodyBytes); got != "1048576" {
		t.Errorf("MaxUserBodyBytes = %s; docs/limits.md says 1 MiB", got)
	}
}
