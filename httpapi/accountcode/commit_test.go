package accountcode_test

import (
	"context"
	"encoding/xml"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"

	"github.com/procurekit/procure"
	"github.com/procurekit/procure/accountcodeapi"
	"github.com/procurekit/procure/budget"
	"github.com/procurekit/procure/httpapi/accountcode"
	"github.com/procurekit/procure/httpapi/internal/httpx"
)

// holdingValidator is echoValidator that also keeps holds (a
// budget.Committer): it records every call, the request and the caller it
// saw, and answers releases and confirms with changed or err.
type holdingValidator struct {
	mu      sync.Mutex
	calls   []string
	req     budget.Request
	caller  string
	changed int
	err     error
}

func (h *holdingValidator) Validate(ctx context.Context, req budget.Request) ([]budget.Result, error) {
	h.mu.Lock()
	h.calls = append(h.calls, "check")
	h.req, h.caller = req, budget.CallerOf(ctx)
	h.mu.Unlock()
	return echoValidator.Validate(ctx, req)
}

func (h *holdingValidator) commit(ctx context.Context, what, requisition string) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.calls = append(h.calls, what+" "+requisition)
	h.caller = budget.CallerOf(ctx)
	return h.changed, h.err
}

func (h *holdingValidator) Release(ctx context.Context, requisition string) (int, error) {
	return h.commit(ctx, "release", requisition)
}

func (h *holdingValidator) Confirm(ctx context.Context, requisition string) (int, error) {
	return h.commit(ctx, "confirm", requisition)
}

func (h *holdingValidator) seen() ([]string, budget.Request, string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.calls...), h.req, h.caller
}

func splitDoc(currency string, lines ...string) string {
	c := ""
	if currency != "" {
		c = "<Currency>" + currency + "</Currency>"
	}
	return "<AccountCodeValidationRequest><RequisitionId>REQ-7</RequisitionId>" + c + "<Lines>" + strings.Join(lines, "") + "</Lines></AccountCodeValidationRequest>"
}

func splitXMLLine(n int, amount string, splits ...string) string {
	return "<Line><LineNumber>" + strconv.Itoa(n) + "</LineNumber><Amount>" + amount + "</Amount><Splits>" + strings.Join(splits, "") + "</Splits></Line>"
}

func xmlSplit(account, kind, value string) string {
	return "<Split><Account>" + account + "</Account><" + kind + ">" + value + "</" + kind + "></Split>"
}

func commitDoc(root, requisition string) string {
	return "<" + root + "><RequisitionId>" + requisition + "</RequisitionId></" + root + ">"
}

