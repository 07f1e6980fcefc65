package pgstore

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/procurekit/procure/internal/check"
	"github.com/procurekit/procure/paging"
	"github.com/procurekit/procure/supplier"
)

// A database written by an earlier version holds instants RFC 3339 cannot
// write (a stamp of year 10000 committed by "last + 1 microsecond", a
// tinLastVerifiedDate of year 10000, a date of year 0 from a data file, a
// token expiring in year 10000): every read of the community failed.
// Migration 0008 clamps them into the years 1 to 9999 in UTC: every read
// answers again with dates in range, in the same order, with sort buckets
// that match the data; caches reload (a new generation); and a write to
// the community, which has no stamp left, is refused and changes nothing.
func TestMigrate8ClampsDatesOutOfRange(t *testing.T) {
	ctx := context.Background()
	dsn, pool, _ := databaseBefore(t, 8)
	const (
		a = "00000000-0000-4000-8000-00000000000a"
		b = "00000000-0000-4000-8000-00000000000b"
		c = "00000000-0000-4000-8000-00000000000c"
	)
	for _, sql := range []string{
		`INSERT INTO communities (id, name, region, supplier_count, last_modified) VALUES
			('c1', 'One', 'NZ', 3, '10000-01-01 00:00:00.000002+00'), ('c2', 'Two', 'NZ', 0, '2026-05-01 00:00:00+00')`,
		`INSERT INTO suppliers (community_id, id, name, name_key, profile_type, modified_date, created_date, tin_last_verified_date, keywords) VALUES
			('c1', '` + a + `', 'Alpha', 'alpha', 'COMPANY', '10000-01-01 00:00:00.000001+00', '10000-01-01 00:00:00.000001+00', NULL, '{}'),
			('c1', '` + b + `', 'Beta', 'beta', 'COMPANY', '2026-05-01 10:00:00+00', '0001-12-31 23:30:00+00 BC', '10000-01-01 00:30:00+00', '{}'),
			('c1', '` + c + `', 'Gamma', 'gamma', 'COMPANY', '2026-05-02 10:00:00+00', '2026-01-01 00:00:00+00', '2026-02-01 00:00:00+00', '{}')`,
		`INSERT INTO supplier_terms (community_id, term, supplier_id, lcp_prev, name_key, created_date, modified_date) VALUES
			('c1', 'alpha', '` + a + `', 0, 'alpha', '10000-01-01 00:00:00.000001+00', '10000-01-01 00:00:00.000001+00'),
			('c1', 'beta', '` + b + `', 0, 'beta', '0001-12-31 23:30:00+00 BC', '2026-05-01 10:00:00+00'),
			('c1', 'gamma', '` + c + `', 0, 'gamma', '2026-01-01 00:00:00+00', '2026-05-02 10:00:00+00')`,
		`INSERT INTO supplier_tombstones (community_id, deleted_at, id) VALUES ('c1', '10000-01-01 00:00:00.000002+00', '00000000-0000-4000-8000-0000000000dd')`,
		`INSERT INTO tokens (hash, community_id, scopes, expires, name) VALUES
			(decode(repeat('ab', 32), 'hex'), 'c1', '{suppliers:read}', '10000-06-01 00:00:00+00', 'far'),
			(decode(repeat('cd', 32), 'hex'), 'c1', '{suppliers:read}', '2030-01-01 00:00:00+00', 'near')`,
	} {
		if _, err := pool.Exec(ctx, sql); err != nil {
			t.Fatalf("%.60s: %v", sql, err)
		}
	}
	// The buckets as the earlier version kept them: one per order, as
	// for any community this small. (This build's bucket code writes the
	// layout of migration 0009, so it cannot make them.)
	if _, err := pool.Exec(ctx, `INSERT INTO supplier_buckets (community_id, ord, lo, n) VALUES ('c1', 0, '', 3), ('c1', 1, '', 3), ('c1', 2, '', 3)`); err != nil {
		t.Fatal(err)
	}

	s, err := Open(ctx, dsn)
	if err != nil {
		t.Fatalf("Open on a version-7 database: %v", err)
	}
	defer s.Close()

	last, first := supplier.LastStamp, check.MinInstant
	get := func(id string) supplier.Detail {
		t.Helper()
		d, err := s.Supplier(ctx, "c1", uuid.MustParse(id))
		if err != nil {
			t.Fatalf("Supplier %s: %v", id, err)
		}
		return d
	}
	da, db, dc := get(a), get(b), get(c)
	for _, tc := range []struct {
		name      string
		got, want time.Time
	}{
		{"Alpha's modifiedDate", da.ModifiedDate, last},
		{"Alpha's createdDate", da.CreatedDate, last},
		{"Beta's createdDate", db.CreatedDate, first},
		{"Beta's modifiedDate (in range, kept)", db.ModifiedDate, time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)},
		{"Gamma's createdDate (in range, kept)", dc.CreatedDate, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)},
	} {
		if !tc.got.Equal(tc.want) {
			t.Errorf("%s = %v, want %v", tc.name, tc.got, tc.want)
		}
	}
	if db.TinLastVerifiedDate == nil || !db.TinLastVerifiedDate.Equal(last) {
		t.Errorf("Beta's tinLastVerifiedDate = %v, want %v", db.TinLastVerifiedDate, last)
	}
	if da.TinLastVerifiedDate != nil {
		t.Errorf("Alpha's absent tinLastVerifiedDate became %v", da.TinLastVerifiedDate)
	}

	// The lists: the same order as before, every date in range, the
	// terms' dates (modifiedSince on a query) repaired too.
	for _, q := range []supplier.ListQuery{
		{Page: paging.Request{Size: 1, Page: 0, Sort: paging.Sort{Field: "modifiedDate", Desc: true}}},
		{Page: paging.Request{Size: 1, Page: 2, Sort: paging.Sort{Field: "createdDate"}}},
		{ModifiedSince: last, Page: paging.Request{Size: 20}},
		{Query: "al", ModifiedSince: last, Page: paging.Request{Size: 20}},
	} {
		p, err := s.ListSuppliers(ctx, "c1", q)
		if err != nil {
			t.Fatalf("ListSuppliers %+v: %v", q, err)
		}
		if len(p.Content) != 1 || p.Content[0].ID.String() != a {
			t.Errorf("ListSuppliers %+v = %v, want Alpha alone", q, p.Content)
		}
		for _, sm := range p.Content {
			if !check.Instant(sm.ModifiedDate) || !check.Instant(sm.CreatedDate) {
				t.Errorf("ListSuppliers %+v: a date out of range: %+v", q, sm)
			}
		}
	}
	if p, err := s.ListSuppliers(ctx, "c1", supplier.ListQuery{Page: paging.Request{Size: 1, Sort: paging.Sort{Field: "createdDate"}}}); err != nil || len(p.Content) != 1 || p.Content[0].ID.String() != b {
		t.Errorf("the oldest createdDate: %v, %v; want Beta", p.Content, err)
	}

	// The buckets match the repaired data: a rebuild changes nothing.
	bucketRows := func(q interface {
		Query(context.Context, string, ...any) (pgx.Rows, error)
	}) [][]any {
		t.Helper()
		rows, err := q.Query(ctx, `SELECT ord, lo, n FROM supplier_buckets WHERE community_id = 'c1' ORDER BY ord, lo`)
		if err != nil {
			t.Fatal(err)
		}
		out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) ([]any, error) { return r.Values() })
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	kept := bucketRows(pool)
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := rebuildBuckets(ctx, tx, []string{"c1"}); err != nil {
		t.Fatal(err)
	}
	rebuilt := bucketRows(tx)
	_ = tx.Rollback(ctx)
	if len(kept) != len(rebuilt) {
		t.Fatalf("buckets after the migration %v, rebuilt %v", kept, rebuilt)
	}
	for i := range kept {
		for j := range kept[i] {
			if kept[i][j] != rebuilt[i][j] {
				t.Errorf("bucket %d after the migration %v, rebuilt %v", i, kept[i], rebuilt[i])
			}
		}
	}

	// The community's mark, generation and feed; the other community is
	// untouched.
	var mark time.Time
	var gen1, gen2, tombs int64
	if err := pool.QueryRow(ctx, `SELECT (SELECT last_modified FROM communities WHERE id = 'c1'),
		(SELECT supplier_generation FROM communities WHERE id = 'c1'), (SELECT supplier_generation FROM communities WHERE id = 'c2'),
		(SELECT count(*) FROM supplier_tombstones)`).Scan(&mark, &gen1, &gen2, &tombs); err != nil {
		t.Fatal(err)
	}
	if !mark.Equal(last) || gen1 != 1 || gen2 != 0 || tombs != 0 {
		t.Errorf("c1's last_modified %v, generations %d and %d, %d tombstones; want %v, 1, 0, 0", mark, gen1, gen2, tombs, last)
	}

	toks, err := s.Tokens(ctx, "c1")
	if err != nil {
		t.Fatal(err)
	}
	for _, tok := range toks {
		want := map[string]time.Time{"far": last, "near": time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)}[tok.Name]
		if !tok.Expires.Equal(want) {
			t.Errorf("token %q expires %v, want %v", tok.Name, tok.Expires, want)
		}
	}

	// No stamp is left in c1: a write is refused and changes nothing.
	_, err = s.PutSupplier(ctx, "c1", supplier.Record{Detail: supplier.Detail{Summary: supplier.Summary{
		ID: uuid.New(), Name: supplier.NewText("Delta"), ProfileType: supplier.ProfileCompany}}})
	if !errors.Is(err, supplier.ErrStampExhausted) {
		t.Errorf("a write to c1: %v, want ErrStampExhausted", err)
	}
	if p, err := s.ListSuppliers(ctx, "c1", supplier.ListQuery{Page: paging.Request{Size: 20}}); err != nil || p.Page.TotalElements != 3 {
		t.Errorf("after the refused write c1 lists %d suppliers (%v), want 3", p.Page.TotalElements, err)
	}
}
