package main

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/procurekit/procure/internal/pgtest"
	"github.com/procurekit/procure/internal/syncbuf"
)

// startOut is start, keeping everything the connector prints.
func startOut(tb testing.TB, args ...string) (url string, stdout *syncbuf.Buffer) {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	stdout = &syncbuf.Buffer{}
	logs := &syncbuf.Buffer{}
	done := make(chan error, 1)
	go func() {
		err := run(ctx, append([]string{"-addr", "127.0.0.1:0"}, args...), pw, logs)
		pw.Close()
		done <- err
	}()
	out := bufio.NewReader(pr)
	first, err := out.ReadString('\n')
	if err != nil {
		cancel()
		tb.Fatalf("the connector printed no address: %v (run: %v)\n%s", err, <-done, logs)
	}
	go io.Copy(stdout, out)
	tb.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				tb.Errorf("run returned %v after shutdown", err)
			}
		case <-time.After(15 * time.Second):
			tb.Errorf("the connector did not shut down")
		}
	})
	return strings.TrimSpace(strings.TrimPrefix(first, "connector serving POST ")), stdout
}

// xmlPost posts body and returns the status and the answer.
func xmlPost(tb testing.TB, url, body string) (int, string) {
	tb.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		tb.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/xml; charset=utf-8")
	req.Header.Set("Authorization", "Bearer "+testToken)
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

// check asks for requisition's lines ("account amount" each) and returns
// the statuses joined by commas.
func check(tb testing.TB, url, requisition string, lines ...string) string {
	tb.Helper()
	var b strings.Builder
	b.WriteString("<AccountCodeValidationRequest><RequisitionId>" + requisition + "</RequisitionId><Lines>")
	for i, l := range lines {
		f := strings.Fields(l)
		b.WriteString("<Line><LineNumber>" + string(rune('1'+i)) + "</LineNumber><Account>" + f[0] + "</Account><Amount>" + f[1] + "</Amount></Line>")
	}
	b.WriteString("</Lines></AccountCodeValidationRequest>")
	status, body := xmlPost(tb, url, b.String())
	if status != http.StatusOK {
		tb.Fatalf("check %s: status %d\n%s", requisition, status, body)
	}
	var doc struct {
		Lines []verdict `xml:"Lines>Line"`
	}
	if err := xml.Unmarshal([]byte(body), &doc); err != nil {
		tb.Fatalf("%v\n%s", err, body)
	}
	var s []string
	for _, l := range doc.Lines {
		s = append(s, l.Status)
	}
	return strings.Join(s, ",")
}

// commit sends a release or confirm ("Release" or "Confirm") and returns
// the Changed count.
func commit(tb testing.TB, url, kind, requisition string) string {
	tb.Helper()
	status, body := xmlPost(tb, url, "<AccountCode"+kind+"Request><RequisitionId>"+requisition+"</RequisitionId></AccountCode"+kind+"Request>")
	if status != http.StatusOK {
		tb.Fatalf("%s %s: status %d\n%s", kind, requisition, status, body)
	}
	var doc struct {
		Changed string `xml:"Changed"`
	}
	if err := xml.Unmarshal([]byte(body), &doc); err != nil {
		tb.Fatalf("%v\n%s", err, body)
	}
	return doc.Changed
}

type listedHold struct {
	RequisitionID string `xml:"RequisitionId"`
	Amount        string `xml:"Amount"`
	Expires       string `xml:"Expires"`
	Confirmed     string `xml:"Confirmed"`
}

type listed struct {
	Account     string       `xml:"Account"`
	Holds       []listedHold `xml:"Holds>Hold"`
	Commitments []listedHold `xml:"Commitments>Commitment"`
}

// listHolds gets the holds route with authz ("" for the test token) and
// returns the status and the listing.
func listHolds(tb testing.TB, url, account, authz string) (int, listed) {
	tb.Helper()
	req, err := http.NewRequest(http.MethodGet, url+"/holds?account="+account, nil)
	if err != nil {
		tb.Fatal(err)
	}
	if authz == "" {
		authz = "Bearer " + testToken
	}
	req.Header.Set("Authorization", authz)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var l listed
	if resp.StatusCode == http.StatusOK {
		if err := xml.Unmarshal(b, &l); err != nil {
			tb.Fatalf("%v\n%s", err, b)
		}
	}
	return resp.StatusCode, l
}

func writeCSV(tb testing.TB, content string) string {
	tb.Helper()
	p := filepath.Join(tb.TempDir(), "budgets.csv")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		tb.Fatal(err)
	}
	return p
}

