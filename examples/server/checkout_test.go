package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/procurekit/procure/budget"
	"github.com/procurekit/procure/datafile"
	"github.com/procurekit/procure/httpapi"
	"github.com/procurekit/procure/internal/syncbuf"
	"github.com/procurekit/procure/memstore"
)

// checkoutData is a small data file of two communities with budgets.
const checkoutData = `{"communities": [
  {"id": "north", "name": "North", "region": "NZ",
   "tokens": [{"token": "north-token", "scopes": ["suppliers:read"]}, {"token": "north-noscope", "scopes": []},
              {"token": "north-revoked", "scopes": ["suppliers:read"], "revoked": true}],
   "budgets": [{"account": "6100-200", "budget": "1000.00"}, {"account": "6100-300", "budget": "50"}]},
  {"id": "south", "name": "South", "region": "AU",
   "tokens": [{"token": "south-token", "scopes": ["suppliers:read"]}],
   "budgets": [{"account": "6100-200", "budget": "10"}]}
]}`

func checkoutStore(tb testing.TB) *memstore.Store {
	tb.Helper()
	f, err := datafile.Parse(strings.NewReader(checkoutData))
	if err != nil {
		tb.Fatal(err)
	}
	s, err := memstore.LoadReader(f.Reader())
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// checkoutServer serves the demo route with cfg (Store and Tokens default
// to the test data).
func checkoutServer(tb testing.TB, cfg checkoutConfig) string {
	tb.Helper()
	if cfg.Store == nil && cfg.FinanceURL == "" {
		cfg.Store = checkoutStore(tb)
	}
	if cfg.Tokens == nil {
		cfg.Tokens = checkoutStore(tb)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	mux := http.NewServeMux()
	if err := mountCheckoutDemo(mux, cfg); err != nil {
		tb.Fatal(err)
	}
	srv := httptest.NewServer(mux)
	tb.Cleanup(srv.Close)
	return srv.URL + checkoutPath
}

type checkoutAnswer struct {
	status int
	header http.Header
	body   map[string]any
	resp   checkoutResponse
}

func checkoutPost(tb testing.TB, url, token, contentType, body string) checkoutAnswer {
	tb.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		tb.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	req.Header.Set("Content-Type", contentType)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatal(err)
	}
	a := checkoutAnswer{status: resp.StatusCode, header: resp.Header}
	if err := json.Unmarshal(raw, &a.body); err != nil {
		tb.Fatalf("body is not JSON: %v\n%s", err, raw)
	}
	if err := json.Unmarshal(raw, &a.resp); err != nil {
		tb.Fatal(err)
	}
	return a
}

// checkoutBody writes a demo request for lines "number account amount".
func checkoutBody(ack string, lines ...string) string {
	var ls []string
	for _, l := range lines {
		f := strings.Fields(l)
		ls = append(ls, `{"lineNumber": `+f[0]+`, "account": "`+f[1]+`", "amount": "`+f[2]+`"}`)
	}
	b := `{"requisitionId": "REQ-1001", "username": "jdoe", "lines": [` + strings.Join(ls, ", ") + `]`
	if ack != "" {
		b += `, "acknowledgement": "` + ack + `"`
	}
	return b + "}"
}

func TestCheckoutDemoDecisions(t *testing.T) {
	url := checkoutServer(t, checkoutConfig{})
	post := func(token, body string) checkoutAnswer {
		t.Helper()
		return checkoutPost(t, url, token, "application/json", body)
	}

	t.Run("proceed", func(t *testing.T) {
		a := post("north-token", checkoutBody("", "1 6100-200 999.99", "2 6100-300 50"))
		want := checkoutResponse{Decision: "proceed", Lines: []checkoutResult{{1, "Valid", ""}, {2, "Valid", ""}}}
		if a.status != 200 || !cmp.Equal(want, a.resp) {
			t.Fatalf("status %d %s", a.status, cmp.Diff(want, a.resp))
		}
	})

	t.Run("hard stop", func(t *testing.T) {
		// docs: suppliers.md "Enumerations": an account absent from the table is Invalid.
		a := post("north-token", checkoutBody("", "1 6100-200 1", "2 9999-999 1", "3 6100-300 51"))
		want := checkoutResponse{Decision: "hard_stop", Message: budget.HardStopMessage, Lines: []checkoutResult{
			{1, "Valid", ""},
			{2, "Invalid", "Account 9999-999 has no budget."},
			{3, "Warning", "The lines on account 6100-300 exceed its available budget."},
		}}
		if a.status != 200 || !cmp.Equal(want, a.resp) {
			t.Fatalf("status %d %s", a.status, cmp.Diff(want, a.resp))
		}
	})

	t.Run("soft stop, then proceed with the acknowledgement", func(t *testing.T) {
		body := checkoutBody("", "1 6100-200 600", "2 6100-200 400.01")
		a := post("north-token", body)
		if a.status != 200 || a.resp.Decision != "soft_stop" || a.resp.Acknowledgement == "" || a.resp.Message != budget.SoftStopMessage {
			t.Fatalf("first attempt: %d %+v", a.status, a.resp)
		}
		ack := a.resp.Acknowledgement

		// The same lines (amounts written differently) proceed.
		again := post("north-token", checkoutBody(ack, "1 6100-200 600.00", "2 6100-200 400.010"))
		if again.resp.Decision != "proceed" || !again.resp.Acknowledged {
			t.Fatalf("retry: %+v", again.resp)
		}
		// A changed amount needs a fresh acknowledgement.
		changed := post("north-token", checkoutBody(ack, "1 6100-200 600", "2 6100-200 400.02"))
		if changed.resp.Decision != "soft_stop" || changed.resp.Acknowledgement == ack {
			t.Fatalf("changed amount: %+v", changed.resp)
		}
		// Without it, the same lines stop again.
		if without := post("north-token", body); without.resp.Decision != "soft_stop" {
			t.Fatalf("without the acknowledgement: %+v", without.resp)
		}
	})

	t.Run("each community has its own table", func(t *testing.T) {
		a := post("south-token", checkoutBody("", "1 6100-200 11", "2 6100-300 1"))
		want := []checkoutResult{
			{1, "Warning", "The lines on account 6100-200 exceed its available budget."},
			{2, "Invalid", "Account 6100-300 has no budget."},
		}
		if diff := cmp.Diff(want, a.resp.Lines); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})

	t.Run("any valid token of the community, no scope needed", func(t *testing.T) {
		if a := post("north-noscope", checkoutBody("", "1 6100-200 1")); a.status != 200 || a.resp.Decision != "proceed" {
			t.Fatalf("%d %+v", a.status, a.resp)
		}
	})
}

func TestCheckoutDemoAcknowledgementAcrossCommunities(t *testing.T) {
	// Both communities warn on the same lines: the north acknowledgement
	// still does not open south's checkout.
	f, err := datafile.Parse(strings.NewReader(strings.ReplaceAll(checkoutData, `"budget": "10"`, `"budget": "1000.00"`)))
	if err != nil {
		t.Fatal(err)
	}
	s, err := memstore.LoadReader(f.Reader())
	if err != nil {
		t.Fatal(err)
	}
	url := checkoutServer(t, checkoutConfig{Store: s, Tokens: s})
	body := checkoutBody("", "1 6100-200 1000.01")
	north := checkoutPost(t, url, "north-token", "application/json", body)
	if north.resp.Decision != "soft_stop" {
		t.Fatalf("north: %+v", north.resp)
	}
	south := checkoutPost(t, url, "south-token", "application/json", checkoutBody(north.resp.Acknowledgement, "1 6100-200 1000.01"))
	if south.resp.Decision != "soft_stop" {
		t.Fatalf("south with north's acknowledgement: %+v; want a soft stop", south.resp)
	}
	if again := checkoutPost(t, url, "south-token", "application/json", checkoutBody(south.resp.Acknowledgement, "1 6100-200 1000.01")); again.resp.Decision != "proceed" {
		t.Fatalf("south with its own acknowledgement: %+v", again.resp)
	}
}

func TestCheckoutDemoErrors(t *testing.T) {
	url := checkoutServer(t, checkoutConfig{})
	cases := []struct {
		name, token, contentType, body string
		status                         int
		code, message                  string
	}{
		{"no token", "", "application/json", checkoutBody("", "1 6100-200 1"), 401, "UNAUTHORIZED", "authentication failed"},
		{"unknown token", "nope", "application/json", checkoutBody("", "1 6100-200 1"), 401, "UNAUTHORIZED", "authentication failed"},
		{"revoked token", "north-revoked", "application/json", checkoutBody("", "1 6100-200 1"), 401, "UNAUTHORIZED", "authentication failed"},
		{"not JSON", "north-token", "text/plain", "lines", 415, "UNSUPPORTED_MEDIA_TYPE", "the body must be JSON"},
		{"malformed JSON", "north-token", "application/json", `{"lines": [`, 400, "MALFORMED_REQUEST", "the body is not a checkout request"},
		{"no lines", "north-token", "application/json", `{"lines": []}`, 400, "INVALID_FIELD", "lines: at least one line is required"},
		{"no line number", "north-token", "application/json", `{"lines": [{"account": "A", "amount": 1}]}`, 400, "INVALID_FIELD", "lines[0].lineNumber: is required"},
		{"duplicate line number", "north-token", "application/json", checkoutBody("", "1 A 1", "1 B 1"), 400, "INVALID_FIELD", "lines[1].lineNumber: line number 1 appears more than once"},
		{"bad amount", "north-token", "application/json", checkoutBody("", "1 A 12,50"), 400, "INVALID_FIELD", `lines[0].amount: must be a decimal number such as 125.50 (got "12,50")`},
		{"float amount", "north-token", "application/json", `{"lines": [{"lineNumber": 1, "account": "A", "amount": 1e3}]}`, 400, "INVALID_FIELD", `lines[0].amount: must be a decimal number`},
		{"no amount", "north-token", "application/json", `{"lines": [{"lineNumber": 1, "account": "A"}]}`, 400, "INVALID_FIELD", "lines[0].amount: is required"},
		{"blank account", "north-token", "application/json", `{"lines": [{"lineNumber": 1, "account": " ", "amount": 1}]}`, 400, "INVALID_FIELD", "lines[0].account: is required"},
		{"too large", "north-token", "application/json", `{"x": "` + strings.Repeat("a", checkoutMaxBody) + `"}`, 413, "PAYLOAD_TOO_LARGE", "the body is larger than 1 MiB"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := checkoutPost(t, url, c.token, c.contentType, c.body)
			if a.status != c.status || a.body["code"] != c.code || !strings.HasPrefix(a.body["message"].(string), c.message) {
				t.Fatalf("%d %v; want %d %s %q", a.status, a.body, c.status, c.code, c.message)
			}
			if c.status == 401 && a.header.Get("WWW-Authenticate") != "Bearer" {
				t.Errorf("WWW-Authenticate %q", a.header.Get("WWW-Authenticate"))
			}
		})
	}

	t.Run("GET", func(t *testing.T) {
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 405 || resp.Header.Get("Allow") != "POST" {
			t.Fatalf("%d Allow %q", resp.StatusCode, resp.Header.Get("Allow"))
		}
	})
}

