package budget_test

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver

	"github.com/google/go-cmp/cmp"

	"github.com/procurekit/procure/budget"
	"github.com/procurekit/procure/internal/pgtest"
	"github.com/procurekit/procure/internal/syncbuf"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// openDB returns a fresh PostgreSQL database with the statements run in it.
func openDB(tb testing.TB, statements ...string) *sql.DB {
	tb.Helper()
	db, err := sql.Open("pgx", pgtest.NewDatabase(tb))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	for _, s := range statements {
		if _, err := db.Exec(s); err != nil {
			tb.Fatalf("%v\n%s", err, s)
		}
	}
	return db
}

// The customer's business logic, as a stored procedure would have it: an
// account ledger with remaining amounts, closed accounts, and a spending
// limit for trainees. Budget figures never leave the database.
var procedureSchema = []string{
	`CREATE TABLE ledger (account text PRIMARY KEY, remaining numeric NOT NULL, closed boolean NOT NULL DEFAULT false)`,
	`INSERT INTO ledger VALUES ('6100-200', 1000, false), ('6100-300', 50, false), ('7200-100', 0, true)`,
	`CREATE FUNCTION check_budget(lines jsonb, username text, org_unit text, finance_year text) RETURNS jsonb
	LANGUAGE plpgsql AS $$
	DECLARE
		l jsonb; acc ledger; st text; msg text; result jsonb := '[]';
	BEGIN
		FOR l IN SELECT * FROM jsonb_array_elements(lines) LOOP
			SELECT * INTO acc FROM ledger WHERE account = l->>'account';
			IF NOT FOUND THEN
				st := 'Invalid'; msg := 'Unknown account ' || (l->>'account');
			ELSIF acc.closed THEN
				st := 'Invalid'; msg := 'Account ' || acc.account || ' is closed';
			ELSIF username = 'trainee' AND (l->>'amount')::numeric > 100 THEN
				st := 'Invalid'; msg := 'Trainees may not spend more than 100 on a line';
			ELSIF (l->>'amount')::numeric > acc.remaining THEN
				st := 'Warning'; msg := 'Account ' || acc.account || ' will be over budget';
			ELSE
				st := 'Valid'; msg := '';
			END IF;
			result := result || jsonb_build_array(jsonb_build_object(
				'line_number', (l->>'line_number')::int, 'status', st, 'message', msg));
		END LOOP;
		RETURN result;
	END $$`,
	// echo reports what it received, to check the parameters and that
	// amounts arrive exactly.
	`CREATE FUNCTION echo(lines jsonb, username text, org_unit text, finance_year text) RETURNS jsonb
	LANGUAGE sql AS $$
		SELECT jsonb_agg(jsonb_build_object('line_number', (l->>'line_number')::int, 'status', 'Valid',
			'message', concat_ws('|', (l->'amount')::text, l->>'account',
				coalesce(username, 'NULL'), coalesce(org_unit, 'NULL'), coalesce(finance_year, 'NULL'))))
		FROM jsonb_array_elements(lines) AS l
	$$`,
	`CREATE FUNCTION lines_only(lines json) RETURNS text LANGUAGE sql AS $$
		SELECT json_agg(json_build_object('line_number', (l->>'line_number')::int, 'status', 'Valid'))::text
		FROM json_array_elements(lines) AS l
	$$`,
	`CREATE FUNCTION drop_last(lines jsonb, a text, b text, c text) RETURNS jsonb LANGUAGE sql AS $$
		SELECT coalesce(jsonb_agg(jsonb_build_object('line_number', (l->>'line_number')::int, 'status', 'Valid')), '[]')
		FROM jsonb_array_elements(lines) WITH ORDINALITY AS e(l, i) WHERE i < jsonb_array_length(lines)
	$$`,
	`CREATE FUNCTION not_json(lines jsonb, a text, b text, c text) RETURNS text LANGUAGE sql AS $$ SELECT 'all good' $$`,
	`CREATE FUNCTION unknown_status(lines jsonb, a text, b text, c text) RETURNS jsonb LANGUAGE sql AS $$
		SELECT jsonb_agg(jsonb_build_object('line_number', (l->>'line_number')::int, 'status', 'OK'))
		FROM jsonb_array_elements(lines) AS l
	$$`,
	`CREATE FUNCTION fails(lines jsonb, a text, b text, c text) RETURNS jsonb LANGUAGE plpgsql AS $$
	BEGIN RAISE EXCEPTION 'the ledger is locked for the year-end close'; END $$`,
	`CREATE FUNCTION returns_null(lines jsonb, a text, b text, c text) RETURNS jsonb LANGUAGE sql AS $$ SELECT NULL::jsonb $$`,
	`CREATE FUNCTION slow(lines jsonb, a text, b text, c text) RETURNS jsonb LANGUAGE sql AS $$ SELECT pg_sleep(30); SELECT '[]'::jsonb $$`,
}