func TestConnectorHolds(t *testing.T) {
	table := writeCSV(t, "account,budget,tolerance_percent\nX,100,\nT,100,10\n")
	audit := filepath.Join(t.TempDir(), "audit.jsonl")
	url, stdout := startOut(t, "-table", table, "-audit", audit, "-hold-for", "1h")
	waitFor(t, "the start message", func() bool { return strings.Contains(stdout.String(), "audit:") })
	for _, want := range []string{"holds: in memory: a restart forgets every hold", "each lasts 1h0m0s", "audit: " + audit} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("the start message lacks %q:\n%s", want, stdout)
		}
	}
	steps := []struct{ got, want string }{
		{check(t, url, "A", "X 60"), "Valid"},
		{check(t, url, "B", "X 50"), "Invalid"},
		{check(t, url, "B", "X 40"), "Valid"},
		{check(t, url, "A", "X 60"), "Valid"}, // a re-check replaces, never counted twice
		{check(t, url, "C", "T 110"), "Warning"},
		{commit(t, url, "Confirm", "A"), "1"},
		{commit(t, url, "Release", "B"), "1"},
		{commit(t, url, "Release", "nobody"), "0"},
		{check(t, url, "D", "X 40"), "Valid"},
		{check(t, url, "E", "X 0.01"), "Invalid"},
	}
	for i, s := range steps {
		if s.got != s.want {
			t.Errorf("step %d: %s, want %s", i, s.got, s.want)
		}
	}
	status, l := listHolds(t, url, "X", "")
	if status != http.StatusOK || len(l.Holds) != 1 || l.Holds[0].RequisitionID != "D" || l.Holds[0].Amount != "40" ||
		len(l.Commitments) != 1 || l.Commitments[0].RequisitionID != "A" || l.Commitments[0].Confirmed == "" {
		t.Errorf("holds of X: %d %+v; want D's hold of 40 and A's commitment", status, l)
	}
	if status, _ := listHolds(t, url, "X", "Bearer wrong-token-wrong-token"); status != http.StatusUnauthorized {
		t.Errorf("holds with a wrong token: %d, want 401", status)
	}
	if status, _ := listHolds(t, url, "", ""); status != http.StatusBadRequest {
		t.Errorf("holds without an account: %d, want 400", status)
	}
	for _, bad := range []string{
		"<AccountCodeReleaseRequest></AccountCodeReleaseRequest>",
		"<AccountCodeConfirmRequest><RequisitionId>" + strings.Repeat("r", 256) + "</RequisitionId></AccountCodeConfirmRequest>",
	} {
		if status, body := xmlPost(t, url, bad); status != http.StatusBadRequest || !strings.Contains(body, "RequisitionId") {
			t.Errorf("%.40s...: %d %s, want 400 naming RequisitionId", bad, status, body)
		}
	}

	// The audit log has every check, confirm and release, with the caller.
	entries := readAudit(t, audit)
	if len(entries) != 13-2-1 { // 10 steps; the bad requests and listings are not audited
		t.Errorf("%d audit entries, want 10", len(entries))
	}
	first := entries[0]
	if first.Event != "check" || first.Requisition != "A" || !first.Held || first.Caller != "127.0.0.1" ||
		len(first.Accounts) != 1 || first.Accounts[0].Available != "100" || first.Accounts[0].Amount != "60" {
		t.Errorf("first audit entry %+v", first)
	}
	if e := entries[5]; e.Event != "confirm" || e.Changed != 1 {
		t.Errorf("sixth audit entry %+v, want the confirm", e)
	}

	// SIGHUP reopens the file: after a rotation, new entries go to a new
	// file at the same path.
	if err := os.Rename(audit, audit+".1"); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the reopened audit file", func() bool {
		check(t, url, "F", "X 0")
		_, err := os.Stat(audit)
		return err == nil
	})
	if n := len(readAudit(t, audit+".1")); n < 10 {
		t.Errorf("the rotated file has %d entries", n)
	}
}

