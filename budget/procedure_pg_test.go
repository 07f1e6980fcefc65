package budget_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/procurekit/procure/budget"
)

// A stored procedure receives each split with its allocated amount, and the
// currency when asked (docs: account-codes.md "Stored procedure option"):
// here it decides on the worst split itself, against a ledger.
func TestProcedureValidatorSplitsPostgres(t *testing.T) {
	db := openDB(t,
		`CREATE TABLE ledger (account text PRIMARY KEY, remaining numeric NOT NULL)`,
		`INSERT INTO ledger VALUES ('6100-200', 33.33), ('6100-300', 33.33), ('6100-400', 33.33)`,
		`CREATE FUNCTION check_splits(lines jsonb, currency text) RETURNS jsonb LANGUAGE sql AS $$
			SELECT jsonb_agg(v ORDER BY (v->>'line_number')::int) FROM (
				SELECT jsonb_build_object('line_number', (l->>'line_number')::int,
					'status', CASE WHEN bool_and(s.amount <= g.remaining) THEN 'Valid' ELSE 'Invalid' END,
					'message', currency || ' ' || string_agg(s.account || '=' || s.amount::text, ' ' ORDER BY s.i)) AS v
				FROM jsonb_array_elements(lines) AS l,
					LATERAL (SELECT e->>'account' AS account, (e->>'amount')::numeric AS amount, i
						FROM jsonb_array_elements(coalesce(l->'splits', jsonb_build_array(l))) WITH ORDINALITY AS x(e, i)) AS s
					JOIN ledger g ON g.account = s.account
				GROUP BY l
			) AS verdicts
		$$`,
	)
	p := newProcedure(t, db, "SELECT check_splits($1, $2)", budget.ParamLines, budget.ParamCurrency)
	req := budget.Request{Currency: "NZD", Lines: []budget.Line{
		splitLine(t, 1, "100.00", pct(t, "6100-200", "33.3333"), pct(t, "6100-300", "33.3333"), pct(t, "6100-400", "33.3334")),
		splitLine(t, 2, "99.99", pct(t, "6100-200", "33.3333"), pct(t, "6100-300", "33.3333"), pct(t, "6100-400", "33.3334")),
		line(t, 3, "6100-300", "20"),
	}}
	got, err := p.Validate(context.Background(), req)
	if err != nil {
		t.Fatalf("Validate: %v", err)
	}
	want := []budget.Result{
		{LineNumber: 1, Status: budget.Invalid, Message: "NZD 6100-200=33.33 6100-300=33.33 6100-400=33.34"},
		{LineNumber: 2, Status: budget.Valid, Message: "NZD 6100-200=33.33 6100-300=33.33 6100-400=33.33"},
		{LineNumber: 3, Status: budget.Valid, Message: "NZD 6100-300=20"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
