package pgstore

import (
	"bytes"
	"context"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/procurekit/procure/internal/textkey"
	"github.com/procurekit/procure/paging"
	"github.com/procurekit/procure/supplier"
)

// A database at schema version 8, holding suppliers, contacts and
// addresses with the lower-cased text keys and search terms of earlier
// versions, migrates to 0009: names sort by their collation keys (docs:
// paging.md "Ordering"), the query ignores accents and case (docs:
// filters.md), the buckets of deep pages match the new keys, and every key
// is the application's. Chunks of two rows and buckets of two keys make
// the hook cross chunk boundaries and the pages go through the buckets.
func TestMigrate9CollationKeys(t *testing.T) {
	defer func(n, b int) { keyChunk, bucketSize = n, b }(keyChunk, bucketSize)
	keyChunk, bucketSize = 2, 2
	ctx := context.Background()
	dsn, pool, ms := databaseBefore(t, 9)
	sid := func(n int) string { return uuid.NewSHA1(uuid.NameSpaceURL, []byte{byte(n)}).String() }
	for _, sql := range []string{
		`INSERT INTO communities (id, name, region, supplier_count, last_modified) VALUES
			('c1', 'One', 'NZ', 6, '2026-05-03 00:00:00+00'), ('c2', 'Two', 'NZ', 1, '2026-05-03 00:00:00+00')`,
		`INSERT INTO suppliers (community_id, id, name, name_key, legal_business_name, supplier_id, profile_type, modified_date, created_date, keywords) VALUES
			('c1', '` + sid(1) + `', 'Zenith Scientific', 'zenith scientific', NULL, NULL, 'COMPANY', '2026-05-01 10:00:00+00', '2026-01-01 00:00:00+00', '{}'),
			('c1', '` + sid(2) + `', 'Ōtaki Organics', 'ōtaki organics', 'Ōtaki Organics Ltd', NULL, 'COMPANY', '2026-05-01 11:00:00+00', '2026-01-02 00:00:00+00', '{Kūmara}'),
			('c1', '` + sid(3) + `', 'otaki organics', 'otaki organics', NULL, NULL, 'COMPANY', '2026-05-01 12:00:00+00', '2026-01-03 00:00:00+00', '{}'),
			('c1', '` + sid(4) + `', 'Müller GmbH', 'müller gmbh', NULL, 'MÜ-1', 'COMPANY', '2026-05-01 13:00:00+00', '2026-01-04 00:00:00+00', '{}'),
			('c1', '` + sid(5) + `', NULL, NULL, NULL, 'SUP-5', 'COMPANY', '2026-05-01 14:00:00+00', '2026-01-05 00:00:00+00', '{}'),
			('c1', '` + sid(6) + `', 'Apple', 'apple', NULL, NULL, 'COMPANY', '2026-05-01 15:00:00+00', '2026-01-06 00:00:00+00', '{}'),
			('c2', '` + sid(7) + `', 'Ärzte Haus', 'ärzte haus', NULL, NULL, 'COMPANY', '2026-05-01 16:00:00+00', '2026-01-07 00:00:00+00', '{}')`,
		`INSERT INTO supplier_terms (community_id, term, supplier_id, lcp_prev, name_key, created_date, modified_date)
			SELECT s.community_id, t.term, s.id, 0, s.name_key, s.created_date, s.modified_date
			FROM suppliers s, unnest(array[lower(s.name), lower(s.legal_business_name), lower(s.supplier_id)] || s.keywords) AS t(term)
			WHERE t.term IS NOT NULL`,
		`INSERT INTO supplier_contacts (community_id, supplier_id, id, name_key, doc)
			SELECT 'c1', '` + sid(2) + `', gen_random_uuid(), lower(n), json_build_object('id', gen_random_uuid(), 'name', n,
				'modifiedDate', '2026-05-01T00:00:00Z', 'createdDate', '2026-01-01T00:00:00Z')
			FROM unnest(array['zoë', 'Émile', 'Bob']) AS n`,
		`INSERT INTO remittance_addresses (community_id, supplier_id, id, company_name_key, modified_date, doc)
			SELECT 'c1', '` + sid(2) + `', gen_random_uuid(), lower(n), '2026-05-01 00:00:00+00', json_strip_nulls(json_build_object('id', gen_random_uuid(),
				'code', 'R', 'companyName', n, 'address', json_build_object('line1', '1 Queen Street', 'city', 'Auckland', 'country', 'NZ'),
				'managedBy', 'SUPPLIER', 'modifiedDate', '2026-05-01T00:00:00Z', 'createdDate', '2026-01-01T00:00:00Z'))
			FROM unnest(array['Zed', 'Ärzte Haus', NULL]) AS n`,
		// The buckets as the earlier version kept them: one per order.
		`INSERT INTO supplier_buckets (community_id, ord, lo, n) VALUES ('c1', 0, '', 5), ('c1', 1, '', 6), ('c1', 2, '', 6)`,
	} {
		if _, err := pool.Exec(ctx, sql); err != nil {
			t.Fatalf("%.70s: %v", sql, err)
		}
	}

	s, err := Open(ctx, dsn)
	if err != nil {
		t.Fatalf("Open on a version-8 database: %v", err)
	}
	defer s.Close()
	if v, err := s.SchemaVersion(ctx); err != nil || v != ms[len(ms)-1].Version {
		t.Fatalf("SchemaVersion = %d, %v; want %d", v, err, ms[len(ms)-1].Version)
	}

	// Every key is the application's.
	for _, k := range []struct{ table, text, key string }{
		{"suppliers", "name", "name_key"},
		{"supplier_contacts", "doc->>'name'", "name_key"},
		{"remittance_addresses", "doc->>'companyName'", "company_name_key"},
	} {
		rows, err := pool.Query(ctx, `SELECT coalesce(`+k.text+`, ''), `+k.key+` FROM `+k.table)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for rows.Next() {
			var text string
			var key []byte
			if err := rows.Scan(&text, &key); err != nil {
				t.Fatal(err)
			}
			n++
			if !bytes.Equal(key, textkey.SortKey(text)) {
				t.Errorf("%s: the key of %q is %x, want %x", k.table, text, key, textkey.SortKey(text))
			}
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			t.Errorf("%s: no rows", k.table)
		}
	}

	names := func(q supplier.ListQuery) []string {
		t.Helper()
		var out []string
		for p := 0; ; p++ {
			q.Page.Page, q.Page.Size = p, 2 // pages after the first go through the buckets
			page, err := s.ListSuppliers(ctx, "c1", q)
			if err != nil {
				t.Fatal(err)
			}
			for _, x := range page.Content {
				out = append(out, x.Name.String())
			}
			if p+1 >= page.Page.TotalPages {
				return out
			}
		}
	}
	for _, tt := range []struct {
		name string
		q    supplier.ListQuery
		want []string
	}{
		{"name", supplier.ListQuery{}, []string{"Apple", "Müller GmbH", "otaki organics", "Ōtaki Organics", "Zenith Scientific", ""}},
		{"name desc", supplier.ListQuery{Page: paging.Request{Sort: paging.Sort{Field: "name", Desc: true}}},
			[]string{"Zenith Scientific", "Ōtaki Organics", "otaki organics", "Müller GmbH", "Apple", ""}},
		{"query ota", supplier.ListQuery{Query: "ota"}, []string{"otaki organics", "Ōtaki Organics"}},
		{"query OTA on the legal name", supplier.ListQuery{Query: "ŌTAKI ORGANICS L"}, []string{"Ōtaki Organics"}},
		{"query on a keyword", supplier.ListQuery{Query: "kumara"}, []string{"Ōtaki Organics"}},
		{"query on a supplierId", supplier.ListQuery{Query: "mu-"}, []string{"Müller GmbH"}},
		{"query on the supplierId of a supplier without a name", supplier.ListQuery{Query: "sup"}, []string{""}},
	} {
		if got := names(tt.q); !slices.Equal(got, tt.want) {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}

	contacts, err := s.ListContacts(ctx, "c1", uuid.MustParse(sid(2)), paging.Request{Size: 20})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range contacts.Content {
		got = append(got, c.Name)
	}
	if diff := cmp.Diff([]string{"Bob", "Émile", "zoë"}, got); diff != "" {
		t.Errorf("contacts (-want +got):\n%s", diff)
	}
	for _, desc := range []bool{false, true} {
		as, err := s.ListRemittanceAddresses(ctx, "c1", uuid.MustParse(sid(2)),
			supplier.AddressQuery{Page: paging.Request{Size: 20, Sort: paging.Sort{Field: "companyName", Desc: desc}}})
		if err != nil {
			t.Fatal(err)
		}
		got = got[:0]
		for _, a := range as.Content {
			got = append(got, a.CompanyName.String())
		}
		want := []string{"Ärzte Haus", "Zed", ""}
		if desc {
			want = []string{"Zed", "Ärzte Haus", ""}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("addresses, desc %v (-want +got):\n%s", desc, diff)
		}
	}

	checkBuckets(t, s, "c1")
	checkBuckets(t, s, "c2")
	if n := count(t, s, `SELECT count(*) FROM supplier_buckets WHERE community_id = 'c1' AND ord = 0`); n < 2 {
		t.Errorf("c1 has %d name buckets; want the five names cut in buckets of two", n)
	}
}

func count(t *testing.T, s *Store, sql string) int64 {
	t.Helper()
	var n int64
	if err := s.pool.QueryRow(context.Background(), sql).Scan(&n); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return n
}

// TestMigrate9Duration measures migration 0009 on a version-8 database of
// PGSTORE_MIGRATE9_SUPPLIERS generated suppliers (each with four search
// terms, a contact and an address, ASCII names as most are), and logs how
// long Open took to apply it. It is skipped without the variable.
//
//	PGSTORE_MIGRATE9_SUPPLIERS=100000 go test -run TestMigrate9Duration -v ./pgstore
func TestMigrate9Duration(t *testing.T) {
	timeMigration(t, 9, "PGSTORE_MIGRATE9_SUPPLIERS", []string{
		`INSERT INTO communities (id, name, region, supplier_count) VALUES ('m', 'M', 'NZ', $1)`,
		`INSERT INTO suppliers (community_id, id, name, name_key, legal_business_name, supplier_id, profile_type, modified_date, created_date, keywords)
			SELECT 'm', gen_random_uuid(), 'Supplier ' || md5(i::text), 'supplier ' || md5(i::text), 'Legal ' || i, 'SUP-' || i, 'COMPANY',
				now(), now(), array['keyword' || (i % 100)] FROM generate_series(1, $1) AS i`,
		`INSERT INTO supplier_terms (community_id, term, supplier_id, lcp_prev, name_key, created_date, modified_date)
			SELECT s.community_id, t.term, s.id, 0, s.name_key, s.created_date, s.modified_date
			FROM suppliers s, unnest(array[lower(s.name), lower(s.legal_business_name), lower(s.supplier_id)] || s.keywords) AS t(term)`,
		`INSERT INTO supplier_contacts (community_id, supplier_id, id, name_key, doc)
			SELECT 'm', s.id, gen_random_uuid(), 'contact', json_build_object('name', 'Contact')
			FROM suppliers s`,
		`INSERT INTO remittance_addresses (community_id, supplier_id, id, company_name_key, modified_date, doc)
			SELECT 'm', s.id, gen_random_uuid(), s.name_key, now(), json_build_object('companyName', s.name)
			FROM suppliers s`,
	}, "supplier_terms")
}
