package memstore_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

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
	suppliertest.Run(t, func(t *testing.T, f *datafile.File) supplier.Store { return load(t, f) })
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
			err := add(t, s, &datafile.File{Communities: []datafile.Community{c}})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("adding the community: err = %v, want it to contain %q", err, tt.want)
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
		if err := add(t, s, &datafile.File{Communities: []datafile.Community{c}}); err != nil {
			t.Fatal(err)
		}
		c2 := base()
		c2.Suppliers = c2.Suppliers[:1]
		err := add(t, s, &datafile.File{Communities: []datafile.Community{c2}})
		if err == nil || !strings.Contains(err.Error(), "already loaded") {
			t.Fatalf("adding it again: err = %v, want an error saying it is already loaded", err)
		}
		p, err := s.ListSuppliers(context.Background(), c.ID, supplier.ListQuery{Page: paging.Request{Size: 20}})
		if err != nil || p.Page.TotalElements != len(c.Suppliers) {
			t.Errorf("after the rejected load: %d suppliers (err %v), want the first load's %d", p.Page.TotalElements, err, len(c.Suppliers))
		}
	})
	t.Run("LoadReader names the community", func(t *testing.T) {
		f := suppliertest.Fixture(t)
		f.Communities[1].Suppliers[1].ID = f.Communities[1].Suppliers[0].ID
		_, err := memstore.LoadReader(bytes.NewReader(encode(t, f)))
		if err == nil || !strings.Contains(err.Error(), "communities[1].suppliers[1].id") || !strings.Contains(err.Error(), "duplicate") {
			t.Fatalf("LoadReader: err = %v", err)
		}
	})
}

// TestLoadWhileReading adds communities while other goroutines read: run
// with -race. Readers must always see a whole community or none.
func TestLoadWhileReading(t *testing.T) {
	s := load(t, suppliertest.Fixture(t))
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
		if err := add(t, s, &datafile.File{Communities: []datafile.Community{c}}); err != nil {
			t.Errorf("adding community %s: %v", c.ID, err)
		}
	}
	close(stop)
	wg.Wait()
}

func TestCancelledContext(t *testing.T) {
	s := load(t, suppliertest.Fixture(t))
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