type auditEntry struct {
	Event       string `json:"event"`
	Caller      string `json:"caller"`
	Requisition string `json:"requisition"`
	Held        bool   `json:"held"`
	Changed     int    `json:"changed"`
	Accounts    []struct {
		Account, Amount, Available string
	} `json:"accounts"`
}

func readAudit(tb testing.TB, path string) []auditEntry {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	var out []auditEntry
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var e auditEntry
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			tb.Fatalf("audit line %q: %v", line, err)
		}
		out = append(out, e)
	}
	return out
}

// TestConnectorsShareHolds: two connectors on one PostgreSQL see each
// other's holds, release each other's requisitions, and fail closed (502,
// nothing held) when the holds cannot be reached.
func TestConnectorsShareHolds(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	table := writeCSV(t, "account,budget\nX,100\n")
	one, out := startOut(t, "-table", table, "-holds-postgres", dsn)
	two, _ := startOut(t, "-table", table, "-holds-postgres", dsn)
	waitFor(t, "the start message", func() bool { return strings.Contains(out.String(), "holds:") })
	if !strings.Contains(out.String(), "holds: in PostgreSQL") {
		t.Errorf("start message:\n%s", out)
	}
	steps := []struct{ got, want string }{
		{check(t, one, "A", "X 60"), "Valid"},
		{check(t, two, "B", "X 50"), "Invalid"},
		{commit(t, two, "Release", "A"), "1"},
		{check(t, two, "B", "X 50"), "Valid"},
		{check(t, one, "C", "X 50.01"), "Invalid"},
	}
	for i, s := range steps {
		if s.got != s.want {
			t.Errorf("step %d: %s, want %s", i, s.got, s.want)
		}
	}
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var audited int
	if err := db.QueryRow("SELECT count(*) FROM budget_audit").Scan(&audited); err != nil || audited != 5 {
		t.Errorf("audit table: %d rows, %v; want 5", audited, err)
	}
	// The holds table gone (as good as an unreachable database): every
	// check fails closed, and nothing is held once it is back.
	if _, err := db.Exec("ALTER TABLE budget_holds RENAME TO budget_holds_away"); err != nil {
		t.Fatal(err)
	}
	status, body := xmlPost(t, one, "<AccountCodeValidationRequest><RequisitionId>D</RequisitionId><Lines><Line><LineNumber>1</LineNumber><Account>X</Account><Amount>1</Amount></Line></Lines></AccountCodeValidationRequest>")
	if status != http.StatusBadGateway || !strings.Contains(body, "UPSTREAM_FAILED") {
		t.Errorf("check with the holds unreachable: %d %s, want 502", status, body)
	}
	if _, err := db.Exec("ALTER TABLE budget_holds_away RENAME TO budget_holds"); err != nil {
		t.Fatal(err)
	}
	if _, l := listHolds(t, one, "X", ""); len(l.Holds) != 1 || l.Holds[0].RequisitionID != "B" {
		t.Errorf("holds after the failure: %+v, want B's only", l)
	}
}

func TestConnectorHoldsConfigErrors(t *testing.T) {
	table := writeCSV(t, "account,budget\nX,100\n")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-table", table, "-hold-for", "0s"}, "-hold-for must be positive"},
		{[]string{"-postgres", "postgres://127.0.0.1:1/x", "-call", "SELECT 1", "-show-available"}, "apply to the budget table options"},
		{[]string{"-table", table, "-holds-postgres", "postgres://nobody@127.0.0.1:1/none?connect_timeout=1"}, "-holds-postgres:"},
		{[]string{"-table", table, "-audit", filepath.Join(t.TempDir(), "no", "such", "dir", "a.jsonl")}, "-audit:"},
	} {
		err := run(context.Background(), append([]string{"-addr", "127.0.0.1:0"}, c.args...), io.Discard, io.Discard)
		var ce *configError
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v; want a configuration error with %q", c.args, err, c.want)
		}
	}
}
