package pgstore

import (
	"context"
	"testing"

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
