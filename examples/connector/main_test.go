package main

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/xml"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/procurekit/procure/internal/maintest"
	"github.com/procurekit/procure/internal/pgtest"
	"github.com/procurekit/procure/internal/syncbuf"
)

// testToken is the connector's secret in these tests (a fixture).
const testToken = "fixture-connector-secret-42"

func TestMain(m *testing.M) {
	maintest.Run(main)
	// Every connector these tests start finds the secret, as a deployed one
	// would; tests of a missing secret unset it with t.Setenv.
	os.Setenv(TokenEnv, testToken)
	os.Exit(pgtest.Main(m))
}

// start runs the connector with args on a free loopback port and returns
// the URL it prints. The test's cleanup stops it (as SIGINT would) and
// checks that it shut down cleanly.
func start(tb testing.TB, args ...string) (url string, logs *syncbuf.Buffer) {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	logs = &syncbuf.Buffer{}
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
	go io.Copy(io.Discard, out) // keep the rest of stdout flowing
	const prefix = "connector serving POST "
	if !strings.HasPrefix(first, prefix) {
		tb.Fatalf("first line %q; want it to start %q", first, prefix)
	}
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
	return strings.TrimSpace(strings.TrimPrefix(first, prefix)), logs
}

type verdict struct {
	LineNumber int    `xml:"LineNumber"`
	Status     string `xml:"Status"`
	Message    string `xml:"Message"`
}

// ask posts the XML request of lines ("number account amount" each) and
// returns the verdicts.
func ask(tb testing.TB, url, username string, lines ...string) []verdict {
	tb.Helper()
	var b strings.Builder
	b.WriteString("<AccountCodeValidationRequest>")
	if username != "" {
		b.WriteString("<Username>" + username + "</Username>")
	}
	b.WriteString("<Lines>")
	for _, l := range lines {
		f := strings.Fields(l)
		b.WriteString("<Line><LineNumber>" + f[0] + "</LineNumber><Account>" + f[1] + "</Account><Amount>" + f[2] + "</Amount></Line>")
	}
	b.WriteString("</Lines></AccountCodeValidationRequest>")
	hreq, err := http.NewRequest(http.MethodPost, url, strings.NewReader(b.String()))
	if err != nil {
		tb.Fatal(err)
	}
	hreq.Header.Set("Content-Type", "application/xml; charset=utf-8")
	hreq.Header.Set("Authorization", "Bearer "+testToken)
	resp, err := http.DefaultClient.Do(hreq)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		tb.Fatalf("status %d\n%s", resp.StatusCode, body)
	}
	var doc struct {
		Lines []verdict `xml:"Lines>Line"`
	}
	if err := xml.Unmarshal(body, &doc); err != nil {
		tb.Fatalf("%v\n%s", err, body)
	}
	return doc.Lines
}

func TestConnectorTable(t *testing.T) {
	url, logs := start(t, "-table", "testdata/budgets.csv")
	if !strings.HasSuffix(url, "/account-code-validation") {
		t.Errorf("URL %q", url)
	}
	got := ask(t, url, "jdoe",
		"1 6100-200 4000.00", // with line 3: 5000.00, exactly the budget
		"2 6100-300 1200.01", // a cent over
		"3 6100-200 1000",
		"4 9999-999 1", // not in the table
		"5 8100-100 0",
	)
	want := []verdict{
		{1, "Valid", ""},
		{2, "Invalid", "The lines on account 6100-300 exceed its available budget."},
		{3, "Valid", ""},
		{4, "Invalid", "Account 9999-999 has no budget."},
		{5, "Valid", ""},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("verdicts (-want +got):\n%s", diff)
	}
	if !strings.Contains(logs.String(), "status=200") {
		t.Errorf("the request was not logged:\n%s", logs)
	}
}

func TestConnectorOverBudgetWarning(t *testing.T) {
	url, _ := start(t, "-table", "testdata/budgets.csv", "-over-budget", "warning")
	got := ask(t, url, "", "1 7200-200 800.01", "2 7200-100 1")
	want := []verdict{{1, "Warning", "The lines on account 7200-200 exceed its available budget."}, {2, "Valid", ""}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("verdicts (-want +got):\n%s", diff)
	}
}

