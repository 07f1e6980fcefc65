package pgstore

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/procurekit/procure/supplier"
)

// termRow is a row of supplier_terms, as a test compares them.
type termRow struct {
	Term     string
	Supplier uuid.UUID
	LCP      int32
}

// checkTerms checks that the search terms of community are exactly those
// of its suppliers as stored (records.go: terms), with their lcp_prev.
func checkTerms(t *testing.T, s *Store, community string) {
	t.Helper()
	ctx := context.Background()
	rows, err := s.pool.Query(ctx, `SELECT id, name, legal_business_name, supplier_id, keywords
		FROM suppliers WHERE community_id = $1`, community)
	if err != nil {
		t.Fatal(err)
	}
	var want []termRow
	var ts []string
	var lcps []int32
	for rows.Next() {
		var r supplier.Record
		var name, legal, sid pgtype.Text
		if err := rows.Scan(&r.ID, &name, &legal, &sid, &r.Keywords); err != nil {
			t.Fatal(err)
		}
		r.Name, r.LegalBusinessName, r.SupplierID = supplier.NewText(name.String), supplier.NewText(legal.String), supplier.NewText(sid.String)
		ts, lcps = terms(&r, ts, lcps)
		for i, term := range ts {
			want = append(want, termRow{term, r.ID, lcps[i]})
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	rows, err = s.pool.Query(ctx, `SELECT term, supplier_id, lcp_prev FROM supplier_terms WHERE community_id = $1`, community)
	if err != nil {
		t.Fatal(err)
	}
	var got []termRow
	for rows.Next() {
		var r termRow
		if err := rows.Scan(&r.Term, &r.Supplier, &r.LCP); err != nil {
			t.Fatal(err)
		}
		got = append(got, r)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	byKey := func(a, b termRow) int {
		if c := strings.Compare(a.Term, b.Term); c != 0 {
			return c
		}
		return strings.Compare(a.Supplier.String(), b.Supplier.String())
	}
	slices.SortFunc(want, byKey)
	slices.SortFunc(got, byKey)
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("community %s: search terms (-of its suppliers +stored):\n%s", community, d)
	}
}

// A put writes the search terms it adds, and those whose lcp_prev
// changes, and deletes the ones it drops (changedTerms): nothing when the
// terms stay.
func TestChangedTerms(t *testing.T) {
	rec := func(name string, keywords ...string) *supplier.Record {
		r := company(uuid.UUID{1}, name)
		r.Keywords = keywords
		return &r
	}
	for _, tc := range []struct {
		name     string
		old, new *supplier.Record
		want     termChanges
	}{
		{"a new supplier", nil, rec("Kestrel Paper", "stationery"),
			termChanges{added: []string{"kestrel paper", "stationery"}, lcps: []int32{0, 0}}},
		{"the same terms", rec("Kestrel Paper", "stationery"), rec("Kestrel Paper", "stationery"), termChanges{}},
		{"a rename", rec("Kestrel Paper", "stationery"), rec("Osprey Paper", "stationery"),
			termChanges{dropped: []string{"kestrel paper"}, added: []string{"osprey paper"}, lcps: []int32{0}}},
		{"a keyword dropped", rec("Kestrel Paper", "stationery", "tools"), rec("Kestrel Paper", "tools"),
			termChanges{dropped: []string{"stationery"}}},
		// "kiwi" follows "kestrel paper" (lcp_prev 1, "k"); with "kilo"
		// added between them, it follows "kilo" (2, "ki").
		{"a term's lcp_prev changes", rec("Kestrel Paper", "kiwi"), rec("Kestrel Paper", "kiwi", "kilo"),
			termChanges{dropped: []string{"kiwi"}, added: []string{"kilo", "kiwi"}, lcps: []int32{1, 2}}},
		{"everything goes", rec("Kestrel Paper", "stationery"), rec(""),
			termChanges{dropped: []string{"kestrel paper", "stationery"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.want.id = uuid.UUID{1}
			got := changedTerms(tc.old, tc.new)
			if d := cmp.Diff(tc.want, got, cmp.AllowUnexported(termChanges{}), cmpopts.EquateEmpty()); d != "" {
				t.Errorf("changedTerms (-want +got):\n%s", d)
			}
		})
	}
}

// termPlaces returns where each search term row of community is stored
// (its ctid, which an UPDATE or a DELETE and INSERT changes) and its
// lcp_prev, by term and supplier.
func termPlaces(t *testing.T, s *Store, community string) map[[2]string][2]string {
	t.Helper()
	rows, err := s.pool.Query(context.Background(), `SELECT term, supplier_id::text, ctid::text, lcp_prev::text FROM supplier_terms WHERE community_id = $1`, community)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	places := map[[2]string][2]string{}
	for rows.Next() {
		var term, id, ctid, lcp string
		if err := rows.Scan(&term, &id, &ctid, &lcp); err != nil {
			t.Fatal(err)
		}
		places[[2]string{term, id}] = [2]string{ctid, lcp}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return places
}

// checkTermsKept checks that every term row in both before and after
// with the same lcp_prev is where it was: no write rewrote a term it
// kept. It returns how many rows it compared.
func checkTermsKept(t *testing.T, step string, before, after map[[2]string][2]string) int {
	t.Helper()
	n := 0
	for k, b := range before {
		if a, ok := after[k]; ok && a[1] == b[1] {
			n++
			if a[0] != b[0] {
				t.Errorf("%s: term %q of supplier %s moved from %s to %s: it was written again", step, k[0], k[1], b[0], a[0])
			}
		}
	}
	return n
}

// The search terms follow the puts of suppliers, planned from a node's
// cache (a) or read from the database (other; a group's terms in one
// statement for all its puts, queueTermChanges), and of contacts, which
// change no term; a term a write keeps is not written again.
func TestPutTerms(t *testing.T) {
	ctx := context.Background()
	sups := numbered(3)
	a, other := cachedPair(t, sups...)
	checkTerms(t, a, "c1")
	places := termPlaces(t, a, "c1")
	kept := func(step string) int {
		t.Helper()
		now := termPlaces(t, a, "c1")
		n := checkTermsKept(t, step, places, now)
		places = now
		return n
	}
	puts := []struct {
		name     string
		keywords []string
		kept     int // term rows of the two suppliers kept in place
	}{
		{"Kestrel Paper", []string{"stationery", "paper"}, 0},
		{"Kestrel Paper", []string{"stationery", "paper"}, 6}, // the same terms
		{"Osprey Print", []string{"print"}, 0},                // kestrel, stationery and paper go
		{"Osprey Print", []string{"prawn", "print"}, 2},       // print's lcp_prev changes (after prawn), osprey print stays
		{"", nil, 0}, // no term at all
	}
	for i, p := range puts {
		for j, s := range []*Store{a, other} {
			r := company(sups[j].ID, p.name)
			r.Keywords = p.keywords
			r.BusinessNumber = supplier.NewText(fmt.Sprint("BN-", i)) // every put changes something
			if _, err := s.PutSupplier(ctx, "c1", r); err != nil {
				t.Fatal(err)
			}
		}
		checkTerms(t, a, "c1")
		// The third supplier's term ("s2") is never touched.
		if n := kept(fmt.Sprint("put ", i)); n != p.kept+1 {
			t.Errorf("put %d: %d term rows kept in place; want %d", i, n, p.kept+1)
		}
	}
	if _, err := a.PutContact(ctx, "c1", sups[2].ID, supplier.Contact{ID: uuid.New(), Name: "contact"}); err != nil {
		t.Fatal(err)
	}
	checkTerms(t, a, "c1")
	if n := kept("a contact's put"); n != 1 {
		t.Errorf("a contact's put: %d term rows kept in place; want 1 (s2's)", n)
	}
	if err := other.DeleteSupplier(ctx, "c1", sups[0].ID); err != nil {
		t.Fatal(err)
	}
	checkTerms(t, a, "c1")
}
