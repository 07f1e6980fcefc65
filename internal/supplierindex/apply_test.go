package memstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/procurekit/procure"
	"github.com/procurekit/procure/memstore"
	"github.com/procurekit/procure/paging"
	"github.com/procurekit/procure/supplier"
)

// ReplicateSuppliers stores records as given - dates kept, contacts and
// addresses replaced - removes deleted ones (deletes first), skips ids it
// does not hold, and a later write through the store stamps above every
// date it applied.
func TestReplicateSuppliers(t *testing.T) {
	ctx := context.Background()
	s := memstore.New()
	if _, err := s.PutCommunity(ctx, procure.Community{ID: "c", Name: "C", Region: "NZ"}); err != nil {
		t.Fatal(err)
	}
	day := func(d int) time.Time { return time.Date(2030, 1, d, 0, 0, 0, 0, time.UTC) }
	rid := func(n byte) uuid.UUID { return uuid.UUID{15: n} }
	rec := func(n byte, name string, modified time.Time, contacts ...string) supplier.Record {
		r := supplier.Record{Detail: supplier.Detail{Summary: supplier.Summary{ID: rid(n), Name: name,
			ProfileType: supplier.ProfileCompany, ModifiedDate: modified, CreatedDate: day(1)}}}
		for i, c := range contacts {
			r.Contacts = append(r.Contacts, supplier.Contact{ID: uuid.UUID{0: n, 15: byte(i)}, Name: c, ModifiedDate: modified, CreatedDate: day(1)})
		}
		return r
	}
	names := func() []string {
		p, err := s.ListSuppliers(ctx, "c", supplier.ListQuery{Page: paging.Request{Size: 20}})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, x := range p.Content {
			out = append(out, x.Name+"@"+x.ModifiedDate.Format("02"))
		}
		return out
	}

	if err := s.ReplicateSuppliers("c", []supplier.Record{rec(1, "Alpha", day(5), "Ann", "Bob"), rec(2, "Beta", day(6))}, []uuid.UUID{rid(9)}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"Alpha@05", "Beta@06"}, names()); diff != "" {
		t.Fatalf("after the first apply (-want +got):\n%s", diff)
	}
	// Alpha replaced with one contact; Beta deleted; Gamma deleted then
	// created again in one apply.
	if err := s.ReplicateSuppliers("c", []supplier.Record{rec(1, "Alpha 2", day(7), "Cy"), rec(3, "Gamma", day(8))}, []uuid.UUID{rid(2), rid(3)}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"Alpha 2@07", "Gamma@08"}, names()); diff != "" {
		t.Fatalf("after the second apply (-want +got):\n%s", diff)
	}
	cs, err := s.ListContacts(ctx, "c", rid(1), paging.Request{Size: 20})
	if err != nil {
		t.Fatal(err)
	}
	if len(cs.Content) != 1 || cs.Content[0].Name != "Cy" || !cs.Content[0].ModifiedDate.Equal(day(7)) {
		t.Fatalf("contacts of Alpha = %+v; want only Cy, modified on day 7", cs.Content)
	}
	if _, err := s.Supplier(ctx, "c", rid(2)); !errors.Is(err, supplier.ErrNotFound) {
		t.Fatalf("deleted Beta: Supplier = %v; want ErrNotFound", err)
	}
	// A write through the store stamps above the latest date applied
	// (day 8 of 2030, later than the clock).
	var w supplier.Record
	w.ID, w.Name, w.ProfileType = rid(4), "Delta", supplier.ProfileCompany
	d, err := s.PutSupplier(ctx, "c", w)
	if err != nil {
		t.Fatal(err)
	}
	if !d.ModifiedDate.After(day(8)) {
		t.Fatalf("a write after the apply stamped %v; want after %v", d.ModifiedDate, day(8))
	}

	if err := s.ReplicateSuppliers("nowhere", nil, nil); !errors.Is(err, procure.ErrUnknownCommunity) {
		t.Fatalf("unknown community: %v; want ErrUnknownCommunity", err)
	}
}
