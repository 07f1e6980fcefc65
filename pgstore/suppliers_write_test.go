package pgstore_test

import (
	"context"
	"errors"
	"testing"

	"github.com/procurekit/procure"
	"github.com/procurekit/procure/pgstore"
	"github.com/procurekit/procure/supplier"

	"github.com/procurekit/procure/supplier/suppliertest"
)

// The writer conformance suite, unchanged: pgstore writes as memstore
// does.
func TestSupplierWriterConformance(t *testing.T) {
	inSetups(t, func(t *testing.T, su setup) {
		s, d := openIn(t, su, nil)
		runWriter(t, s, d)
	})
}

// runWriter runs the writer suite on s, whose communities are made
// directly in d's database.
func runWriter(t *testing.T, s *pgstore.Store, d database) {
	conn := connect(t, d.direct)
	suppliertest.RunWriter(t, func(t *testing.T) (suppliertest.WriteStore, func(*testing.T, string)) {
		return s, func(t *testing.T, id string) {
			if _, err := conn.Exec(context.Background(), `INSERT INTO communities (id, name, region) VALUES ($1, $1, 'NZ')`, id); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// The writer suite with the per-node supplier cache on: every read after
// a write on the node is its own write's result (read-your-writes through
// the cache), and the cache serves them.
func TestSupplierWriterConformanceCached(t *testing.T) {
	inSetups(t, func(t *testing.T, su setup) {
		s, d := openIn(t, su, nil, pgstore.WithSupplierCache())
		runWriter(t, s, d)
		if pgstore.CacheServed(s) == 0 {
			t.Fatal("the cache served no read of the writer suite")
		}
		t.Logf("%d reads served by the cache", pgstore.CacheServed(s))
	})
}

// An unknown community is ErrUnknownCommunity; another community's
// supplier is not found. (Text PostgreSQL cannot hold is refused by
// supplier's validation: suppliertest's Validation cases.)
func TestWriteErrors(t *testing.T) {
	ctx := context.Background()
	s, _ := openStore(t, fixture())
	good := func() supplier.Record {
		return supplier.Record{Detail: supplier.Detail{Summary: supplier.Summary{ID: id(77), Name: supplier.NewText("Good"), ProfileType: supplier.ProfileCompany}}}
	}
	if _, err := s.PutSupplier(ctx, "nope", good()); !errors.Is(err, procure.ErrUnknownCommunity) {
		t.Errorf("PutSupplier to an unknown community: %v; want ErrUnknownCommunity", err)
	}
	if err := s.DeleteContact(ctx, "nope", id(1), id(101)); !errors.Is(err, procure.ErrUnknownCommunity) {
		t.Errorf("DeleteContact in an unknown community: %v; want ErrUnknownCommunity", err)
	}
	// Tenancy: c2's supplier is not found from c1.
	if err := s.DeleteSupplier(ctx, "c1", id(9)); !errors.Is(err, supplier.ErrNotFound) {
		t.Errorf("DeleteSupplier of another community's supplier: %v; want ErrNotFound", err)
	}
	if _, err := s.Supplier(ctx, "c2", id(9)); err != nil {
		t.Errorf("c2's supplier after c1's delete: %v", err)
	}
}
