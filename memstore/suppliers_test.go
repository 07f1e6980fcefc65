package memstore_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/procurekit/procure/datafile"
	"github.com/procurekit/procure/memstore"
	"github.com/procurekit/procure/paging"
	"github.com/procurekit/procure/supplier"
	"github.com/procurekit/procure/supplier/suppliertest"
)

// TestSupplierStore runs the supplier.Store conformance suite.
func TestSupplierStore(t *testing.T) {
	suppliertest.Run(t, func(t *testing.T, f *datafile.File) supplier.Store {
		s, err := memstore.Load(f)
		if err != nil {
			t.Fatalf("memstore.Load: %v", err)
		}
		return s
	})
}

func TestLoadSupplierErrors(t *testing.T) {
	base := func() datafile.Community {
		f := suppliertest.Fixture(t)
		return f.Communities[1]
	}
	tests := []struct {
		name   string
		change func(c *datafile.Community)
		want   string
	}{
		{"nil supplier id", func(c *datafile.Community) { c.Suppliers[1].ID = uuid.Nil }, "suppliers[1].id: is required"},
		{"duplicate supplier id", func(c *datafile.Community) { c.Suppliers[2].ID = c.Suppliers[0].ID }, "suppliers[2].id: duplicate supplier id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := base()
			tt.change(&c)
			s := memstore.New()
			err := s.AddCommunity(&c)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("AddCommunity: err = %v, want it to contain %q", err, tt.want)
			}
			// Nothing was published.
			p, err := s.ListSuppliers(context.Background(), c.ID, supplier.ListQuery{Page: paging.Request{Size: 20}})
			if err != nil || p.Page.TotalElements != 0 {
				t.Errorf("after a failed load: %d suppliers, err %v; want none", p.Page.TotalElements, err)
			}
		})
	}
	t.Run("community loaded twice", func(t *testing.T) {
		c := base()
		s := memstore.New()
		if err := s.AddCommunity(&c); err != nil {
			t.Fatal(err)
		}
		c2 := base()
		c2.Suppliers = c2.Suppliers[:1]
		err := s.AddCommunity(&c2)
		if err == nil || !strings.Contains(err.Error(), "already loaded") {
			t.Fatalf("second AddCommunity: err = %v, want an error saying it is already loaded", err)
		}
		p, err := s.ListSuppliers(context.Background(), c.ID, supplier.ListQuery{Page: paging.Request{Size: 20}})
		if err != nil || p.Page.TotalElements != len(c.Suppliers) {
			t.Errorf("after the rejected load: %d suppliers (err %v), want the first load's %d", p.Page.TotalElements, err, len(c.Suppliers))
		}
	})
	t.Run("Load names the community", func(t *testing.T) {
		f := suppliertest.Fixture(t)
		f.Communities[1].Suppliers[1].ID = f.Communities[1].Suppliers[0].ID
		_, err := memstore.Load(f)
		if err == nil || !strings.Contains(err.Error(), "communities[1]: suppliers[1].id: duplicate supplier id") {
			t.Fatalf("Load: err = %v", err)
		}
	})
}

// TestLoadCopiesSuppliers: the store keeps its own copy; changing the
// loaded data afterwards changes nothing it returns.
func TestLoadCopiesSuppliers(t *testing.T) {
	f := suppliertest.Fixture(t)
	s, err := memstore.Load(f)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	id := suppliertest.ID("alpha-1")
	want, err := s.Supplier(ctx, suppliertest.C1, id)
	if err != nil {
		t.Fatal(err)
	}
	wantContacts, err := s.ListContacts(ctx, suppliertest.C1, id, paging.Request{Size: 100})
	if err != nil {
		t.Fatal(err)
	}
	wantContactsCopy := append([]supplier.Contact(nil), wantContacts.Content...)

	for i := range f.Communities[0].Suppliers {
		r := &f.Communities[0].Suppliers[i]
		if r.ID != id {
			continue
		}
		r.Name = "Changed"
		r.DefaultContact.Phone.Number = "000"
		r.Settings.BuyerGroups[0].Name = "Changed"
		*r.Settings.PaymentTerm.Days = 99
		r.BankAccount.Address.Region.Code = "XXX"
		r.Contacts[0].Name = "Changed"
		r.RemittanceAddresses[0].Address.City = "Changed"
		r.Keywords[0] = "changed"
	}
	got, err := s.Supplier(ctx, suppliertest.C1, id)
	if err != nil {
		t.Fatal(err)
	}
	fresh := suppliertest.Fixture(t)
	for _, r := range fresh.Communities[0].Suppliers {
		if r.ID == id {
			if diff := cmp.Diff(r.Detail, got); diff != "" {
				t.Errorf("Supplier changed with the loaded data (-want +got):\n%s", diff)
			}
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Supplier changed (-before +after):\n%s", diff)
	}
	gotContacts, err := s.ListContacts(ctx, suppliertest.C1, id, paging.Request{Size: 100})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wantContactsCopy, gotContacts.Content); diff != "" {
		t.Errorf("contacts changed with the loaded data (-before +after):\n%s", diff)
	}
	p, err := s.ListSuppliers(ctx, suppliertest.C1, supplier.ListQuery{Query: "changed", Page: paging.Request{Size: 20}})
	if err != nil || p.Page.TotalElements != 0 {
		t.Errorf("query %q after changing the loaded data: %d matches (err %v), want 0", "changed", p.Page.TotalElements, err)
	}
}

