package pgstore_test

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/procurekit/procure/internal/pgtest"
	"github.com/procurekit/procure/pgstore"
)

// latestVersion is the highest migration in migrations/ (they have no
// gaps: TestMigrationsFiles).
var latestVersion = func() int {
	names, err := filepath.Glob("migrations/*.sql")
	if err != nil {
		panic(err)
	}
	return len(names)
}()

// Open on an empty database creates the whole schema and records each
// migration once.
func TestOpenMigratesEmptyDatabase(t *testing.T) {
	s, dsn := openStore(t, nil)
	v, err := s.SchemaVersion(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if v != latestVersion {
		t.Fatalf("SchemaVersion = %d; want %d", v, latestVersion)
	}
	conn := connect(t, dsn)
	for _, table := range []string{"communities", "suppliers", "supplier_terms", "supplier_contacts",
		"remittance_addresses", "tokens", "service_accounts", "service_account_keys", "users", "budgets"} {
		if n := queryInt(t, conn, "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public' AND table_name = $1", table); n != 1 {
			t.Errorf("table %s: found %d; want 1", table, n)
		}
	}
	if n := queryInt(t, conn, "SELECT count(*) FROM schema_migrations"); n != latestVersion {
		t.Errorf("schema_migrations has %d rows; want %d", n, latestVersion)
	}
}

// Re-opening an up-to-date database changes nothing: no migration runs
// again (the recorded times stay) and the data stays.
func TestReopenUpToDate(t *testing.T) {
	ctx := context.Background()
	_, dsn := openStore(t, fixture())
	conn := connect(t, dsn)
	var before time.Time
	if err := conn.QueryRow(ctx, "SELECT max(applied_at) FROM schema_migrations").Scan(&before); err != nil {
		t.Fatal(err)
	}
	suppliers := queryInt(t, conn, "SELECT count(*) FROM suppliers")

	s2, err := pgstore.Open(ctx, dsn)
	if err != nil {
		t.Fatalf("second Open: %v", err)
	}
	defer s2.Close()
	var after time.Time
	if err := conn.QueryRow(ctx, "SELECT max(applied_at) FROM schema_migrations").Scan(&after); err != nil {
		t.Fatal(err)
	}
	if !after.Equal(before) {
		t.Errorf("applied_at changed from %v to %v: a migration ran again", before, after)
	}
	if n := queryInt(t, conn, "SELECT count(*) FROM schema_migrations"); n != latestVersion {
		t.Errorf("schema_migrations has %d rows; want %d", n, latestVersion)
	}
	if n := queryInt(t, conn, "SELECT count(*) FROM suppliers"); n != suppliers || n == 0 {
		t.Errorf("suppliers: %d after re-open; want %d (and not 0)", n, suppliers)
	}
}

// Nodes that start together on one empty database all open it: the
// advisory lock makes one migrate while the others wait.
func TestConcurrentOpen(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.NewDatabase(t)
	const nodes = 8
	var wg sync.WaitGroup
	errs := make([]error, nodes)
	for i := range nodes {
		wg.Go(func() {
			s, err := pgstore.Open(ctx, dsn, pgstore.WithMaxConns(2))
			if err == nil {
				s.Close()
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("node %d: Open: %v", i, err)
		}
	}
	conn := connect(t, dsn)
	if n := queryInt(t, conn, "SELECT count(*) FROM schema_migrations"); n != latestVersion {
		t.Errorf("schema_migrations has %d rows; want %d", n, latestVersion)
	}
}

func TestOpenBadDSN(t *testing.T) {
	_, err := pgstore.Open(context.Background(), "postgres://user:s3cret@[::1")
	if err == nil {
		t.Fatal("Open accepted a malformed URL")
	}
	if got := err.Error(); contains(got, "s3cret") {
		t.Fatalf("error shows the password: %q", got)
	}
}

// WithMigrateDSN applies the migrations over a connection to that URL,
// not the store's: here the store's connections cannot write at all
// (default_transaction_read_only), so Open fails without the option and
// succeeds with it.
func TestOpenWithMigrateDSN(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.NewDatabase(t)
	readOnly := dsn + "&default_transaction_read_only=on"
	if s, err := pgstore.Open(ctx, readOnly); err == nil {
		s.Close()
		t.Fatal("Open on read-only connections migrated; want it to fail")
	}
	s, err := pgstore.Open(ctx, readOnly, pgstore.WithMigrateDSN(dsn))
	if err != nil {
		t.Fatalf("Open with WithMigrateDSN: %v", err)
	}
	defer s.Close()
	if v, err := s.SchemaVersion(ctx); err != nil || v != latestVersion {
		t.Fatalf("SchemaVersion = %d, %v; want %d", v, err, latestVersion)
	}
	if _, err := pgstore.Open(ctx, dsn, pgstore.WithMigrateDSN("postgres://%zz")); err == nil {
		t.Fatal("Open with a migrate DSN that does not parse: no error")
	}
}
