package pgstore

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/procurekit/procure/internal/pgmigrate"
	"github.com/procurekit/procure/internal/pgtest"
)

// databaseBefore makes a throwaway database at the schema an earlier build
// left: every migration before version applied, that one and the later
// ones not. It returns the database's DSN, a pool on it (closed at the
// test's end) and the migrations this build has.
func databaseBefore(t *testing.T, version int) (string, *pgxpool.Pool, []pgmigrate.Migration) {
	t.Helper()
	ctx := context.Background()
	dsn := pgtest.NewDatabase(t)
	pool, err := pgxpool.New(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	ms, err := pgmigrate.Load(migrationFiles)
	if err != nil {
		t.Fatal(err)
	}
	i := 0
	for i < len(ms) && ms[i].Version < version {
		i++
	}
	if i == len(ms) || ms[i].Version != version {
		t.Fatalf("no migration %d in %v", version, ms)
	}
	if err := applyMigrations(ctx, pool, nil, ms[:i]); err != nil {
		t.Fatal(err)
	}
	return dsn, pool, ms
}

// timeMigration measures migration version on a database of the schema
// before it, seeded by seed (statements run in turn; $1, where one names
// it, is the number of suppliers), and logs how long Open took to apply
// it and what counted says of the result. The number of suppliers comes
// from the environment variable env; without it the test is skipped.
func timeMigration(t *testing.T, version int, env string, seed []string, counted string) {
	t.Helper()
	n, err := strconv.Atoi(os.Getenv(env))
	if err != nil {
		t.Skipf("set %s to a number of suppliers to measure migration %04d", env, version)
	}
	ctx := context.Background()
	dsn, pool, _ := databaseBefore(t, version)
	for _, sql := range append(seed, `CHECKPOINT`) {
		args := []any{n}
		if !strings.Contains(sql, "$1") {
			args = nil
		}
		if _, err := pool.Exec(ctx, sql, args...); err != nil {
			t.Fatalf("%.70s: %v", sql, err)
		}
	}
	start := time.Now()
	s, err := Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	took := time.Since(start).Round(time.Millisecond)
	t.Logf("migration %04d of %d suppliers (%d %s): %v", version, n, count(t, s, `SELECT count(*) FROM `+counted), counted, took)
}
