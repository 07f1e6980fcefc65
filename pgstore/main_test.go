package pgstore_test

import (
	"context"
	"os"
	"slices"
	"testing"
	"time"

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
	// lag is how long a node may take to see another's write (docs:
	// live-data.md): at once without a replica, within a second with one.
	lag time.Duration
}

// setups: directly; through PgBouncer in transaction mode, which hands
// each transaction any server connection (no session state survives it),
// migrations included; with reads from a streaming replica (each node
// opened on it first waits until it reads from the replica).
var setups = []setup{
	{"direct", func(tb testing.TB) database {
		dsn := pgtest.NewDatabase(tb)
		return database{dsn: dsn, direct: dsn}
	}, 0},
	{"pgbouncer", func(tb testing.TB) database {
		pooled, direct := pgtest.NewPooledDatabase(tb)
		return database{dsn: pooled, direct: direct}
	}, 0},
	{"replica", func(tb testing.TB) database {
		r := pgtest.NewReplicatedDatabase(tb)
		return database{dsn: r.Primary, direct: r.Primary, opts: []pgstore.Option{pgstore.WithReadDSN(r.Replica)}, replica: r}
	}, time.Second},
}

// database is a test's database in a set-up.
type database struct {
	dsn     string           // what a node opens
	direct  string           // the database's own URL: the test's inspection and direct writes
	opts    []pgstore.Option // what each node adds in the set-up
	replica *pgtest.Replicated
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

// setupNamed returns the set-up of that name.
func setupNamed(name string) setup {
	for _, su := range setups {
		if su.name == name {
			return su
		}
	}
	panic("no set-up " + name)
}

// inSetups runs f as a subtest in each set-up, or in those named by only;
// the set-ups run in parallel (each on databases of its own).
func inSetups(t *testing.T, f func(t *testing.T, su setup), only ...string) {
	for _, su := range setups {
		if len(only) > 0 && !slices.Contains(only, su.name) {
			continue
		}
		t.Run(su.name, func(t *testing.T) {
			t.Parallel()
			f(t, su)
		})
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
	if d.replica != nil {
		waitForReplica(tb, s)
	}
	return s, d
}

// waitForReplica waits until s reads from its replica: it has replayed
// what s wrote (the import, the migrations).
func waitForReplica(tb testing.TB, s *pgstore.Store) {
	tb.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !pgstore.ReadsFromReplica(s) {
		if time.Now().After(deadline) {
			tb.Fatal("the store never read from its replica")
		}
		time.Sleep(10 * time.Millisecond)
	}
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
