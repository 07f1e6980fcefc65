package accountcode_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/procurekit/procure/budget"
	"github.com/procurekit/procure/httpapi/accountcode"
)

// holdsLister is a validator that lists fixed holds, or fails.
type holdsLister struct {
	budget.Validator
	keeps bool
	holds []budget.Hold
	err   error
}

func (l holdsLister) KeepsHolds() bool { return l.keeps }

func (l holdsLister) Holds(_ context.Context, account string) ([]budget.Hold, error) {
	return l.holds, l.err
}

func TestAccountCodeHoldsHandler(t *testing.T) {
	at := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	list := []budget.Hold{
		{Requisition: "REQ-1", Account: "X", Amount: decimal.RequireFromString("600.00"), Held: at, Confirmed: at.Add(time.Hour)},
		{Requisition: "REQ-2", Account: "X", Amount: decimal.RequireFromString("5"), Held: at, Expires: at.Add(72 * time.Hour)},
	}
	never := budget.ValidatorFunc(func(context.Context, budget.Request) ([]budget.Result, error) { return nil, nil })
	cases := []struct {
		name   string
		v      budget.Validator
		method string
		query  string
		token  string
		status int
		body   string
	}{
		{"lists holds and commitments", holdsLister{never, true, list, nil}, "GET", "?account=X", "", 200,
			`<AccountCodeHolds><Account>X</Account><Holds><Hold><RequisitionId>REQ-2</RequisitionId><Amount>5</Amount><Held>2026-03-01T09:00:00Z</Held><Expires>2026-03-04T09:00:00Z</Expires></Hold></Holds>` +
				`<Commitments><Commitment><RequisitionId>REQ-1</RequisitionId><Amount>600.00</Amount><Held>2026-03-01T09:00:00Z</Held><Confirmed>2026-03-01T10:00:00Z</Confirmed></Commitment></Commitments></AccountCodeHolds>`},
		{"none", holdsLister{never, true, nil, nil}, "GET", "?account=X", "", 200, `<Holds></Holds><Commitments></Commitments>`},
		{"no account", holdsLister{never, true, list, nil}, "GET", "", "", 400, "account: the query parameter is required"},
		{"wrong token", holdsLister{never, true, list, nil}, "GET", "?account=X", "wrong", 401, "UNAUTHORIZED"},
		{"POST", holdsLister{never, true, list, nil}, "POST", "?account=X", "", 405, "METHOD_NOT_ALLOWED"},
		{"keeps no holds", holdsLister{never, false, nil, nil}, "GET", "?account=X", "", 501, "NOT_IMPLEMENTED"},
		{"not a lister", never, "GET", "?account=X", "", 501, "NOT_IMPLEMENTED"},
		{"holds unreachable", holdsLister{never, true, nil, budget.ErrUnavailable}, "GET", "?account=X", "", 502, "UPSTREAM_FAILED"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := accountcode.NewHandler(c.v, accountcode.Options{
				Token: "holds-test-secret-0123456789", Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
			})
			srv := httptest.NewServer(h.HoldsHandler())
			defer srv.Close()
			req, _ := http.NewRequest(c.method, srv.URL+accountcode.HoldsPath+c.query, nil)
			token := c.token
			if token == "" {
				token = "holds-test-secret-0123456789"
			}
			req.Header.Set("Authorization", "Bearer "+token)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != c.status || !strings.Contains(string(b), c.body) {
				t.Fatalf("%d %s\nwant %d with %s", resp.StatusCode, b, c.status, c.body)
			}
			if ct := resp.Header.Get("Content-Type"); ct != "application/xml; charset=utf-8" {
				t.Errorf("Content-Type %q", ct)
			}
		})
	}
}
