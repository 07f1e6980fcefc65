// Package suppliertest is the conformance suite of supplier.Store: every
// backend runs it, so that behaviour differences between stores show up as
// test failures.
//
// Run builds its own fixture (Fixture): two communities whose suppliers
// exercise each rule of docs: paging.md and "Filters" - names that
// differ only in case, empty names, Unicode names, equal names and equal
// dates (the id tie-break), keywords, supplierIds, fractional seconds and
// dates in other zones. Results are compared, as full id sequences, with a
// small reference implementation (a filter and sort.SliceStable with the
// documented comparator), and the rules are also checked directly on every
// pair of neighbouring items, so that a mistake in the reference cannot
// hide one in a store.
//
// A backend's test is a few lines:
//
//	func TestSupplierStore(t *testing.T) {
//		suppliertest.Run(t, func(t *testing.T, f *datafile.File) supplier.Store {
//			s, err := memstore.LoadReader(f.Reader())
//			if err != nil {
//				t.Fatal(err)
//			}
//			return s
//		})
//	}
//
// Besides the contract on supplier.Store, the suite pins these decisions:
// a paging.Request breaking the rules of paging.Parse (page < 0, size
// outside 1..100, a sort field the list does not allow) is an error
// matching procure.ErrInvalid (paging.Request.Check); an empty sort field
// means the list's default order; a community the store does not know has
// no suppliers (an empty page, not an error); returned slices may be
// appended to without changing the store.
package suppliertest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/google/uuid"

	"github.com/procurekit/procure"
	"github.com/procurekit/procure/datafile"
	"github.com/procurekit/procure/paging"
	"github.com/procurekit/procure/supplier"
)

// Run checks that the store open returns for the suite's data file meets
// the supplier.Store contract. open is called once; the store is only read.
func Run(t *testing.T, open func(t *testing.T, f *datafile.File) supplier.Store) {
	st := open(t, Fixture(t))
	if st == nil {
		t.Fatal("suppliertest: open returned a nil store")
	}
	h := newHarness(st, Fixture(t))
	t.Run("Paging", h.testPaging)
	t.Run("Sort", h.testSort)
	t.Run("PageByPage", h.testPageByPage)
	t.Run("Query", h.testQuery)
	t.Run("ModifiedSince", h.testModifiedSince)
	t.Run("Combined", h.testCombined)
	t.Run("Tenancy", h.testTenancy)
	t.Run("Detail", h.testDetail)
	t.Run("Contacts", h.testContacts)
	t.Run("RemittanceAddresses", h.testAddresses)
	t.Run("InvalidRequests", h.testInvalid)
	t.Run("ResultsAreCopies", h.testAppend)
	t.Run("Concurrent", h.testConcurrent)
}

type harness struct {
	st    supplier.Store
	recs  map[string][]supplier.Record // by community
	byKey map[string]*supplier.Record
	keyOf map[uuid.UUID]string

	appendBuf []supplier.Summary // reused by checkAppend
}

func newHarness(st supplier.Store, f *datafile.File) *harness {
	h := &harness{st: st, recs: map[string][]supplier.Record{}, byKey: map[string]*supplier.Record{}, keyOf: map[uuid.UUID]string{}}
	keys := map[uuid.UUID]string{}
	for _, specs := range [][]spec{c1Specs(), c2Specs()} {
		for _, s := range specs {
			keys[ID(s.key)] = s.key
		}
	}
	for _, c := range f.Communities {
		h.recs[c.ID] = c.Suppliers
		for i := range c.Suppliers {
			r := &h.recs[c.ID][i]
			h.keyOf[r.ID] = keys[r.ID]
			h.byKey[keys[r.ID]] = r
		}
	}
	return h
}

var ctx = context.Background()

// Sorts lists every sort of the supplier list.
var sorts = []paging.Sort{
	{Field: "name"}, {Field: "name", Desc: true},
	{Field: "createdDate"}, {Field: "createdDate", Desc: true},
	{Field: "modifiedDate"}, {Field: "modifiedDate", Desc: true},
}

// labels names ids by their fixture keys, for readable diffs.
func (h *harness) labels(ids []uuid.UUID) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		if k, ok := h.keyOf[id]; ok {
			out[i] = k
		} else {
			out[i] = id.String()
		}
	}
	return out
}

func (h *harness) ids(keys ...string) []uuid.UUID {
	out := make([]uuid.UUID, len(keys))
	for i, k := range keys {
		out[i] = ID(k)
	}
	return out
}

func summaryIDs(items []supplier.Summary) []uuid.UUID {
	ids := make([]uuid.UUID, len(items))
	for i, s := range items {
		ids[i] = s.ID
	}
	return ids
}

func (h *harness) list(tb testing.TB, community string, q supplier.ListQuery) paging.Page[supplier.Summary] {
	tb.Helper()
	p, err := h.st.ListSuppliers(ctx, community, q)
	if err != nil {
		tb.Fatalf("ListSuppliers(%s, %+v): %v", community, q, err)
	}
	if p.Content == nil {
		tb.Errorf("ListSuppliers(%s, %+v): Content is nil; want a non-nil slice (encodes as [])", community, q)
	}
	h.checkAppend(tb, community, q, p)
	return p
}

