package pgstore_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/procurekit/procure/paging"
	"github.com/procurekit/procure/pgstore"
	"github.com/procurekit/procure/supplier"
)

// c1Dump is everything a node shows of community c1: the list with dates,
// and each supplier's detail, contacts and addresses, as JSON.
func c1Dump(t *testing.T, s *pgstore.Store) []string {
	t.Helper()
	ctx := context.Background()
	p, err := s.ListSuppliers(ctx, "c1", supplier.ListQuery{Page: paging.Request{Size: 50}})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	add := func(v any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(b))
	}
	add(p, nil)
	for _, x := range p.Content {
		add(s.Supplier(ctx, "c1", x.ID))
		add(s.ListContacts(ctx, "c1", x.ID, paging.Request{Size: 50}))
		add(s.ListRemittanceAddresses(ctx, "c1", x.ID, supplier.AddressQuery{Page: paging.Request{Size: 50}}))
	}
	return out
}

// A node with the supplier cache applies each of its own writes - a new
// supplier, a replaced one, contact and address puts and deletes, an
// unchanged put, a supplier delete - to its cache as it commits: its next
// reads show exactly what the database holds, from the cache, and no read
// waits for a sync (docs: live-data.md "Visibility").
func TestCacheOwnWritesWithoutSync(t *testing.T) { inSetups(t, testCacheOwnWritesWithoutSync) }

func testCacheOwnWritesWithoutSync(t *testing.T, su setup) {
	ctx := context.Background()
	_, d := openIn(t, su, fixture())
	a := d.open(t, pgstore.WithSupplierCache())
	db := database{dsn: d.direct}.open(t, pgstore.WithMaxConns(2))
	if diff := cmp.Diff(c1Dump(t, db), c1Dump(t, a)); diff != "" {
		t.Fatalf("before any write (-database +cache):\n%s", diff)
	}
	newRec := func(n int, name string) supplier.Record {
		return supplier.Record{Detail: supplier.Detail{Summary: supplier.Summary{ID: id(n), Name: supplier.NewText(name), ProfileType: supplier.ProfileCompany}},
			Keywords: []string{"k" + name}}
	}
	var writes []func() error
	for i := range 5 {
		writes = append(writes,
			func() error { _, err := a.PutSupplier(ctx, "c1", newRec(50+i, fmt.Sprint("New ", i))); return err },
			func() error { _, err := a.PutSupplier(ctx, "c1", newRec(50+i, fmt.Sprint("Renamed ", i))); return err },
			func() error { _, err := a.PutSupplier(ctx, "c1", newRec(50+i, fmt.Sprint("Renamed ", i))); return err }, // unchanged
			func() error {
				_, err := a.PutContact(ctx, "c1", id(50+i), supplier.Contact{ID: id(150 + i), Name: fmt.Sprint("Dora ", i)})
				return err
			},
			func() error {
				_, err := a.PutContact(ctx, "c1", id(1), supplier.Contact{ID: id(160 + i), Name: fmt.Sprint("Acme contact ", i)})
				return err
			},
			func() error {
				_, err := a.PutRemittanceAddress(ctx, "c1", id(50+i), supplier.RemittanceAddress{ID: id(250 + i), CompanyName: supplier.NewText("Billing"),
					Address: supplier.Address{Line1: fmt.Sprint(i, " Main St"), City: "Nelson", Country: "NZ"}})
				return err
			},
			func() error { return a.DeleteContact(ctx, "c1", id(50+i), id(150+i)) },
			func() error { return a.DeleteRemittanceAddress(ctx, "c1", id(50+i), id(250+i)) },
		)
		if i%2 == 1 {
			writes = append(writes, func() error { return a.DeleteSupplier(ctx, "c1", id(50+i)) })
		}
	}
	served := pgstore.CacheServed(a)
	for i, w := range writes {
		if err := w(); err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
		if diff := cmp.Diff(c1Dump(t, db), c1Dump(t, a)); diff != "" {
			t.Fatalf("after write %d, node A's next reads (-database +cache):\n%s", i, diff)
		}
	}
	if n := pgstore.CacheReadSyncs(a); n != 0 {
		t.Fatalf("reads waited for %d syncs after this node's own writes; want none", n)
	}
	if pgstore.CacheServed(a) == served {
		t.Fatal("the reads after the writes came from the database, not the cache")
	}
}
