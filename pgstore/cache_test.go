package pgstore_test

import (
	"context"
	"errors"
	"log/slog"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/procurekit/procure/datafile"
	"github.com/procurekit/procure/internal/syncbuf"
	"github.com/procurekit/procure/paging"
	"github.com/procurekit/procure/pgstore"
	"github.com/procurekit/procure/supplier"
)

// Two nodes with the supplier cache on, sharing one database: every kind
// of write on node A - a new supplier, a replaced one, contact and
// address puts and deletes, a supplier delete, and a data-file import
// (which keeps the file's dates, below the high-water mark) - is seen by
// node A's next read, and by node B's reads once one second has passed
// (docs: live-data.md "Visibility"), both from their caches. Until the bound
// has passed, node B shows the state before the step or after one of its
// writes, never another.
func TestCacheTwoNodes(t *testing.T) { inSetups(t, testCacheTwoNodes) }

func testCacheTwoNodes(t *testing.T, su setup) {
	ctx := context.Background()
	f := fixture()
	_, d := openIn(t, su, f)
	a, b := d.open(t, pgstore.WithSupplierCache()), d.open(t, pgstore.WithSupplierCache())

	// What a node shows: the names in name order, with each supplier's
	// contact and address names.
	view := func(s *pgstore.Store) []string {
		t.Helper()
		return listC1(t, s, func(x supplier.Summary) string {
			line := x.Name.String() + ":"
			cs, err := s.ListContacts(ctx, "c1", x.ID, paging.Request{Size: 50})
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range cs.Content {
				line += " c=" + c.Name
			}
			as, err := s.ListRemittanceAddresses(ctx, "c1", x.ID, supplier.AddressQuery{Page: paging.Request{Size: 50, Sort: paging.Sort{Field: "companyName"}}})
			if err != nil {
				t.Fatal(err)
			}
			for _, ad := range as.Content {
				line += " a=" + ad.CompanyName.String()
			}
			return line
		})
	}
	// Both caches load c1 (small: at their first read).
	if diff := cmp.Diff(view(a), view(b)); diff != "" {
		t.Fatalf("the nodes differ before any write (-a +b):\n%s", diff)
	}

	// The list alone, with dates: one read, so one state of the cache.
	list := func(s *pgstore.Store) []string {
		t.Helper()
		return listC1(t, s, func(x supplier.Summary) string {
			return x.Name.String() + "@" + x.ModifiedDate.Format(time.RFC3339Nano)
		})
	}
	db := database{dsn: d.direct}.open(t, pgstore.WithMaxConns(2)) // no cache, no replica: the database

	newRec := func(n int, name string) supplier.Record {
		return supplier.Record{Detail: supplier.Detail{Summary: supplier.Summary{ID: id(n), Name: supplier.NewText(name), ProfileType: supplier.ProfileCompany}}}
	}
	steps := []struct {
		name   string
		writes []func() error
	}{
		{"new supplier", []func() error{func() error { _, err := a.PutSupplier(ctx, "c1", newRec(50, "Delta")); return err }}},
		{"replaced supplier", []func() error{func() error { _, err := a.PutSupplier(ctx, "c1", newRec(50, "Delta Two")); return err }}},
		{"contact put", []func() error{func() error {
			_, err := a.PutContact(ctx, "c1", id(50), supplier.Contact{ID: id(150), Name: "Dora"})
			return err
		}}},
		{"address put", []func() error{func() error {
			_, err := a.PutRemittanceAddress(ctx, "c1", id(50), supplier.RemittanceAddress{ID: id(250), CompanyName: supplier.NewText("Delta Billing"),
				Address: supplier.Address{Line1: "3 Main St", City: "Nelson", Country: "NZ"}})
			return err
		}}},
		{"contact delete", []func() error{func() error { return a.DeleteContact(ctx, "c1", id(1), id(102)) }}},
		{"address delete", []func() error{func() error { return a.DeleteRemittanceAddress(ctx, "c1", id(1), id(202)) }}},
		{"supplier delete", []func() error{func() error { return a.DeleteSupplier(ctx, "c1", id(2)) }}},
		{"import with old dates", []func() error{func() error { return importGammaRenamed(ctx, a) }}},
		{"supplier delete then create", []func() error{
			func() error { return a.DeleteSupplier(ctx, "c1", id(4)) },
			func() error { _, err := a.PutSupplier(ctx, "c1", newRec(4, "Gamma Reborn")); return err },
		}},
	}
	for _, st := range steps {
		// The states node B may show until the bound has passed: the one
		// before the step, and the one after each of its writes.
		allowed := [][]string{list(b)}
		for _, w := range st.writes {
			if err := w(); err != nil {
				t.Fatalf("%s: %v", st.name, err)
			}
			allowed = append(allowed, list(db))
		}
		written := time.Now()
		servedA := pgstore.CacheServed(a)
		if diff := cmp.Diff(view(db), view(a)); diff != "" {
			t.Fatalf("%s: node A's next read (-database +A):\n%s", st.name, diff)
		}
		if pgstore.CacheServed(a) == servedA {
			t.Fatalf("%s: node A's next reads came from the database, not its cache", st.name)
		}
		for time.Since(written) < time.Second {
			got := list(b)
			if !slices.ContainsFunc(allowed, func(s []string) bool { return slices.Equal(s, got) }) {
				t.Fatalf("%s: node B shows a state the database never had:\n%q\nallowed %q", st.name, got, allowed)
			}
			time.Sleep(50 * time.Millisecond)
		}
		servedB := pgstore.CacheServed(b)
		if diff := cmp.Diff(view(db), view(b)); diff != "" {
			t.Fatalf("%s: node B one second after the write (-database +B):\n%s", st.name, diff)
		}
		if pgstore.CacheServed(b) == servedB {
			t.Fatalf("%s: node B's reads one second after the write came from the database: its cache did not follow", st.name)
		}
	}
	if pgstore.CacheServed(a) == 0 || pgstore.CacheServed(b) == 0 {
		t.Fatalf("reads served by the caches: A %d, B %d; want both > 0", pgstore.CacheServed(a), pgstore.CacheServed(b))
	}
	t.Logf("reads served by the caches: A %d, B %d", pgstore.CacheServed(a), pgstore.CacheServed(b))
}