// checkAppend checks that a store with the optional supplier.Appender
// capability answers AppendSuppliers exactly as ListSuppliers, into a
// reused buffer that still holds the previous answer's items (so that a
// page which leaves stale items behind, or reads from the buffer, shows),
// and that the items go into the buffer when it has room.
func (h *harness) checkAppend(tb testing.TB, community string, q supplier.ListQuery, want paging.Page[supplier.Summary]) {
	tb.Helper()
	app, ok := h.st.(supplier.Appender)
	if !ok {
		return
	}
	if cap(h.appendBuf) == 0 {
		h.appendBuf = make([]supplier.Summary, 0, paging.MaxSize)
	}
	got, err := app.AppendSuppliers(ctx, community, q, h.appendBuf)
	if err != nil {
		tb.Fatalf("AppendSuppliers(%s, %+v): %v", community, q, err)
	}
	if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
		tb.Errorf("AppendSuppliers(%s, %s) differs from ListSuppliers (-list +append):\n%s", community, describe(q), diff)
	}
	if n := len(got.Content); n > 0 && &got.Content[0] != &h.appendBuf[:1][0] {
		tb.Errorf("AppendSuppliers(%s, %s): the items were not written into the buffer, which had room for %d", community, describe(q), cap(h.appendBuf))
	}
	// Leave this answer in the buffer for the next call to overwrite.
	h.appendBuf = h.appendBuf[:len(got.Content)]
}

// errView is what checkView's view returns, for ViewSupplier to return.
var errView = errors.New("suppliertest: the view's own error")

// checkView checks that a store with the optional supplier.Viewer
// capability lends view the supplier as Supplier answers it, and returns
// view's error. The suppliers are viewed one after another, with and
// without each part, so a lent detail that kept a part of the one lent
// before it shows.
func (h *harness) checkView(tb testing.TB, community string, want *supplier.Detail) {
	tb.Helper()
	v, ok := h.st.(supplier.Viewer)
	if !ok {
		return
	}
	calls := 0
	err := v.ViewSupplier(ctx, community, want.ID, func(got *supplier.Detail) error {
		calls++
		if diff := cmp.Diff(*want, *got); diff != "" {
			tb.Errorf("ViewSupplier differs from the stored supplier (-want +lent):\n%s", diff)
		}
		return errView
	})
	if calls != 1 || !errors.Is(err, errView) {
		tb.Errorf("ViewSupplier: view called %d times, err = %v; want once, the view's error", calls, err)
	}
}

// checkMeta checks the page object (docs: paging.md "Page object", docs: paging.md:
// size echoes the size used, totalPages = ceil(total/size), 0 when empty).
func checkMeta(tb testing.TB, what string, got paging.Metadata, r paging.Request, total int) {
	tb.Helper()
	pages := 0
	if total > 0 {
		pages = (total + r.Size - 1) / r.Size
	}
	want := paging.Metadata{Size: r.Size, Number: r.Page, TotalElements: total, TotalPages: pages}
	if got != want {
		tb.Errorf("%s: page = %+v, want %+v", what, got, want)
	}
}

// checkPage lists q and compares ids and metadata with the reference.
func (h *harness) checkPage(tb testing.TB, community string, q supplier.ListQuery) paging.Page[supplier.Summary] {
	tb.Helper()
	want := refSuppliers(h.recs[community], q)
	got := h.list(tb, community, q)
	if diff := cmp.Diff(h.labels(window(want, q.Page)), h.labels(summaryIDs(got.Content))); diff != "" {
		tb.Errorf("ListSuppliers(%s, %s): ids (-want +got):\n%s", community, describe(q), diff)
	}
	checkMeta(tb, "ListSuppliers("+describe(q)+")", got.Page, q.Page, len(want))
	return got
}

func describe(q supplier.ListQuery) string {
	var b strings.Builder
	fmt.Fprintf(&b, "query=%q", q.Query)
	if !q.ModifiedSince.IsZero() {
		fmt.Fprintf(&b, " modifiedSince=%s", q.ModifiedSince.Format(time.RFC3339Nano))
	}
	fmt.Fprintf(&b, " page=%d size=%d sort=%s", q.Page.Page, q.Page.Size, q.Page.Sort)
	return b.String()
}

// checkOrder checks docs: paging.md on every pair of neighbours,
// independently of the reference: names by the collation rule
// (collationCompare), empty names last in both directions, equal keys in
// id order.
func checkOrder(tb testing.TB, items []supplier.Summary, s paging.Sort) {
	tb.Helper()
	for i := 1; i < len(items); i++ {
		a, b := &items[i-1], &items[i]
		var c int // comparison of the keys in the requested direction
		switch s.Field {
		case "name":
			ka, kb := a.Name.String(), b.Name.String()
			switch {
			case ka == "" && kb != "":
				tb.Errorf("sort %s: empty name %s before %q: empty values must come last in both directions", s, a.ID, b.Name)
				continue
			case ka == "" || kb == "":
				c = 0
				if ka != kb {
					c = -1
				}
			default:
				c = collationCompare(ka, kb)
				if s.Desc {
					c = -c
				}
			}
		case "createdDate":
			c = a.CreatedDate.Compare(b.CreatedDate)
		case "modifiedDate":
			c = a.ModifiedDate.Compare(b.ModifiedDate)
		}
		if s.Field != "name" && s.Desc {
			c = -c
		}
		switch {
		case c > 0:
			tb.Errorf("sort %s: item %d (%s) should come after item %d (%s)", s, i-1, a.ID, i, b.ID)
		case c == 0 && compareID(a.ID, b.ID) >= 0:
			tb.Errorf("sort %s: equal keys at items %d and %d are not in ascending id order (%s, %s)", s, i-1, i, a.ID, b.ID)
		}
	}
}

