package budget_test

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"

	"github.com/procurekit/procure"
	"github.com/procurekit/procure/budget"
	"github.com/procurekit/procure/internal/syncbuf"
)

// Budgets whose digits appear in no account code or amount of the tests,
// so that a message leaking a figure is caught.
func testTable(tb testing.TB) *budget.Table {
	tb.Helper()
	t, err := budget.NewTable(map[string]decimal.Decimal{
		"6100-200": amount(tb, "987.65"),
		"6100-300": amount(tb, "4747.47"),
		"7200-100": amount(tb, "-383.83"), // budgets may be negative (docs: account-codes.md "Request message")
		"8000-000": amount(tb, "123456789012345678901234.9"),
	})
	if err != nil {
		tb.Fatalf("NewTable: %v", err)
	}
	return t
}

var budgetDigits = []string{"987", "4747", "383", "12345678901"}

func TestTableCheck(t *testing.T) {
	tab := testTable(t)
	type want struct {
		status  budget.Status
		message string
	}
	valid := want{budget.Valid, ""}
	absent := func(acc string) want { return want{budget.Invalid, "Account " + acc + " has no budget."} }
	over := func(s budget.Status, acc string) want {
		return want{s, "The lines on account " + acc + " exceed its available budget."}
	}
	cases := []struct {
		name       string
		lines      []budget.Line
		overBudget budget.Status
		want       []want
	}{
		{"within", []budget.Line{line(t, 1, "6100-200", "100")}, "", []want{valid}},
		{"exactly the budget is within", []budget.Line{line(t, 1, "6100-200", "987.650")}, "", []want{valid}},
		{"a cent over", []budget.Line{line(t, 1, "6100-200", "987.66")}, "", []want{over(budget.Invalid, "6100-200")}},
		{"a thousandth over", []budget.Line{line(t, 1, "6100-200", "987.651")}, "", []want{over(budget.Invalid, "6100-200")}},
		{"over as a warning", []budget.Line{line(t, 1, "6100-200", "1000")}, budget.Warning, []want{over(budget.Warning, "6100-200")}},
		{"over with an unknown policy is invalid", []budget.Line{line(t, 1, "6100-200", "1000")}, budget.Valid, []want{over(budget.Invalid, "6100-200")}},
		{"absent account", []budget.Line{line(t, 1, "9999-999", "1")}, budget.Warning, []want{absent("9999-999")}},
		{"accounts compare exactly", []budget.Line{line(t, 1, "6100-200 ", "1"), line(t, 2, "6100 200", "1")}, "", []want{absent("6100-200 "), absent("6100 200")}},
		{
			// docs: account-codes.md: lines are summed per account within one
			// request; every line of the account gets the sum's verdict.
			"lines summed per account",
			[]budget.Line{line(t, 1, "6100-200", "500"), line(t, 2, "6100-300", "1"), line(t, 3, "6100-200", "487.66")},
			"",
			[]want{over(budget.Invalid, "6100-200"), valid, over(budget.Invalid, "6100-200")},
		},
		{
			"a sum exactly at the budget",
			[]budget.Line{line(t, 1, "6100-200", "500"), line(t, 2, "6100-200", "487.65")},
			"",
			[]want{valid, valid},
		},
		{
			"credits bring a sum back within",
			[]budget.Line{line(t, 1, "6100-200", "1500"), line(t, 2, "6100-200", "-600")},
			"",
			[]want{valid, valid},
		},
		{"negative budget, smaller credit", []budget.Line{line(t, 1, "7200-100", "-383.82")}, "", []want{over(budget.Invalid, "7200-100")}},
		{"negative budget, larger credit", []budget.Line{line(t, 1, "7200-100", "-383.84")}, "", []want{valid}},
		{"zero against a negative budget", []budget.Line{line(t, 1, "7200-100", "0")}, "", []want{over(budget.Invalid, "7200-100")}},
		{"huge budget", []budget.Line{line(t, 1, "8000-000", "123456789012345678901234.8")}, "", []want{valid}},
		{"huge budget, over", []budget.Line{line(t, 1, "8000-000", "123456789012345678901235")}, "", []want{over(budget.Invalid, "8000-000")}},
		{"a huge amount against a small budget", []budget.Line{line(t, 1, "6100-200", "99999999999999999999999")}, "", []want{over(budget.Invalid, "6100-200")}},
		{
			"int64 sums that overflow continue exactly",
			[]budget.Line{line(t, 1, "8000-000", "999999999999999999"), line(t, 2, "8000-000", "999999999999999999"), line(t, 3, "6100-200", "999999999999999999"), line(t, 4, "6100-200", "-999999999999999999")},
			"",
			[]want{valid, valid, valid, valid},
		},
		{
			"overflowing sums still compare",
			[]budget.Line{line(t, 1, "6100-200", "999999999999999999"), line(t, 2, "6100-200", "999999999999999999")},
			"",
			[]want{over(budget.Invalid, "6100-200"), over(budget.Invalid, "6100-200")},
		},
		{
			"scales too far apart for an int64",
			[]budget.Line{line(t, 1, "6100-200", "0.000000000000000001"), line(t, 2, "6100-200", "987.650000000000000")},
			"",
			[]want{over(budget.Invalid, "6100-200"), over(budget.Invalid, "6100-200")},
		},
		{
			"scales too far apart, within",
			[]budget.Line{line(t, 1, "6100-200", "0.000000000000000001"), line(t, 2, "6100-200", "987.649999999999999")},
			"",
			[]want{valid, valid},
		},
		{"a tiny amount at a deep scale", []budget.Line{line(t, 1, "6100-200", "0.000000000000000001")}, "", []want{valid}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := tab.Check(budget.Request{Lines: c.lines}, c.overBudget)
			var wantResults []budget.Result
			for i, w := range c.want {
				wantResults = append(wantResults, budget.Result{LineNumber: c.lines[i].Number, Status: w.status, Message: w.message})
			}
			if diff := cmp.Diff(wantResults, got); diff != "" {
				t.Errorf("Check (-want +got):\n%s", diff)
			}
			// docs: account-codes.md: messages name the account, never the budget.
			for _, r := range got {
				for _, digits := range budgetDigits {
					if strings.Contains(r.Message, digits) {
						t.Errorf("message %q shows budget digits %s", r.Message, digits)
					}
				}
			}
		})
	}
}

