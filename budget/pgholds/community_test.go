package pgholds_test

import (
	"context"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/procurekit/procure/budget"
	"github.com/procurekit/procure/budget/pgholds"
	"github.com/procurekit/procure/internal/pgtest"
)

// TestWithCommunity: the stores a platform takes from one Store, one per
// community, share its pool and keep each community's holds apart; closing
// one of them leaves the pool open.
func TestWithCommunity(t *testing.T) {
	ctx := context.Background()
	s, err := pgholds.Open(ctx, pgtest.NewDatabase(t), pgholds.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	north, south := s.WithCommunity("north"), s.WithCommunity("south")
	yes := func([]decimal.Decimal) bool { return true }
	for _, c := range []struct {
		store  *pgholds.Store
		amount int64
	}{{north, 30}, {south, 5}, {s, 1}} {
		ok, err := c.store.Hold(ctx, budget.HoldCheck{Requisition: "R", Claims: []budget.Claim{{Account: "X", Amount: decimal.New(c.amount, 0)}}}, yes)
		if err != nil || !ok {
			t.Fatalf("Hold %d: %v %v", c.amount, ok, err)
		}
	}
	north.Close()
	for _, c := range []struct {
		name  string
		store *pgholds.Store
		want  string
	}{{"north", north, "30"}, {"south", south, "5"}, {"the store's own", s, "1"}} {
		got, err := c.store.Held(ctx, []budget.Claim{{Account: "X"}})
		if err != nil || toStrings(got) != c.want {
			t.Errorf("%s community holds %v (%v), want %s", c.name, got, err, c.want)
		}
	}
	if n, err := south.Release(ctx, "R"); err != nil || n != 1 {
		t.Fatalf("south Release: %d %v", n, err)
	}
	if got, err := north.Held(ctx, []budget.Claim{{Account: "X"}}); err != nil || toStrings(got) != "30" {
		t.Errorf("north after south's release: %v %v, want 30", got, err)
	}
}
