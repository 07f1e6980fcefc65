package memstore_test

import (
	"context"
	"testing"

	"github.com/procurekit/procure"
	"github.com/procurekit/procure/memstore"
	"github.com/procurekit/procure/supplier/suppliertest"
)

// TestSupplierWriter runs the supplier.Writer conformance suite.
func TestSupplierWriter(t *testing.T) {
	suppliertest.RunWriter(t, func(t *testing.T) (suppliertest.WriteStore, func(*testing.T, string)) {
		s := memstore.New()
		return s, func(t *testing.T, id string) {
			if _, err := s.PutCommunity(context.Background(), procure.Community{ID: id, Name: id, Region: "NZ"}); err != nil {
				t.Fatal(err)
			}
		}
	})
}
