package pgholds_test

import (
	"context"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/procurekit/procure/budget"
	"github.com/procurekit/procure/budget/holdstest"
	"github.com/procurekit/procure/budget/pgholds"
	"github.com/procurekit/procure/internal/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// harness opens each store on a fresh database; a twin is a second Store
// (its own pool) on the same database, as a second connector would be.
func harness() holdstest.Harness {
	var mu sync.Mutex
	dsns := map[budget.HoldStore]string{}
	clocks := map[budget.HoldStore]func() time.Time{}
	open := func(tb testing.TB, dsn string, now func() time.Time) *pgholds.Store {
		tb.Helper()
		s, err := pgholds.Open(context.Background(), dsn, pgholds.Options{Now: now})
		if err != nil {
			tb.Fatalf("Open: %v", err)
		}
		tb.Cleanup(s.Close)
		return s
	}
	return holdstest.Harness{
		New: func(tb testing.TB, now func() time.Time) budget.HoldStore {
			dsn := pgtest.NewDatabase(tb)
			s := open(tb, dsn, now)
			mu.Lock()
			dsns[s], clocks[s] = dsn, now
			mu.Unlock()
			return s
		},
		Twin: func(tb testing.TB, s budget.HoldStore) budget.HoldStore {
			mu.Lock()
			dsn, now := dsns[s], clocks[s]
			mu.Unlock()
			return open(tb, dsn, now)
		},
	}
}

func TestHolds(t *testing.T) { holdstest.Run(t, harness()) }

func openBench(b *testing.B) *pgholds.Store {
	s, err := pgholds.Open(context.Background(), pgtest.NewDatabase(b), pgholds.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(s.Close)
	return s
}

func BenchmarkCheck(b *testing.B) { holdstest.BenchmarkCheck(b, openBench(b)) }

func BenchmarkHotAccount(b *testing.B) { holdstest.BenchmarkHotAccount(b, openBench(b)) }

func toStrings(ds []decimal.Decimal) string {
	s := make([]string, len(ds))
	for i, d := range ds {
		s[i] = d.String()
	}
	return strings.Join(s, ",")
}