func (h *harness) testPaging(t *testing.T) {
	all := refSuppliers(h.recs[C1], supplier.ListQuery{Page: paging.Request{Sort: supplier.ListPaging.DefaultSort}})
	n := len(all)
	for _, size := range []int{1, 2, 7, 20, 100} {
		t.Run(fmt.Sprintf("size=%d", size), func(t *testing.T) {
			pages := (n + size - 1) / size
			for p := 0; p <= pages+1; p++ {
				q := supplier.ListQuery{Page: paging.Request{Page: p, Size: size, Sort: paging.Sort{Field: "name"}}}
				got := h.checkPage(t, C1, q)
				wantLen := max(0, min(size, n-p*size))
				if len(got.Content) != wantLen {
					t.Errorf("page %d: %d items, want %d", p, len(got.Content), wantLen)
				}
			}
		})
	}
	t.Run("last page is partial", func(t *testing.T) {
		// 7 does not divide the fixture's size: the last page holds the rest.
		if n%7 == 0 {
			t.Fatalf("fixture size %d is a multiple of 7; the case needs a partial page", n)
		}
		r := paging.Request{Page: n / 7, Size: 7, Sort: paging.Sort{Field: "name"}}
		got := h.list(t, C1, supplier.ListQuery{Page: r})
		if len(got.Content) != n%7 {
			t.Errorf("last page: %d items, want %d", len(got.Content), n%7)
		}
		checkMeta(t, "last page", got.Page, r, n)
	})
	t.Run("past the end", func(t *testing.T) {
		// docs: paging.md: a page past the end is empty with the
		// true totals.
		for _, p := range []int{(n + 19) / 20, 1000, math.MaxInt / 200} {
			r := paging.Request{Page: p, Size: 20, Sort: paging.Sort{Field: "name"}}
			got := h.list(t, C1, supplier.ListQuery{Page: r})
			if len(got.Content) != 0 {
				t.Errorf("page %d: %d items, want none", p, len(got.Content))
			}
			checkMeta(t, fmt.Sprintf("page %d", p), got.Page, r, n)
		}
	})
	t.Run("empty sort means name ascending", func(t *testing.T) {
		got := h.list(t, C1, supplier.ListQuery{Page: paging.Request{Size: 100}})
		if diff := cmp.Diff(h.labels(all), h.labels(summaryIDs(got.Content))); diff != "" {
			t.Errorf("ids (-want +got):\n%s", diff)
		}
	})
}

func (h *harness) testSort(t *testing.T) {
	recs := h.recs[C1]
	for _, s := range sorts {
		t.Run(s.String(), func(t *testing.T) {
			q := supplier.ListQuery{Page: paging.Request{Size: 100, Sort: s}}
			got := h.checkPage(t, C1, q)
			checkOrder(t, got.Content, s)
			if len(got.Content) != len(recs) {
				t.Fatalf("%d suppliers, want all %d", len(got.Content), len(recs))
			}
			// The items are the suppliers' summaries in full.
			want := make([]supplier.Summary, 0, len(recs))
			for _, id := range refSuppliers(recs, q) {
				want = append(want, h.byKey[h.keyOf[id]].Summary)
			}
			if diff := cmp.Diff(want, got.Content); diff != "" {
				t.Errorf("summaries (-want +got):\n%s", diff)
			}
			ids := summaryIDs(got.Content)
			sortedIDs := func(keys ...string) []uuid.UUID {
				out := h.ids(keys...)
				slices.SortFunc(out, compareID)
				return out
			}
			run := func(what string, group []uuid.UUID) {
				t.Helper()
				at := slices.Index(ids, group[0])
				if at < 0 || at+len(group) > len(ids) || !slices.Equal(ids[at:at+len(group)], group) {
					t.Errorf("%s: want %v together in ascending id order, got order %v", what, h.labels(group), h.labels(ids))
				}
			}
			switch s.Field {
			case "name":
				// Names equal but for case or accents come together,
				// lower case before upper and the plain letter before
				// the accented one (reversed descending); equal names
				// tie on id in both directions; empty names come last
				// in both directions.
				inOrder := func(what string, keys ...string) {
					t.Helper()
					group := h.ids(keys...)
					if s.Desc {
						slices.Reverse(group)
					}
					at := slices.Index(ids, group[0])
					if at < 0 || at+len(group) > len(ids) || !slices.Equal(ids[at:at+len(group)], group) {
						t.Errorf("%s: want %v together in that order, got order %v", what, h.labels(group), h.labels(ids))
					}
				}
				inOrder("names equal but for case", "alpha-2", "alpha-1", "alpha-3")
				inOrder("names equal but for accents and case", "otaki-lower", "otaki-plain", "otaki")
				run("equal names", sortedIDs("equal-a", "equal-b"))
				before := func(a, b string) {
					t.Helper()
					i, j := slices.Index(ids, ID(a)), slices.Index(ids, ID(b))
					if (i < j) == s.Desc {
						t.Errorf("%q must sort before %q ascending and after it descending", h.byKey[a].Name, h.byKey[b].Name)
					}
				}
				before("one-micro-later", "otaki-lower") // Ō among the O's
				before("otaki", "zenith")
				before("zenith", "zeta")
				before("mueller", "muller") // e before l; the umlaut weighs less than a letter
				before("eclair", "equal-a")
				noName := sortedIDs("noname-1", "noname-2", "noname-3")
				if !slices.Equal(ids[len(ids)-3:], noName) {
					t.Errorf("the suppliers without a name must be last, in id order: got %v", h.labels(ids[len(ids)-3:]))
				}
				first, lastNamed := "brackets", "tokyo" // "(" < "3" < letters < UTF-8 multi-byte
				if s.Desc {
					first, lastNamed = "tokyo", "brackets"
				}
				if ids[0] != ID(first) || ids[len(ids)-4] != ID(lastNamed) {
					t.Errorf("first %s and last named %s, want %s and %s", h.keyOf[ids[0]], h.keyOf[ids[len(ids)-4]], first, lastNamed)
				}
				a, b := slices.Index(ids, ID("alpha-short")), slices.Index(ids, ID("alpha-1"))
				if (a < b) == s.Desc {
					t.Errorf("%q must sort before %q ascending and after it descending", "alpha", "Alpha Supplies")
				}
			case "modifiedDate":
				run("equal modifiedDate", sortedIDs("timber-yard", "equal-a", "equal-b", "noname-2"))
			case "createdDate":
				run("equal createdDate", sortedIDs("alpha-1", "alpha-2"))
			}
		})
	}
}