// docs: account-codes.md "Bad input": each a 400 INVALID_FIELD naming the
// element by its path, and nothing held or changed (the validator is not
// asked).
func TestAccountCodeHandlerSplitsBadInput(t *testing.T) {
	v := &holdingValidator{}
	srv := newConnector(t, v, accountcode.Options{})
	url := srv.URL + accountcode.Path
	pct := func(a, p string) string { return xmlSplit(a, "Percentage", p) }
	amt := func(a, p string) string { return xmlSplit(a, "Amount", p) }
	var many []string
	for i := range budget.MaxSplits + 1 {
		many = append(many, amt("A"+strconv.Itoa(i), "1"))
	}
	cases := []struct {
		name, body, message string
	}{
		{"percentages not summing to 100", splitDoc("", splitXMLLine(1, "100", pct("A", "50"), pct("B", "50.0001"))),
			"Lines/Line[1]/Splits: the percentages must sum to exactly 100 (got 100.0001)"},
		{"split amounts not summing to the line", splitDoc("", xmlLine("1", "X", "1"), splitXMLLine(2, "100", amt("A", "60"), amt("B", "30"))),
			"Lines/Line[2]/Splits: the split amounts must sum to exactly the line's amount 100 (got 90)"},
		{"a percentage of 0", splitDoc("", splitXMLLine(1, "100", pct("A", "0"), pct("B", "100"))),
			"Lines/Line[1]/Splits/Split[1]/Percentage: must be more than 0 and at most 100 (got 0)"},
		{"a negative percentage", splitDoc("", splitXMLLine(1, "100", pct("A", "150"), pct("B", "-50"))),
			"Lines/Line[1]/Splits/Split[1]/Percentage: must be more than 0 and at most 100 (got 150); Lines/Line[1]/Splits/Split[2]/Percentage: must be more than 0 and at most 100 (got -50)"},
		{"a percentage over 100", splitDoc("", splitXMLLine(1, "100", pct("A", "100.0001"))),
			"Lines/Line[1]/Splits/Split[1]/Percentage: must be more than 0 and at most 100 (got 100.0001)"},
		{"a percentage with five decimals", splitDoc("", splitXMLLine(1, "100", pct("A", "50.00001"), pct("B", "49.99999"))),
			"Lines/Line[1]/Splits/Split[1]/Percentage: must have at most 4 decimals (got 50.00001); Lines/Line[1]/Splits/Split[2]/Percentage: must have at most 4 decimals (got 49.99999)"},
		{"both Account and Splits", splitDoc("", "<Line><LineNumber>1</LineNumber><Account>A</Account><Amount>1</Amount><Splits>"+pct("B", "100")+"</Splits></Line>"),
			"Lines/Line[1]/Splits: a line carries either account or splits, not both"},
		{"an empty Splits", splitDoc("", "<Line><LineNumber>1</LineNumber><Amount>1</Amount><Splits></Splits></Line>"),
			"Lines/Line[1]/Splits: at least one split is required"},
		{"more than 100 splits", splitDoc("", splitXMLLine(1, "101", many...)),
			"Lines/Line[1]/Splits: at most 100 splits per line (got 101)"},
		{"the same account twice", splitDoc("", splitXMLLine(1, "100", pct("A", "50"), pct("A", "50"))),
			`Lines/Line[1]/Splits/Split[2]/Account: account "A" appears more than once in the line's splits (it is also split number 1, counted from 1)`},
		{"an unknown currency", splitDoc("EURO", xmlLine("1", "A", "1")),
			`Currency: must be an active ISO 4217 currency code such as NZD (got "EURO")`},
		{"an amount finer than the default currency", splitDoc("", xmlLine("1", "A", "10.005")),
			"Lines/Line[1]/Amount: must be a whole number of NZD minor units (at most 2 decimals; got 10.005)"},
		{"a split amount finer than the currency", splitDoc("JPY", splitXMLLine(1, "100", amt("A", "50.5"), amt("B", "49.5"))),
			"Lines/Line[1]/Splits/Split[1]/Amount: must be a whole number of JPY minor units (at most 0 decimals; got 50.5); Lines/Line[1]/Splits/Split[2]/Amount: must be a whole number of JPY minor units (at most 0 decimals; got 49.5)"},
		{"a RequisitionId over 255 characters", "<AccountCodeValidationRequest><RequisitionId>" + strings.Repeat("é", 256) + "</RequisitionId><Lines>" + xmlLine("1", "A", "1") + "</Lines></AccountCodeValidationRequest>",
			"RequisitionId: must be at most 255 characters (got 256)"},
		{"a release without RequisitionId", "<AccountCodeReleaseRequest/>", "RequisitionId: is required"},
		{"a confirm with an empty RequisitionId", commitDoc("AccountCodeConfirmRequest", " "), "RequisitionId: is required"},
		{"a release with a RequisitionId over 255 characters", commitDoc("AccountCodeReleaseRequest", strings.Repeat("x", 256)),
			"RequisitionId: must be at most 255 characters (got 256)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := send(t, http.MethodPost, url, "application/xml", strings.NewReader(c.body))
			if a.status != http.StatusBadRequest {
				t.Fatalf("status %d; want 400\n%s", a.status, a.body)
			}
			var doc errorDoc
			if err := xml.Unmarshal([]byte(a.body), &doc); err != nil {
				t.Fatalf("error body: %v\n%s", err, a.body)
			}
			if doc.Code != httpx.CodeInvalidField || doc.Message != c.message {
				t.Errorf("error %s %q\nwant  INVALID_FIELD %q", doc.Code, doc.Message, c.message)
			}
		})
	}
	if calls, _, _ := v.seen(); len(calls) != 0 {
		t.Errorf("the validator was asked %v; want nothing held or changed", calls)
	}
}