func TestCheckoutDemoThroughConnector(t *testing.T) {
	// The whole flow: demo route -> gate -> XML client -> connector
	// handler -> budget table.
	table, err := budget.ReadCSV(strings.NewReader("account,budget\n6100-200,100\n"), "budgets.csv")
	if err != nil {
		t.Fatal(err)
	}
	tv, err := budget.NewTableValidator(context.Background(), budget.TableConfig{Load: budget.StaticTable(table), OverBudget: budget.Warning})
	if err != nil {
		t.Fatal(err)
	}
	cmux := http.NewServeMux()
	const secret = "fixture-connector-secret" // the connector's PROCURE_CONNECTOR_TOKEN
	httpapi.NewAccountCodeHandler(tv, httpapi.AccountCodeHandlerOptions{Token: secret}).Mount(cmux)
	connector := httptest.NewServer(cmux)
	t.Cleanup(connector.Close)

	url := checkoutServer(t, checkoutConfig{FinanceURL: connector.URL + httpapi.AccountCodePath, FinanceToken: secret})
	a := checkoutPost(t, url, "north-token", "application/json", checkoutBody("", "1 6100-200 60", "2 6100-200 40.01", "3 7000-000 1"))
	want := checkoutResponse{Decision: "hard_stop", Message: budget.HardStopMessage, Lines: []checkoutResult{
		{1, "Warning", "The lines on account 6100-200 exceed its available budget."},
		{2, "Warning", "The lines on account 6100-200 exceed its available budget."},
		{3, "Invalid", "Account 7000-000 has no budget."},
	}}
	if a.status != 200 || !cmp.Equal(want, a.resp) {
		t.Fatalf("%d %s", a.status, cmp.Diff(want, a.resp))
	}
	soft := checkoutPost(t, url, "north-token", "application/json", checkoutBody("", "1 6100-200 60", "2 6100-200 40.01"))
	if soft.resp.Decision != "soft_stop" {
		t.Fatalf("%+v", soft.resp)
	}
	if p := checkoutPost(t, url, "north-token", "application/json", checkoutBody(soft.resp.Acknowledgement, "1 6100-200 60", "2 6100-200 40.01")); p.resp.Decision != "proceed" {
		t.Fatalf("%+v", p.resp)
	}
}

