package budget_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/procurekit/procure"
	"github.com/procurekit/procure/budget"
)

// holdsFixture is a table validator with in-memory holds on a CSV table,
// a settable clock and an audit file.
type holdsFixture struct {
	v     *budget.TableValidator
	holds *budget.MemHolds
	now   time.Time
	audit string
	csv   string
}

func newHoldsFixture(t *testing.T, table string, cfg budget.TableConfig) *holdsFixture {
	t.Helper()
	f := &holdsFixture{now: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)}
	dir := t.TempDir()
	f.csv = filepath.Join(dir, "budgets.csv")
	f.writeTable(t, table)
	f.audit = filepath.Join(dir, "audit.jsonl")
	a, err := budget.OpenAuditFile(f.audit)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	clock := func() time.Time { return f.now }
	f.holds = budget.NewMemHolds(clock)
	cfg.Load, cfg.Holds, cfg.Audit, cfg.Now = budget.CSVFile(f.csv), f.holds, a, clock
	if cfg.HoldFor == 0 {
		cfg.HoldFor = time.Hour
	}
	f.v, err = budget.NewTableValidator(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.v.Close() })
	return f
}

func (f *holdsFixture) writeTable(t *testing.T, table string) {
	t.Helper()
	if err := os.WriteFile(f.csv, []byte(table), 0o600); err != nil {
		t.Fatal(err)
	}
}

// check checks one requisition's lines, given as "account=amount" or
// "account=amount@pct/account@pct" for a percentage split, and returns
// the statuses.
func (f *holdsFixture) check(t *testing.T, req string, lines ...string) []budget.Result {
	t.Helper()
	r := budget.Request{RequisitionID: req}
	for i, l := range lines {
		acc, amt, _ := strings.Cut(l, "=")
		line := budget.Line{Number: i + 1, Account: acc}
		if parts := strings.Split(amt, "|"); len(parts) > 1 {
			line.Account = ""
			amt = parts[0]
			for _, sp := range strings.Split(parts[1], "/") {
				a, pct, _ := strings.Cut(sp, "@")
				line.Splits = append(line.Splits, budget.Split{Account: a, Percentage: decimal.NewNullDecimal(decimal.RequireFromString(pct))})
			}
		}
		line.Amount = decimal.RequireFromString(amt)
		r.Lines = append(r.Lines, line)
	}
	res, err := f.v.Validate(context.Background(), r)
	if err != nil {
		t.Fatalf("Validate(%s): %v", req, err)
	}
	return res
}

func statuses(res []budget.Result) string {
	var s []string
	for _, r := range res {
		s = append(s, string(r.Status))
	}
	return strings.Join(s, ",")
}

func (f *holdsFixture) entries(t *testing.T) []budget.AuditEntry {
	t.Helper()
	file, err := os.Open(f.audit)
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	var out []budget.AuditEntry
	sc := bufio.NewScanner(file)
	for sc.Scan() {
		var e budget.AuditEntry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("audit line %q: %v", sc.Text(), err)
		}
		out = append(out, e)
	}
	return out
}

