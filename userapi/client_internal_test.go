package userapi

import (
	"net/http"
	"testing"
	"time"
)

// The default client must not be http.DefaultClient, which has no
// timeout: a server that accepts and never answers would hang Sync.
func TestDefaultClientHasTimeout(t *testing.T) {
	c, err := New("https://users.example.com", "sa", "fixture-key")
	if err != nil {
		t.Fatal(err)
	}
	if c.hc == http.DefaultClient || c.hc.Timeout != DefaultTimeout || DefaultTimeout <= 0 {
		t.Fatalf("default HTTP client %p with timeout %v; want a private client with %v", c.hc, c.hc.Timeout, DefaultTimeout)
	}
	// A caller's client keeps its timeout and is not modified.
	mine := &http.Client{Timeout: 3 * time.Second}
	c, err = New("https://users.example.com", "sa", "fixture-key", WithHTTPClient(mine))
	if err != nil {
		t.Fatal(err)
	}
	if c.hc == mine || c.hc.Timeout != 3*time.Second || mine.CheckRedirect != nil {
		t.Fatalf("caller's client: used as is %v, timeout %v, modified %v", c.hc == mine, c.hc.Timeout, mine.CheckRedirect != nil)
	}
}