func newProcedure(tb testing.TB, db *sql.DB, query string, params ...budget.ProcedureParam) *budget.ProcedureValidator {
	tb.Helper()
	p, err := budget.NewProcedureValidator(budget.ProcedureConfig{DB: db, Query: query, Params: params, Timeout: 5 * time.Second})
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

func TestProcedureValidatorPostgres(t *testing.T) {
	db := openDB(t, procedureSchema...)
	ctx := context.Background()

	t.Run("business logic decides each line", func(t *testing.T) {
		p := newProcedure(t, db, "SELECT check_budget($1, $2, $3, $4)")
		cases := []struct {
			name     string
			username string
			lines    []budget.Line
			want     []budget.Result
		}{
			{"valid", "jdoe", []budget.Line{line(t, 1, "6100-200", "125.50")},
				[]budget.Result{{LineNumber: 1, Status: budget.Valid}}},
			{"warning", "jdoe", []budget.Line{line(t, 1, "6100-300", "50.01")},
				[]budget.Result{{LineNumber: 1, Status: budget.Warning, Message: "Account 6100-300 will be over budget"}}},
			{"invalid: unknown and closed", "jdoe", []budget.Line{line(t, 4, "9999", "1"), line(t, 2, "7200-100", "1")},
				[]budget.Result{{LineNumber: 4, Status: budget.Invalid, Message: "Unknown account 9999"}, {LineNumber: 2, Status: budget.Invalid, Message: "Account 7200-100 is closed"}}},
			{"the username takes part", "trainee", []budget.Line{line(t, 1, "6100-200", "100.01"), line(t, 2, "6100-200", "100")},
				[]budget.Result{{LineNumber: 1, Status: budget.Invalid, Message: "Trainees may not spend more than 100 on a line"}, {LineNumber: 2, Status: budget.Valid}}},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				got, err := p.Validate(ctx, budget.Request{Username: c.username, Lines: c.lines})
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				if diff := cmp.Diff(c.want, got); diff != "" {
					t.Errorf("(-want +got):\n%s", diff)
				}
			})
		}
	})

	t.Run("parameters and exact amounts", func(t *testing.T) {
		p := newProcedure(t, db, "SELECT echo($1, $2, $3, $4)")
		req := budget.Request{
			Username: "jdoe", FinanceYear: "2026", // no organisation unit: NULL
			Lines: []budget.Line{line(t, 1, "6100-200", "125.50"), line(t, 2, `O'Brien "Ltd"`, "-12345678901234567890.123456789")},
		}
		got, err := p.Validate(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		want := []budget.Result{
			{LineNumber: 1, Status: budget.Valid, Message: "125.50|6100-200|jdoe|NULL|2026"},
			{LineNumber: 2, Status: budget.Valid, Message: `-12345678901234567890.123456789|O'Brien "Ltd"|jdoe|NULL|2026`},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})

	t.Run("a configured parameter list", func(t *testing.T) {
		p := newProcedure(t, db, "SELECT lines_only($1)", budget.ParamLines)
		got, err := p.Validate(ctx, budget.Request{Username: "ignored", Lines: []budget.Line{line(t, 3, "A", "1")}})
		if err != nil || len(got) != 1 || got[0] != (budget.Result{LineNumber: 3, Status: budget.Valid}) {
			t.Fatalf("Validate = %v, %v", got, err)
		}
	})

	faults := []struct {
		name    string
		query   string
		want    error
		wantMsg string
	}{
		{"a missing line", "SELECT drop_last($1, $2, $3, $4)", budget.ErrMalformedReply, "no result for line 2"},
		{"malformed JSON", "SELECT not_json($1, $2, $3, $4)", budget.ErrMalformedReply, "not a JSON array of results"},
		{"an unknown status", "SELECT unknown_status($1, $2, $3, $4)", budget.ErrMalformedReply, `unknown status "OK"`},
		{"an SQL error", "SELECT fails($1, $2, $3, $4)", budget.ErrUnavailable, "the ledger is locked for the year-end close"},
		{"a NULL reply", "SELECT returns_null($1, $2, $3, $4)", budget.ErrMalformedReply, "returned NULL"},
		{"no row", "SELECT check_budget($1, $2, $3, $4) WHERE false", budget.ErrMalformedReply, "returned no row"},
		{"two rows", "SELECT check_budget($1, $2, $3, $4) FROM generate_series(1, 2)", budget.ErrMalformedReply, "more than one row"},
		{"two columns", "SELECT check_budget($1, $2, $3, $4), 1", budget.ErrMalformedReply, "returned 2 columns"},
		{"an unknown function", "SELECT no_such_function($1, $2, $3, $4)", budget.ErrUnavailable, "no_such_function"},
		{"too few placeholders", "SELECT lines_only($1)", budget.ErrUnavailable, ""},
	}
	for _, c := range faults {
		t.Run(c.name, func(t *testing.T) {
			p := newProcedure(t, db, c.query)
			got, err := p.Validate(ctx, budget.Request{Lines: []budget.Line{line(t, 1, "6100-200", "1"), line(t, 2, "6100-300", "1")}})
			if err == nil {
				t.Fatalf("Validate = %v, nil; want an error", got)
			}
			if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.wantMsg) {
				t.Fatalf("error %v; want %v containing %q", err, c.want, c.wantMsg)
			}
			// None of them may let a checkout proceed.
			g := newGate(t, p, budget.GateConfig{})
			if d := checkout(t, g, budget.Request{Lines: []budget.Line{line(t, 1, "6100-200", "1")}}, ""); d.Outcome != budget.Unavailable {
				t.Errorf("checkout: %v; want unavailable", d.Outcome)
			}
		})
	}

	t.Run("a timeout", func(t *testing.T) {
		p, err := budget.NewProcedureValidator(budget.ProcedureConfig{DB: db, Query: "SELECT slow($1, $2, $3, $4)", Timeout: 100 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		_, err = p.Validate(ctx, budget.Request{Lines: []budget.Line{line(t, 1, "A", "1")}})
		if !errors.Is(err, budget.ErrTimeout) || !errors.Is(err, budget.ErrUnavailable) {
			t.Fatalf("error %v; want ErrTimeout", err)
		}
	})
}

func TestSQLTablePostgres(t *testing.T) {
	db := openDB(t,
		`CREATE TABLE budgets (account text, budget numeric)`,
		`INSERT INTO budgets VALUES ('6100-200', 1500.00), ('6100-300', -20.5), ('7200-100', 12345678901234567890.5)`,
	)
	ctx := context.Background()

	t.Run("load", func(t *testing.T) {
		tab, err := budget.SQLQuery(db, "SELECT account, budget FROM budgets")(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, acc := range []string{"6100-200", "6100-300", "7200-100"} {
			b, _ := tab.Budget(acc)
			got[acc] = budget.FormatAmount(b)
		}
		want := map[string]string{"6100-200": "1500.00", "6100-300": "-20.5", "7200-100": "12345678901234567890.5"}
		if diff := cmp.Diff(want, got); diff != "" || tab.Len() != 3 {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})

	t.Run("driver types: text, float and integer budgets", func(t *testing.T) {
		for _, q := range []string{
			"SELECT account, budget::text FROM budgets",
			"SELECT account, round(budget)::float8 FROM budgets WHERE account <> '7200-100'",
			"SELECT account, round(budget)::bigint FROM budgets WHERE account <> '7200-100'",
		} {
			tab, err := budget.SQLQuery(db, q)(ctx)
			if err != nil {
				t.Fatalf("%s: %v", q, err)
			}
			if b, ok := tab.Budget("6100-200"); !ok || !b.Equal(amount(t, "1500")) {
				t.Errorf("%s: budget %v", q, b)
			}
		}
	})

	t.Run("optional columns by name, in any order", func(t *testing.T) {
		// 6100-200 has 1500.00: warn past 80%, tolerate 5% over.
		tab, err := budget.SQLQuery(db, `SELECT 5 AS tolerance_percent, budget, account, 80::numeric AS warn_percent, NULL::timestamptz AS as_of
			FROM budgets WHERE account = '6100-200'`)(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for amt, want := range map[string]budget.Status{"1200": budget.Valid, "1200.01": budget.Warning, "1575": budget.Warning, "1575.01": budget.Invalid} {
			res := tab.Check(budget.Request{Lines: []budget.Line{{Number: 1, Account: "6100-200", Amount: amount(t, amt)}}}, budget.Invalid)
			if res[0].Status != want {
				t.Errorf("%s of 1500.00 with warn 80%% and tolerance 5%%: %s, want %s", amt, res[0].Status, want)
			}
		}
	})

	t.Run("with arguments", func(t *testing.T) {
		tab, err := budget.SQLQuery(db, "SELECT account, budget FROM budgets WHERE account LIKE $1", "6100-%")(ctx)
		if err != nil || tab.Len() != 2 {
			t.Fatalf("table %v, %v; want 2 accounts", tab, err)
		}
	})

	bad := []struct{ name, query, wantErr string }{
		{"a NULL account", "SELECT NULL::text, 1::numeric", "budget table query:1: account: is NULL"},
		{"a NULL budget", "SELECT account, NULL::numeric FROM budgets ORDER BY account", `budget table query:1: budget: is NULL (account "6100-200")`},
		{"a blank account", "SELECT ' ', 1", "budget table query:1: account: is required"},
		{"a duplicate account", "SELECT account, budget FROM budgets UNION ALL SELECT '6100-300', 1", `budget table query:4: account "6100-300" appears more than once (first on row 2)`},
		{"three columns, one unknown", "SELECT account, budget, 1 FROM budgets", `budget table query: column "?column?": a budget table query returns account, budget and optionally warn_percent, tolerance_percent, as_of`},
		{"optional columns without budget", "SELECT account, 1 AS warn_percent, 2 AS tolerance_percent FROM budgets", `budget table query: it must return the columns account and budget`},
		{"warn over 100", "SELECT account, budget, 101 AS warn_percent FROM budgets", "budget table query:1: warn_percent: must be more than 0 and at most 100"},
		{"negative tolerance", "SELECT account, budget, -1 AS tolerance_percent FROM budgets", "budget table query:1: tolerance_percent: must not be negative"},
		{"no rows", "SELECT account, budget FROM budgets WHERE false", "budget table query: the table has no accounts"},
		{"not a number", "SELECT 'A', 'lots'", "budget table query:1:"},
	}
	for _, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			_, err := budget.SQLQuery(db, c.query)(ctx)
			if !errors.Is(err, budget.ErrBadTable) || !strings.HasPrefix(err.Error(), c.wantErr) {
				t.Fatalf("error %v; want ErrBadTable starting %q", err, c.wantErr)
			}
		})
	}
	t.Run("a failing query", func(t *testing.T) {
		_, err := budget.SQLQuery(db, "SELECT account, budget FROM no_such_table")(ctx)
		if err == nil || errors.Is(err, budget.ErrBadTable) || !strings.Contains(err.Error(), "no_such_table") {
			t.Fatalf("error %v; want the database's error", err)
		}
	})

	t.Run("refresh picks up an UPDATE and keeps the last table on failure", func(t *testing.T) {
		var logs syncbuf.Buffer
		v, err := budget.NewTableValidator(ctx, budget.TableConfig{
			Load:    budget.SQLQuery(db, "SELECT account, budget FROM budgets"),
			Refresh: 20 * time.Millisecond,
			Logger:  newLogger(&logs),
		})
		if err != nil {
			t.Fatal(err)
		}
		defer v.Close()
		status := func() budget.Status { return validate(t, v, line(t, 1, "6100-200", "2000"))[0].Status }
		if got := status(); got != budget.Invalid {
			t.Fatalf("2000 against 1500: %v; want Invalid", got)
		}
		if _, err := db.Exec(`UPDATE budgets SET budget = 2500 WHERE account = '6100-200'`); err != nil {
			t.Fatal(err)
		}
		eventually(t, "the UPDATE", func() bool { return status() == budget.Valid })

		if _, err := db.Exec(`ALTER TABLE budgets RENAME TO budgets_moved`); err != nil {
			t.Fatal(err)
		}
		eventually(t, "the failure in the log", func() bool { return strings.Contains(logs.String(), "budget table refresh failed") })
		if got := status(); got != budget.Valid {
			t.Fatalf("after a failed refresh: %v; want the last good table's Valid", got)
		}
		if !strings.Contains(logs.String(), "budgets") || !strings.Contains(logs.String(), "accounts=3") {
			t.Errorf("the log should name the cause and the table kept:\n%s", logs.String())
		}
		if _, err := db.Exec(`ALTER TABLE budgets_moved RENAME TO budgets; UPDATE budgets SET budget = 1 WHERE account = '6100-200'`); err != nil {
			t.Fatal(err)
		}
		eventually(t, "recovery", func() bool { return status() == budget.Invalid })
	})

	t.Run("an unreachable database at start is an error", func(t *testing.T) {
		dead, err := sql.Open("pgx", "postgres://nobody@127.0.0.1:1/none?connect_timeout=2")
		if err != nil {
			t.Fatal(err)
		}
		defer dead.Close()
		_, err = budget.NewTableValidator(ctx, budget.TableConfig{Load: budget.SQLQuery(dead, "SELECT account, budget FROM budgets")})
		if err == nil || !strings.Contains(err.Error(), "budget table query") {
			t.Fatalf("error %v; want the query's failure", err)
		}
	})
}
