package pgstore_test

import (
	"context"
	"os"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/procurekit/procure/datafile"
	"github.com/procurekit/procure/internal/pgtest"
	"github.com/procurekit/procure/pgstore"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// openStore opens a store on a fresh database and imports f (when not
// nil). It returns the store and the database's DSN.
func openStore(tb testing.TB, f *datafile.File, opts ...pgstore.Option) (*pgstore.Store, string) {
	tb.Helper()
	dsn := pgtest.NewDatabase(tb)
	s, err := pgstore.Open(context.Background(), dsn, opts...)
	if err != nil {
		tb.Fatalf("Open: %v", err)
	}
	tb.Cleanup(s.Close)
	if f != nil {
		if err := s.Import(context.Background(), f); err != nil {
			tb.Fatalf("Import: %v", err)
		}
	}
	return s, dsn
}

// setup is a way the nodes of a test reach PostgreSQL. The conformance
// suites and the cross-node live-data tests run once in each (docs:
// live-data.md holds in all of them); the other tests run directly.
type setup struct {
	name string
	new  func(tb testing.TB) database
}

// setups: directly; through PgBouncer in transaction mode, which hands
// each transaction any server connection (no session state survives it),
// migrations included.
var setups = []setup{
	{"direct", func(tb testing.TB) database {
		dsn := pgtest.NewDatabase(tb)
		return database{dsn: dsn, direct: dsn}
	}},
	{"pgbouncer", func(tb testing.TB) database {
		pooled, direct := pgtest.NewPooledDatabase(tb)
		return database{dsn: pooled, direct: direct}
	}},
}

// database is a test's database in a set-up.
type database struct {
	dsn    string           // what a node opens
	direct string           // the database's own URL: the test's inspection and direct writes
	opts   []pgstore.Option // what each node adds in the set-up
}

// open opens a node on the database.
func (d database) open(tb testing.TB, opts ...pgstore.Option) *pgstore.Store {
	tb.Helper()
	s, err := pgstore.Open(context.Background(), d.dsn, append(slices.Clone(d.opts), opts...)...)
	if err != nil {
		tb.Fatalf("Open: %v", err)
	}
	tb.Cleanup(s.Close)
	return s
}

// inSetups runs f as a subtest in each set-up.
func inSetups(t *testing.T, f func(t *testing.T, su setup)) {
	for _, su := range setups {
		t.Run(su.name, func(t *testing.T) { f(t, su) })
	}
}

// openIn opens a node on a new database of the set-up and imports f (when
// not nil).
func openIn(tb testing.TB, su setup, f *datafile.File, opts ...pgstore.Option) (*pgstore.Store, database) {
	tb.Helper()
	d := su.new(tb)
	s := d.open(tb, opts...)
	if f != nil {
		if err := s.Import(context.Background(), f); err != nil {
			tb.Fatalf("Import: %v", err)
		}
	}
	return s, d
}

// connect opens a plain connection to inspect the database directly.
func connect(tb testing.TB, dsn string) *pgx.Conn {
	tb.Helper()
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		tb.Fatalf("connect: %v", err)
	}
	tb.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// queryInt runs a query that returns one integer.
func queryInt(tb testing.TB, conn *pgx.Conn, sql string, args ...any) int {
	tb.Helper()
	var n int
	if err := conn.QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		tb.Fatalf("%s: %v", sql, err)
	}
	return n
}