func TestNewTable(t *testing.T) {
	for name, rows := range map[string]map[string]decimal.Decimal{
		"blank account":      {" ": decimal.Decimal{}},
		"untrimmed account":  {" 6100": decimal.Decimal{}},
		"empty account code": {"": decimal.Decimal{}},
	} {
		if _, err := budget.NewTable(rows); !errors.Is(err, budget.ErrBadTable) {
			t.Errorf("%s: error %v; want one matching ErrBadTable", name, err)
		}
	}
	tab := testTable(t)
	if tab.Len() != 4 {
		t.Errorf("Len = %d; want 4", tab.Len())
	}
	if b, ok := tab.Budget("6100-200"); !ok || budget.FormatAmount(b) != "987.65" {
		t.Errorf("Budget(6100-200) = %v, %v; want 987.65, true", b, ok)
	}
	if b, ok := tab.Budget("8000-000"); !ok || budget.FormatAmount(b) != "123456789012345678901234.9" {
		t.Errorf("Budget(8000-000) = %v, %v", b, ok)
	}
	if _, ok := tab.Budget("nope"); ok {
		t.Error("Budget(nope) found")
	}
}

func TestReadCSV(t *testing.T) {
	good := []struct {
		name string
		csv  string
		want map[string]string
	}{
		{"plain", "account,budget\n6100-200,1500.00\n6100-300,-20.5\n", map[string]string{"6100-200": "1500.00", "6100-300": "-20.5"}},
		{"byte-order mark and CRLF", "\uFEFFaccount,budget\r\n6100-200,1\r\n", map[string]string{"6100-200": "1"}},
		{"header case and spaces; values trimmed", " Account , BUDGET \n 6100-200 , 7 \n", map[string]string{"6100-200": "7"}},
		{"columns in another order, extra columns ignored", "name,budget,account\nTravel,10,6100-200\n\"Office, misc\",20,6100-300\n", map[string]string{"6100-200": "10", "6100-300": "20"}},
		{"blank lines skipped", "account,budget\n\n6100-200,1\n\n", map[string]string{"6100-200": "1"}},
		{"quoted values", "account,budget\n\"6100-200\",\"5.5\"\n", map[string]string{"6100-200": "5.5"}},
		{"no newline at the end", "account,budget\n6100-200,1", map[string]string{"6100-200": "1"}},
	}
	for _, c := range good {
		t.Run(c.name, func(t *testing.T) {
			tab, err := budget.ReadCSV(strings.NewReader(c.csv), "budgets.csv")
			if err != nil {
				t.Fatalf("ReadCSV: %v", err)
			}
			got := map[string]string{}
			for acc := range c.want {
				if b, ok := tab.Budget(acc); ok {
					got[acc] = budget.FormatAmount(b)
				}
			}
			if diff := cmp.Diff(c.want, got); diff != "" || tab.Len() != len(c.want) {
				t.Errorf("table (-want +got):\n%s(len %d)", diff, tab.Len())
			}
		})
	}

	bad := []struct {
		name, csv, wantErr string
	}{
		{"empty file", "", "budgets.csv: the file is empty; it needs a header line account,budget"},
		{"header only", "account,budget\n", "budgets.csv: the table has no accounts"},
		{"no budget column", "account,amount\n6100-200,1\n", `budgets.csv:1: the header must name the columns account and budget (got "account,amount")`},
		{"no header", "6100-200,1\n", `budgets.csv:1: the header must name the columns account and budget (got "6100-200,1")`},
		{"column named twice", "account,budget,account\n", "budgets.csv:1: the header names the column account twice"},
		{"missing budget column", "account,budget\n6100-200,1\n6100-300\n", "budgets.csv:3: budget: the column is missing (the line has 1 of the header's 2 columns)"},
		{"missing account column", "budget,x,account\n1,2\n", "budgets.csv:2: account: the column is missing (the line has 2 of the header's 3 columns)"},
		{"bad decimal", "account,budget\n6100-200,1\n6100-300,\"1,500\"\n", `budgets.csv:3: budget: must be a decimal number such as 125.50 (got "1,500")`},
		{"empty budget", "account,budget\n6100-200,\n", "budgets.csv:2: budget: must not be empty"},
		{"exponent", "account,budget\n6100-200,1e6\n", `budgets.csv:2: budget: must be a decimal number such as 125.50 (got "1e6")`},
		{"empty account", "account,budget\n  ,5\n", "budgets.csv:2: account: is required"},
		{"duplicate account", "account,budget\n6100-200,1\n6100-300,2\n 6100-200 ,3\n", `budgets.csv:4: account "6100-200" appears more than once (first on line 2)`},
		{"malformed quotes", "account,budget\n\"6100-200,1\n", "budgets.csv:2: malformed CSV: extraneous or missing \" in quoted-field"},
	}
	for _, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			_, err := budget.ReadCSV(strings.NewReader(c.csv), "budgets.csv")
			if err == nil || err.Error() != c.wantErr {
				t.Fatalf("ReadCSV error:\n got %v\nwant %s", err, c.wantErr)
			}
			if !errors.Is(err, budget.ErrBadTable) {
				t.Errorf("error does not match ErrBadTable")
			}
		})
	}
}

