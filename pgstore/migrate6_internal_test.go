package pgstore

import (
	"context"
	"testing"
	"time"

	"github.com/procurekit/procure/datafile"
	"github.com/procurekit/procure/paging"
	"github.com/procurekit/procure/supplier"
)

// A database at schema version 5 holding suppliers migrates to 0006 (the
// change feed of the supplier cache): every community starts at
// generation 0 with no tombstones; a cache loads the old data as the
// database serves it; a delete leaves a tombstone stamped above the old
// high-water mark (and raises the mark to it); an import that changes a
// supplier bumps the generation.
func TestMigrate6FromVersion5WithData(t *testing.T) {
	ctx := context.Background()
	dsn, pool, ms := databaseBefore(t, 6)
	mark := time.Date(2026, 5, 3, 0, 0, 0, 0, time.UTC)
	for _, sql := range []string{
		`INSERT INTO communities (id, name, region, supplier_count, last_modified) VALUES ('c1', 'One', 'NZ', 2, '2026-05-03 00:00:00+00')`,
		`INSERT INTO suppliers (community_id, id, name, name_key, profile_type, modified_date, created_date, keywords) VALUES
			('c1', '00000000-0000-4000-8000-000000000001', 'Beta', 'beta', 'COMPANY', '2026-05-01 10:00:00+00', '2026-01-01 00:00:00+00', '{}'),
			('c1', '00000000-0000-4000-8000-000000000002', 'Alpha', 'alpha', 'COMPANY', '2026-05-02 10:00:00+00', '2026-01-02 00:00:00+00', '{tools}')`,
		`INSERT INTO supplier_terms (community_id, term, supplier_id, lcp_prev, name_key, created_date, modified_date) VALUES
			('c1', 'beta', '00000000-0000-4000-8000-000000000001', 0, 'beta', '2026-01-01 00:00:00+00', '2026-05-01 10:00:00+00'),
			('c1', 'alpha', '00000000-0000-4000-8000-000000000002', 0, 'alpha', '2026-01-02 00:00:00+00', '2026-05-02 10:00:00+00'),
			('c1', 'tools', '00000000-0000-4000-8000-000000000002', 0, 'alpha', '2026-01-02 00:00:00+00', '2026-05-02 10:00:00+00')`,
		`INSERT INTO supplier_contacts (community_id, supplier_id, id, name_key, doc) VALUES
			('c1', '00000000-0000-4000-8000-000000000002', '00000000-0000-4000-8000-000000000101', 'ann',
			 '{"id":"00000000-0000-4000-8000-000000000101","name":"Ann","modifiedDate":"2026-05-02T00:00:00Z","createdDate":"2026-01-01T00:00:00Z"}')`,
	} {
		if _, err := pool.Exec(ctx, sql); err != nil {
			t.Fatalf("%.60s: %v", sql, err)
		}
	}

	s, err := Open(ctx, dsn, WithSupplierCache())
	if err != nil {
		t.Fatalf("Open on a version-5 database: %v", err)
	}
	defer s.Close()
	if v, err := s.SchemaVersion(ctx); err != nil || v != ms[len(ms)-1].Version {
		t.Fatalf("SchemaVersion = %d, %v; want %d", v, err, ms[len(ms)-1].Version)
	}
	count := func(sql string) int64 {
		t.Helper()
		var n int64
		if err := pool.QueryRow(ctx, sql).Scan(&n); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		return n
	}
	if g := count(`SELECT supplier_generation FROM communities WHERE id = 'c1'`); g != 0 {
		t.Errorf("generation after the migration = %d; want 0", g)
	}
	if n := count(`SELECT count(*) FROM supplier_tombstones`); n != 0 {
		t.Errorf("%d tombstones after the migration; want 0", n)
	}

	p, err := s.ListSuppliers(ctx, "c1", supplier.ListQuery{Query: "t", Page: paging.Request{Size: 20}})
	if err != nil || len(p.Content) != 1 || p.Content[0].Name.String() != "Alpha" {
		t.Fatalf("query t: %+v, %v; want Alpha (keyword tools)", p.Content, err)
	}
	p, err = s.ListSuppliers(ctx, "c1", supplier.ListQuery{Page: paging.Request{Size: 20}})
	if err != nil || len(p.Content) != 2 || p.Content[0].Name.String() != "Alpha" || p.Content[1].Name.String() != "Beta" || p.Page.TotalElements != 2 {
		t.Fatalf("list: %+v, %v; want Alpha, Beta", p, err)
	}
	cs, err := s.ListContacts(ctx, "c1", p.Content[0].ID, paging.Request{Size: 20})
	if err != nil || len(cs.Content) != 1 || cs.Content[0].Name != "Ann" {
		t.Fatalf("contacts of Alpha: %+v, %v; want Ann", cs.Content, err)
	}
	if CacheServed(s) == 0 {
		t.Fatal("the cache served none of the reads")
	}

	if err := s.DeleteSupplier(ctx, "c1", p.Content[1].ID); err != nil {
		t.Fatal(err)
	}
	var deletedAt, lastModified time.Time
	if err := pool.QueryRow(ctx, `SELECT t.deleted_at, c.last_modified FROM supplier_tombstones t JOIN communities c ON c.id = t.community_id
		WHERE t.id = $1`, p.Content[1].ID).Scan(&deletedAt, &lastModified); err != nil {
		t.Fatalf("the delete's tombstone: %v", err)
	}
	if !deletedAt.After(mark) || !deletedAt.Equal(lastModified) {
		t.Errorf("tombstone at %v, high-water mark %v; want the tombstone after %v and equal to the mark", deletedAt, lastModified, mark)
	}
	p, err = s.ListSuppliers(ctx, "c1", supplier.ListQuery{Page: paging.Request{Size: 20}})
	if err != nil || len(p.Content) != 1 || p.Page.TotalElements != 1 {
		t.Fatalf("list after the delete: %+v, %v; want Alpha alone", p, err)
	}

	r := supplier.Record{Detail: supplier.Detail{Summary: supplier.Summary{ID: p.Content[0].ID, Name: supplier.NewText("Alpha Imported"),
		ProfileType: supplier.ProfileCompany, ModifiedDate: mark.Add(-time.Hour), CreatedDate: mark.Add(-48 * time.Hour)}}}
	if err := s.Import(ctx, &datafile.File{Communities: []datafile.Community{{ID: "c1", Name: "One", Region: datafile.NZ, Suppliers: []supplier.Record{r}}}}); err != nil {
		t.Fatal(err)
	}
	if g := count(`SELECT supplier_generation FROM communities WHERE id = 'c1'`); g != 1 {
		t.Errorf("generation after an import that changed a supplier = %d; want 1", g)
	}
	p, err = s.ListSuppliers(ctx, "c1", supplier.ListQuery{Page: paging.Request{Size: 20}})
	if err != nil || len(p.Content) != 1 || p.Content[0].Name.String() != "Alpha Imported" || !p.Content[0].ModifiedDate.Equal(r.ModifiedDate) {
		t.Fatalf("list after the import: %+v, %v; want Alpha Imported with the file's modifiedDate", p.Content, err)
	}
	// The same file again changes nothing: the generation stays.
	if err := s.Import(ctx, &datafile.File{Communities: []datafile.Community{{ID: "c1", Name: "One", Region: datafile.NZ, Suppliers: []supplier.Record{r}}}}); err != nil {
		t.Fatal(err)
	}
	if g := count(`SELECT supplier_generation FROM communities WHERE id = 'c1'`); g != 1 {
		t.Errorf("generation after importing the same file again = %d; want 1", g)
	}
}