func (h *harness) testPageByPage(t *testing.T) {
	for _, query := range []string{"", "timber", "sup", "h", "ota", "MÜ"} {
		for _, s := range sorts {
			t.Run(fmt.Sprintf("query=%q/%s", query, s), func(t *testing.T) {
				want := refSuppliers(h.recs[C1], supplier.ListQuery{Query: query, Page: paging.Request{Sort: s}})
				seen := map[uuid.UUID]bool{}
				var got []uuid.UUID
				// The spec's paging rule: increase page by 1, stop when
				// page.number + 1 >= page.totalPages.
				for p := 0; ; p++ {
					page := h.list(t, C1, supplier.ListQuery{Query: query, Page: paging.Request{Page: p, Size: 7, Sort: s}})
					for _, it := range page.Content {
						if seen[it.ID] {
							t.Errorf("page %d: %s met twice", p, h.keyOf[it.ID])
						}
						seen[it.ID] = true
						got = append(got, it.ID)
					}
					if page.Page.Number+1 >= page.Page.TotalPages || p > len(want) {
						break
					}
				}
				if diff := cmp.Diff(h.labels(want), h.labels(got)); diff != "" {
					t.Errorf("all pages (-want +got):\n%s", diff)
				}
			})
		}
	}
}

func (h *harness) testQuery(t *testing.T) {
	tests := []struct {
		name  string
		query string
		want  []string // the matching suppliers, in any order; nil: only the reference
	}{
		{"name prefix", "alpha", []string{"alpha-1", "alpha-2", "alpha-3", "alpha-short"}},
		{"name prefix in upper case", "ALPHA SUP", []string{"alpha-1", "alpha-2", "alpha-3"}},
		{"one supplier matching on four fields counts once", "beta", []string{"beta", "beta-id"}},
		{"legal business name only", "gamma", []string{"gamma-legal"}},
		{"keyword only", "pipes", []string{"keyword"}},
		{"keyword in mixed case", "PiPeS", []string{"keyword"}},
		{"keyword prefix", "timber", []string{"beta", "beta-id", "timber-yard"}},
		{"supplierId prefix", "acm-0", []string{"keyword"}},
		{"supplierId of a supplier without a name", "sup-003", []string{"noname-1", "noname-2"}},
		{"legal name of a supplier without a name", "nameless", []string{"noname-1"}},
		{"unicode lower case", "ü", []string{"uber-1", "uber-2"}},
		{"unicode upper case", "ÜBER F", []string{"uber-1"}},
		{"accents ignored in the value", "ota", []string{"otaki", "otaki-plain", "otaki-lower"}},
		{"accents and case ignored", "OTA", []string{"otaki", "otaki-plain", "otaki-lower"}},
		{"accents ignored in the query", "ŌTAKI O", []string{"otaki", "otaki-plain", "otaki-lower"}},
		{"accented keyword", "kumara", []string{"otaki"}},
		{"mu finds Müller and Mueller", "mu", []string{"muller", "mueller"}},
		{"MÜ finds Müller and Mueller", "MÜ", []string{"muller", "mueller"}},
		{"no transliteration: mue is not mü", "mue", []string{"mueller"}},
		{"accented legal business name", "muller & s", []string{"muller"}},
		{"accented supplierId", "mu-1", []string{"muller"}},
		{"ß folds to ss in the value", "strassen", []string{"strasse", "strasse-legal"}},
		{"ß folds to ss in the query", "STRAß", []string{"strasse", "strasse-legal"}},
		{"accented supplierId, upper case query", "ECO-4", []string{"eco"}},
		{"accented keyword, cedilla", "celi", []string{"eco"}},
		{"only combining marks filter nothing", "\u0301", nil},
		{"CJK", "東京", []string{"tokyo"}},
		{"digits", "3m", []string{"digits"}},
		{"starts-with, not contains", "supplies", []string{}},
		{"longer than any value", "alpha supplies limited and then some", []string{}},
		{"no match", "zzz-none", []string{}},
		{"whole value", "beta traders pty ltd", []string{"beta"}},
		{"single letter", "s", nil},
		{"single letter in upper case", "H", nil},
		{"generated supplierIds", "gen-0", nil},
		{"space inside", "kiwi e", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.want != nil {
				got := h.list(t, C1, supplier.ListQuery{Query: tt.query, Page: paging.Request{Size: 100, Sort: paging.Sort{Field: "name"}}})
				gotKeys := h.labels(summaryIDs(got.Content))
				slices.Sort(gotKeys)
				want := slices.Clone(tt.want)
				slices.Sort(want)
				if diff := cmp.Diff(want, gotKeys); diff != "" {
					t.Errorf("query %q: suppliers (-want +got):\n%s", tt.query, diff)
				}
				if got.Page.TotalElements != len(tt.want) {
					t.Errorf("query %q: totalElements %d, want %d", tt.query, got.Page.TotalElements, len(tt.want))
				}
			}
			for _, s := range sorts {
				for _, r := range []paging.Request{{Size: 100, Sort: s}, {Page: 1, Size: 2, Sort: s}} {
					got := h.checkPage(t, C1, supplier.ListQuery{Query: tt.query, Page: r})
					checkOrder(t, got.Content, s)
				}
			}
		})
	}
}