func TestAccountCodeHandlerSplits(t *testing.T) {
	doc := splitDoc("", xmlLine("1", "7000", "5"),
		splitXMLLine(2, "100.00", xmlSplit("6100-200", "Percentage", "33.3333"), xmlSplit("6100-300", "Percentage", "66.6667")),
		splitXMLLine(3, "-10", xmlSplit("A", "Amount", "-4"), xmlSplit("B", "Amount", "-6")))
	t.Run("the validator sees the splits in the default currency", func(t *testing.T) {
		v := &holdingValidator{}
		srv := newConnector(t, v, accountcode.Options{})
		a := send(t, http.MethodPost, srv.URL+accountcode.Path, "application/xml", strings.NewReader(doc))
		if a.status != http.StatusOK {
			t.Fatalf("status %d\n%s", a.status, a.body)
		}
		_, req, _ := v.seen()
		if req.Currency != "NZD" {
			t.Errorf("currency %q; want the default NZD", req.Currency)
		}
		var got []string
		for _, l := range req.Lines {
			for _, s := range l.Shares(req.Currency) {
				got = append(got, strconv.Itoa(l.Number)+":"+s.Account+"="+budget.FormatAmount(s.Amount))
			}
		}
		want := []string{"1:7000=5", "2:6100-200=33.33", "2:6100-300=66.67", "3:A=-4", "3:B=-6"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("shares (-want +got):\n%s", diff)
		}
	})
	t.Run("a connector's own default currency", func(t *testing.T) {
		v := &holdingValidator{}
		srv := newConnector(t, v, accountcode.Options{Currency: "JPY"})
		a := send(t, http.MethodPost, srv.URL+accountcode.Path, "application/xml", strings.NewReader(splitDoc("", xmlLine("1", "A", "1"), xmlLine("2", "A", "100.50"))))
		if a.status != http.StatusBadRequest || !strings.Contains(a.body, "Lines/Line[2]/Amount: must be a whole number of JPY minor units (at most 0 decimals; got 100.50)") {
			t.Errorf("status %d; want 400 naming Lines/Line[2]/Amount in JPY\n%s", a.status, a.body)
		}
		// 100.00 is a whole number of yen.
		a = send(t, http.MethodPost, srv.URL+accountcode.Path, "application/xml", strings.NewReader(doc))
		if _, req, _ := v.seen(); a.status != http.StatusOK || req.Currency != "JPY" || !req.Lines[1].Shares("JPY")[1].Amount.Equal(decimal.New(67, 0)) {
			t.Errorf("status %d, currency %q; want 200 in JPY, 67 yen on 6100-300\n%s", a.status, req.Currency, a.body)
		}
		a = send(t, http.MethodPost, srv.URL+accountcode.Path, "application/xml", strings.NewReader(splitDoc("NZD", xmlLine("1", "A", "0.50"))))
		if _, req, _ := v.seen(); a.status != http.StatusOK || req.Currency != "NZD" {
			t.Errorf("status %d, currency %q; want 200 in the request's own NZD", a.status, req.Currency)
		}
	})
	t.Run("an unknown default currency is refused at start", func(t *testing.T) {
		defer func() {
			if recover() == nil {
				t.Error("NewAccountCodeHandler accepted the currency NZ")
			}
		}()
		accountcode.NewHandler(echoValidator, accountcode.Options{InsecureNoAuth: true, Currency: "NZ"})
	})
}

func TestAccountCodeHandlerReleaseConfirm(t *testing.T) {
	v := &holdingValidator{changed: 2}
	srv := newConnector(t, v, accountcode.Options{})
	url := srv.URL + accountcode.Path
	for _, c := range []struct{ root, reply, call string }{
		{"AccountCodeReleaseRequest", "AccountCodeReleaseResponse", "release"},
		{"AccountCodeConfirmRequest", "AccountCodeConfirmResponse", "confirm"},
	} {
		t.Run(c.call, func(t *testing.T) {
			a := send(t, http.MethodPost, url, "application/xml", strings.NewReader(commitDoc(c.root, "REQ &amp; 9")))
			want := `<?xml version="1.0" encoding="UTF-8"?>` + "\n<" + c.reply + "><RequisitionId>REQ &amp; 9</RequisitionId><Changed>2</Changed></" + c.reply + ">\n"
			if a.status != http.StatusOK || a.body != want {
				t.Fatalf("status %d body\n%s\nwant 200\n%s", a.status, a.body, want)
			}
			if ct := a.header.Get("Content-Type"); ct != "application/xml; charset=utf-8" {
				t.Errorf("Content-Type %q", ct)
			}
			calls, _, caller := v.seen()
			if calls[len(calls)-1] != c.call+" REQ & 9" || caller != "127.0.0.1" {
				t.Errorf("the validator was told %q by %q; want %q by 127.0.0.1", calls[len(calls)-1], caller, c.call+" REQ & 9")
			}
		})
	}

	failures := []struct {
		name    string
		v       budget.Validator
		status  int
		code    string
		message string
	}{
		{"a validator without holds", echoValidator, 501, httpx.CodeNotImplemented,
			"this connector keeps no holds, so it cannot answer an AccountCodeReleaseRequest"},
		{"a validator that says it keeps none", &holdingValidator{err: budget.ErrUnsupported}, 501, httpx.CodeNotImplemented,
			"this connector keeps no holds"},
		{"holds that cannot be reached", &holdingValidator{err: budget.ErrUnavailable}, 502, httpx.CodeUpstreamFailed,
			"the holds could not be changed; the connector's log has the cause"},
		{"a refusal of the holds", &holdingValidator{err: procure.Invalid(procure.SourceBody, "requisitionId", "is unknown here")}, 400, httpx.CodeInvalidField,
			"RequisitionId: is unknown here"},
	}
	for _, c := range failures {
		t.Run(c.name, func(t *testing.T) {
			srv := newConnector(t, c.v, accountcode.Options{})
			a := send(t, http.MethodPost, srv.URL+accountcode.Path, "application/xml", strings.NewReader(commitDoc("AccountCodeReleaseRequest", "REQ-1")))
			var doc errorDoc
			if err := xml.Unmarshal([]byte(a.body), &doc); err != nil {
				t.Fatalf("status %d, error body: %v\n%s", a.status, err, a.body)
			}
			if a.status != c.status || doc.Code != c.code || !strings.HasPrefix(doc.Message, c.message) {
				t.Errorf("%d %s %q\nwant %d %s %q", a.status, doc.Code, doc.Message, c.status, c.code, c.message)
			}
		})
	}

	t.Run("the caller is authenticated first", func(t *testing.T) {
		v := &holdingValidator{}
		srv := newConnector(t, v, accountcode.Options{Token: connectorToken})
		a := send(t, http.MethodPost, srv.URL+accountcode.Path, "application/xml", strings.NewReader(commitDoc("AccountCodeReleaseRequest", "REQ-1")))
		if a.status != http.StatusUnauthorized {
			t.Errorf("status %d; want 401", a.status)
		}
		if calls, _, _ := v.seen(); len(calls) != 0 {
			t.Errorf("the validator was told %v", calls)
		}
	})
}

