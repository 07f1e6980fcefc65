package supplierindex_test

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/procurekit/procure/internal/supplierindex"
	"github.com/procurekit/procure/paging"
	"github.com/procurekit/procure/supplier"
)

// Apply stores records as given - dates kept, contacts and addresses
// replaced - removes deleted ones (deletes first), skips ids it does not
// hold and records equal to the stored ones, and MaxModified follows every
// date it has held.
func TestApply(t *testing.T) {
	day := func(d int) time.Time { return time.Date(2030, 1, d, 0, 0, 0, 0, time.UTC) }
	rid := func(n byte) uuid.UUID { return uuid.UUID{15: n} }
	rec := func(n byte, name string, modified time.Time, contacts ...string) supplier.Record {
		r := supplier.Record{Detail: supplier.Detail{Summary: supplier.Summary{ID: rid(n), Name: supplier.NewText(name),
			ProfileType: supplier.ProfileCompany, ModifiedDate: modified, CreatedDate: day(1)}}}
		for i, c := range contacts {
			r.Contacts = append(r.Contacts, supplier.Contact{ID: uuid.UUID{0: n, 15: byte(i)}, Name: c, ModifiedDate: modified, CreatedDate: day(1)})
		}
		return r
	}
	x, err := supplierindex.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	if !x.MaxModified().IsZero() {
		t.Fatalf("MaxModified of an empty index = %v, want the zero time", x.MaxModified())
	}
	names := func() []string {
		p, err := x.List(supplier.ListQuery{Page: paging.Request{Size: 20}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, s := range p.Content {
			out = append(out, s.Name.String()+"@"+s.ModifiedDate.Format("02"))
		}
		return out
	}

	x.Apply([]supplier.Record{rec(1, "Alpha", day(5), "Ann", "Bob"), rec(2, "Beta", day(6))}, []uuid.UUID{rid(9)})
	if diff := cmp.Diff([]string{"Alpha@05", "Beta@06"}, names()); diff != "" {
		t.Fatalf("after the first apply (-want +got):\n%s", diff)
	}
	// Alpha replaced with one contact; Beta deleted; Gamma deleted then
	// created again in one apply.
	x.Apply([]supplier.Record{rec(1, "Alpha 2", day(7), "Cy"), rec(3, "Gamma", day(8))}, []uuid.UUID{rid(2), rid(3)})
	if diff := cmp.Diff([]string{"Alpha 2@07", "Gamma@08"}, names()); diff != "" {
		t.Fatalf("after the second apply (-want +got):\n%s", diff)
	}
	cs, err := x.Contacts(rid(1), paging.Request{Size: 20})
	if err != nil {
		t.Fatal(err)
	}
	if len(cs.Content) != 1 || cs.Content[0].Name != "Cy" || !cs.Content[0].ModifiedDate.Equal(day(7)) {
		t.Fatalf("contacts of Alpha = %+v; want only Cy, modified on day 7", cs.Content)
	}
	if _, err := x.Supplier(rid(2)); !errors.Is(err, supplier.ErrNotFound) {
		t.Fatalf("deleted Beta: Supplier = %v; want ErrNotFound", err)
	}
	if _, ok := x.Record(rid(2)); ok {
		t.Fatal("deleted Beta: Record found it")
	}
	r, ok := x.Record(rid(1))
	if !ok || r.Name.String() != "Alpha 2" || len(r.Contacts) != 1 {
		t.Fatalf("Record(Alpha) = %+v, %v", r, ok)
	}
	// Deleted suppliers' dates count: day 8 is Gamma's, and a deleted
	// supplier dated later still raises the mark.
	x.Apply([]supplier.Record{rec(4, "Delta", day(20))}, nil)
	x.Apply(nil, []uuid.UUID{rid(4)})
	if got := x.MaxModified(); !got.Equal(day(20)) {
		t.Fatalf("MaxModified = %v, want %v", got, day(20))
	}
	// An equal record changes nothing; a new date is a change.
	size := x.OverlaySize()
	x.Apply([]supplier.Record{rec(3, "Gamma", day(8))}, nil)
	if got := x.OverlaySize(); got != size {
		t.Fatalf("an equal record grew the overlay from %d to %d changes", size, got)
	}
	x.Apply([]supplier.Record{rec(3, "Gamma", day(9))}, nil)
	if diff := cmp.Diff([]string{"Alpha 2@07", "Gamma@09"}, names()); diff != "" {
		t.Fatalf("after re-dating Gamma (-want +got):\n%s", diff)
	}
}

// Build refuses records without an id or with one twice, naming the
// record by the order it was added in.
func TestBuildErrors(t *testing.T) {
	day := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	rec := func(id uuid.UUID) supplier.Record {
		return supplier.Record{Detail: supplier.Detail{Summary: supplier.Summary{ID: id, Name: supplier.NewText("n"), ModifiedDate: day, CreatedDate: day}}}
	}
	a, b := uuid.UUID{15: 1}, uuid.UUID{15: 2}
	for _, tt := range []struct {
		name string
		recs []supplier.Record
		want string
	}{
		{"nil id", []supplier.Record{rec(a), rec(uuid.Nil)}, "suppliers[1].id: is required (a non-nil UUID)"},
		{"repeated id", []supplier.Record{rec(a), rec(b), rec(a)}, "suppliers[2].id: duplicate supplier id " + a.String()},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var bld supplierindex.Builder
			for i := range tt.recs {
				bld.Add(&tt.recs[i])
			}
			if bld.Len() != len(tt.recs) {
				t.Fatalf("Len = %d, want %d", bld.Len(), len(tt.recs))
			}
			_, err := bld.Build()
			if err == nil || err.Error() != tt.want {
				t.Fatalf("Build = %v, want %q", err, tt.want)
			}
		})
	}
}