func (h *harness) testModifiedSince(t *testing.T) {
	tests := []struct {
		name    string
		since   time.Time
		in, out []string // suppliers that must be in, and must not be in, the result
	}{
		{"before everything", base.Add(-1000 * time.Hour), []string{"alpha-1", "noname-3", "nano"}, nil},
		{"equal instant is included", Target, []string{"timber-yard", "equal-a", "equal-b", "noname-2", "one-micro-later", "nano"}, []string{"one-micro-earlier", "alpha-1"}},
		{"one microsecond later excludes it", Target.Add(time.Microsecond), []string{"one-micro-later", "nano"}, []string{"timber-yard", "equal-a", "equal-b", "noname-2", "one-micro-earlier"}},
		{"one microsecond earlier", Target.Add(-time.Microsecond), []string{"one-micro-earlier", "timber-yard"}, nil},
		{"same instant in another zone", Target.In(nz), []string{"timber-yard", "equal-a"}, []string{"one-micro-earlier"}},
		{"stored microseconds of a nanosecond date", nanoStored, []string{"nano"}, nil},
		{"a nanosecond after the stored value", nanoStored.Add(time.Nanosecond), nil, []string{"nano"}},
		{"after everything", base.Add(100000 * time.Hour), nil, []string{"nano", "zoned"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := h.list(t, C1, supplier.ListQuery{ModifiedSince: tt.since, Page: paging.Request{Size: 100, Sort: paging.Sort{Field: "name"}}})
			ids := summaryIDs(got.Content)
			for _, k := range tt.in {
				if !slices.Contains(ids, ID(k)) {
					t.Errorf("modifiedSince %s: %s (modified %s) missing", tt.since.Format(time.RFC3339Nano), k, h.byKey[k].ModifiedDate.Format(time.RFC3339Nano))
				}
			}
			for _, k := range tt.out {
				if slices.Contains(ids, ID(k)) {
					t.Errorf("modifiedSince %s: %s (modified %s) must not be listed", tt.since.Format(time.RFC3339Nano), k, h.byKey[k].ModifiedDate.Format(time.RFC3339Nano))
				}
			}
			for _, it := range got.Content {
				if it.ModifiedDate.Before(tt.since) {
					t.Errorf("modifiedSince %s: %s modified %s, before it", tt.since.Format(time.RFC3339Nano), h.keyOf[it.ID], it.ModifiedDate.Format(time.RFC3339Nano))
				}
			}
			for _, s := range sorts {
				for _, r := range []paging.Request{{Size: 100, Sort: s}, {Page: 2, Size: 3, Sort: s}} {
					got := h.checkPage(t, C1, supplier.ListQuery{ModifiedSince: tt.since, Page: r})
					checkOrder(t, got.Content, s)
				}
			}
		})
	}
}

func (h *harness) testCombined(t *testing.T) {
	for _, query := range []string{"alpha", "timber", "s", "gen", "e", "ü", "k"} {
		for _, since := range []time.Time{base.Add(3 * time.Hour), base.Add(8 * time.Hour), Target, Target.Add(time.Microsecond)} {
			for _, s := range sorts {
				t.Run(fmt.Sprintf("query=%q/since=%s/%s", query, since.Format(time.RFC3339Nano), s), func(t *testing.T) {
					q := supplier.ListQuery{Query: query, ModifiedSince: since, Page: paging.Request{Size: 3, Sort: s}}
					total := len(refSuppliers(h.recs[C1], q))
					for p := 0; p <= total/3+1; p++ {
						q.Page.Page = p
						got := h.checkPage(t, C1, q)
						checkOrder(t, got.Content, s)
					}
				})
			}
		}
	}
}

func (h *harness) testTenancy(t *testing.T) {
	t.Run("lists hold only the community's suppliers", func(t *testing.T) {
		for _, com := range []string{C1, C2} {
			own := map[uuid.UUID]bool{}
			for _, r := range h.recs[com] {
				own[r.ID] = true
			}
			for _, query := range []string{"", "alpha", "sup-0001", "beta", "timber"} {
				got := h.checkPage(t, com, supplier.ListQuery{Query: query, Page: paging.Request{Size: 100, Sort: paging.Sort{Field: "name"}}})
				for _, it := range got.Content {
					if !own[it.ID] {
						t.Errorf("community %s, query %q: listed %s of another community", com, query, h.keyOf[it.ID])
					}
				}
			}
		}
	})
	notFound := []struct {
		name      string
		community string
		id        uuid.UUID
	}{
		{"supplier of another community", C2, ID("alpha-1")},
		{"supplier of the first community seen from the second", C1, ID("c2-alpha")},
		{"unknown id", C1, ID("no-such-supplier")},
		{"nil id", C1, uuid.Nil},
		{"unknown community", "no-such-community", ID("alpha-1")},
	}
	for _, tt := range notFound {
		t.Run(tt.name, func(t *testing.T) {
			// docs: tenancy.md: another community's supplier is
			// 404, never 403, so existence does not leak.
			if _, err := h.st.Supplier(ctx, tt.community, tt.id); !errors.Is(err, supplier.ErrNotFound) {
				t.Errorf("Supplier: err = %v, want one matching supplier.ErrNotFound", err)
			}
			if v, ok := h.st.(supplier.Viewer); ok {
				err := v.ViewSupplier(ctx, tt.community, tt.id, func(d *supplier.Detail) error {
					t.Errorf("ViewSupplier called view with %s", d.ID)
					return nil
				})
				if !errors.Is(err, supplier.ErrNotFound) {
					t.Errorf("ViewSupplier: err = %v, want one matching supplier.ErrNotFound", err)
				}
			}
			r := paging.Request{Size: 20}
			if _, err := h.st.ListContacts(ctx, tt.community, tt.id, r); !errors.Is(err, supplier.ErrNotFound) {
				t.Errorf("ListContacts: err = %v, want one matching supplier.ErrNotFound", err)
			}
			if _, err := h.st.ListRemittanceAddresses(ctx, tt.community, tt.id, supplier.AddressQuery{Page: r}); !errors.Is(err, supplier.ErrNotFound) {
				t.Errorf("ListRemittanceAddresses: err = %v, want one matching supplier.ErrNotFound", err)
			}
		})
	}
	t.Run("unknown community has no suppliers", func(t *testing.T) {
		r := paging.Request{Size: 20, Sort: paging.Sort{Field: "name"}}
		got := h.list(t, "no-such-community", supplier.ListQuery{Page: r})
		if len(got.Content) != 0 {
			t.Errorf("%d suppliers, want none", len(got.Content))
		}
		checkMeta(t, "unknown community", got.Page, r, 0)
	})
}

