package main

import (
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// Each request is logged once, as the server logs it (docs:
// operations.md "Logs"): its request id - the caller's X-Request-Id when
// it sends one, returned in the answer's header - method, route, status
// and duration in milliseconds; never the secret.
func TestConnectorRequestLog(t *testing.T) {
	url, logs := start(t, "-table", "testdata/budgets.csv")
	body := `<AccountCodeValidationRequest><Lines><Line><LineNumber>1</LineNumber><Account>6100-200</Account><Amount>1.00</Amount></Line></Lines></AccountCodeValidationRequest>`
	for _, c := range []struct {
		id, authz string
		status    int
	}{
		{"checkout-42", "Bearer " + testToken, http.StatusOK},
		{"", "Bearer wrong-secret-0123456789", http.StatusUnauthorized},
	} {
		req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/xml")
		req.Header.Set("Authorization", c.authz)
		if c.id != "" {
			req.Header.Set("X-Request-Id", c.id)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		got := resp.Header.Get("X-Request-Id")
		if resp.StatusCode != c.status || got == "" || (c.id != "" && got != c.id) {
			t.Fatalf("status %d, X-Request-Id %q; want %d and the id %q (or a generated one)", resp.StatusCode, got, c.status, c.id)
		}
		line := regexp.MustCompile(`(?m)^.*msg=request request_id=` + regexp.QuoteMeta(got) + ` .*$`)
		waitFor(t, "the request's log line", func() bool { return line.MatchString(logs.String()) })
		l := line.FindString(logs.String())
		for _, want := range []string{"method=POST", "status=" + strconv.Itoa(c.status), "duration_ms="} {
			if !strings.Contains(l, want) {
				t.Errorf("log line %q lacks %q", l, want)
			}
		}
		if !regexp.MustCompile(`route=/\S+`).MatchString(l) {
			t.Errorf("log line %q has no route", l)
		}
	}
	if strings.Contains(logs.String(), testToken) || strings.Contains(logs.String(), "wrong-secret") {
		t.Errorf("a secret in the log:\n%s", logs)
	}
}