func TestConnectorTableRefresh(t *testing.T) {
	path := filepath.Join(t.TempDir(), "budgets.csv")
	write := func(s string) {
		if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("account,budget\n6100-200,10\n")
	url, logs := start(t, "-table", path, "-refresh", "10ms")
	if got := ask(t, url, "", "1 6100-200 20")[0].Status; got != "Invalid" {
		t.Fatalf("20 against 10: %s", got)
	}
	write("account,budget\n6100-200,30\n")
	waitFor(t, "the new table", func() bool { return ask(t, url, "", "1 6100-200 20")[0].Status == "Valid" })
	write("account,budget\n6100-200,thirty\n")
	waitFor(t, "the refresh failure", func() bool { return strings.Contains(logs.String(), "budget table refresh failed") })
	if got := ask(t, url, "", "1 6100-200 20")[0].Status; got != "Valid" {
		t.Errorf("after a bad file: %s; want the last good table's Valid", got)
	}
}

// waitFor polls cond for up to 10 seconds (a bound, not a timing claim).
func waitFor(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestConnectorConfigErrors(t *testing.T) {
	dir := t.TempDir()
	badRow := filepath.Join(dir, "bad.csv")
	if err := os.WriteFile(badRow, []byte("account,budget\n6100-200,100\n6100-300,12.5.0\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	dupRow := filepath.Join(dir, "dup.csv")
	if err := os.WriteFile(dupRow, []byte("account,budget\n6100-200,100\n6100-200,5\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.csv")
	// A port nothing listens on: connecting is refused at once.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadDSN := "postgres://erp:s3cr3t@" + l.Addr().String() + "/finance?connect_timeout=5"
	l.Close()

	cases := []struct {
		name     string
		args     []string
		exit     int
		wantErrs []string // the error (or stderr) contains each
	}{
		{"no source", nil, 2, []string{"no budget source: give -table FILE.csv, or -postgres DSN with -call or -table-query"}},
		{"both sources", []string{"-table", "testdata/budgets.csv", "-postgres", deadDSN, "-call", "SELECT 1"}, 2, []string{"-table and -postgres exclude each other"}},
		{"missing file", []string{"-table", missing}, 2, []string{missing, "no such file or directory"}},
		{"bad CSV row", []string{"-table", badRow}, 2, []string{badRow + `:3: budget: must be a decimal number such as 125.50 (got "12.5.0")`}},
		{"duplicate CSV row", []string{"-table", dupRow}, 2, []string{dupRow + `:3: account "6100-200" appears more than once (first on line 2)`}},
		{"bad over-budget", []string{"-table", "testdata/budgets.csv", "-over-budget", "ignore"}, 2, []string{`-over-budget must be invalid or warning (got "ignore")`}},
		{"postgres without a query", []string{"-postgres", deadDSN}, 2, []string{"-postgres needs -call (stored procedure) or -table-query (budget table)"}},
		{"call without postgres", []string{"-call", "SELECT 1"}, 2, []string{"no budget source"}},
		{"table query without postgres", []string{"-table", "testdata/budgets.csv", "-table-query", "SELECT 1"}, 2, []string{"-call and -table-query need -postgres DSN"}},
		{"call and table query", []string{"-postgres", deadDSN, "-call", "SELECT 1", "-table-query", "SELECT 1"}, 2, []string{"-call and -table-query exclude each other"}},
		{"over-budget with call", []string{"-postgres", deadDSN, "-call", "SELECT 1", "-over-budget", "warning"}, 2, []string{"-over-budget applies to the budget table options"}},
		{"call-params without call", []string{"-table", "testdata/budgets.csv", "-call-params", "lines"}, 2, []string{"-call-params applies only with -call"}},
		{"negative refresh", []string{"-table", "testdata/budgets.csv", "-refresh", "-1s"}, 2, []string{"-refresh must not be negative"}},
		{"unreachable database", []string{"-postgres", deadDSN, "-call", "SELECT check_budget($1, $2, $3, $4)"}, 2, []string{"-postgres: cannot connect to the database"}},
		{"unknown flag", []string{"-tabel", "x.csv"}, 2, []string{"flag provided but not defined: -tabel"}},
		{"stray argument", []string{"-table", "testdata/budgets.csv", "extra"}, 2, []string{`unexpected argument "extra"`}},
		{"address in use", nil, 1, []string{"address already in use"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := c.args
			if c.name == "address in use" {
				busy, err := net.Listen("tcp", "127.0.0.1:0")
				if err != nil {
					t.Fatal(err)
				}
				defer busy.Close()
				args = []string{"-addr", busy.Addr().String(), "-table", "testdata/budgets.csv"}
			}
			var stdout, stderr syncbuf.Buffer
			err := run(context.Background(), args, &stdout, &stderr)
			if err == nil {
				t.Fatalf("run succeeded; want an error")
			}
			var reported bytes.Buffer
			if code := exitCode(err, &reported); code != c.exit {
				t.Errorf("exit status %d; want %d (error %v)", code, c.exit, err)
			}
			all := reported.String() + stderr.String()
			for _, want := range c.wantErrs {
				if !strings.Contains(all, want) {
					t.Errorf("the error does not say %q:\n%s", want, all)
				}
			}
			// Nothing was served, and no secret was shown.
			if strings.Contains(stdout.String(), "serving") {
				t.Errorf("it started serving: %s", stdout.String())
			}
			if strings.Contains(all, "s3cr3t") {
				t.Errorf("the database password was shown:\n%s", all)
			}
		})
	}
	if code := exitCode(nil, io.Discard); code != 0 {
		t.Errorf("exitCode(nil) = %d", code)
	}
}

func TestConnectorHelp(t *testing.T) {
	var stderr syncbuf.Buffer
	err := run(context.Background(), []string{"-h"}, io.Discard, &stderr)
	if code := exitCode(err, io.Discard); code != 0 || !strings.Contains(stderr.String(), "-over-budget") {
		t.Errorf("-h: exit %d, usage:\n%s", code, stderr.String())
	}
}

func TestConnectorPostgres(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	for _, s := range []string{
		`CREATE TABLE budgets (account text PRIMARY KEY, budget numeric NOT NULL)`,
		`INSERT INTO budgets VALUES ('6100-200', 5000.00), ('6100-300', 1200.00)`,
		`CREATE FUNCTION check_budget(lines jsonb, username text, org_unit text, finance_year text) RETURNS jsonb
		LANGUAGE sql AS $$
			SELECT jsonb_agg(jsonb_build_object('line_number', (l->>'line_number')::int,
				'status', CASE WHEN b.account IS NULL THEN 'Invalid'
				               WHEN username = 'intern' THEN 'Warning'
				               WHEN (l->>'amount')::numeric > b.budget THEN 'Invalid' ELSE 'Valid' END,
				'message', CASE WHEN b.account IS NULL THEN 'Unknown account' WHEN username = 'intern' THEN 'Needs approval' ELSE '' END)
				ORDER BY (l->>'line_number')::int)
			FROM jsonb_array_elements(lines) AS l LEFT JOIN budgets b ON b.account = l->>'account'
		$$`,
	} {
		if _, err := db.Exec(s); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("stored procedure", func(t *testing.T) {
		url, _ := start(t, "-postgres", dsn, "-call", "SELECT check_budget($1, $2, $3, $4)")
		got := ask(t, url, "jdoe", "1 6100-200 4999.99", "2 6100-300 1200.01", "3 0000-000 1")
		want := []verdict{{1, "Valid", ""}, {2, "Invalid", ""}, {3, "Invalid", "Unknown account"}}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
		got = ask(t, url, "intern", "1 6100-200 1")
		if diff := cmp.Diff([]verdict{{1, "Warning", "Needs approval"}}, got); diff != "" {
			t.Errorf("the username is passed on (-want +got):\n%s", diff)
		}
	})

	t.Run("table query with refresh", func(t *testing.T) {
		url, _ := start(t, "-postgres", dsn, "-table-query", "SELECT account, budget FROM budgets", "-refresh", "10ms", "-over-budget", "warning")
		if got := ask(t, url, "", "1 6100-300 1500")[0].Status; got != "Warning" {
			t.Fatalf("1500 against 1200: %s; want Warning", got)
		}
		if _, err := db.Exec(`UPDATE budgets SET budget = 2000 WHERE account = '6100-300'`); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the UPDATE", func() bool { return ask(t, url, "", "1 6100-300 1500")[0].Status == "Valid" })
	})

	t.Run("a table query that fails at start", func(t *testing.T) {
		err := run(context.Background(), []string{"-addr", "127.0.0.1:0", "-postgres", dsn, "-table-query", "SELECT account FROM budgets"}, io.Discard, io.Discard)
		var ce *configError
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), "it must return the columns account and budget") {
			t.Fatalf("error %v; want a configuration error about the columns", err)
		}
	})

	t.Run("bad call parameters", func(t *testing.T) {
		err := run(context.Background(), []string{"-addr", "127.0.0.1:0", "-postgres", dsn, "-call", "SELECT 1", "-call-params", "lines,user"}, io.Discard, io.Discard)
		if code := exitCode(err, io.Discard); code != 2 || !strings.Contains(err.Error(), `unknown parameter "user"`) {
			t.Fatalf("error %v (exit %d)", err, code)
		}
	})
}
