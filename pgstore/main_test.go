package pgstore_test

import (
	"context"
	"os"
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