// TestLoadWhileReading adds communities while other goroutines read: run
// with -race. Readers must always see a whole community or none.
func TestLoadWhileReading(t *testing.T) {
	s, err := memstore.Load(suppliertest.Fixture(t))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	want, err := s.ListSuppliers(ctx, suppliertest.C1, supplier.ListQuery{Query: "a", Page: paging.Request{Size: 10}})
	if err != nil {
		t.Fatal(err)
	}
	src := suppliertest.Fixture(t).Communities[0]
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				got, err := s.ListSuppliers(ctx, suppliertest.C1, supplier.ListQuery{Query: "a", Page: paging.Request{Size: 10}})
				if err != nil || !cmp.Equal(want, got) {
					t.Errorf("ListSuppliers during a load changed: err %v", err)
					return
				}
				for i := range 5 {
					p, err := s.ListSuppliers(ctx, fmt.Sprintf("copy-%d", i), supplier.ListQuery{Page: paging.Request{Size: 1}})
					if err != nil || (p.Page.TotalElements != 0 && p.Page.TotalElements != len(src.Suppliers)) {
						t.Errorf("community copy-%d seen half loaded: %d suppliers, err %v", i, p.Page.TotalElements, err)
						return
					}
				}
			}
		}()
	}
	for i := range 5 {
		c := src
		c.ID = fmt.Sprintf("copy-%d", i)
		if err := s.AddCommunity(&c); err != nil {
			t.Errorf("AddCommunity: %v", err)
		}
	}
	close(stop)
	wg.Wait()
}

func TestCancelledContext(t *testing.T) {
	s, err := memstore.Load(suppliertest.Fixture(t))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	id := suppliertest.ID("alpha-1")
	r := paging.Request{Size: 20}
	errs := map[string]error{}
	_, errs["ListSuppliers"] = s.ListSuppliers(ctx, suppliertest.C1, supplier.ListQuery{Page: r})
	_, errs["Supplier"] = s.Supplier(ctx, suppliertest.C1, id)
	_, errs["ListContacts"] = s.ListContacts(ctx, suppliertest.C1, id, r)
	_, errs["ListRemittanceAddresses"] = s.ListRemittanceAddresses(ctx, suppliertest.C1, id, supplier.AddressQuery{Page: r})
	for name, err := range errs {
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s: err = %v, want context.Canceled", name, err)
		}
	}
}

// TestListAgainstReferenceRandom compares the indexed list with the
// suite's brute-force reference on random data built to stress the text
// index: terms from a tiny alphabet (many shared prefixes, many terms of
// one supplier matching one query), many equal names and dates, empty
// names; random queries, dates, sorts and pages, including the plans the
// combined filters choose between.
func TestListAgainstReferenceRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	word := func() string {
		const alphabet = "abAB é"
		var b strings.Builder
		for range 1 + rng.IntN(5) {
			b.WriteString(string([]rune(alphabet)[rng.IntN(6)]))
		}
		return strings.TrimSpace(b.String())
	}
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	const n = 3000
	recs := make([]supplier.Record, n)
	for i := range recs {
		r := &recs[i]
		r.ID = uuid.NewSHA1(uuid.NameSpaceOID, []byte(fmt.Sprint(i)))
		r.ProfileType = supplier.ProfileCompany
		if rng.IntN(10) > 0 {
			r.Name = word()
		}
		if rng.IntN(2) == 0 {
			r.LegalBusinessName = r.Name + word()
		}
		if rng.IntN(2) == 0 {
			r.SupplierID = word()
		}
		for range rng.IntN(4) {
			r.Keywords = append(r.Keywords, word())
		}
		r.ModifiedDate = base.Add(time.Duration(rng.IntN(200)) * time.Microsecond)
		r.CreatedDate = base.Add(-time.Duration(rng.IntN(50)) * time.Hour)
	}
	s := memstore.New()
	if err := s.AddCommunity(&datafile.Community{ID: "r", Name: "r", Region: datafile.DEMO, Suppliers: recs}); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	fields := []string{"name", "createdDate", "modifiedDate"}
	for trial := range 1000 {
		q := supplier.ListQuery{Page: paging.Request{
			Size: 1 + rng.IntN(30),
			Sort: paging.Sort{Field: fields[rng.IntN(3)], Desc: rng.IntN(2) == 0},
		}}
		if w := []rune(word()); rng.IntN(4) > 0 && len(w) > 0 {
			q.Query = string(w[:1+rng.IntN(min(3, len(w)))])
		}
		if rng.IntN(2) == 0 {
			q.ModifiedSince = base.Add(time.Duration(rng.IntN(220)) * time.Microsecond)
		}
		all := suppliertest.Reference(recs, q)
		pages := (len(all) + q.Page.Size - 1) / q.Page.Size
		q.Page.Page = rng.IntN(pages + 2)
		got, err := s.ListSuppliers(ctx, "r", q)
		if err != nil {
			t.Fatal(err)
		}
		lo, hi := paging.Window(len(all), q.Page)
		var gotIDs []uuid.UUID
		for _, it := range got.Content {
			gotIDs = append(gotIDs, it.ID)
		}
		if !slices.Equal(all[lo:hi], gotIDs) || got.Page.TotalElements != len(all) {
			t.Fatalf("trial %d: query %q since %v %+v: got %d items of %d, want %d of %d",
				trial, q.Query, q.ModifiedSince, q.Page, len(gotIDs), got.Page.TotalElements, hi-lo, len(all))
		}
	}
}
