package pgstore_test

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/procurekit/procure"
	"github.com/procurekit/procure/paging"
	"github.com/procurekit/procure/pgstore"
	"github.com/procurekit/procure/supplier"
)

// waitReady polls s.Ready until its answer satisfies ok, or fails tb
// after a while, showing the last answer.
func waitReady(tb testing.TB, s *pgstore.Store, what string, ok func(error) bool) error {
	tb.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := s.Ready(context.Background())
		if ok(err) {
			return err
		}
		if time.Now().After(deadline) {
			tb.Fatalf("Ready never became %s; last answer: %v", what, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func isReady(err error) bool    { return err == nil }
func isNotReady(err error) bool { return errors.Is(err, procure.ErrNotReady) }

// cutOff makes the database at dsn unreachable - new connections are
// refused and the open ones ended, from the server's maintenance
// database - and returns the function that lets connections in again
// (also run at cleanup).
func cutOff(tb testing.TB, dsn string) (restore func()) {
	tb.Helper()
	ctx := context.Background()
	var db string
	if err := connect(tb, dsn).QueryRow(ctx, `SELECT current_database()`).Scan(&db); err != nil {
		tb.Fatal(err)
	}
	u, err := url.Parse(dsn)
	if err != nil {
		tb.Fatal(err)
	}
	u.Path = "/postgres"
	admin := connect(tb, u.String())
	for _, sql := range []string{
		`ALTER DATABASE "` + db + `" ALLOW_CONNECTIONS false`,
		`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '` + db + `'`,
	} {
		if _, err := admin.Exec(ctx, sql); err != nil {
			tb.Fatalf("%s: %v", sql, err)
		}
	}
	restore = func() {
		if _, err := admin.Exec(context.Background(), `ALTER DATABASE "`+db+`" ALLOW_CONNECTIONS true`); err != nil {
			tb.Errorf("allow connections again: %v", err)
		}
	}
	tb.Cleanup(restore)
	return restore
}

// A store without the cache is ready once open; it turns unready when
// its database becomes unreachable - saying so in words that name no
// host or user - and ready again once the database is back.
func TestReadyDatabaseLoss(t *testing.T) {
	s, dsn := openStore(t, fixture())
	if err := s.Ready(context.Background()); err != nil {
		t.Fatalf("Ready after Open: %v", err)
	}
	restore := cutOff(t, dsn)
	err := waitReady(t, s, "not ready", isNotReady)
	if err.Error() != "database does not answer" {
		t.Errorf("Ready = %q; want %q", err, "database does not answer")
	}
	u, _ := url.Parse(dsn)
	if strings.Contains(err.Error(), u.Hostname()) || strings.Contains(err.Error(), u.User.Username()) {
		t.Errorf("Ready's message names the host or user: %q", err)
	}
	restore()
	waitReady(t, s, "ready", isReady)
}

// A database whose schema lacks this build's latest migration (restored
// from an older backup, say) is not ready.
func TestReadySchemaBehind(t *testing.T) {
	s, dsn := openStore(t, nil)
	conn := connect(t, dsn)
	if _, err := conn.Exec(context.Background(), `DELETE FROM schema_migrations WHERE version = (SELECT max(version) FROM schema_migrations)`); err != nil {
		t.Fatal(err)
	}
	err := s.Ready(context.Background())
	if !isNotReady(err) || !strings.Contains(err.Error(), "database schema lacks migration") {
		t.Fatalf("Ready = %v; want the missing migration named", err)
	}
}

// With the supplier cache, a store that opens is not ready until every
// community it found has been loaded (here the load waits behind a lock
// on the suppliers table), unless WithReadyWhileCacheLoads says that
// reads from the database will do meanwhile.
func TestReadyWaitsForCache(t *testing.T) {
	ctx := context.Background()
	_, dsn := openStore(t, fixture())
	lock := connect(t, dsn)
	tx, err := lock.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `LOCK TABLE suppliers IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}

	cached, err := pgstore.Open(ctx, dsn, pgstore.WithSupplierCache())
	if err != nil {
		t.Fatal(err)
	}
	defer cached.Close()
	early, err := pgstore.Open(ctx, dsn, pgstore.WithSupplierCache(), pgstore.WithReadyWhileCacheLoads())
	if err != nil {
		t.Fatal(err)
	}
	defer early.Close()

	// The loads have been queued and wait on the lock: the answer says
	// how far they are.
	err = waitReady(t, cached, "loading", func(err error) bool {
		return err != nil && strings.HasPrefix(err.Error(), "supplier cache loading")
	})
	if !isNotReady(err) || err.Error() != "supplier cache loading: 0 of 2 communities loaded" {
		t.Errorf("Ready while the load waits = %q", err)
	}
	if err := early.Ready(ctx); err != nil {
		t.Errorf("Ready with WithReadyWhileCacheLoads while the load waits: %v", err)
	}

	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	waitReady(t, cached, "ready", isReady)
}

// A store with the cache opened on an empty database is ready (there is
// nothing to load); what it then imports is waited for: when Ready
// next answers nil, every imported community is served from the cache.
func TestReadyWarmsUpWithTheImport(t *testing.T) {
	ctx := context.Background()
	s, _ := openStore(t, nil, pgstore.WithSupplierCache())
	waitReady(t, s, "ready", isReady)
	if err := s.Import(ctx, fixture()); err != nil {
		t.Fatal(err)
	}
	waitReady(t, s, "ready", isReady)
	for _, c := range []string{"c1", "c2"} {
		before := pgstore.CacheServed(s)
		if _, err := s.ListSuppliers(ctx, c, supplier.ListQuery{Page: paging.Request{Size: 1}}); err != nil {
			t.Fatal(err)
		}
		if pgstore.CacheServed(s) != before+1 {
			t.Errorf("%s: the first read once ready went to the database; want the cache warm", c)
		}
	}
}
