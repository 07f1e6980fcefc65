package pgstore_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/procurekit/procure/internal/pgtest"
	"github.com/procurekit/procure/paging"
	"github.com/procurekit/procure/pgstore"
	"github.com/procurekit/procure/supplier"
)

// A database at schema version 1, holding data imported by a version-1
// build (positions and all), migrates to the current schema: the lists
// keep their order and totals, with names that are not plain ASCII folded
// as the application folds them; "" columns of version 1 become no value;
// the search terms still work; and a write after the migration stamps
// above every date the old data holds.
func TestMigrateFromVersion1WithData(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.NewDatabase(t)
	conn := connect(t, dsn)
	v1, err := os.ReadFile("migrations/0001_init.sql")
	if err != nil {
		t.Fatal(err)
	}
	setup := []string{
		string(v1),
		`CREATE TABLE schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
		`INSERT INTO schema_migrations (version, name) VALUES (1, '0001_init.sql')`,
		`INSERT INTO communities (id, name, region, supplier_count) VALUES ('c1', 'One', 'NZ', 3), ('c2', 'Two', 'AU', 1)`,
		// Names: "Émile" and "éclair" fold to "émile" and "éclair" (so
		// éclair first); an ASCII-only fold would put "Émile" first.
		`INSERT INTO suppliers (community_id, id, supplier_id, name, profile_type, legal_business_name, modified_date, created_date, keywords,
			pos_name_asc, pos_name_desc, pos_created_asc, pos_created_desc, pos_modified_asc, pos_modified_desc) VALUES
			('c1', '00000000-0000-4000-8000-000000000001', 'S-1', 'Émile', 'COMPANY', '', '2026-05-01 10:00:00+00', '2026-01-01 00:00:00+00', '{}', 1, 0, 0, 2, 0, 2),
			('c1', '00000000-0000-4000-8000-000000000002', '', 'éclair', 'COMPANY', 'Choux SA', '2026-05-01 11:00:00+00', '2026-01-02 00:00:00+00', '{pastry}', 0, 1, 1, 1, 1, 1),
			('c1', '00000000-0000-4000-8000-000000000003', '', '', 'COMPANY', '', '2026-05-01 12:00:00.000001+00', '2026-01-03 00:00:00+00', '{}', 2, 2, 2, 0, 2, 0),
			('c2', '00000000-0000-4000-8000-000000000009', '', 'Other', 'COMPANY', '', '2026-06-01 00:00:00+00', '2026-01-01 00:00:00+00', '{}', 0, 0, 0, 0, 0, 0)`,
		`INSERT INTO supplier_terms (community_id, term, supplier_id, modified_date, lcp_prev,
			pos_name_asc, pos_name_desc, pos_created_asc, pos_created_desc, pos_modified_asc, pos_modified_desc) VALUES
			('c1', 's-1', '00000000-0000-4000-8000-000000000001', '2026-05-01 10:00:00+00', 0, 1, 0, 0, 2, 0, 2),
			('c1', 'émile', '00000000-0000-4000-8000-000000000001', '2026-05-01 10:00:00+00', 0, 1, 0, 0, 2, 0, 2),
			('c1', 'choux sa', '00000000-0000-4000-8000-000000000002', '2026-05-01 11:00:00+00', 0, 0, 1, 1, 1, 1, 1),
			('c1', 'pastry', '00000000-0000-4000-8000-000000000002', '2026-05-01 11:00:00+00', 0, 0, 1, 1, 1, 1, 1),
			('c1', 'éclair', '00000000-0000-4000-8000-000000000002', '2026-05-01 11:00:00+00', 0, 0, 1, 1, 1, 1, 1),
			('c2', 'other', '00000000-0000-4000-8000-000000000009', '2026-06-01 00:00:00+00', 0, 0, 0, 0, 0, 0, 0)`,
		`INSERT INTO supplier_contacts (community_id, supplier_id, id, name_key, doc) VALUES
			('c1', '00000000-0000-4000-8000-000000000001', '00000000-0000-4000-8000-000000000101', 'ann',
			 '{"id":"00000000-0000-4000-8000-000000000101","name":"Ann","modifiedDate":"2026-05-02T00:00:00Z","createdDate":"2026-01-01T00:00:00Z"}')`,
	}
	for _, sql := range setup {
		if _, err := conn.Exec(ctx, sql); err != nil {
			t.Fatalf("%.60s: %v", sql, err)
		}
	}

	s, err := pgstore.Open(ctx, dsn)
	if err != nil {
		t.Fatalf("Open on a version-1 database: %v", err)
	}
	defer s.Close()
	if v, err := s.SchemaVersion(ctx); err != nil || v != latestVersion {
		t.Fatalf("SchemaVersion = %d, %v; want %d", v, err, latestVersion)
	}

	list := func(q supplier.ListQuery) ([]string, int) {
		t.Helper()
		q.Page.Size = 20
		p, err := s.ListSuppliers(ctx, "c1", q)
		if err != nil {
			t.Fatal(err)
		}
		return names(p.Content), p.Page.TotalElements
	}
	tests := []struct {
		name  string
		q     supplier.ListQuery
		want  []string
		total int
	}{
		{"default", supplier.ListQuery{}, []string{"éclair", "Émile", ""}, 3},
		{"name desc", supplier.ListQuery{Page: pageSort("name", true)}, []string{"Émile", "éclair", ""}, 3},
		{"modified desc", supplier.ListQuery{Page: pageSort("modifiedDate", true)}, []string{"", "éclair", "Émile"}, 3},
		{"query folds", supplier.ListQuery{Query: "ÉC"}, []string{"éclair"}, 1},
		{"query keyword", supplier.ListQuery{Query: "past"}, []string{"éclair"}, 1},
		{"since", supplier.ListQuery{ModifiedSince: time.Date(2026, 5, 1, 11, 0, 0, 0, time.UTC)}, []string{"éclair", ""}, 2},
	}
	for _, tt := range tests {
		got, total := list(tt.q)
		if !cmp.Equal(got, tt.want) || total != tt.total {
			t.Errorf("%s: %q (total %d); want %q (total %d)", tt.name, got, total, tt.want, tt.total)
		}
	}

	d, err := s.Supplier(ctx, "c1", id(2))
	if err != nil {
		t.Fatal(err)
	}
	if d.SupplierID.String() != "" || d.LegalBusinessName.String() != "Choux SA" {
		t.Errorf("migrated supplier: %+v; want no supplierId (version 1 could not keep an empty string)", d.Summary)
	}
	// A write stamps above the newest date of the old data (a contact's).
	r := supplier.Record{Detail: d}
	r.Name = supplier.NewText("Éclair au chocolat")
	got, err := s.PutSupplier(ctx, "c1", r)
	if err != nil {
		t.Fatal(err)
	}
	if old := time.Date(2026, 5, 2, 0, 0, 0, 0, time.UTC); !got.ModifiedDate.After(old) {
		t.Errorf("modifiedDate after the migration = %v; want after %v", got.ModifiedDate, old)
	}
	if got, total := list(supplier.ListQuery{Query: "éclair au"}); !cmp.Equal(got, []string{"Éclair au chocolat"}) || total != 1 {
		t.Errorf("query after a write: %q (total %d)", got, total)
	}
	if n := queryInt(t, conn, "SELECT supplier_count FROM communities WHERE id = 'c1'"); n != 3 {
		t.Errorf("supplier_count = %d; want 3", n)
	}
}

func pageSort(field string, desc bool) paging.Request {
	return paging.Request{Size: 20, Sort: paging.Sort{Field: field, Desc: desc}}
}
