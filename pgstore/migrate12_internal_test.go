package pgstore

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/procurekit/procure/paging"
	"github.com/procurekit/procure/supplier"
)

// A database at schema version 11 holding search terms with their
// suppliers' sort keys migrates to 0012: the terms keep their term,
// supplier and lcp_prev, and lose the keys; a search still sorts by
// every order and filters by modifiedSince from the suppliers' rows; and
// a rename on the migrated database changes only the terms it changes.
func TestMigrate12FromVersion11WithTerms(t *testing.T) {
	ctx := context.Background()
	dsn, pool, ms := databaseBefore(t, 12)
	day := func(d int) time.Time { return time.Date(2026, 5, d, 0, 0, 0, 0, time.UTC) }
	sups := []supplier.Record{
		company(uuid.MustParse("00000000-0000-4000-8000-000000000001"), "Kestrel Paper"),
		company(uuid.MustParse("00000000-0000-4000-8000-000000000002"), "Kea Print"),
		company(uuid.MustParse("00000000-0000-4000-8000-000000000003"), "Osprey Tools"),
	}
	sups[0].Keywords = []string{"stationery"}
	sups[2].Keywords = []string{"kit"}
	if _, err := pool.Exec(ctx, `INSERT INTO communities (id, name, region, supplier_count, last_modified) VALUES ('c1', 'One', 'NZ', 3, $1)`, day(3)); err != nil {
		t.Fatal(err)
	}
	for i := range sups {
		r := &sups[i]
		// Created in the order 2, 0, 1; modified 0, 1, 2.
		r.CreatedDate, r.ModifiedDate = day(1).Add(time.Duration((i+1)%3)*time.Hour), day(i+1)
		if _, err := pool.Exec(ctx, `INSERT INTO suppliers (community_id, id, name, name_key, profile_type, modified_date, created_date, keywords)
			VALUES ('c1', $1, $2, $3, 'COMPANY', $4, $5, $6)`,
			r.ID, r.Name.String(), nullKey(r.Name.String()), r.ModifiedDate, r.CreatedDate, append([]string{}, r.Keywords...)); err != nil {
			t.Fatal(err)
		}
		ts, lcps := terms(r, nil, nil)
		for j, term := range ts {
			if _, err := pool.Exec(ctx, `INSERT INTO supplier_terms (community_id, term, supplier_id, lcp_prev, name_key, created_date, modified_date)
				VALUES ('c1', $1, $2, $3, $4, $5, $6)`, term, r.ID, lcps[j], nullKey(r.Name.String()), r.CreatedDate, r.ModifiedDate); err != nil {
				t.Fatal(err)
			}
		}
	}

	s, err := Open(ctx, dsn)
	if err != nil {
		t.Fatalf("Open on a version-11 database: %v", err)
	}
	defer s.Close()
	if v, err := s.SchemaVersion(ctx); err != nil || v != ms[len(ms)-1].Version {
		t.Fatalf("SchemaVersion = %d, %v; want %d", v, err, ms[len(ms)-1].Version)
	}
	var cols []string
	if err := pool.QueryRow(ctx, `SELECT array_agg(attname::text ORDER BY attnum) FROM pg_attribute
		WHERE attrelid = 'supplier_terms'::regclass AND attnum > 0 AND NOT attisdropped`).Scan(&cols); err != nil {
		t.Fatal(err)
	}
	if want := []string{"community_id", "term", "supplier_id", "lcp_prev"}; !slices.Equal(cols, want) {
		t.Errorf("supplier_terms has columns %v; want %v", cols, want)
	}
	checkTerms(t, s, "c1")

	search := func(q string, sort paging.Sort, since time.Time) []string {
		t.Helper()
		p, err := s.ListSuppliers(ctx, "c1", supplier.ListQuery{Query: q, ModifiedSince: since, Page: paging.Request{Size: 20, Sort: sort}})
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, x := range p.Content {
			names = append(names, x.Name.String())
		}
		if p.Page.TotalElements != len(names) {
			t.Errorf("query %q since %v: total %d for %d suppliers", q, since, p.Page.TotalElements, len(names))
		}
		return names
	}
	for _, tc := range []struct {
		q     string
		sort  paging.Sort
		since time.Time
		want  []string
	}{
		{"k", paging.Sort{Field: "name"}, time.Time{}, []string{"Kea Print", "Kestrel Paper", "Osprey Tools"}},
		{"k", paging.Sort{Field: "name", Desc: true}, time.Time{}, []string{"Osprey Tools", "Kestrel Paper", "Kea Print"}},
		{"k", paging.Sort{Field: "createdDate"}, time.Time{}, []string{"Osprey Tools", "Kestrel Paper", "Kea Print"}},
		{"k", paging.Sort{Field: "modifiedDate", Desc: true}, time.Time{}, []string{"Osprey Tools", "Kea Print", "Kestrel Paper"}},
		{"k", paging.Sort{Field: "name"}, day(2), []string{"Kea Print", "Osprey Tools"}},
		{"stat", paging.Sort{Field: "name"}, time.Time{}, []string{"Kestrel Paper"}},
	} {
		if got := search(tc.q, tc.sort, tc.since); !slices.Equal(got, tc.want) {
			t.Errorf("query %q by %v since %v: %q; want %q", tc.q, tc.sort, tc.since, got, tc.want)
		}
	}

	r := company(sups[0].ID, "Albatross Paper")
	r.Keywords = sups[0].Keywords
	if _, err := s.PutSupplier(ctx, "c1", r); err != nil {
		t.Fatal(err)
	}
	checkTerms(t, s, "c1")
	if got, want := search("k", paging.Sort{Field: "name"}, time.Time{}), []string{"Kea Print", "Osprey Tools"}; !slices.Equal(got, want) {
		t.Errorf("query k after the rename: %q; want %q", got, want)
	}
	if got, want := search("stat", paging.Sort{Field: "modifiedDate"}, day(4)), []string{"Albatross Paper"}; !slices.Equal(got, want) {
		t.Errorf("query stat since the rename: %q; want %q", got, want)
	}
}

// TestMigrate12Duration measures migration 0012 on a version-11 database
// of PGSTORE_MIGRATE12_SUPPLIERS generated suppliers with four search
// terms each, and logs how long Open took to apply it. It is skipped
// without the variable.
//
//	PGSTORE_MIGRATE12_SUPPLIERS=1000000 go test -run TestMigrate12Duration -v ./pgstore
func TestMigrate12Duration(t *testing.T) {
	timeMigration(t, 12, "PGSTORE_MIGRATE12_SUPPLIERS", []string{
		`INSERT INTO communities (id, name, region, supplier_count) VALUES ('m', 'M', 'NZ', $1)`,
		`INSERT INTO suppliers (community_id, id, name, name_key, legal_business_name, supplier_id, profile_type, modified_date, created_date, keywords)
			SELECT 'm', gen_random_uuid(), 'Supplier ' || md5(i::text), convert_to('supplier ' || md5(i::text), 'UTF8'), 'Legal ' || i, 'SUP-' || i, 'COMPANY',
				now(), now(), array['keyword' || (i % 100)] FROM generate_series(1, $1) AS i`,
		`INSERT INTO supplier_terms (community_id, term, supplier_id, lcp_prev, name_key, created_date, modified_date)
			SELECT s.community_id, t.term, s.id, 0, s.name_key, s.created_date, s.modified_date
			FROM suppliers s, unnest(array[lower(s.name), lower(s.legal_business_name), lower(s.supplier_id)] || s.keywords) AS t(term)`,
	}, "supplier_terms")
}