func TestCheckoutDemoUnavailable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + l.Addr().String() + httpapi.AccountCodePath
	l.Close()
	var logs bytes.Buffer
	url := checkoutServer(t, checkoutConfig{FinanceURL: dead, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	a := checkoutPost(t, url, "north-token", "application/json", checkoutBody("", "1 6100-200 1"))
	want := checkoutResponse{Decision: "unavailable", Message: budget.UnavailableMessage}
	if a.status != 503 || !cmp.Equal(want, a.resp) {
		t.Fatalf("%d %s", a.status, cmp.Diff(want, a.resp))
	}
	if !strings.Contains(logs.String(), "refused") {
		t.Errorf("the cause was not logged:\n%s", logs.String())
	}
	if m := goPackageInText.FindString(logs.String()); m != "" {
		t.Errorf("the log names a Go package (%q):\n%s", m, logs.String())
	}
}

// goPackageInText finds what a Go error shows of its packages and types:
// "budget: ", "pgholds: ", "json: ", "Go struct field", "main.".
var goPackageInText = regexp.MustCompile(`\b(budget|pgholds|accountcodeapi|pgstore|memstore|httpapi|json): |Go struct|\bmain\.|unmarshal`)

// The demo's answers say what is wrong in the request's terms: its JSON
// fields and the rules they broke, never a Go package, type or struct.
func TestCheckoutDemoMessages(t *testing.T) {
	url := checkoutServer(t, checkoutConfig{})
	for _, tc := range []struct {
		name, path, body string
		code, message    string
	}{
		{"a field of the wrong type", checkoutPath, `{"lines": "x"}`, "MALFORMED_REQUEST", "the body is not a checkout request: lines: must be an array (got string)"},
		{"a nested field of the wrong type", checkoutPath, `{"lines": [{"lineNumber": "1"}]}`, "MALFORMED_REQUEST", "the body is not a checkout request: lines.lineNumber: must be an integer (got string)"},
		{"not an object", checkoutPath, `[1]`, "MALFORMED_REQUEST", "the body is not a checkout request: must be a JSON object (got array)"},
		{"malformed", checkoutPath, `{"lines": [`, "MALFORMED_REQUEST", "the body is not a checkout request: not valid JSON: unexpected end of JSON input"},
		{"a warning without a requisition", checkoutPath, `{"lines": [{"lineNumber": 1, "account": "6100-300", "amount": "60"}]}`, "INVALID_FIELD",
			"requisitionId: is required to acknowledge warnings: the acknowledgement is bound to the requisition"},
		{"an acknowledgement without a requisition", checkoutPath, `{"lines": [{"lineNumber": 1, "account": "6100-200", "amount": "1"}], "acknowledgement": "x"}`, "INVALID_FIELD",
			"requisitionId: is required to acknowledge warnings: the acknowledgement is bound to the requisition"},
		{"cancel of the wrong type", checkoutCancelPath, `{"requisitionId": 5}`, "MALFORMED_REQUEST", "the body is not a cancel or confirm request: requisitionId: must be a string (got number)"},
		{"confirm without a requisition", checkoutConfirmPath, `{}`, "INVALID_FIELD", "requisitionId: is required"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := checkoutPost(t, strings.TrimSuffix(url, checkoutPath)+tc.path, "north-token", "application/json", tc.body)
			if a.status != http.StatusBadRequest || a.body["code"] != tc.code || a.body["message"] != tc.message {
				t.Errorf("%d %v; want 400 %s %q", a.status, a.body, tc.code, tc.message)
			}
			if m := goPackageInText.FindString(a.body["message"].(string)); m != "" {
				t.Errorf("the message names Go (%q): %s", m, a.body["message"])
			}
		})
	}
}