// dates returns every date-time of a detail, named.
func dates(d *supplier.Detail) map[string]time.Time {
	m := map[string]time.Time{"modifiedDate": d.ModifiedDate, "createdDate": d.CreatedDate}
	if d.TinLastVerifiedDate != nil {
		m["tinLastVerifiedDate"] = *d.TinLastVerifiedDate
	}
	if c := d.DefaultContact; c != nil {
		m["defaultContact.modifiedDate"], m["defaultContact.createdDate"] = c.ModifiedDate, c.CreatedDate
	}
	if a := d.DefaultRemittanceAddress; a != nil {
		m["defaultRemittanceAddress.modifiedDate"], m["defaultRemittanceAddress.createdDate"] = a.ModifiedDate, a.CreatedDate
	}
	return m
}

// checkUTC checks docs: filters.md: date-times in UTC, at most
// microsecond precision.
func checkUTC(tb testing.TB, what string, m map[string]time.Time) {
	tb.Helper()
	for name, v := range m {
		if v.Location() != time.UTC || v.Nanosecond()%1000 != 0 {
			tb.Errorf("%s.%s = %s: want UTC with at most microseconds", what, name, v.Format(time.RFC3339Nano))
		}
	}
}

func (h *harness) testDetail(t *testing.T) {
	for _, com := range []string{C1, C2} {
		for i := range h.recs[com] {
			want := &h.recs[com][i]
			t.Run(h.keyOf[want.ID], func(t *testing.T) {
				got, err := h.st.Supplier(ctx, com, want.ID)
				if err != nil {
					t.Fatalf("Supplier: %v", err)
				}
				if diff := cmp.Diff(want.Detail, got); diff != "" {
					t.Errorf("Supplier (-want +got):\n%s", diff)
				}
				checkUTC(t, h.keyOf[want.ID], dates(&got))
				h.checkView(t, com, &want.Detail)
			})
		}
	}
}

func contactIDs(cs []supplier.Contact) []uuid.UUID {
	ids := make([]uuid.UUID, len(cs))
	for i, c := range cs {
		ids[i] = c.ID
	}
	return ids
}

func addressIDs(as []supplier.RemittanceAddress) []uuid.UUID {
	ids := make([]uuid.UUID, len(as))
	for i, a := range as {
		ids[i] = a.ID
	}
	return ids
}

func (h *harness) testContacts(t *testing.T) {
	t.Run("every supplier", func(t *testing.T) {
		for _, com := range []string{C1, C2} {
			for i := range h.recs[com] {
				rec := &h.recs[com][i]
				r := paging.Request{Size: 100}
				got, err := h.st.ListContacts(ctx, com, rec.ID, r)
				if err != nil {
					t.Fatalf("ListContacts(%s): %v", h.keyOf[rec.ID], err)
				}
				want := refContacts(rec)
				if diff := cmp.Diff(want, contactIDs(got.Content)); diff != "" {
					t.Errorf("ListContacts(%s): ids (-want +got):\n%s", h.keyOf[rec.ID], diff)
				}
				checkMeta(t, "ListContacts("+h.keyOf[rec.ID]+")", got.Page, r, len(want))
				if got.Content == nil {
					t.Errorf("ListContacts(%s): Content is nil; want a non-nil slice", h.keyOf[rec.ID])
				}
				// The contacts in full.
				byID := map[uuid.UUID]supplier.Contact{}
				for _, c := range rec.Contacts {
					byID[c.ID] = c
				}
				for _, c := range got.Content {
					if diff := cmp.Diff(byID[c.ID], c); diff != "" {
						t.Errorf("contact %s (-want +got):\n%s", c.ID, diff)
					}
				}
			}
		}
	})
	t.Run("name order", func(t *testing.T) {
		rec := h.byKey["alpha-1"]
		got, err := h.st.ListContacts(ctx, C1, rec.ID, paging.Request{Size: 100})
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, c := range got.Content {
			names = append(names, c.Name)
		}
		// As people read them: Émile among the E's; lower case before
		// upper; the two bobs tie and follow their ids.
		want := []string{"alice", "Alice", "ALICE", "bob", "bob", "carol", "Émile", "Zoë"}
		if diff := cmp.Diff(want, names); diff != "" {
			t.Errorf("names (-want +got):\n%s", diff)
		}
		if len(got.Content) >= 5 && !slices.IsSortedFunc(contactIDs(got.Content[3:5]), compareID) {
			t.Errorf("contacts with equal names are not in id order")
		}
	})
	t.Run("paging", func(t *testing.T) {
		rec := h.byKey["alpha-1"]
		all := refContacts(rec)
		for _, size := range []int{1, 2, 3, 100} {
			for p := 0; p <= len(all)/size+1; p++ {
				r := paging.Request{Page: p, Size: size}
				got, err := h.st.ListContacts(ctx, C1, rec.ID, r)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(window(all, r), contactIDs(got.Content)); diff != "" {
					t.Errorf("size %d page %d (-want +got):\n%s", size, p, diff)
				}
				checkMeta(t, fmt.Sprintf("size %d page %d", size, p), got.Page, r, len(all))
			}
		}
	})
	t.Run("none", func(t *testing.T) {
		r := paging.Request{Size: 20}
		got, err := h.st.ListContacts(ctx, C1, ID("alpha-2"), r)
		if err != nil {
			t.Fatal(err)
		}
		if got.Content == nil || len(got.Content) != 0 {
			t.Errorf("content %v, want an empty non-nil slice", got.Content)
		}
		checkMeta(t, "no contacts", got.Page, r, 0)
	})
}

