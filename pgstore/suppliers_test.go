package pgstore_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/procurekit/procure/datafile"
	"github.com/procurekit/procure/paging"
	"github.com/procurekit/procure/pgstore"
	"github.com/procurekit/procure/supplier"
	"github.com/procurekit/procure/supplier/suppliertest"
)

func firstPage() paging.Request { return paging.Request{Page: 0, Size: 20} }

func names(items []supplier.Summary) []string {
	out := make([]string, len(items))
	for i, s := range items {
		out[i] = s.Name.String()
	}
	return out
}

// The supplier conformance suite, unchanged: pgstore behaves as memstore.
func TestSupplierStoreConformance(t *testing.T) {
	inSetups(t, func(t *testing.T, su setup) {
		suppliertest.Run(t, func(t *testing.T, f *datafile.File) supplier.Store {
			s, _ := openIn(t, su, f)
			return s
		})
	})
}

// The same suite with the per-node supplier cache on: every read it makes
// after the import is served by the cache (a community this small loads
// at its first read), and answers as memstore and the database do.
func TestSupplierStoreConformanceCached(t *testing.T) {
	inSetups(t, func(t *testing.T, su setup) {
		var stores []*pgstore.Store
		suppliertest.Run(t, func(t *testing.T, f *datafile.File) supplier.Store {
			s, _ := openIn(t, su, f, pgstore.WithSupplierCache())
			stores = append(stores, s)
			return s
		})
		var served int64
		for _, s := range stores {
			served += pgstore.CacheServed(s)
		}
		if served == 0 {
			t.Fatalf("the cache served no read of the suite's %d stores", len(stores))
		}
		t.Logf("%d reads served by the caches of %d stores", served, len(stores))
	})
}

// The prefix query takes the user's text literally - no pattern
// characters - compares by match keys, ignoring case and accents (as
// memstore does, whatever the database's locale), and counts a supplier
// matching on several fields once.
func TestQueryText(t *testing.T) {
	mk := func(n int, name, legal, sid string, keywords ...string) supplier.Record {
		return supplier.Record{Detail: supplier.Detail{Summary: supplier.Summary{
			ID: id(n), Name: supplier.NewText(name), LegalBusinessName: supplier.NewText(legal), SupplierID: supplier.NewText(sid), ProfileType: supplier.ProfileCompany,
			ModifiedDate: at(n), CreatedDate: at(0),
		}}, Keywords: keywords}
	}
	f := &datafile.File{Communities: []datafile.Community{{ID: "q", Region: datafile.DEMO, Suppliers: []supplier.Record{
		mk(1, "50% Off Ltd", "", ""),
		mk(2, "500 Tyres", "", ""),
		mk(3, "a_b", "", ""),
		mk(4, "axb", "", ""),
		mk(5, `back\slash`, "", ""),
		mk(6, "Ærøskøbing Bakery", "ÆRØ Holdings", "ÆRØ-1", "ærø"),
		mk(7, "O'Brien", "", ""),
		mk(8, "del\x7fta", "", ""),
		mk(9, "delta", "", ""),
	}}}}
	s, _ := openStore(t, f)
	tests := []struct {
		query string
		want  []string
	}{
		{"50%", []string{"50% Off Ltd"}},
		{"5", []string{"50% Off Ltd", "500 Tyres"}},
		{"a_", []string{"a_b"}},
		{`back\`, []string{`back\slash`}},
		{"æRØ", []string{"Ærøskøbing Bakery"}}, // matches on four fields, counted once
		{"AERO", nil}, // æ and ø are letters, not accented a and o
		{"o'b", []string{"O'Brien"}},
		{"del\x7f", []string{"del\x7fta"}},
		{"%", nil},
		{"zzz", nil},
		{"a\x00", nil},
		{"\xff", nil},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			page, err := s.ListSuppliers(context.Background(), "q", supplier.ListQuery{Query: tt.query, Page: firstPage()})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, names(page.Content), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("names (-want +got):\n%s", diff)
			}
			if page.Page.TotalElements != len(tt.want) {
				t.Errorf("totalElements = %d; want %d", page.Page.TotalElements, len(tt.want))
			}
		})
	}
}