// listC1 lists community c1 from s (up to 50 suppliers, name order), one
// line per supplier.
func listC1(t *testing.T, s *pgstore.Store, line func(supplier.Summary) string) []string {
	t.Helper()
	p, err := s.ListSuppliers(context.Background(), "c1", supplier.ListQuery{Page: paging.Request{Size: 50}})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, x := range p.Content {
		out = append(out, line(x))
	}
	return out
}

// importGammaRenamed imports into c1 the fixture's Gamma, renamed "Gamma
// Imported" and with its old dates (modified at(5): far below the
// community's mark), through s: a new generation.
func importGammaRenamed(ctx context.Context, s *pgstore.Store) error {
	c := fixture().Communities[0]
	c.Suppliers = []supplier.Record{c.Suppliers[3]}
	c.Suppliers[0].Name = supplier.NewText("Gamma Imported")
	return s.Import(ctx, &datafile.File{Communities: []datafile.Community{c}})
}

// A read of a small community that the poller is reloading (after an
// import: a new generation) loads it at once instead of going to the
// database until the background load's turn: the node that imported
// serves its next reads from the cache. The background load is held back
// here, which is what a busy machine does by chance.
func TestCacheSmallReloadAtOnce(t *testing.T) {
	ctx := context.Background()
	s, _ := openStore(t, fixture(), pgstore.WithSupplierCache())
	names := func() []string {
		t.Helper()
		return listC1(t, s, func(x supplier.Summary) string { return x.Name.String() })
	}
	names() // loads c1
	release := pgstore.HoldCacheLoads(s)
	defer release()
	if err := importGammaRenamed(ctx, s); err != nil {
		t.Fatal(err)
	}
	// The poller (every 200 ms) sees the new generation and starts its
	// load, which waits for the held slot.
	deadline := time.Now().Add(10 * time.Second)
	for !pgstore.CacheLoading(s, "c1") {
		if time.Now().After(deadline) {
			t.Fatal("the poller did not start reloading c1 within 10 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	served := pgstore.CacheServed(s)
	got := names()
	if !slices.Contains(got, "Gamma Imported") {
		t.Fatalf("the read after the import shows %q; want the imported name", got)
	}
	if pgstore.CacheServed(s) != served+1 {
		t.Fatalf("reads served by the cache %d -> %d; want the read after the import served from the reloaded cache", served, pgstore.CacheServed(s))
	}
}

// A node whose cache cannot follow the database (here: the database is
// gone) does not serve what it holds once the bound has passed: its reads
// fail as reads from the database do, instead of answering old data.
func TestCacheDoesNotServeStaleData(t *testing.T) {
	ctx := context.Background()
	s, dsn := openStore(t, fixture(), pgstore.WithSupplierCache())
	list := func() error {
		_, err := s.ListSuppliers(ctx, "c1", supplier.ListQuery{Page: paging.Request{Size: 20}})
		return err
	}
	if err := list(); err != nil {
		t.Fatal(err)
	}
	served := pgstore.CacheServed(s)
	if err := list(); err != nil || pgstore.CacheServed(s) != served+1 {
		t.Fatalf("second list: %v, served %d -> %d; want it from the cache", err, served, pgstore.CacheServed(s))
	}
	// Cut the store off: forbid new connections to its database and end
	// the ones it has (from the server's maintenance database).
	var db string
	if err := connect(t, dsn).QueryRow(ctx, `SELECT current_database()`).Scan(&db); err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/postgres"
	admin := connect(t, u.String())
	for _, sql := range []string{
		`ALTER DATABASE "` + db + `" ALLOW_CONNECTIONS false`,
		`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '` + db + `'`,
	} {
		if _, err := admin.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	t.Cleanup(func() {
		_, _ = admin.Exec(context.Background(), `ALTER DATABASE "`+db+`" ALLOW_CONNECTIONS true`)
	})
	time.Sleep(time.Second) // past the bound
	served = pgstore.CacheServed(s)
	err = list()
	if err == nil {
		t.Fatal("a list after the database went away succeeded; want the database's error, not the cache's old data")
	}
	if pgstore.CacheServed(s) != served {
		t.Fatalf("the cache served a read %v after its last sync", time.Second)
	}
	if errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
}

// With a logger, the cache says when every community it found at start is
// loaded (the line to wait for before measuring it), and the community is
// then served from the cache.
func TestCacheLogsReady(t *testing.T) {
	ctx := context.Background()
	_, dsn := openStore(t, fixture())
	var buf syncbuf.Buffer
	s, err := pgstore.Open(ctx, dsn, pgstore.WithSupplierCache(), pgstore.WithLogger(slog.New(slog.NewTextHandler(&buf, nil))))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(buf.String(), "supplier cache: ready") {
		if time.Now().After(deadline) {
			t.Fatalf("no ready line in the log:\n%s", buf.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !strings.Contains(buf.String(), "communities=2") {
		t.Errorf("ready line without the 2 communities: %s", buf.String())
	}
	if _, err := s.ListSuppliers(ctx, "c2", supplier.ListQuery{Page: paging.Request{Size: 20}}); err != nil {
		t.Fatal(err)
	}
	if pgstore.CacheServed(s) != 1 {
		t.Fatalf("reads served by the cache after ready: %d; want 1", pgstore.CacheServed(s))
	}
}

// A delete prunes the community's tombstones older than a day (a cache
// that has not synced for half of that reloads instead of following):
// the table stays as small as a day of deletes.
func TestTombstonesPruned(t *testing.T) {
	ctx := context.Background()
	s, dsn := openStore(t, fixture())
	conn := connect(t, dsn)
	if _, err := conn.Exec(ctx, `INSERT INTO supplier_tombstones (community_id, deleted_at, id) VALUES
		('c1', now() - interval '25 hours', gen_random_uuid()),
		('c1', now() - interval '23 hours', gen_random_uuid()),
		('c2', now() - interval '25 hours', gen_random_uuid())`); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteSupplier(ctx, "c1", id(2)); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		community string
		want      int
	}{{"c1", 2}, {"c2", 1}} { // c1: the 23-hour-old one and the new one
		if n := queryInt(t, conn, `SELECT count(*) FROM supplier_tombstones WHERE community_id = $1`, tc.community); n != tc.want {
			t.Errorf("%s: %d tombstones; want %d", tc.community, n, tc.want)
		}
	}
	if n := queryInt(t, conn, `SELECT count(*) FROM supplier_tombstones WHERE community_id = 'c1' AND id = $1`, id(2)); n != 1 {
		t.Errorf("the delete's tombstone: %d rows; want 1", n)
	}
}