// writeFile writes a file as an operator's tool should replace one that is
// being watched: a temporary file renamed over it, so that a refresh never
// reads it half written (a truncated file would be a refresh failure of
// its own, racing the one a test provokes).
func writeFile(tb testing.TB, dir, name, content string) string {
	tb.Helper()
	path := filepath.Join(dir, name)
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(content), 0o600); err != nil {
		tb.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		tb.Fatal(err)
	}
	return path
}

func TestReadCSVFile(t *testing.T) {
	dir := t.TempDir()
	path := writeFile(t, dir, "budgets.csv", "account,budget\n6100-200,x\n")
	if _, err := budget.ReadCSVFile(path); err == nil || err.Error() != path+`:2: budget: must be a decimal number such as 125.50 (got "x")` {
		t.Errorf("bad file: %v", err)
	}
	missing := filepath.Join(dir, "missing.csv")
	_, err := budget.ReadCSVFile(missing)
	if !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), missing) {
		t.Errorf("missing file: %v; want an error naming %s", err, missing)
	}
}

func newLogger(w *syncbuf.Buffer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

func validate(tb testing.TB, v budget.Validator, lines ...budget.Line) []budget.Result {
	tb.Helper()
	res, err := v.Validate(context.Background(), budget.Request{Lines: lines})
	if err != nil {
		tb.Fatalf("Validate: %v", err)
	}
	return res
}

// eventually polls cond for up to 10 seconds: the refresh runs on its own
// schedule. It bounds the wait; it asserts nothing about timing.
func eventually(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("gave up waiting: %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestTableValidatorCSVRefresh(t *testing.T) {
	dir := t.TempDir()
	path := writeFile(t, dir, "budgets.csv", "account,budget\n6100-200,100\n")
	var logs syncbuf.Buffer
	v, err := budget.NewTableValidator(context.Background(), budget.TableConfig{
		Load: budget.CSVFile(path), Refresh: 10 * time.Millisecond, OverBudget: budget.Warning, Logger: newLogger(&logs),
	})
	if err != nil {
		t.Fatalf("NewTableValidator: %v", err)
	}
	t.Cleanup(func() { v.Close() })

	if got := validate(t, v, line(t, 1, "6100-200", "150"))[0].Status; got != budget.Warning {
		t.Fatalf("over budget with OverBudget Warning: %v", got)
	}

	// A new file is picked up.
	writeFile(t, dir, "budgets.csv", "account,budget\n6100-200,200\n")
	eventually(t, "the new budget", func() bool {
		return validate(t, v, line(t, 1, "6100-200", "150"))[0].Status == budget.Valid
	})

	// A broken file keeps the last good table, and the failure is logged.
	writeFile(t, dir, "budgets.csv", "account,budget\n6100-200,oops\n")
	eventually(t, "the refresh failure in the log", func() bool {
		return strings.Contains(logs.String(), "budget table refresh failed") &&
			strings.Contains(logs.String(), `budgets.csv:2: budget: must be a decimal number`)
	})
	if got := validate(t, v, line(t, 1, "6100-200", "150"))[0].Status; got != budget.Valid {
		t.Fatalf("after a failed refresh: %v; want the last good table's Valid", got)
	}
	if !strings.Contains(logs.String(), `budgets.csv:2: budget: must be a decimal number`) {
		t.Errorf("the log does not say what is wrong:\n%s", logs.String())
	}

	// Close stops the refresh: a good file is no longer picked up.
	v.Close()
	writeFile(t, dir, "budgets.csv", "account,budget\n6100-200,1\n")
	time.Sleep(50 * time.Millisecond)
	if got := validate(t, v, line(t, 1, "6100-200", "150"))[0].Status; got != budget.Valid {
		t.Errorf("a closed validator reloaded its table")
	}
	v.Close() // a second Close is harmless
}

func TestTableValidatorConfig(t *testing.T) {
	ctx := context.Background()
	if _, err := budget.NewTableValidator(ctx, budget.TableConfig{}); err == nil {
		t.Error("no loader accepted")
	}
	if _, err := budget.NewTableValidator(ctx, budget.TableConfig{Load: budget.StaticTable(testTable(t)), OverBudget: budget.Valid}); err == nil {
		t.Error("OverBudget Valid accepted")
	}
	// A first load failure is an error at start.
	_, err := budget.NewTableValidator(ctx, budget.TableConfig{Load: budget.CSVFile(filepath.Join(t.TempDir(), "none.csv"))})
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing file at start: %v", err)
	}
	_, err = budget.NewTableValidator(ctx, budget.TableConfig{Load: func(context.Context) (*budget.Table, error) { return nil, nil }})
	if err == nil {
		t.Error("a loader returning no table was accepted")
	}

	v, err := budget.NewTableValidator(ctx, budget.TableConfig{Load: budget.StaticTable(testTable(t))})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	if got := validate(t, v, line(t, 1, "6100-200", "1000"))[0].Status; got != budget.Invalid {
		t.Errorf("the default over-budget status is %v; want Invalid", got)
	}
	if _, err := v.Validate(ctx, budget.Request{}); !errors.Is(err, procure.ErrInvalid) {
		t.Errorf("an empty request: %v; want procure.ErrInvalid", err)
	}
}

func TestTableValidatorReloadKeepsLastGood(t *testing.T) {
	var fail atomic.Bool
	var n atomic.Int32
	load := func(context.Context) (*budget.Table, error) {
		if fail.Load() {
			return nil, errors.New("database down")
		}
		n.Add(1)
		return budget.NewTable(map[string]decimal.Decimal{"A": decimal.NewFromInt(int64(n.Load()))})
	}
	v, err := budget.NewTableValidator(context.Background(), budget.TableConfig{Load: load})
	if err != nil {
		t.Fatal(err)
	}
	before := v.Table()
	fail.Store(true)
	if err := v.Reload(context.Background()); err == nil || !strings.Contains(err.Error(), "database down") {
		t.Fatalf("Reload = %v; want the loader's error", err)
	}
	if v.Table() != before {
		t.Fatal("a failed reload replaced the table")
	}
	fail.Store(false)
	if err := v.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	if b, _ := v.Table().Budget("A"); !b.Equal(decimal.NewFromInt(2)) {
		t.Errorf("after reload the budget is %v; want 2", b)
	}
}

func TestTableValidatorConcurrentSwap(t *testing.T) {
	// Run with -race: requests see whole tables while reloads swap them.
	small, _ := budget.NewTable(map[string]decimal.Decimal{"A": decimal.NewFromInt(1)})
	large, _ := budget.NewTable(map[string]decimal.Decimal{"A": decimal.NewFromInt(1000)})
	var flip atomic.Bool
	v, err := budget.NewTableValidator(context.Background(), budget.TableConfig{
		Load: func(context.Context) (*budget.Table, error) {
			if flip.Load() {
				flip.Store(false)
				return large, nil
			}
			flip.Store(true)
			return small, nil
		},
		Refresh: time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	req := budget.Request{Lines: []budget.Line{line(t, 1, "A", "10"), line(t, 2, "A", "10")}}
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 300; i++ {
				res, err := v.Validate(context.Background(), req)
				if err != nil {
					t.Errorf("Validate: %v", err)
					return
				}
				if res[0].Status != res[1].Status {
					t.Errorf("lines of one account disagree: %v", res)
					return
				}
			}
		}()
	}
	wg.Wait()
}
