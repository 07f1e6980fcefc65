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
		{"from the DSN, with a unit", dsn + "&statement_timeout=1min", nil, "1min"},
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
	s := openWith(t, dsn, WithStatementTimeout(200*time.Millisecond), WithMaxConns(1))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	// Another session holds the users table: a lookup waits for the lock
	// until the statement timeout cancels it.
	locker, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer locker.Close(context.Background())
	lock := func() pgx.Tx {
		tx, err := locker.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(ctx, "LOCK TABLE users IN ACCESS EXCLUSIVE MODE"); err != nil {
			t.Fatal(err)
		}
		return tx
	}

	// The lookup's first run on the connection is described first, ahead
	// of the bound (db.go): the backstop, the call's context deadline,
	// ends the wait.
	tx := lock()
	start := time.Now()
	_, err = s.UserByUsername(ctx, "c", "jdoe")
	if !errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil {
		t.Fatalf("UserByUsername, never run, under a lock: %v; want the backstop's context.DeadlineExceeded", err)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("the backstop cut the lookup after %v", took)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	// Described once (the backstop closed the connection before), it is
	// cut by the server's statement timeout.
	if _, err := s.UserByUsername(ctx, "c", "jdoe"); !errors.Is(err, user.ErrNotFound) {
		t.Fatal(err)
	}
	tx = lock()
	defer tx.Rollback(context.Background())
	_, err = s.UserByUsername(ctx, "c", "jdoe")
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "57014" {
		t.Fatalf("UserByUsername under a lock: %v; want SQLSTATE 57014 (statement timeout)", err)
	}
	if ctx.Err() != nil {
		t.Fatal("the lookup waited for the test's own deadline, not the statement timeout")
	}

	// Under WithoutStatementTimeout the same wait is not cut (it ends when
	// the lock is released).
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
	// No connection of the pool keeps a setting: the bound is the
	// transaction's (db.go).
	noSessionState(t, s, 1)
}

// noSessionState checks that each of n connections of the store's pool
// has the server's statement_timeout, and no prepared statement unless the
// store found its connection direct: what a pooler in transaction mode
// needs, since it hands a server connection to another client after each
// transaction.
func noSessionState(t *testing.T, s *Store, n int) {
	t.Helper()
	ctx := context.Background()
	var held []*pgxpool.Conn
	defer func() {
		for _, c := range held {
			c.Release()
		}
	}()
	for range n {
		c, err := s.pool.pool.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
		var v string
		var prepared int
		if err := c.QueryRow(ctx, "SELECT current_setting('statement_timeout'), (SELECT count(*) FROM pg_prepared_statements)",
			pgx.QueryExecModeSimpleProtocol).Scan(&v, &prepared); err != nil {
			t.Fatal(err)
		}
		if v != "0" {
			t.Errorf("a pooled connection, outside a transaction: statement_timeout %s; want the server's 0", v)
		}
		// Named statements only on a direct connection (internal/pgpool).
		if s.pool.pool.Config().ConnConfig.DefaultQueryExecMode != pgx.QueryExecModeCacheStatement && prepared != 0 {
			t.Errorf("a pooled connection: %d prepared statements; want none", prepared)
		}
	}
}

// Every kind of call is bounded - outside a transaction (a query, a row,
// an Exec with and without arguments, a batch with and without BEGIN, an
// acquired connection's) and in one - and leaves no setting behind.
func TestStatementTimeoutEveryCall(t *testing.T) {
	s := openWith(t, pgtest.NewDatabase(t), WithStatementTimeout(100*time.Millisecond), WithMaxConns(2))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const sleep = "SELECT pg_sleep(0.5)"
	calls := map[string]func() error{
		"Query": func() error {
			rows, err := s.pool.Query(ctx, sleep)
			if err != nil {
				return err
			}
			rows.Close()
			return rows.Err()
		},
		"QueryRow":     func() error { return s.pool.QueryRow(ctx, "SELECT 1 FROM pg_sleep($1)", 0.5).Scan(new(int)) },
		"Exec":         func() error { _, err := s.pool.Exec(ctx, "SELECT pg_sleep($1)", 0.5); return err },
		"Exec, simple": func() error { _, err := s.pool.Exec(ctx, "SELECT 1; "+sleep); return err },
		"batch": func() error {
			b := &pgx.Batch{}
			b.Queue("SELECT 1")
			b.Queue(sleep)
			return s.pool.SendBatch(ctx, b).Close()
		},
		"batch with BEGIN": func() error { return beginBatch(ctx, s.pool, sleep) },
		"transaction": func() error {
			return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error { _, err := tx.Exec(ctx, sleep); return err })
		},
		"connection": func() error {
			c, err := s.pool.Acquire(ctx)
			if err != nil {
				return err
			}
			defer c.Release()
			if err := beginBatch(ctx, c, "SELECT 1"); err != nil {
				return err
			}
			_, err = c.Exec(ctx, sleep)
			return err
		},
	}
	for name, call := range calls {
		err := call()
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != "57014" {
			t.Errorf("%s: %v; want SQLSTATE 57014 (statement timeout)", name, err)
		}
	}
	// Results read one by one skip the inserted statement's.
	b := &pgx.Batch{}
	b.Queue("BEGIN")
	b.Queue("SELECT 7")
	b.Queue("COMMIT")
	br := s.pool.SendBatch(ctx, b)
	if _, err := br.Exec(); err != nil {
		t.Fatal(err)
	}
	var seven int
	if err := br.QueryRow().Scan(&seven); err != nil || seven != 7 {
		t.Errorf("the batch's second result: %d, %v; want 7", seven, err)
	}
	if err := br.Close(); err != nil {
		t.Fatal(err)
	}
	noSessionState(t, s, 2)
}

// beginBatch runs BEGIN, sql and COMMIT in one batch.
func beginBatch(ctx context.Context, q interface {
	SendBatch(context.Context, *pgx.Batch) pgx.BatchResults
}, sql string) error {
	b := &pgx.Batch{}
	b.Queue("BEGIN")
	b.Queue(sql)
	b.Queue("COMMIT")
	return q.SendBatch(ctx, b).Close()
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