func (h *harness) testAddresses(t *testing.T) {
	addrSorts := []paging.Sort{{Field: "companyName"}, {Field: "companyName", Desc: true}, {Field: "modifiedDate"}, {Field: "modifiedDate", Desc: true}}
	t.Run("companyName order", func(t *testing.T) {
		rec := h.byKey["alpha-1"]
		for _, tt := range []struct {
			sort paging.Sort
			want []string
		}{
			{paging.Sort{Field: "companyName"}, []string{"alpha north", "Alpha North", "Alpha South", "Ärzte Haus", "Zed Holdings", "", ""}},
			{paging.Sort{Field: "companyName", Desc: true}, []string{"Zed Holdings", "Ärzte Haus", "Alpha South", "Alpha North", "alpha north", "", ""}},
		} {
			got, err := h.st.ListRemittanceAddresses(ctx, C1, rec.ID, supplier.AddressQuery{Page: paging.Request{Size: 100, Sort: tt.sort}})
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, a := range got.Content {
				names = append(names, a.CompanyName.String())
			}
			if diff := cmp.Diff(tt.want, names); diff != "" {
				t.Errorf("%s: companyNames (-want +got):\n%s", tt.sort, diff)
			}
			// Ties (equal names, and the empty ones) in id order.
			for _, pair := range [][2]int{{len(names) - 2, len(names) - 1}} {
				if compareID(got.Content[pair[0]].ID, got.Content[pair[1]].ID) >= 0 {
					t.Errorf("%s: addresses without a companyName are not in id order", tt.sort)
				}
			}
		}
	})
	t.Run("equal companyNames in id order", func(t *testing.T) {
		rec := h.byKey["timber-yard"]
		for _, desc := range []bool{false, true} {
			s := paging.Sort{Field: "companyName", Desc: desc}
			got, err := h.st.ListRemittanceAddresses(ctx, C1, rec.ID, supplier.AddressQuery{Page: paging.Request{Size: 100, Sort: s}})
			if err != nil {
				t.Fatal(err)
			}
			var equal []uuid.UUID
			for _, a := range got.Content {
				if a.CompanyName.String() == "Timber Yard" {
					equal = append(equal, a.ID)
				}
			}
			if len(equal) != 2 || !slices.IsSortedFunc(equal, compareID) {
				t.Errorf("%s: the addresses named %q are %v; want two, in ascending id order", s, "Timber Yard", equal)
			}
		}
	})
	t.Run("default order is companyName ascending", func(t *testing.T) {
		rec := h.byKey["alpha-1"]
		got, err := h.st.ListRemittanceAddresses(ctx, C1, rec.ID, supplier.AddressQuery{Page: paging.Request{Size: 100}})
		if err != nil {
			t.Fatal(err)
		}
		want := refAddresses(rec, supplier.AddressQuery{Page: paging.Request{Sort: paging.Sort{Field: "companyName"}}})
		if diff := cmp.Diff(want, addressIDs(got.Content)); diff != "" {
			t.Errorf("ids (-want +got):\n%s", diff)
		}
	})
	t.Run("every supplier", func(t *testing.T) {
		sinces := []time.Time{{}, base.Add(3 * time.Hour), Target, Target.Add(time.Microsecond), Target.In(nz)}
		for _, com := range []string{C1, C2} {
			for i := range h.recs[com] {
				rec := &h.recs[com][i]
				byID := map[uuid.UUID]supplier.RemittanceAddress{}
				for _, a := range rec.RemittanceAddresses {
					byID[a.ID] = a
				}
				for _, s := range addrSorts {
					for _, since := range sinces {
						all := refAddresses(rec, supplier.AddressQuery{ModifiedSince: since, Page: paging.Request{Sort: s}})
						for _, size := range []int{1, 2, 100} {
							for p := 0; p <= len(all)/size+1; p++ {
								q := supplier.AddressQuery{ModifiedSince: since, Page: paging.Request{Page: p, Size: size, Sort: s}}
								got, err := h.st.ListRemittanceAddresses(ctx, com, rec.ID, q)
								what := fmt.Sprintf("ListRemittanceAddresses(%s, since=%s, %s, size %d, page %d)", h.keyOf[rec.ID], since.Format(time.RFC3339Nano), s, size, p)
								if err != nil {
									t.Fatalf("%s: %v", what, err)
								}
								if diff := cmp.Diff(window(all, q.Page), addressIDs(got.Content)); diff != "" {
									t.Errorf("%s: ids (-want +got):\n%s", what, diff)
								}
								checkMeta(t, what, got.Page, q.Page, len(all))
								if got.Content == nil {
									t.Errorf("%s: Content is nil", what)
								}
								for _, a := range got.Content {
									if diff := cmp.Diff(byID[a.ID], a); diff != "" {
										t.Errorf("%s: address %s (-want +got):\n%s", what, a.ID, diff)
									}
								}
							}
						}
					}
				}
			}
		}
	})
	t.Run("modifiedSince boundary", func(t *testing.T) {
		rec := h.byKey["alpha-1"]
		for _, tt := range []struct {
			since time.Time
			want  int
		}{
			{Target, 3},                       // Alpha South and the second empty name at Target, Ärzte a microsecond later
			{Target.Add(time.Microsecond), 1}, // only Ärzte
			{Target.Add(2 * time.Microsecond), 0},
		} {
			got, err := h.st.ListRemittanceAddresses(ctx, C1, rec.ID, supplier.AddressQuery{ModifiedSince: tt.since, Page: paging.Request{Size: 100}})
			if err != nil {
				t.Fatal(err)
			}
			if got.Page.TotalElements != tt.want || len(got.Content) != tt.want {
				t.Errorf("modifiedSince %s: %d addresses (total %d), want %d", tt.since.Format(time.RFC3339Nano), len(got.Content), got.Page.TotalElements, tt.want)
			}
		}
	})
}