func TestWithoutPackages(t *testing.T) {
	for in, want := range map[string]string{
		"budget: checkout: requisitionId: is required":                "checkout: requisitionId: is required",
		"budget: release: pgholds: audit: pgstore: statement timeout": "release: audit: statement timeout",
		"checkout demo: gate":  "checkout demo: gate",
		"budgetary: x":         "budgetary: x",
		"a: json: cannot read": "a: cannot read",
	} {
		if got := withoutPackages(in); got != want {
			t.Errorf("withoutPackages(%q) = %q, want %q", in, got, want)
		}
	}
}

// The request log's line of a checkout names the caller's community, as
// the APIs' lines do; a failed authentication names none.
func TestCheckoutDemoRequestLog(t *testing.T) {
	var logs syncbuf.Buffer
	log := slog.New(slog.NewJSONHandler(&logs, nil))
	s := checkoutStore(t)
	mux := http.NewServeMux()
	if err := mountCheckoutDemo(mux, checkoutConfig{Store: s, Tokens: s, Logger: log}); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(httpapi.RequestLog(log, mux))
	t.Cleanup(srv.Close)
	checkoutPost(t, srv.URL+checkoutPath, "south-token", "application/json", checkoutBody("", "1 6100-200 1"))
	checkoutPost(t, srv.URL+checkoutCancelPath, "north-token", "application/json", `{"requisitionId": "REQ-1001"}`)
	checkoutPost(t, srv.URL+checkoutPath, "nope", "application/json", checkoutBody("", "1 6100-200 1"))
	srv.Close() // every request has ended, and been logged
	type line struct {
		Msg, Route, Community string
		Status                int
	}
	var got []line
	for _, raw := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var l line
		if err := json.Unmarshal([]byte(raw), &l); err != nil {
			t.Fatalf("%v: %s", err, raw)
		}
		if l.Msg == "request" {
			got = append(got, line{Route: l.Route, Community: l.Community, Status: l.Status})
		}
	}
	want := []line{
		{Route: checkoutPath, Community: "south", Status: 200},
		{Route: checkoutCancelPath, Community: "north", Status: 200},
		{Route: checkoutPath, Community: "", Status: 401},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("request lines (-want +got):\n%s", diff)
	}
}

