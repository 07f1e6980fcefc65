package pgstore_test

import (
	"context"
	"errors"
	"net/url"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/procurekit/procure/datafile"
	"github.com/procurekit/procure/paging"
	"github.com/procurekit/procure/pgstore"
	"github.com/procurekit/procure/supplier"
)

// Two nodes with the supplier cache on, sharing one database: every kind
// of write on node A - a new supplier, a replaced one, contact and
// address puts and deletes, a supplier delete, and a data-file import
// (which keeps the file's dates, below the high-water mark) - is seen by
// node A's next read, and by node B's reads once one second has passed
// (DECISIONS.md "Live data"). Node B's reads meanwhile are served from
// its cache (or, when its cache is behind the bound, from the database),
// and never show a state older than what it showed before.
func TestCacheTwoNodes(t *testing.T) {
	ctx := context.Background()
	f := fixture()
	_, dsn := openStore(t, f)
	var a, b *pgstore.Store
	for _, p := range []**pgstore.Store{&a, &b} {
		s, err := pgstore.Open(ctx, dsn, pgstore.WithSupplierCache())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
		*p = s
	}

	// What a node shows: the names in name order, with each supplier's
	// contact and address names.
	view := func(s *pgstore.Store) []string {
		t.Helper()
		p, err := s.ListSuppliers(ctx, "c1", supplier.ListQuery{Page: paging.Request{Size: 50}})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, x := range p.Content {
			line := x.Name + ":"
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
				line += " a=" + ad.CompanyName
			}
			out = append(out, line)
		}
		return out
	}
	// Both caches load c1 (small: at their first read).
	if diff := cmp.Diff(view(a), view(b)); diff != "" {
		t.Fatalf("the nodes differ before any write (-a +b):\n%s", diff)
	}

	newRec := func(n int, name string) supplier.Record {
		return supplier.Record{Detail: supplier.Detail{Summary: supplier.Summary{ID: id(n), Name: name, ProfileType: supplier.ProfileCompany}}}
	}
	steps := []struct {
		name  string
		write func() error
	}{
		{"new supplier", func() error { _, err := a.PutSupplier(ctx, "c1", newRec(50, "Delta")); return err }},
		{"replaced supplier", func() error { _, err := a.PutSupplier(ctx, "c1", newRec(50, "Delta Two")); return err }},
		{"contact put", func() error {
			_, err := a.PutContact(ctx, "c1", id(50), supplier.Contact{ID: id(150), Name: "Dora"})
			return err
		}},
		{"address put", func() error {
			_, err := a.PutRemittanceAddress(ctx, "c1", id(50), supplier.RemittanceAddress{ID: id(250), CompanyName: "Delta Billing",
				Address: supplier.Address{Line1: "3 Main St", City: "Nelson", Country: "NZ"}})
			return err
		}},
		{"contact delete", func() error { return a.DeleteContact(ctx, "c1", id(1), id(102)) }},
		{"address delete", func() error { return a.DeleteRemittanceAddress(ctx, "c1", id(1), id(202)) }},
		{"supplier delete", func() error { return a.DeleteSupplier(ctx, "c1", id(2)) }},
		{"import with old dates", func() error {
			g := fixture()
			c := g.Communities[0]
			c.Suppliers = []supplier.Record{c.Suppliers[3]} // Gamma, modified at(5): far below the mark
			c.Suppliers[0].Name = "Gamma Imported"
			return a.Import(ctx, &datafile.File{Communities: []datafile.Community{c}})
		}},
		{"supplier delete then create", func() error {
			if err := a.DeleteSupplier(ctx, "c1", id(4)); err != nil {
				return err
			}
			_, err := a.PutSupplier(ctx, "c1", newRec(4, "Gamma Reborn"))
			return err
		}},
	}
	for _, st := range steps {
		before := view(b)
		if err := st.write(); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		written := time.Now()
		want, err := dbView(ctx, dsn, view)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, view(a)); diff != "" {
			t.Fatalf("%s: node A's next read (-database +A):\n%s", st.name, diff)
		}
		// Within the bound node B shows the state before or after the
		// write; once it has passed, the state after.
		for time.Since(written) < time.Second {
			got := view(b)
			if !cmp.Equal(got, before) && !cmp.Equal(got, want) {
				t.Fatalf("%s: node B shows a state that is neither before nor after the write:\n%q\nbefore %q\nafter  %q", st.name, got, before, want)
			}
			time.Sleep(50 * time.Millisecond)
		}
		if diff := cmp.Diff(want, view(b)); diff != "" {
			t.Fatalf("%s: node B one second after the write (-database +B):\n%s", st.name, diff)
		}
	}
	if pgstore.CacheServed(a) == 0 || pgstore.CacheServed(b) == 0 {
		t.Fatalf("reads served by the caches: A %d, B %d; want both > 0", pgstore.CacheServed(a), pgstore.CacheServed(b))
	}
	t.Logf("reads served by the caches: A %d, B %d", pgstore.CacheServed(a), pgstore.CacheServed(b))
}

// dbView is view over a store without the cache: what the database holds.
func dbView(ctx context.Context, dsn string, view func(*pgstore.Store) []string) ([]string, error) {
	s, err := pgstore.Open(ctx, dsn, pgstore.WithMaxConns(2))
	if err != nil {
		return nil, err
	}
	defer s.Close()
	return view(s), nil
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