func (h *harness) testInvalid(t *testing.T) {
	id := ID("alpha-1")
	tests := []struct {
		name string
		call func() error
	}{
		{"suppliers size 0", func() error {
			_, err := h.st.ListSuppliers(ctx, C1, supplier.ListQuery{Page: paging.Request{Size: 0}})
			return err
		}},
		{"suppliers size 101", func() error {
			_, err := h.st.ListSuppliers(ctx, C1, supplier.ListQuery{Page: paging.Request{Size: 101}})
			return err
		}},
		{"suppliers page -1", func() error {
			_, err := h.st.ListSuppliers(ctx, C1, supplier.ListQuery{Page: paging.Request{Page: -1, Size: 20}})
			return err
		}},
		{"suppliers sort by companyName", func() error {
			_, err := h.st.ListSuppliers(ctx, C1, supplier.ListQuery{Page: paging.Request{Size: 20, Sort: paging.Sort{Field: "companyName"}}})
			return err
		}},
		{"contacts size 0", func() error {
			_, err := h.st.ListContacts(ctx, C1, id, paging.Request{Size: 0})
			return err
		}},
		{"contacts page -1", func() error {
			_, err := h.st.ListContacts(ctx, C1, id, paging.Request{Page: -1, Size: 20})
			return err
		}},
		{"addresses size 101", func() error {
			_, err := h.st.ListRemittanceAddresses(ctx, C1, id, supplier.AddressQuery{Page: paging.Request{Size: 101}})
			return err
		}},
		{"addresses sort by name", func() error {
			_, err := h.st.ListRemittanceAddresses(ctx, C1, id, supplier.AddressQuery{Page: paging.Request{Size: 20, Sort: paging.Sort{Field: "name"}}})
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.call(); !errors.Is(err, procure.ErrInvalid) {
				t.Errorf("err = %v, want one matching procure.ErrInvalid", err)
			}
		})
	}
}

// testAppend checks that appending to a returned slice cannot write into
// the store (Store: values may share memory, but slices are clipped).
func (h *harness) testAppend(t *testing.T) {
	rec := h.byKey["alpha-1"]
	junkC := supplier.Contact{ID: ID("junk"), Name: "junk"}
	junkA := supplier.RemittanceAddress{ID: ID("junk"), CompanyName: supplier.NewText("junk")}
	junkS := supplier.Summary{ID: ID("junk"), Name: supplier.NewText("junk")}
	for range 2 {
		c, err := h.st.ListContacts(ctx, C1, rec.ID, paging.Request{Size: 2})
		if err != nil {
			t.Fatal(err)
		}
		_ = append(c.Content, junkC, junkC)
		a, err := h.st.ListRemittanceAddresses(ctx, C1, rec.ID, supplier.AddressQuery{Page: paging.Request{Size: 2}})
		if err != nil {
			t.Fatal(err)
		}
		_ = append(a.Content, junkA, junkA)
		s := h.list(t, C1, supplier.ListQuery{Page: paging.Request{Size: 2}})
		_ = append(s.Content, junkS, junkS)
	}
	c, err := h.st.ListContacts(ctx, C1, rec.ID, paging.Request{Size: 100})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(refContacts(rec), contactIDs(c.Content)); diff != "" {
		t.Errorf("contacts changed by appending to a result (-want +got):\n%s", diff)
	}
	a, err := h.st.ListRemittanceAddresses(ctx, C1, rec.ID, supplier.AddressQuery{Page: paging.Request{Size: 100}})
	if err != nil {
		t.Fatal(err)
	}
	want := refAddresses(rec, supplier.AddressQuery{Page: paging.Request{Sort: paging.Sort{Field: "companyName"}}})
	if diff := cmp.Diff(want, addressIDs(a.Content)); diff != "" {
		t.Errorf("addresses changed by appending to a result (-want +got):\n%s", diff)
	}
	h.checkPage(t, C1, supplier.ListQuery{Page: paging.Request{Size: 100, Sort: paging.Sort{Field: "name"}}})
}

// testConcurrent runs reads from many goroutines at once and compares each
// with the reference (run it with -race).
func (h *harness) testConcurrent(t *testing.T) {
	queries := []supplier.ListQuery{
		{Page: paging.Request{Size: 5, Sort: paging.Sort{Field: "name"}}},
		{Query: "alpha", Page: paging.Request{Size: 2, Sort: paging.Sort{Field: "createdDate", Desc: true}}},
		{Query: "s", ModifiedSince: base.Add(3 * time.Hour), Page: paging.Request{Page: 1, Size: 3, Sort: paging.Sort{Field: "name"}}},
		{ModifiedSince: Target, Page: paging.Request{Size: 4, Sort: paging.Sort{Field: "name", Desc: true}}},
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				q := queries[(g+i)%len(queries)]
				got, err := h.st.ListSuppliers(ctx, C1, q)
				if err != nil {
					t.Errorf("ListSuppliers: %v", err)
					return
				}
				want := window(refSuppliers(h.recs[C1], q), q.Page)
				if !slices.Equal(want, summaryIDs(got.Content)) {
					t.Errorf("concurrent ListSuppliers(%s): got %v, want %v", describe(q), h.labels(summaryIDs(got.Content)), h.labels(want))
					return
				}
				if _, err := h.st.Supplier(ctx, C1, ID("beta")); err != nil {
					t.Errorf("Supplier: %v", err)
					return
				}
			}
		}()
	}
	wg.Wait()
}
