package suppliertest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/procurekit/procure"
	"github.com/procurekit/procure/datafile"
	"github.com/procurekit/procure/paging"
	"github.com/procurekit/procure/supplier"
)

// Importer is the data-file import of a store (docs: datafile.md
// "Import"), found by type assertion. RunWriter uses it where it needs
// dates that a write cannot give (a write's dates are the store's stamps):
// a store without it skips those tests.
type Importer interface {
	ImportStream(ctx context.Context, r io.Reader) (datafile.ImportCounts, error)
}

// importRecords imports recs, dates as given, into the community com with
// the store's data-file import.
func importRecords(tb testing.TB, im Importer, com string, recs ...supplier.Record) {
	tb.Helper()
	type community struct {
		ID        string            `json:"id"`
		Name      string            `json:"name"`
		Region    string            `json:"region"`
		Suppliers []supplier.Record `json:"suppliers"`
	}
	file := struct {
		Communities []community `json:"communities"`
	}{[]community{{ID: com, Name: com, Region: "NZ", Suppliers: recs}}}
	b, err := json.Marshal(file)
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := im.ImportStream(ctx, bytes.NewReader(b)); err != nil {
		tb.Fatalf("ImportStream: %v", err)
	}
}

// dated gives r and everything in it the dates modified and created.
func dated(r supplier.Record, modified, created time.Time) supplier.Record {
	r.ModifiedDate, r.CreatedDate = modified, created
	if c := r.DefaultContact; c != nil {
		c.ModifiedDate, c.CreatedDate = created, created
	}
	if a := r.DefaultRemittanceAddress; a != nil {
		a.ModifiedDate, a.CreatedDate = created, created
	}
	for i := range r.Contacts {
		r.Contacts[i].ModifiedDate, r.Contacts[i].CreatedDate = created, created
	}
	for i := range r.RemittanceAddresses {
		r.RemittanceAddresses[i].ModifiedDate, r.RemittanceAddresses[i].CreatedDate = created, created
	}
	return r
}

// communityView is everything the read side shows of a community's
// suppliers, to compare before and after refused writes.
type communityView struct {
	List      []supplier.Summary
	Details   map[uuid.UUID]supplier.Detail
	Contacts  map[uuid.UUID][]supplier.Contact
	Addresses map[uuid.UUID][]supplier.RemittanceAddress
}

func (w *writerHarness) view(tb testing.TB, com string) communityView {
	tb.Helper()
	v := communityView{Details: map[uuid.UUID]supplier.Detail{}, Contacts: map[uuid.UUID][]supplier.Contact{},
		Addresses: map[uuid.UUID][]supplier.RemittanceAddress{}}
	v.List, _ = w.all(tb, com, supplier.ListQuery{Page: paging.Request{Sort: paging.Sort{Field: "modifiedDate", Desc: true}}})
	for _, s := range v.List {
		v.Details[s.ID] = w.get(tb, com, s.ID)
		v.Contacts[s.ID] = w.contacts(tb, com, s.ID)
		v.Addresses[s.ID] = w.addresses(tb, com, s.ID)
	}
	return v
}

