package pgholds_test

import (
	"context"
	"os"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/procurekit/procure/budget"
	"github.com/procurekit/procure/budget/pgholds"
	"github.com/procurekit/procure/internal/pgtest"
)

// TestMigrateConcurrently: connectors starting together on an empty
// database apply each migration once (the advisory lock), and all start.
func TestMigrateConcurrently(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() {
			s, err := pgholds.Open(context.Background(), dsn, pgholds.Options{})
			if err == nil {
				s.Close()
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("Open %d: %v", i, err)
		}
	}
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var n, max int
	if err := conn.QueryRow(context.Background(), "SELECT count(*), max(version) FROM budget_holds_migrations").Scan(&n, &max); err != nil {
		t.Fatal(err)
	}
	if n != max || n < 2 {
		t.Fatalf("%d migrations recorded, highest %d; want each once", n, max)
	}
}

// TestMigrateTotalsBackfill: a database of version 1 with holds gets its
// per-account totals from the rows when migration 2 runs.
func TestMigrateTotalsBackfill(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.NewDatabase(t)
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	v1, err := os.ReadFile("migrations/0001_holds.sql")
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		"CREATE TABLE budget_holds_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())",
		string(v1),
		"INSERT INTO budget_holds_migrations (version, name) VALUES (1, '0001_holds.sql')",
		`INSERT INTO budget_holds (community_id, requisition, account, amount, held_at, expires_at, confirmed_at) VALUES
			('', 'A', 'X', 60, now(), now() + interval '1 hour', NULL),
			('', 'B', 'X', 5.5, now(), NULL, now()),
			('', 'C', 'Y', 1, now(), now() + interval '1 hour', NULL)`,
	} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	s, err := pgholds.Open(ctx, dsn, pgholds.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	held, err := s.Held(ctx, []budget.Claim{{Account: "X"}, {Account: "Y"}, {Account: "Z"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := toStrings(held); got != "65.5,1,0" {
		t.Fatalf("held after the migration: %s, want 65.5,1,0", got)
	}
	// The totals move with the rows from then on.
	if n, err := s.Release(ctx, "A"); n != 1 || err != nil {
		t.Fatalf("Release(A) = %d, %v", n, err)
	}
	held, err = s.Held(ctx, []budget.Claim{{Account: "X"}})
	if err != nil || toStrings(held) != "5.5" {
		t.Fatalf("held after the release: %v, %v; want 5.5", held, err)
	}
}

// Options.MigrateDSN applies the migrations over a connection to that
// URL: the store's own connections here cannot write (read-only
// transactions), so Open fails without it and succeeds with it.
func TestOpenWithMigrateDSN(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.NewDatabase(t)
	readOnly := dsn + "&default_transaction_read_only=on"
	if s, err := pgholds.Open(ctx, readOnly, pgholds.Options{}); err == nil {
		s.Close()
		t.Fatal("Open on read-only connections migrated; want it to fail")
	}
	s, err := pgholds.Open(ctx, readOnly, pgholds.Options{MigrateDSN: dsn})
	if err != nil {
		t.Fatalf("Open with MigrateDSN: %v", err)
	}
	s.Close()
}
