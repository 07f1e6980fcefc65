package accountcode_test

import (
	"context"
	"encoding/xml"
	"log/slog"
	"net/http"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/procurekit/procure/budget"
	"github.com/procurekit/procure/httpapi/accountcode"
	"github.com/procurekit/procure/httpapi/internal/httpx"
)

const connectorToken = "fixture-connector-token-0123456789" // a test fixture, not a real secret

// countingValidator is echoValidator counting its calls.
type countingValidator struct{ calls atomic.Int64 }

func (c *countingValidator) Validate(ctx context.Context, req budget.Request) ([]budget.Result, error) {
	c.calls.Add(1)
	return echoValidator.Validate(ctx, req)
}

// docs: account-codes.md "Connector callers": Authorization: Bearer <secret>,
// an optional allowlist, and anything else a 401 with the XML error body.
func TestAccountCodeHandlerAuthentication(t *testing.T) {
	body := reqDoc(xmlLine("1", "6100-200", "10"))
	cases := []struct {
		name       string
		allowed    []netip.Prefix
		authz      string // the Authorization header; "" sends none
		method     string
		wantStatus int
	}{
		{"no header", nil, "", http.MethodPost, http.StatusUnauthorized},
		{"no header, wrong method", nil, "", http.MethodGet, http.StatusUnauthorized},
		{"other scheme", nil, "Basic " + connectorToken, http.MethodPost, http.StatusUnauthorized},
		{"wrong token", nil, "Bearer fixture-wrong", http.MethodPost, http.StatusUnauthorized},
		{"prefix of the token", nil, "Bearer " + connectorToken[:10], http.MethodPost, http.StatusUnauthorized},
		{"token plus more", nil, "Bearer " + connectorToken + "x", http.MethodPost, http.StatusUnauthorized},
		{"empty token", nil, "Bearer ", http.MethodPost, http.StatusUnauthorized},
		{"scheme only", nil, "Bearer", http.MethodPost, http.StatusUnauthorized},
		{"right token", nil, "Bearer " + connectorToken, http.MethodPost, http.StatusOK},
		{"scheme in lower case", nil, "bearer " + connectorToken, http.MethodPost, http.StatusOK},
		{"right token, wrong method", nil, "Bearer " + connectorToken, http.MethodGet, http.StatusMethodNotAllowed},
		{"outside the allowlist", []netip.Prefix{netip.MustParsePrefix("203.0.113.0/24")}, "Bearer " + connectorToken, http.MethodPost, http.StatusUnauthorized},
		{"inside the allowlist", []netip.Prefix{netip.MustParsePrefix("203.0.113.0/24"), netip.MustParsePrefix("127.0.0.0/8")}, "Bearer " + connectorToken, http.MethodPost, http.StatusOK},
		{"inside the allowlist, no token", []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}, "", http.MethodPost, http.StatusUnauthorized},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var logs logBuffer
			v := &countingValidator{}
			srv := newConnector(t, v, accountcode.Options{
				Token: connectorToken, AllowedIPs: c.allowed,
				Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
			})
			req, err := http.NewRequest(c.method, srv.URL+accountcode.Path, strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/xml")
			if c.authz != "" {
				req.Header.Set("Authorization", c.authz)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if resp.StatusCode != c.wantStatus {
				t.Fatalf("status %d; want %d", resp.StatusCode, c.wantStatus)
			}
			if c.wantStatus != http.StatusUnauthorized {
				return
			}
			var doc errorDoc
			if err := xml.NewDecoder(resp.Body).Decode(&doc); err != nil || doc.Code != httpx.CodeUnauthorized || doc.Message != "authentication failed" {
				t.Errorf("401 body = %+v, %v; want the XML error body with UNAUTHORIZED", doc, err)
			}
			if got := resp.Header.Get("WWW-Authenticate"); got != "Bearer" {
				t.Errorf("WWW-Authenticate = %q", got)
			}
			if v.calls.Load() != 0 {
				t.Errorf("the validator was asked %d times for an unauthenticated caller", v.calls.Load())
			}
			if strings.Contains(logs.String(), connectorToken[:10]) {
				t.Errorf("the log holds the token: %s", logs.String())
			}
		})
	}
}

func TestNewAccountCodeHandlerRefusesOpenConnector(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("NewAccountCodeHandler without Token or InsecureNoAuth did not panic")
		}
	}()
	accountcode.NewHandler(echoValidator, accountcode.Options{})
}
