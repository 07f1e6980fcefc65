package pgholds_test

import (
	"context"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/shopspring/decimal"

	"github.com/procurekit/procure/budget"
	"github.com/procurekit/procure/budget/holdstest"
	"github.com/procurekit/procure/budget/pgholds"
	"github.com/procurekit/procure/internal/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// harness opens each store on a fresh database from newDB (its URL for
// the stores); a twin is a second Store (its own pool) on the same
// database, as a second connector would be.
func harness(newDB func(testing.TB) string) holdstest.Harness {
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
			dsn := newDB(tb)
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

func TestHolds(t *testing.T) { holdstest.Run(t, harness(pgtest.NewDatabase)) }

// The suite through PgBouncer in transaction mode (docs: the README's
// "Running on PostgreSQL"): every transaction may run on another server
// connection, so no lock or statement may outlive one.
func TestHoldsThroughPgBouncer(t *testing.T) {
	holdstest.Run(t, harness(func(tb testing.TB) string {
		pooled, _ := pgtest.NewPooledDatabase(tb)
		return pooled
	}))
}

func openBench(b *testing.B) *pgholds.Store {
	s, err := pgholds.Open(context.Background(), pgtest.NewDatabase(b), pgholds.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(s.Close)
	return s
}

func BenchmarkCheck(b *testing.B) {
	dsn := pgtest.NewDatabase(b)
	s, err := pgholds.Open(context.Background(), dsn, pgholds.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(s.Close)
	holdstest.BenchmarkCheck(b, s, postgresCPU(b, dsn))
}

// postgresCPU returns a function that reads the CPU time of the
// PostgreSQL server behind dsn (its postmaster and every process it
// started), from /proc; nil where that cannot be read (not Linux, or a
// server on another machine). Processes that ended in between are not
// counted, so it is a lower bound.
func postgresCPU(tb testing.TB, dsn string) func() time.Duration {
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		tb.Fatal(err)
	}
	defer conn.Close(context.Background())
	var backend int
	if err := conn.QueryRow(context.Background(), "SELECT pg_backend_pid()").Scan(&backend); err != nil {
		tb.Fatal(err)
	}
	stat := func(pid string) (ppid string, cpu time.Duration, ok bool) {
		b, err := os.ReadFile("/proc/" + pid + "/stat")
		if err != nil {
			return "", 0, false
		}
		// The fields after the command name (which may hold spaces).
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
		if len(f) < 13 {
			return "", 0, false
		}
		utime, _ := strconv.ParseInt(f[11], 10, 64)
		stime, _ := strconv.ParseInt(f[12], 10, 64)
		const ticks = 100 // USER_HZ on Linux
		return f[1], time.Duration(utime+stime) * time.Second / ticks, true
	}
	postmaster, _, ok := stat(strconv.Itoa(backend))
	if !ok {
		return nil
	}
	return func() time.Duration {
		entries, err := os.ReadDir("/proc")
		if err != nil {
			return 0
		}
		_, total, _ := stat(postmaster)
		for _, e := range entries {
			if ppid, cpu, ok := stat(e.Name()); ok && ppid == postmaster {
				total += cpu
			}
		}
		return total
	}
}

func BenchmarkHotAccount(b *testing.B) { holdstest.BenchmarkHotAccount(b, openBench(b)) }

func toStrings(ds []decimal.Decimal) string {
	s := make([]string, len(ds))
	for i, d := range ds {
		s[i] = d.String()
	}
	return strings.Join(s, ",")
}
