package pgstore

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/procurekit/procure/internal/pgtest"
	"github.com/procurekit/procure/user"
)

// Issue 11: a statement timeout on every pgstore call (docs: limits.md).

func openWith(tb testing.TB, dsn string, opts ...Option) *Store {
	tb.Helper()
	s, err := Open(context.Background(), dsn, opts...)
	if err != nil {
		tb.Fatalf("Open: %v", err)
	}
	tb.Cleanup(s.Close)
	return s
}

func showTimeout(tb testing.TB, ctx context.Context, s *Store) string {
	tb.Helper()
	var v string
	if err := s.pool.QueryRow(ctx, "SHOW statement_timeout").Scan(&v); err != nil {
		tb.Fatal(err)
	}
	return v
}

func TestStatementTimeoutSetting(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	ctx := context.Background()
	cases := []struct {
		name string
		dsn  string
		opts []Option
		want string
	}{
		{"default", dsn, nil, "5s"},
		{"option", dsn, []Option{WithStatementTimeout(1500 * time.Millisecond)}, "1500ms"},
		{"option off", dsn, []Option{WithStatementTimeout(0)}, "0"},
		{"from the DSN", dsn + "&statement_timeout=2000", nil, "2s"},
		{"option over the DSN", dsn + "&statement_timeout=2000", []Option{WithStatementTimeout(3 * time.Second)}, "3s"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := openWith(t, c.dsn, c.opts...)
			if got := showTimeout(t, ctx, s); got != c.want {
				t.Errorf("statement_timeout = %s; want %s", got, c.want)
			}
		})
	}
}

func TestMigrationsRunWithoutStatementTimeout(t *testing.T) {
	// With a 1 ms bound, every migration would be cancelled if the bound
	// applied to them.
	dsn := pgtest.NewDatabase(t)
	openWith(t, dsn, WithStatementTimeout(time.Millisecond))
	// Checked on a connection of its own: the store's would cut even this
	// query under load.
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var v int
	if err := conn.QueryRow(ctx, "SELECT max(version) FROM schema_migrations").Scan(&v); err != nil || v < 4 {
		t.Fatalf("schema version %d, %v; want the migrations applied", v, err)
	}
}

func TestStatementTimeoutFires(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	s := openWith(t, dsn, WithStatementTimeout(200*time.Millisecond), WithMaxConns(4))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	// Another session holds the users table: a lookup waits for the lock
	// until the statement timeout cancels it.
	locker, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer locker.Close(context.Background())
	tx, err := locker.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(context.Background())
	if _, err := tx.Exec(ctx, "LOCK TABLE users IN ACCESS EXCLUSIVE MODE"); err != nil {
		t.Fatal(err)
	}
	_, err = s.UserByUsername(ctx, "c", "jdoe")
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "57014" {
		t.Fatalf("UserByUsername under a lock: %v; want SQLSTATE 57014 (statement timeout)", err)
	}
	if ctx.Err() != nil {
		t.Fatal("the lookup waited for the test's own deadline, not the statement timeout")
	}

	// Under WithoutStatementTimeout the same wait is not cut (it ends when
	// the lock is released), and the connection is not reused.
	done := make(chan error, 1)
	go func() {
		_, err := s.UserByUsername(WithoutStatementTimeout(ctx), "c", "jdoe")
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("the unbounded lookup ended while the lock was held: %v", err)
	case <-time.After(time.Second): // five times the bound
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; !errors.Is(err, user.ErrNotFound) {
		t.Fatalf("the unbounded lookup: %v; want it to run to its end (not found)", err)
	}
	// Every connection of the pool has the bound again.
	var held []*pgxpool.Conn
	for range 4 {
		c, err := s.pool.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
		var v string
		if err := c.QueryRow(ctx, "SHOW statement_timeout").Scan(&v); err != nil || v != "200ms" {
			t.Errorf("statement_timeout of a pooled connection after an unbounded call = %s, %v; want 200ms", v, err)
		}
	}
	for _, c := range held {
		c.Release()
	}
}

func TestBulkLoadsRunWithoutStatementTimeout(t *testing.T) {
	// A COPY streams as long as its source: the data-file imports must not
	// be cut by the bound, nor the statements that follow it in its
	// transaction; everything else keeps the bound.
	s := openWith(t, pgtest.NewDatabase(t), WithStatementTimeout(100*time.Millisecond), WithMaxConns(2))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := s.pool.Exec(ctx, "CREATE TABLE bulk (v int)"); err != nil {
		t.Fatal(err)
	}
	slow := func() pgx.CopyFromSource {
		n := 0
		return pgx.CopyFromFunc(func() ([]any, error) {
			n++
			if n > 3 {
				return nil, nil
			}
			time.Sleep(150 * time.Millisecond) // 450 ms in all: over the bound
			return []any{n}, nil
		})
	}
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{"bulk"}, []string{"v"}, slow()); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, "SELECT pg_sleep(0.3)") // the merge that follows
		return err
	})
	if err != nil {
		t.Fatalf("a slow COPY in a transaction: %v", err)
	}
	if _, err := s.pool.CopyFrom(ctx, pgx.Identifier{"bulk"}, []string{"v"}, slow()); err != nil {
		t.Fatalf("a slow COPY outside a transaction: %v", err)
	}
	// Other statements are still bounded, on every connection.
	for range 3 {
		_, err := s.pool.Exec(ctx, "SELECT pg_sleep(0.3)")
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != "57014" {
			t.Fatalf("a slow statement after the bulk loads: %v; want the statement timeout", err)
		}
	}
	var n int
	if err := s.pool.QueryRow(ctx, "SELECT count(*) FROM bulk").Scan(&n); err != nil || n != 6 {
		t.Fatalf("bulk holds %d rows (%v); want 6", n, err)
	}
}

func TestMaintenanceStatements(t *testing.T) {
	for sql, want := range map[string]bool{
		"VACUUM (ANALYZE)": true, " analyze suppliers": true, "CHECKPOINT": true, "create index x on y (z)": true,
		"CREATE UNIQUE INDEX x ON y (z)": true, "REINDEX TABLE x": true, "CLUSTER x": true,
		"SELECT 1": false, "CREATE TABLE x (v int)": false, "WITH a AS (SELECT 1) SELECT * FROM a": false, "": false, "VAC": false,
	} {
		if got := maintenance(sql); got != want {
			t.Errorf("maintenance(%q) = %v; want %v", sql, got, want)
		}
	}
	// After one, the pool's connections are bounded again.
	s := openWith(t, pgtest.NewDatabase(t), WithStatementTimeout(150*time.Millisecond), WithMaxConns(1))
	ctx := context.Background()
	if _, err := s.pool.Exec(ctx, "VACUUM (ANALYZE)"); err != nil {
		t.Fatal(err)
	}
	if got := showTimeout(t, ctx, s); got != "150ms" {
		t.Errorf("statement_timeout after a VACUUM = %s; want 150ms", got)
	}
}
