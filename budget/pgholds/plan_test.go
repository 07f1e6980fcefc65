package pgholds

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/shopspring/decimal"

	"github.com/procurekit/procure/budget"
	"github.com/procurekit/procure/internal/pgtest"
)

// TestHeldReadsEachAccountOnce: a check's read of what is held looks up
// each claimed account's totals and compares no claim with another
// account's row, on tables the planner has no statistics of yet (a new
// database) as on analysed ones. The join the planner once chose compared
// each of a 300-account check's claims with every totals row, which cost
// the check more than all its writes.
func TestHeldReadsEachAccountOnce(t *testing.T) {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, pgtest.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	s, err := New(ctx, pool, Options{})
	if err != nil {
		t.Fatal(err)
	}
	const n = 300
	claims := make([]budget.Claim, n)
	accounts := make([]string, n)
	for i := range claims {
		accounts[i] = fmt.Sprintf("A-%03d", i)
		claims[i] = budget.Claim{Account: accounts[i], Amount: decimal.New(1, 0)}
	}
	for _, req := range []string{"R1", "R2"} {
		if ok, err := s.Hold(ctx, budget.HoldCheck{Requisition: req, Claims: claims}, func([]decimal.Decimal) bool { return true }); err != nil || !ok {
			t.Fatalf("Hold %s: %v %v", req, ok, err)
		}
	}
	for _, analysed := range []bool{false, true} {
		if analysed {
			if _, err := pool.Exec(ctx, "ANALYZE budget_hold_totals; ANALYZE budget_holds"); err != nil {
				t.Fatal(err)
			}
		}
		var plan string
		if err := pool.QueryRow(ctx, "EXPLAIN (ANALYZE, FORMAT JSON) "+heldSQL, "", accounts, make([]*time.Time, n), time.Now()).Scan(&plan); err != nil {
			t.Fatal(err)
		}
		var doc []struct{ Plan map[string]any }
		if err := json.Unmarshal([]byte(plan), &doc); err != nil || len(doc) != 1 {
			t.Fatalf("plan %s: %v", plan, err)
		}
		if removed := rowsRemoved(doc[0].Plan); removed != 0 {
			t.Errorf("analysed %v: %v rows read and thrown away for %d accounts; plan:\n%s", analysed, removed, n, plan)
		}
		// And the answer is each account's two holds.
		got, err := s.Held(ctx, claims)
		if err != nil || len(got) != n || !got[0].Equal(decimal.New(2, 0)) || !got[n-1].Equal(decimal.New(2, 0)) {
			t.Fatalf("Held: %v %v", got, err)
		}
	}
}

// rowsRemoved sums the rows a plan's nodes read and discarded by a filter.
func rowsRemoved(node map[string]any) float64 {
	var sum float64
	for _, k := range []string{"Rows Removed by Join Filter", "Rows Removed by Filter"} {
		if v, ok := node[k].(float64); ok {
			sum += v
		}
	}
	if kids, ok := node["Plans"].([]any); ok {
		for _, k := range kids {
			if m, ok := k.(map[string]any); ok {
				sum += rowsRemoved(m)
			}
		}
	}
	return sum
}
