package budget_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/procurekit/procure/budget"
)

// A re-check sees what other requisitions hold on each of its accounts,
// whatever the order of its claims against the order its holds were made
// in, and with accounts added, dropped or credited (MemHolds matches a
// requisition's own holds to the claims by a cursor, and by the account's
// map when the orders differ).
func TestMemHoldsRecheckOrders(t *testing.T) {
	ctx := context.Background()
	m := budget.NewMemHolds(nil)
	claim := func(acc string, amount int64) budget.Claim {
		return budget.Claim{Account: acc, Amount: decimal.New(amount, 0)}
	}
	hold := func(req string, claims ...budget.Claim) []decimal.Decimal {
		t.Helper()
		var seen []decimal.Decimal
		ok, err := m.Hold(ctx, budget.HoldCheck{Requisition: req, Claims: claims}, func(held []decimal.Decimal) bool {
			seen = held
			return true
		})
		if err != nil || !ok {
			t.Fatalf("Hold %s: %v, %v", req, ok, err)
		}
		return seen
	}
	// Others hold 1 on A, 2 on B, 3 on C, 4 on D.
	for i, acc := range []string{"A", "B", "C", "D"} {
		hold("other-"+acc, claim(acc, int64(i+1)))
	}
	hold("R", claim("A", 10), claim("B", 20), claim("C", 30))
	cases := []struct {
		name   string
		claims []budget.Claim
		want   []int64 // held by others, claim by claim
	}{
		{"same order", []budget.Claim{claim("A", 11), claim("B", 21), claim("C", 31)}, []int64{1, 2, 3}},
		{"reversed", []budget.Claim{claim("C", 12), claim("B", 22), claim("A", 32)}, []int64{3, 2, 1}},
		{"one added in the middle", []budget.Claim{claim("C", 12), claim("D", 5), claim("A", 32), claim("B", 1)}, []int64{3, 4, 1, 2}},
		{"a credit holds nothing", []budget.Claim{claim("A", -5), claim("B", 7), claim("C", 8)}, []int64{1, 2, 3}},
		{"after the credit", []budget.Claim{claim("A", 3), claim("B", 7), claim("C", 8)}, []int64{1, 2, 3}},
		{"one dropped", []budget.Claim{claim("B", 9), claim("C", 9)}, []int64{2, 3}},
		{"a new account first", []budget.Claim{claim("E", 1), claim("B", 9), claim("C", 9), claim("A", 9)}, []int64{0, 2, 3, 1}},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := hold("R", c.claims...)
			if len(got) != len(c.want) {
				t.Fatalf("held %v; want %v", got, c.want)
			}
			for k, w := range c.want {
				if !got[k].Equal(decimal.New(w, 0)) {
					t.Fatalf("check %d: held on %s: %v; want %d (all: %v)", i, c.claims[k].Account, got[k], w, got)
				}
			}
		})
	}
	// Another requisition sees R's latest holds only.
	got := hold("S", claim("A", 1), claim("B", 1), claim("C", 1), claim("E", 1))
	for k, w := range []int64{1 + 9, 2 + 9, 3 + 9, 1} {
		if !got[k].Equal(decimal.New(w, 0)) {
			t.Fatalf("S: held on claim %d: %v; want %s", k, got[k], strconv.FormatInt(w, 10))
		}
	}
}