// testStampExhausted checks the end of time (docs: live-data.md
// "Stamping"): a community that holds a modifiedDate of supplier.LastStamp
// (from a data file) refuses every write that would stamp, with an error
// matching supplier.ErrStampExhausted and procure.ErrConflict, and
// changes nothing: every read still answers as before. A write equal to
// what is stored stamps nothing and still succeeds; not-found still wins
// over the missing stamp. A community one microsecond short of it takes
// exactly one more write, stamped supplier.LastStamp.
func (w *writerHarness) testStampExhausted(t *testing.T) {
	im, ok := w.st.(Importer)
	if !ok {
		t.Skip("the store has no ImportStream: the suite cannot give it a modifiedDate of supplier.LastStamp")
	}
	base := time.Date(2026, 5, 1, 9, 30, 0, 0, time.UTC)
	last := supplier.LastStamp

	t.Run("AtTheLastMicrosecond", func(t *testing.T) {
		com := w.community(t)
		a, b := newID(), newID()
		ra := NewRecord(a, "Aoraki Alpine")
		ca, aa := newContact(newID(), "Aroha"), newAddress(newID(), "Aoraki Alpine Ltd")
		ra.Contacts, ra.RemittanceAddresses = []supplier.Contact{ca}, []supplier.RemittanceAddress{aa}
		importRecords(t, im, com, dated(ra, last, base), dated(NewRecord(b, "Bellbird Bakery"), base, base))
		before := w.view(t, com)
		if len(before.List) != 2 || !before.List[0].ModifiedDate.Equal(last) {
			t.Fatalf("after the import the community lists %d suppliers, the first modified %v, want 2 and %v",
				len(before.List), before.List[0].ModifiedDate, last)
		}

		renamed := NewRecord(b, "Bellbird Bakery and Cafe")
		caRenamed := ca
		caRenamed.Name = "Aroha Ngata"
		refused := []struct {
			name  string
			write func() error
		}{
			{"PutSupplier new", func() error { _, err := w.st.PutSupplier(ctx, com, NewRecord(newID(), "Coastal Coffee")); return err }},
			{"PutSupplier changed", func() error { _, err := w.st.PutSupplier(ctx, com, renamed); return err }},
			{"DeleteSupplier", func() error { return w.st.DeleteSupplier(ctx, com, b) }},
			{"PutContact new", func() error { _, err := w.st.PutContact(ctx, com, b, newContact(newID(), "Ben")); return err }},
			{"PutContact changed", func() error { _, err := w.st.PutContact(ctx, com, a, caRenamed); return err }},
			{"DeleteContact", func() error { return w.st.DeleteContact(ctx, com, a, ca.ID) }},
			{"PutRemittanceAddress new", func() error {
				_, err := w.st.PutRemittanceAddress(ctx, com, b, newAddress(newID(), "Bellbird"))
				return err
			}},
			{"DeleteRemittanceAddress", func() error { return w.st.DeleteRemittanceAddress(ctx, com, a, aa.ID) }},
		}
		for _, tt := range refused {
			err := tt.write()
			if !errors.Is(err, supplier.ErrStampExhausted) || !errors.Is(err, procure.ErrConflict) {
				t.Errorf("%s: err = %v, want one matching supplier.ErrStampExhausted and procure.ErrConflict", tt.name, err)
			}
		}

		// Not found is still not found.
		wantNotFound(t, "DeleteSupplier of an unknown id", w.st.DeleteSupplier(ctx, com, newID()))
		_, err := w.st.PutContact(ctx, com, newID(), newContact(newID(), "Nobody"))
		wantNotFound(t, "PutContact to an unknown supplier", err)
		wantNotFound(t, "DeleteContact of an unknown id", w.st.DeleteContact(ctx, com, a, newID()))

		// Writes equal to what is stored stamp nothing: they succeed.
		if d, err := w.st.PutSupplier(ctx, com, NewRecord(a, "Aoraki Alpine")); err != nil {
			t.Errorf("PutSupplier of the stored content: %v", err)
		} else if !d.ModifiedDate.Equal(last) {
			t.Errorf("PutSupplier of the stored content: modifiedDate %v, want %v", d.ModifiedDate, last)
		}
		if _, err := w.st.PutContact(ctx, com, a, ca); err != nil {
			t.Errorf("PutContact of the stored content: %v", err)
		}

		if after := w.view(t, com); !cmp.Equal(before, after) {
			t.Errorf("refused writes changed what the community reads:\n%s", cmp.Diff(before, after))
		}
		since, _ := w.all(t, com, supplier.ListQuery{ModifiedSince: last})
		if len(since) != 1 || since[0].ID != a {
			t.Errorf("modifiedSince %v lists %d suppliers, want only %s", last, len(since), a)
		}
	})

	t.Run("OneMicrosecondShort", func(t *testing.T) {
		com := w.community(t)
		a, b := newID(), newID()
		importRecords(t, im, com, dated(NewRecord(a, "Aoraki Alpine"), last.Add(-time.Microsecond), base))
		d := w.put(t, com, NewRecord(b, "Bellbird Bakery"))
		if !d.ModifiedDate.Equal(last) || !d.CreatedDate.Equal(last) {
			t.Errorf("the last write is stamped %v (created %v), want %v", d.ModifiedDate, d.CreatedDate, last)
		}
		before := w.view(t, com)
		_, err := w.st.PutContact(ctx, com, b, newContact(newID(), "Ben"))
		if !errors.Is(err, supplier.ErrStampExhausted) {
			t.Errorf("the write after the last stamp: err = %v, want one matching supplier.ErrStampExhausted", err)
		}
		if after := w.view(t, com); !cmp.Equal(before, after) {
			t.Errorf("a refused write changed what the community reads:\n%s", cmp.Diff(before, after))
		}
	})
}