func TestMountCheckoutDemoConfig(t *testing.T) {
	s := checkoutStore(t)
	for name, cfg := range map[string]checkoutConfig{
		"no tokens":       {Store: s},
		"no source":       {Tokens: s},
		"bad finance URL": {Tokens: s, FinanceURL: "finance.example.com"},
	} {
		if err := mountCheckoutDemo(http.NewServeMux(), cfg); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestCheckoutDemoLimits(t *testing.T) {
	// docs: limits.md: 10,000 lines per request; a 400 names at most
	// 20 field errors.
	url := checkoutServer(t, checkoutConfig{})
	lines := func(n int, account string) string {
		ls := make([]string, n)
		for i := range ls {
			ls[i] = `{"lineNumber": ` + strconv.Itoa(i+1) + `, "account": "` + account + `", "amount": "0.01"}`
		}
		return `{"requisitionId": "REQ-1", "lines": [` + strings.Join(ls, ",") + `]}`
	}
	a := checkoutPost(t, url, "north-token", "application/json", lines(budget.MaxLines, "6100-200"))
	if a.status != 200 || a.resp.Decision != "proceed" || len(a.resp.Lines) != budget.MaxLines {
		t.Fatalf("%d lines: %d %s with %d lines; want 200 proceed", budget.MaxLines, a.status, a.resp.Decision, len(a.resp.Lines))
	}
	a = checkoutPost(t, url, "north-token", "application/json", lines(budget.MaxLines+1, "6100-200"))
	if a.status != 400 || a.body["code"] != httpapi.CodeInvalidField || a.body["message"] != "lines: at most 10000 lines per request (got 10001)" {
		t.Fatalf("%d lines: %d %v; want 400 naming the limit", budget.MaxLines+1, a.status, a.body)
	}
	// 10,000 blank accounts: 20 errors named, the rest counted.
	a = checkoutPost(t, url, "north-token", "application/json", lines(budget.MaxLines, ""))
	msg, _ := a.body["message"].(string)
	if a.status != 400 || strings.Count(msg, ".account: is required") != 20 || !strings.HasSuffix(msg, "; and 9980 more") {
		t.Fatalf("%d blank accounts: %d %.300q; want 400 with 20 errors and a count", budget.MaxLines, a.status, msg)
	}
}
