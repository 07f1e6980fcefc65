package main

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"
)

// docs: limits.md, as the connector applies them: each bound at the
// limit and one past it.

// rawPost sends a POST whose head is padded to headSize bytes (0: no
// padding) with body, byte for byte, and returns the status.
func rawPost(t *testing.T, target string, headSize int, body string) int {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	head := "POST " + u.Path + " HTTP/1.1\r\nHost: " + u.Host + "\r\nConnection: close\r\nAuthorization: Bearer " + testToken +
		"\r\nContent-Type: application/xml\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n"
	end := "X-Pad: \r\n\r\n"
	if headSize > 0 {
		if len(head)+len(end) > headSize {
			t.Fatalf("the head is %d bytes without padding", len(head)+len(end))
		}
		end = "X-Pad: " + strings.Repeat("p", headSize-len(head)-len(end)) + "\r\n\r\n"
	}
	conn, err := net.DialTimeout("tcp", u.Host, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(20 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(conn, head+end+body); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func TestConnectorHeaderLimit(t *testing.T) {
	target, _ := start(t, "-table", "testdata/budgets.csv")
	// net/http reads up to MaxHeaderBytes plus 4 KiB of slack before it
	// answers 431.
	for _, c := range []struct{ size, status int }{
		{maxHeaderBytes, 200},
		{maxHeaderBytes + 4096 + 1, http.StatusRequestHeaderFieldsTooLarge},
	} {
		if got := rawPost(t, target, c.size, oneLine); got != c.status {
			t.Errorf("a head of %d bytes: %d; want %d", c.size, got, c.status)
		}
	}
}

func TestConnectorMaxBody(t *testing.T) {
	// -max-body bounds the request body: exactly the limit is read, one
	// byte more is 413.
	const limit = 4096
	target, _ := start(t, "-table", "testdata/budgets.csv", "-max-body", strconv.Itoa(limit))
	at := oneLine + strings.Repeat(" ", limit-len(oneLine))
	if got := rawPost(t, target, 0, at); got != 200 {
		t.Errorf("a body of exactly %d bytes: %d; want 200", limit, got)
	}
	if got := rawPost(t, target, 0, at+" "); got != http.StatusRequestEntityTooLarge {
		t.Errorf("a body of %d bytes: %d; want 413", limit+1, got)
	}
}
