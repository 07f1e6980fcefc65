package pgholds_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/shopspring/decimal"

	"github.com/procurekit/procure/budget"
	"github.com/procurekit/procure/budget/pgholds"
	"github.com/procurekit/procure/internal/pgtest"
)

// TestHoldFailsMidway: a check that fails after its transaction began
// and its locks were taken (here its context ends while it decides)
// holds nothing new, keeps what it held, and leaves no lock behind: a
// second store on the same database (as a second connector would be)
// checks the same requisition and accounts at once, and the first
// store's pool (one connection, so the failed one cannot hide among
// others) serves its next check.
func TestHoldFailsMidway(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.NewDatabase(t)
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxConns = 1
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	s, err := pgholds.New(ctx, pool, pgholds.Options{})
	if err != nil {
		t.Fatal(err)
	}
	twin, err := pgholds.Open(ctx, dsn, pgholds.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer twin.Close()
	yes := func([]decimal.Decimal) bool { return true }
	claims := func(amount int64) []budget.Claim {
		return []budget.Claim{{Account: "X", Amount: decimal.New(amount, 0)}, {Account: "Y", Amount: decimal.New(amount, 0)}}
	}
	held := func(s budget.HoldStore) string {
		t.Helper()
		ds, err := s.Held(ctx, []budget.Claim{{Account: "X"}, {Account: "Y"}})
		if err != nil {
			t.Fatal(err)
		}
		return toStrings(ds)
	}
	if ok, err := s.Hold(ctx, budget.HoldCheck{Requisition: "R", Claims: claims(10)}, yes); err != nil || !ok {
		t.Fatalf("first check: %v %v", ok, err)
	}
	for _, declined := range []bool{false, true} {
		cctx, cancel := context.WithCancel(ctx)
		_, err := s.Hold(cctx, budget.HoldCheck{Requisition: "R", Claims: claims(99)}, func([]decimal.Decimal) bool {
			cancel()
			return !declined
		})
		if !errors.Is(err, budget.ErrUnavailable) {
			t.Fatalf("declined %v: a check whose context ended: %v, want ErrUnavailable", declined, err)
		}
		if got := held(twin); got != "10,10" {
			t.Fatalf("declined %v: held after the failure %s, want 10,10", declined, got)
		}
		tctx, stop := context.WithTimeout(ctx, 10*time.Second)
		ok, err := twin.Hold(tctx, budget.HoldCheck{Requisition: "R", Claims: claims(20)}, yes)
		stop()
		if err != nil || !ok {
			t.Fatalf("declined %v: the twin's check of the same requisition: %v %v", declined, ok, err)
		}
		ok, err = s.Hold(ctx, budget.HoldCheck{Requisition: "R", Claims: claims(10)}, yes)
		if err != nil || !ok {
			t.Fatalf("declined %v: the next check on the same pool: %v %v", declined, ok, err)
		}
		if got := held(s); got != "10,10" {
			t.Fatalf("declined %v: held %s, want 10,10", declined, got)
		}
	}
}