// TestTableHolds walks through the rules of holds at the validator: each
// step is a check (or a release or confirm) and the statuses it answers.
func TestTableHolds(t *testing.T) {
	type step struct {
		req   string
		lines []string
		op    string // "", "release", "confirm", "advance"
		want  string // statuses, or the count of a release or confirm
	}
	cases := []struct {
		name  string
		table string
		steps []step
	}{
		{"a hold takes from what others may spend", "account,budget\nX,100\n", []step{
			{req: "A", lines: []string{"X=60"}, want: "Valid"},
			{req: "B", lines: []string{"X=50"}, want: "Invalid"},
			{req: "B", lines: []string{"X=40"}, want: "Valid"},
			{req: "", lines: []string{"X=1"}, want: "Invalid"}, // no requisition: nothing held, but others' holds count
			{req: "A", lines: []string{"X=60"}, want: "Valid"}, // its own hold never counts twice
			{req: "A", lines: []string{"X=30", "X=30"}, want: "Valid,Valid"},
		}},
		{"no requisition holds nothing", "account,budget\nX,100\n", []step{
			{req: "", lines: []string{"X=90"}, want: "Valid"},
			{req: "", lines: []string{"X=90"}, want: "Valid"},
			{req: "A", lines: []string{"X=100"}, want: "Valid"},
		}},
		{"a re-check that ends Invalid holds nothing", "account,budget\nX,100\n", []step{
			{req: "A", lines: []string{"X=60"}, want: "Valid"},
			{req: "A", lines: []string{"X=60", "Nope=1"}, want: "Valid,Invalid"},
			{req: "B", lines: []string{"X=100"}, want: "Valid"},
		}},
		{"splits hold per account", "account,budget\nX,100\nY,100\n", []step{
			{req: "A", lines: []string{"X=100.00|X@33.3333/Y@66.6667"}, want: "Valid"},
			{req: "B", lines: []string{"Y=33.33"}, want: "Valid"},
			{req: "C", lines: []string{"Y=0.01"}, want: "Invalid"},
			{req: "C", lines: []string{"X=66.67"}, want: "Valid"},
			{req: "D", lines: []string{"X=0.01"}, want: "Invalid"},
		}},
		{"release frees, and counts", "account,budget\nX,100\nY,5\n", []step{
			{req: "A", lines: []string{"X=60", "Y=5"}, want: "Valid,Valid"},
			{req: "A", op: "release", want: "2"},
			{req: "A", op: "release", want: "0"},
			{req: "unknown", op: "release", want: "0"},
			{req: "B", lines: []string{"X=100", "Y=5"}, want: "Valid,Valid"},
		}},
		{"expiry frees", "account,budget\nX,100\n", []step{
			{req: "A", lines: []string{"X=60"}, want: "Valid"},
			{op: "advance"},
			{req: "B", lines: []string{"X=100"}, want: "Valid"},
			{req: "A", op: "confirm", want: "0"},
		}},
		{"a commitment does not expire", "account,budget\nX,100\n", []step{
			{req: "A", lines: []string{"X=60"}, want: "Valid"},
			{req: "A", op: "confirm", want: "1"},
			{req: "A", op: "confirm", want: "0"},
			{op: "advance"},
			{req: "B", lines: []string{"X=41"}, want: "Invalid"},
			{req: "A", op: "release", want: "1"},
			{req: "B", lines: []string{"X=100"}, want: "Valid"},
		}},
		{"tolerance", "account,budget,tolerance_percent\nX,100,10\nY,100,\n", []step{
			{req: "A", lines: []string{"X=105"}, want: "Warning"}, // held: a Warning passes
			{req: "B", lines: []string{"X=5"}, want: "Warning"},
			{req: "C", lines: []string{"X=0.01"}, want: "Invalid"},
			{req: "D", lines: []string{"Y=100.01"}, want: "Invalid"}, // an empty cell keeps the rule
		}},
		{"warn_percent", "account,budget,warn_percent\nX,100,80\n", []step{
			{req: "A", lines: []string{"X=50"}, want: "Valid"},
			{req: "B", lines: []string{"X=30"}, want: "Valid"}, // 80 is not past 80%
			{req: "C", lines: []string{"X=0.01"}, want: "Warning"},
			{req: "D", lines: []string{"X=20"}, want: "Invalid"},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newHoldsFixture(t, c.table, budget.TableConfig{})
			for i, s := range c.steps {
				var got string
				switch s.op {
				case "":
					got = statuses(f.check(t, s.req, s.lines...))
				case "advance":
					f.now = f.now.Add(time.Hour)
					continue
				case "release", "confirm":
					op := f.v.Release
					if s.op == "confirm" {
						op = f.v.Confirm
					}
					n, err := op(context.Background(), s.req)
					if err != nil {
						t.Fatalf("step %d: %s: %v", i, s.op, err)
					}
					got = decimal.NewFromInt(int64(n)).String()
				}
				if got != s.want {
					t.Fatalf("step %d (%s %v %s): got %s, want %s", i, s.req, s.lines, s.op, got, s.want)
				}
			}
		})
	}
}

// TestCommitmentAsOf: a commitment counts until the table's as_of says the
// customer's figures include it (docs: account-codes.md "Commitments").
func TestCommitmentAsOf(t *testing.T) {
	f := newHoldsFixture(t, "account,budget\nX,100\n", budget.TableConfig{})
	f.check(t, "A", "X=60")
	f.now = f.now.Add(time.Minute)
	if n, err := f.v.Confirm(context.Background(), "A"); n != 1 || err != nil {
		t.Fatalf("Confirm = %d, %v", n, err)
	}
	confirmed := f.now
	// The finance system posts the order: the budget drops to 40. Figures
	// taken before the confirm still count it (40 - 60 left: Invalid);
	// figures as of the confirm or later include it (40 left).
	for _, c := range []struct {
		asOf time.Time
		want string
	}{
		{confirmed.Add(-time.Second), "Invalid"},
		{confirmed, "Valid"},
		{confirmed.Add(time.Hour), "Valid"},
	} {
		f.writeTable(t, "account,budget,as_of\nX,40,"+c.asOf.Format(time.RFC3339)+"\n")
		if err := f.v.Reload(context.Background()); err != nil {
			t.Fatal(err)
		}
		if got := statuses(f.check(t, "B", "X=40")); got != c.want {
			t.Errorf("as_of %s: got %s, want %s", c.asOf.Format(time.RFC3339), got, c.want)
		}
	}
	f.writeTable(t, "account,budget,as_of\nX,40,2026-03-02\n") // a date is midnight UTC
	if err := f.v.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := statuses(f.check(t, "B", "X=40")); got != "Valid" {
		t.Errorf("as_of a date after the confirm: %s, want Valid", got)
	}
}