// The platform's side end to end: the gate over the client sends releases
// and confirms to the connector, whose validator keeps the holds.
func TestAccountCodeCommitRoundTrip(t *testing.T) {
	ctx := context.Background()
	v := &holdingValidator{changed: 4}
	srv := newConnector(t, v, accountcode.Options{Token: connectorToken})
	client, err := accountcodeapi.New(srv.URL+accountcode.Path, accountcodeapi.Options{Token: connectorToken})
	if err != nil {
		t.Fatal(err)
	}
	gate, err := budget.NewGate(client, budget.GateConfig{Community: "c-1"})
	if err != nil {
		t.Fatal(err)
	}
	if n, err := gate.Release(ctx, "REQ-1"); n != 4 || err != nil {
		t.Errorf("Release = %d, %v; want 4", n, err)
	}
	if n, err := gate.Confirm(ctx, "REQ-2"); n != 4 || err != nil {
		t.Errorf("Confirm = %d, %v; want 4", n, err)
	}
	// A check with splits goes through the same gate and client.
	req := budget.Request{RequisitionID: "REQ-3", Currency: "AUD", Lines: []budget.Line{{
		Number: 1, Amount: acLine(t, 1, "x", "10.00").Amount, Splits: []budget.Split{
			{Account: "A", Percentage: acPct(t, "12.5")}, {Account: "B", Percentage: acPct(t, "87.5")}},
	}}}
	if d, err := gate.Checkout(ctx, req, ""); err != nil || d.Outcome != budget.Proceed {
		t.Errorf("Checkout = %v, %v; want proceed", d.Outcome, err)
	}
	calls, got, _ := v.seen()
	if diff := cmp.Diff([]string{"release REQ-1", "confirm REQ-2", "check"}, calls); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(req, got, exactDecimal); diff != "" {
		t.Errorf("the check received (-sent +received):\n%s", diff)
	}

	t.Run("a connector without holds", func(t *testing.T) {
		srv := newConnector(t, echoValidator, accountcode.Options{})
		client, err := accountcodeapi.New(srv.URL+accountcode.Path, accountcodeapi.Options{})
		if err != nil {
			t.Fatal(err)
		}
		_, err = client.Confirm(ctx, "REQ-1")
		if !errors.Is(err, budget.ErrUnsupported) || errors.Is(err, budget.ErrUnavailable) || !strings.Contains(err.Error(), "NOT_IMPLEMENTED") {
			t.Errorf("Confirm = %v; want budget.ErrUnsupported with the connector's code", err)
		}
	})
	t.Run("a bad requisition is not sent", func(t *testing.T) {
		if _, err := client.Release(ctx, ""); !errors.Is(err, procure.ErrInvalid) {
			t.Errorf("Release(\"\") = %v; want procure.ErrInvalid", err)
		}
		if calls, _, _ := v.seen(); len(calls) != 3 {
			t.Errorf("the validator was told %v", calls)
		}
	})
}

func acPct(tb testing.TB, p string) decimal.NullDecimal {
	tb.Helper()
	d, err := budget.ParseAmount(p)
	if err != nil {
		tb.Fatal(err)
	}
	return decimal.NewNullDecimal(d)
}
