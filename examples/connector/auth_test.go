package main

import (
	"bytes"
	"context"
	"encoding/xml"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/procurekit/procure/internal/syncbuf"
)

const oneLine = `<AccountCodeValidationRequest><Lines><Line><LineNumber>1</LineNumber><Account>6100-200</Account><Amount>1</Amount></Line></Lines></AccountCodeValidationRequest>`

// post sends oneLine with the Authorization header authz ("" for none).
func post(tb testing.TB, url, authz string) (int, string) {
	tb.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(oneLine))
	if err != nil {
		tb.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/xml")
	if authz != "" {
		req.Header.Set("Authorization", authz)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// docs: account-codes.md "Connector callers".
func TestConnectorAuthenticatesCallers(t *testing.T) {
	cases := []struct {
		name  string
		args  []string
		authz string
		want  int
	}{
		{"no header", nil, "", http.StatusUnauthorized},
		{"wrong secret", nil, "Bearer fixture-wrong-secret", http.StatusUnauthorized},
		{"right secret", nil, "Bearer " + testToken, http.StatusOK},
		{"outside the allowlist", []string{"-allow", "203.0.113.0/24,2001:db8::/32"}, "Bearer " + testToken, http.StatusUnauthorized},
		{"inside the allowlist", []string{"-allow", "203.0.113.0/24, 127.0.0.1"}, "Bearer " + testToken, http.StatusOK},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			url, logs := start(t, append([]string{"-table", "testdata/budgets.csv"}, c.args...)...)
			status, body := post(t, url, c.authz)
			if status != c.want {
				t.Fatalf("status %d; want %d\n%s", status, c.want, body)
			}
			if c.want == http.StatusUnauthorized {
				var doc struct {
					XMLName xml.Name `xml:"AccountCodeValidationError"`
					Code    string   `xml:"Code"`
				}
				if err := xml.Unmarshal([]byte(body), &doc); err != nil || doc.Code != "UNAUTHORIZED" {
					t.Errorf("401 body %q is not the XML error body (%v)", body, err)
				}
			}
			if strings.Contains(logs.String(), testToken) {
				t.Errorf("the log holds the secret:\n%s", logs)
			}
		})
	}
}

func TestConnectorInsecureNoAuth(t *testing.T) {
	t.Setenv(TokenEnv, "")
	url, _ := start(t, "-table", "testdata/budgets.csv", "-insecure-no-auth")
	if status, body := post(t, url, ""); status != http.StatusOK {
		t.Fatalf("status %d with -insecure-no-auth\n%s", status, body)
	}
}

func TestConnectorRefusesToStartOpen(t *testing.T) {
	cases := []struct {
		name  string
		token string
		args  []string
		want  string
	}{
		{"no secret", "", nil, "no secret: set " + TokenEnv},
		{"secret and -insecure-no-auth", testToken, []string{"-insecure-no-auth"}, "exclude each other"},
		{"short secret", "short", nil, "use at least 16"},
		{"bad allowlist", testToken, []string{"-allow", "10.0.0.0/8,,1.2.3.4"}, "-allow[1]: is empty"},
		{"allowlist of names", testToken, []string{"-allow", "example.com"}, `-allow[0]: must be an IP address or CIDR`},
		{"zero max body", testToken, []string{"-max-body", "0"}, "-max-body must be positive"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv(TokenEnv, c.token)
			var stdout, stderr syncbuf.Buffer
			err := run(context.Background(), append([]string{"-addr", "127.0.0.1:0", "-table", "testdata/budgets.csv"}, c.args...), &stdout, &stderr)
			var reported bytes.Buffer
			if code := exitCode(err, &reported); code != 2 {
				t.Fatalf("exit %d (%v); want 2", code, err)
			}
			if !strings.Contains(reported.String(), c.want) {
				t.Errorf("error %q does not say %q", reported.String(), c.want)
			}
			if c.token != "" && c.token != "short" && strings.Contains(reported.String()+stderr.String()+stdout.String(), c.token) {
				t.Errorf("the secret was printed")
			}
		})
	}
}