func TestShowAvailable(t *testing.T) {
	long := strings.Repeat("7", 240)
	table := "account,budget,warn_percent\nX,100.00,\nW,100,50\n" + long + ",10\n"
	for _, show := range []bool{false, true} {
		f := newHoldsFixture(t, table, budget.TableConfig{ShowAvailable: show})
		f.check(t, "A", "X=60", "W=40")
		res := f.check(t, "B", "X=50", "W=20", long+"=11")
		for _, r := range res {
			if n := len([]rune(r.Message)); n > budget.MaxMessageLength {
				t.Errorf("show %v: line %d: a message of %d characters", show, r.LineNumber, n)
			}
		}
		got := []string{res[0].Message, res[1].Message}
		want := []string{
			"The lines on account X exceed its available budget.",
			"The lines on account W take it past 50% of its budget.",
		}
		if show {
			want[0] += " Available: 40.00."
			want[1] += " Available: 60."
		}
		if !slices.Equal(got, want) {
			t.Errorf("show %v: messages %q, want %q", show, got, want)
		}
		if !show && strings.ContainsAny(res[2].Message, "01") {
			t.Errorf("a message without -show-available has a figure: %q", res[2].Message)
		}
	}
}

func TestReleaseConfirmRules(t *testing.T) {
	f := newHoldsFixture(t, "account,budget\nX,100\n", budget.TableConfig{})
	for _, id := range []string{"", "  ", strings.Repeat("r", budget.MaxRequisitionIDLength+1)} {
		if _, err := f.v.Release(context.Background(), id); !errors.Is(err, procure.ErrInvalid) {
			t.Errorf("Release(%.10q): %v, want ErrInvalid", id, err)
		}
		if _, err := f.v.Confirm(context.Background(), id); !errors.Is(err, procure.ErrInvalid) {
			t.Errorf("Confirm(%.10q): %v, want ErrInvalid", id, err)
		}
	}
	plain, err := budget.NewTableValidator(context.Background(), budget.TableConfig{Load: budget.CSVFile(f.csv)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := plain.Release(context.Background(), "A"); !errors.Is(err, budget.ErrUnsupported) {
		t.Errorf("Release without holds: %v, want ErrUnsupported", err)
	}
}

// failingHolds is a holds store that cannot be reached.
type failingHolds struct{ budget.HoldStore }

func (failingHolds) Hold(context.Context, budget.HoldCheck, budget.Decide) (bool, error) {
	return false, budget.ErrUnavailable
}

func TestHoldsUnavailableFailsClosed(t *testing.T) {
	dir := t.TempDir()
	csv := filepath.Join(dir, "b.csv")
	if err := os.WriteFile(csv, []byte("account,budget\nX,100\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	v, err := budget.NewTableValidator(context.Background(), budget.TableConfig{Load: budget.CSVFile(csv), Holds: failingHolds{}})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	res, err := v.Validate(context.Background(), budget.Request{RequisitionID: "A", Lines: []budget.Line{{Number: 1, Account: "X", Amount: decimal.NewFromInt(1)}}})
	if !errors.Is(err, budget.ErrUnavailable) || res != nil {
		t.Fatalf("Validate with the holds unreachable = %v, %v; want no results and ErrUnavailable", res, err)
	}
}

func TestAuditLog(t *testing.T) {
	f := newHoldsFixture(t, "account,budget\nX,100\nY,10\n", budget.TableConfig{})
	ctx := budget.WithCaller(context.Background(), "192.0.2.7:5000")
	if _, err := f.v.Validate(ctx, budget.Request{RequisitionID: "A", Lines: []budget.Line{
		{Number: 1, Account: "X", Amount: decimal.RequireFromString("60")},
		{Number: 2, Account: "Y", Amount: decimal.RequireFromString("4.50")},
	}}); err != nil {
		t.Fatal(err)
	}
	f.check(t, "B", "X=50", "Z=1")
	if _, err := f.v.Confirm(ctx, "A"); err != nil {
		t.Fatal(err)
	}
	f.check(t, "C", "Y=1")
	f.now = f.now.Add(2 * time.Hour)
	if err := f.v.ExpireNow(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := f.v.Release(ctx, "A"); err != nil {
		t.Fatal(err)
	}
	got := f.entries(t)
	t0 := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	want := []budget.AuditEntry{
		{Time: t0, Event: "check", Caller: "192.0.2.7:5000", Requisition: "A", Held: true,
			Accounts: []budget.AuditAccount{{Account: "X", Amount: "60", Available: "100"}, {Account: "Y", Amount: "4.50", Available: "10"}},
			Lines:    []budget.AuditLine{{Line: 1, Status: "Valid"}, {Line: 2, Status: "Valid"}}},
		{Time: t0, Event: "check", Requisition: "B",
			Accounts: []budget.AuditAccount{{Account: "X", Amount: "50", Available: "40"}, {Account: "Z", Amount: "1"}},
			Lines: []budget.AuditLine{{Line: 1, Status: "Invalid", Message: "The lines on account X exceed its available budget."},
				{Line: 2, Status: "Invalid", Message: "Account Z has no budget."}}},
		{Time: t0, Event: "confirm", Caller: "192.0.2.7:5000", Requisition: "A", Changed: 2},
		{Time: t0, Event: "check", Requisition: "C", Held: true,
			Accounts: []budget.AuditAccount{{Account: "Y", Amount: "1", Available: "5.50"}},
			Lines:    []budget.AuditLine{{Line: 1, Status: "Valid"}}},
		{Time: t0.Add(2 * time.Hour), Event: "expire", Requisition: "C", Changed: 1,
			Accounts: []budget.AuditAccount{{Account: "Y", Amount: "1"}}},
		{Time: t0.Add(2 * time.Hour), Event: "release", Caller: "192.0.2.7:5000", Requisition: "A", Changed: 2},
	}
	gotJSON, _ := json.MarshalIndent(got, "", " ")
	wantJSON, _ := json.MarshalIndent(want, "", " ")
	if string(gotJSON) != string(wantJSON) {
		t.Fatalf("audit log:\n%s\nwant:\n%s", gotJSON, wantJSON)
	}
}

func TestAuditFileReopen(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.jsonl")
	a, err := budget.OpenAuditFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	ctx := context.Background()
	if err := a.Record(ctx, budget.AuditEntry{Event: "check", Requisition: "1"}); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path, path+".1"); err != nil {
		t.Fatal(err)
	}
	if err := a.Reopen(); err != nil {
		t.Fatal(err)
	}
	if err := a.Record(ctx, budget.AuditEntry{Event: "check", Requisition: "2"}); err != nil {
		t.Fatal(err)
	}
	for file, want := range map[string]string{path + ".1": `"requisition":"1"`, path: `"requisition":"2"`} {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if lines := strings.Count(string(b), "\n"); lines != 1 || !strings.Contains(string(b), want) {
			t.Errorf("%s: %q, want one line with %s", filepath.Base(file), b, want)
		}
	}
}

func TestReadCSVOptionalColumns(t *testing.T) {
	for _, c := range []struct{ csv, wantErr string }{
		{"account,budget,warn_percent\nX,100,0\n", "t.csv:2: warn_percent: must be more than 0 and at most 100 (got 0)"},
		{"account,budget,warn_percent\nX,100,100.5\n", "t.csv:2: warn_percent: must be more than 0 and at most 100"},
		{"account,budget,tolerance_percent\nX,100,-1\n", "t.csv:2: tolerance_percent: must not be negative"},
		{"account,budget,tolerance_percent\nX,100,ten\n", "t.csv:2: tolerance_percent: must be a decimal number"},
		{"account,budget,as_of\nX,100,yesterday\n", "t.csv:2: as_of: must be a time such as 2026-03-01T09:00:00Z or a date such as 2026-03-01"},
		{"account,budget,as_of,AS_OF\nX,100,,\n", "t.csv:1: the header names the column as_of twice"},
		{"Account,BUDGET,Warn_Percent,tolerance_percent,as_of,note\nX,100,50,10,2026-03-01T09:00:00+13:00,hi\nY,5,,,,\n", ""},
	} {
		tab, err := budget.ReadCSV(strings.NewReader(c.csv), "t.csv")
		switch {
		case c.wantErr == "" && err != nil:
			t.Errorf("%q: %v", c.csv, err)
		case c.wantErr != "" && (err == nil || !errors.Is(err, budget.ErrBadTable) || !strings.HasPrefix(err.Error(), c.wantErr)):
			t.Errorf("%q: error %v, want ErrBadTable starting %q", c.csv, err, c.wantErr)
		case c.wantErr == "":
			// X warns past 50% and tolerates 10% over; Y keeps the plain rule.
			res := tab.Check(budget.Request{Lines: []budget.Line{
				{Number: 1, Account: "X", Amount: decimal.RequireFromString("50.01")},
				{Number: 2, Account: "Y", Amount: decimal.RequireFromString("5.01")},
			}}, budget.Invalid)
			if statuses(res) != "Warning,Invalid" {
				t.Errorf("statuses %s, want Warning,Invalid", statuses(res))
			}
		}
	}
}
