package budget_test

import (
	"testing"
	"time"

	"github.com/procurekit/procure/budget"
	"github.com/procurekit/procure/budget/holdstest"
)

func TestMemHolds(t *testing.T) {
	holdstest.Run(t, holdstest.Harness{New: func(tb testing.TB, now func() time.Time) budget.HoldStore {
		return budget.NewMemHolds(now)
	}})
}

func BenchmarkMemHoldsCheck(b *testing.B) { holdstest.BenchmarkCheck(b, budget.NewMemHolds(nil), nil) }

func BenchmarkMemHoldsHotAccount(b *testing.B) {
	holdstest.BenchmarkHotAccount(b, budget.NewMemHolds(nil))
}
