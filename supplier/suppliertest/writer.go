package suppliertest

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/procurekit/procure"
	"github.com/procurekit/procure/paging"
	"github.com/procurekit/procure/supplier"
)

// WriteStore is a supplier store with its write side: what RunWriter
// checks.
type WriteStore interface {
	supplier.Store
	supplier.Writer
}

// RunWriter checks that a store meets the supplier.Writer contract
// (docs: live-data.md): creates, replaces and deletes are visible to
// every read; lists after writes equal the reference over the records
// written (order, paging, filters, totals); modifiedDate stamps are UTC,
// whole microseconds and strictly increasing in a community, createdDate
// is kept, dates in the input are ignored, a write equal to what is
// stored stamps nothing, contact and address writes stamp their
// supplier; a client polling modifiedSince with the largest modifiedDate
// it has seen ends with exactly the final data while writers run
// concurrently; writes are scoped by community; invalid input is a
// *procure.ValidationError naming the field and writes nothing; the
// store keeps no reference to the caller's input.
//
// open is called once. It returns the store and newCommunity, which
// creates an empty community with the given id in it (for instance with
// procure.CommunityStore.PutCommunity). The suite creates the communities
// it writes to, with ids starting "w-", and reads only those, so the
// store may hold other data. A backend's test is a few lines:
//
//	func TestSupplierWriter(t *testing.T) {
//		suppliertest.RunWriter(t, func(t *testing.T) (suppliertest.WriteStore, func(*testing.T, string)) {
//			s := memstore.New()
//			return s, func(t *testing.T, id string) {
//				if _, err := s.PutCommunity(ctx, procure.Community{ID: id, Name: id, Region: "NZ"}); err != nil {
//					t.Fatal(err)
//				}
//			}
//		})
//	}
func RunWriter(t *testing.T, open func(t *testing.T) (WriteStore, func(t *testing.T, id string))) {
	st, newCommunity := open(t)
	if st == nil {
		t.Fatal("suppliertest: open returned a nil store")
	}
	w := &writerHarness{st: st, newCommunity: newCommunity}
	t.Run("CreateReplaceDelete", w.testCRUD)
	t.Run("ContactsAndAddresses", w.testParts)
	t.Run("Stamping", w.testStamping)
	t.Run("NoOpWrites", w.testNoOp)
	t.Run("ListsAfterWrites", w.testListsAfterWrites)
	t.Run("PollWhileWriting", w.testPoll)
	t.Run("Tenancy", w.testWriteTenancy)
	t.Run("Validation", w.testValidation)
	t.Run("InputIsCopied", w.testAliasing)
	t.Run("EmptyTextRoundTrips", w.testEmptyText)
	t.Run("EveryFieldRoundTrips", w.testEveryField)
	t.Run("StampExhausted", w.testStampExhausted)
}

type writerHarness struct {
	st           WriteStore
	newCommunity func(t *testing.T, id string)
	mu           sync.Mutex
	n            int
}

// community creates a new empty community for one test.
func (w *writerHarness) community(t *testing.T) string {
	t.Helper()
	w.mu.Lock()
	w.n++
	id := fmt.Sprintf("w-%d-%d", time.Now().UnixNano()%1_000_000_000, w.n)
	w.mu.Unlock()
	w.newCommunity(t, id)
	return id
}

// NewRecord returns a valid supplier for a write: the given name, a
// supplierId and keywords, every part of the detail filled in, no dates,
// contacts or addresses. Each call returns new memory.
func NewRecord(id uuid.UUID, name string, keywords ...string) supplier.Record {
	r := supplier.Record{Keywords: slices.Clone(keywords)}
	r.ID = id
	r.Name = supplier.NewText(name)
	r.ProfileType = supplier.ProfileCompany
	r.LegalBusinessName = supplier.NewText(name + " Limited")
	r.SupplierID = supplier.NewText("W-" + id.String()[:8])
	r.DefaultEmailAddress = supplier.NewText("accounts@example.com")
	r.TaxIdentificationType = supplier.TaxEIN
	r.DefaultContact = &supplier.Contact{ID: uuid.NewSHA1(id, []byte("default-contact")), Name: "Default Person",
		Phone: &supplier.Phone{Prefix: supplier.NewText("+64"), Number: supplier.NewText("95551234")}, Email: supplier.NewText("default@example.com")}
	r.DefaultRemittanceAddress = &supplier.RemittanceAddress{ID: uuid.NewSHA1(id, []byte("default-address")), CompanyName: supplier.NewText(name),
		Address: supplier.Address{Line1: "1 Lambton Quay", City: "Wellington", Region: &supplier.Region{Name: supplier.NewText("Wellington"), Code: supplier.NewText("WGN")}, Country: "New Zealand"}}
	days := 20
	r.Settings = &supplier.Settings{
		PaymentTerm: &supplier.PaymentTerm{ID: uuid.NewSHA1(id, []byte("term")), Code: "NET20", Active: true, Days: &days, TermType: supplier.DaysAfterInvoiceDate},
		BuyerGroups: []supplier.BuyerGroup{{ID: uuid.NewSHA1(id, []byte("bg")), Name: "Facilities"}},
		Tags:        []supplier.Tag{{ID: uuid.NewSHA1(id, []byte("tag")), Name: "Preferred"}},
	}
	return r
}

func newContact(id uuid.UUID, name string) supplier.Contact {
	return supplier.Contact{ID: id, Name: name, Email: supplier.NewText("c@example.com"), Phone: &supplier.Phone{Number: supplier.NewText("021555")}, ManagedBy: supplier.ManagedByCommunity}
}

func newAddress(id uuid.UUID, company string) supplier.RemittanceAddress {
	return supplier.RemittanceAddress{ID: id, CompanyName: supplier.NewText(company), Code: supplier.NewText("C"),
		Address: supplier.Address{Line1: "2 Willis Street", City: "Wellington", Country: "NZ", Region: &supplier.Region{Code: supplier.NewText("WGN")}}}
}

func newID() uuid.UUID { return uuid.New() }

func (w *writerHarness) put(tb testing.TB, com string, r supplier.Record) supplier.Detail {
	tb.Helper()
	d, err := w.st.PutSupplier(ctx, com, r)
	if err != nil {
		tb.Fatalf("PutSupplier(%s, %s): %v", com, r.ID, err)
	}
	return d
}

func (w *writerHarness) get(tb testing.TB, com string, id uuid.UUID) supplier.Detail {
	tb.Helper()
	d, err := w.st.Supplier(ctx, com, id)
	if err != nil {
		tb.Fatalf("Supplier(%s, %s): %v", com, id, err)
	}
	return d
}

// all lists every supplier of com matching q (all pages, size 100).
func (w *writerHarness) all(tb testing.TB, com string, q supplier.ListQuery) ([]supplier.Summary, int) {
	tb.Helper()
	var out []supplier.Summary
	total := -1
	for p := 0; ; p++ {
		q.Page.Page, q.Page.Size = p, 100
		page, err := w.st.ListSuppliers(ctx, com, q)
		if err != nil {
			tb.Fatalf("ListSuppliers(%s, %s): %v", com, describe(q), err)
		}
		if total >= 0 && page.Page.TotalElements != total {
			tb.Fatalf("ListSuppliers(%s, %s): total changed from %d to %d between pages without writes", com, describe(q), total, page.Page.TotalElements)
		}
		total = page.Page.TotalElements
		out = append(out, page.Content...)
		if len(page.Content) < 100 {
			return out, total
		}
	}
}

func (w *writerHarness) contacts(tb testing.TB, com string, sid uuid.UUID) []supplier.Contact {
	tb.Helper()
	p, err := w.st.ListContacts(ctx, com, sid, paging.Request{Size: 100})
	if err != nil {
		tb.Fatalf("ListContacts(%s, %s): %v", com, sid, err)
	}
	return p.Content
}

func (w *writerHarness) addresses(tb testing.TB, com string, sid uuid.UUID) []supplier.RemittanceAddress {
	tb.Helper()
	p, err := w.st.ListRemittanceAddresses(ctx, com, sid, supplier.AddressQuery{Page: paging.Request{Size: 100}})
	if err != nil {
		tb.Fatalf("ListRemittanceAddresses(%s, %s): %v", com, sid, err)
	}
	return p.Content
}

func wantNotFound(tb testing.TB, what string, err error) {
	tb.Helper()
	if !errors.Is(err, supplier.ErrNotFound) {
		tb.Errorf("%s: err = %v, want one matching supplier.ErrNotFound", what, err)
	}
}

func (w *writerHarness) testCRUD(t *testing.T) {
	com := w.community(t)
	// An empty community lists nothing and accepts writes.
	if got, total := w.all(t, com, supplier.ListQuery{}); len(got) != 0 || total != 0 {
		t.Fatalf("a new community lists %d suppliers (total %d), want none", len(got), total)
	}
	a, b := newID(), newID()
	da := w.put(t, com, NewRecord(a, "Kauri Timber", "wood"))
	if da.ID != a || da.Name.String() != "Kauri Timber" {
		t.Fatalf("PutSupplier returned %s %q, want %s %q", da.ID, da.Name, a, "Kauri Timber")
	}
	if got := w.get(t, com, a); !cmp.Equal(got, da) {
		t.Errorf("Supplier after PutSupplier differs from what PutSupplier returned:\n%s", cmp.Diff(da, got))
	}
	w.put(t, com, NewRecord(b, "Apex Plumbing"))
	names := func() []string {
		got, total := w.all(t, com, supplier.ListQuery{})
		if total != len(got) {
			t.Errorf("total %d, %d items", total, len(got))
		}
		var out []string
		for _, s := range got {
			out = append(out, s.Name.String())
		}
		return out
	}
	if got, want := names(), []string{"Apex Plumbing", "Kauri Timber"}; !slices.Equal(got, want) {
		t.Errorf("after two creates the list is %q, want %q", got, want)
	}
	// Replace: the new name moves it; the query sees the new keywords.
	ra := NewRecord(a, "Zeta Timber", "joinery")
	da2 := w.put(t, com, ra)
	if got := w.get(t, com, a); !cmp.Equal(got, da2) || got.Name.String() != "Zeta Timber" {
		t.Errorf("Supplier after a replace: %q, want %q and what PutSupplier returned", got.Name, "Zeta Timber")
	}
	if got, want := names(), []string{"Apex Plumbing", "Zeta Timber"}; !slices.Equal(got, want) {
		t.Errorf("after the replace the list is %q, want %q", got, want)
	}
	for q, want := range map[string]int{"joinery": 1, "wood": 0, "kauri": 0, "zeta": 1} {
		if _, total := w.all(t, com, supplier.ListQuery{Query: q}); total != want {
			t.Errorf("query %q after the replace: %d matches, want %d", q, total, want)
		}
	}
	// Parts survive a replace of the supplier.
	cid, aid := newID(), newID()
	if _, err := w.st.PutContact(ctx, com, a, newContact(cid, "Ana")); err != nil {
		t.Fatal(err)
	}
	if _, err := w.st.PutRemittanceAddress(ctx, com, a, newAddress(aid, "Zeta")); err != nil {
		t.Fatal(err)
	}
	w.put(t, com, NewRecord(a, "Zeta Timber Two"))
	if got := w.contacts(t, com, a); len(got) != 1 || got[0].ID != cid {
		t.Errorf("contacts after replacing the supplier: %v, want the one written", contactIDs(got))
	}
	if got := w.addresses(t, com, a); len(got) != 1 || got[0].ID != aid {
		t.Errorf("addresses after replacing the supplier: %v, want the one written", addressIDs(got))
	}
	// Delete: every read of it is not found, its parts too.
	if err := w.st.DeleteSupplier(ctx, com, a); err != nil {
		t.Fatalf("DeleteSupplier: %v", err)
	}
	_, err := w.st.Supplier(ctx, com, a)
	wantNotFound(t, "Supplier after delete", err)
	_, err = w.st.ListContacts(ctx, com, a, paging.Request{Size: 20})
	wantNotFound(t, "ListContacts after delete", err)
	_, err = w.st.ListRemittanceAddresses(ctx, com, a, supplier.AddressQuery{Page: paging.Request{Size: 20}})
	wantNotFound(t, "ListRemittanceAddresses after delete", err)
	if got, want := names(), []string{"Apex Plumbing"}; !slices.Equal(got, want) {
		t.Errorf("after the delete the list is %q, want %q", got, want)
	}
	if _, total := w.all(t, com, supplier.ListQuery{Query: "zeta"}); total != 0 {
		t.Errorf("query of the deleted supplier: %d matches, want 0", total)
	}
	wantNotFound(t, "DeleteSupplier twice", w.st.DeleteSupplier(ctx, com, a))
	wantNotFound(t, "PutContact of a deleted supplier", func() error { _, err := w.st.PutContact(ctx, com, a, newContact(cid, "Ana")); return err }())
	// Re-created, it starts afresh: no parts, a new createdDate.
	d3 := w.put(t, com, NewRecord(a, "Again"))
	if !d3.CreatedDate.After(da.CreatedDate) {
		t.Errorf("a re-created supplier has createdDate %s, want after the first creation's %s", d3.CreatedDate, da.CreatedDate)
	}
	if got := w.contacts(t, com, a); len(got) != 0 {
		t.Errorf("a re-created supplier has contacts %v, want none", contactIDs(got))
	}
}

func (w *writerHarness) testParts(t *testing.T) {
	com := w.community(t)
	sid := newID()
	w.put(t, com, NewRecord(sid, "Parts Ltd"))
	// Contacts: created in any order, listed by name (empty-insensitive
	// case rules of "Paging").
	names := []string{"mere", "Ana", "zoe", "Bob", "ana"}
	var ids []uuid.UUID
	model := &supplier.Record{}
	for _, n := range names {
		id := newID()
		ids = append(ids, id)
		c, err := w.st.PutContact(ctx, com, sid, newContact(id, n))
		if err != nil {
			t.Fatalf("PutContact: %v", err)
		}
		if c.ID != id || c.Name != n {
			t.Errorf("PutContact returned %s %q, want %s %q", c.ID, c.Name, id, n)
		}
		model.Contacts = append(model.Contacts, c)
		if d := w.get(t, com, sid); !d.ModifiedDate.Equal(c.ModifiedDate) {
			t.Errorf("after PutContact the supplier's modifiedDate is %s, want the contact's %s", d.ModifiedDate, c.ModifiedDate)
		}
	}
	got := w.contacts(t, com, sid)
	if diff := cmp.Diff(refContacts(model), contactIDs(got)); diff != "" {
		t.Errorf("contacts (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(model.Contacts, got, cmp.Transformer("sort", func(cs []supplier.Contact) []supplier.Contact {
		out := slices.Clone(cs)
		slices.SortFunc(out, func(a, b supplier.Contact) int { return compareID(a.ID, b.ID) })
		return out
	})); diff != "" {
		t.Errorf("the contacts listed differ from what PutContact returned (-returned +listed):\n%s", diff)
	}
	// Replace one: it moves in the order and keeps its createdDate.
	before := model.Contacts[0]
	c, err := w.st.PutContact(ctx, com, sid, newContact(ids[0], "Aaron"))
	if err != nil {
		t.Fatal(err)
	}
	if !c.CreatedDate.Equal(before.CreatedDate) || !c.ModifiedDate.After(before.ModifiedDate) {
		t.Errorf("replaced contact: created %s modified %s, want created kept (%s) and modified after %s", c.CreatedDate, c.ModifiedDate, before.CreatedDate, before.ModifiedDate)
	}
	model.Contacts[0] = c
	if diff := cmp.Diff(refContacts(model), contactIDs(w.contacts(t, com, sid))); diff != "" {
		t.Errorf("contacts after a replace (-want +got):\n%s", diff)
	}
	// Delete one: gone, and the supplier is stamped.
	prev := w.get(t, com, sid).ModifiedDate
	if err := w.st.DeleteContact(ctx, com, sid, ids[2]); err != nil {
		t.Fatalf("DeleteContact: %v", err)
	}
	model.Contacts = slices.DeleteFunc(model.Contacts, func(c supplier.Contact) bool { return c.ID == ids[2] })
	if diff := cmp.Diff(refContacts(model), contactIDs(w.contacts(t, com, sid))); diff != "" {
		t.Errorf("contacts after a delete (-want +got):\n%s", diff)
	}
	if d := w.get(t, com, sid); !d.ModifiedDate.After(prev) {
		t.Errorf("DeleteContact did not stamp the supplier: modifiedDate %s, before %s", d.ModifiedDate, prev)
	}
	wantNotFound(t, "DeleteContact of a contact that is gone", w.st.DeleteContact(ctx, com, sid, ids[2]))
	wantNotFound(t, "DeleteContact of an unknown supplier", w.st.DeleteContact(ctx, com, newID(), ids[1]))
	_, err = w.st.PutContact(ctx, com, newID(), newContact(newID(), "X"))
	wantNotFound(t, "PutContact to an unknown supplier", err)

	// Addresses: both orders and modifiedSince.
	var stamps []time.Time
	for _, n := range []string{"Kiwi", "", "apex", "Apex", "zulu"} {
		a, err := w.st.PutRemittanceAddress(ctx, com, sid, newAddress(newID(), n))
		if err != nil {
			t.Fatalf("PutRemittanceAddress: %v", err)
		}
		model.RemittanceAddresses = append(model.RemittanceAddresses, a)
		stamps = append(stamps, a.ModifiedDate)
		if d := w.get(t, com, sid); !d.ModifiedDate.Equal(a.ModifiedDate) {
			t.Errorf("after PutRemittanceAddress the supplier's modifiedDate is %s, want the address's %s", d.ModifiedDate, a.ModifiedDate)
		}
	}
	checkAddrs := func(what string) {
		t.Helper()
		for _, s := range []paging.Sort{{Field: "companyName"}, {Field: "companyName", Desc: true}, {Field: "modifiedDate"}, {Field: "modifiedDate", Desc: true}} {
			for _, since := range []time.Time{{}, stamps[2]} {
				q := supplier.AddressQuery{ModifiedSince: since, Page: paging.Request{Size: 100, Sort: s}}
				p, err := w.st.ListRemittanceAddresses(ctx, com, sid, q)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(refAddresses(model, q), addressIDs(p.Content)); diff != "" {
					t.Errorf("%s: addresses sorted %s since %s (-want +got):\n%s", what, s, since, diff)
				}
			}
		}
	}
	checkAddrs("after creates")
	a2, err := w.st.PutRemittanceAddress(ctx, com, sid, newAddress(model.RemittanceAddresses[0].ID, "Aardvark"))
	if err != nil {
		t.Fatal(err)
	}
	model.RemittanceAddresses[0] = a2
	checkAddrs("after a replace")
	prev = w.get(t, com, sid).ModifiedDate
	if err := w.st.DeleteRemittanceAddress(ctx, com, sid, model.RemittanceAddresses[1].ID); err != nil {
		t.Fatalf("DeleteRemittanceAddress: %v", err)
	}
	gone := model.RemittanceAddresses[1].ID
	model.RemittanceAddresses = slices.Delete(model.RemittanceAddresses, 1, 2)
	checkAddrs("after a delete")
	if d := w.get(t, com, sid); !d.ModifiedDate.After(prev) {
		t.Errorf("DeleteRemittanceAddress did not stamp the supplier")
	}
	wantNotFound(t, "DeleteRemittanceAddress twice", w.st.DeleteRemittanceAddress(ctx, com, sid, gone))
	_, err = w.st.PutRemittanceAddress(ctx, com, newID(), newAddress(newID(), "X"))
	wantNotFound(t, "PutRemittanceAddress to an unknown supplier", err)
	// The supplier's own detail is not changed by part writes (its default
	// contact and address are part of the detail).
	d := w.get(t, com, sid)
	if d.DefaultContact == nil || d.DefaultContact.Name != "Default Person" {
		t.Errorf("the default contact changed with the contacts: %+v", d.DefaultContact)
	}
}

func checkStamp(tb testing.TB, what string, got, notBefore time.Time) {
	tb.Helper()
	if got.Location() != time.UTC || got.Nanosecond()%1000 != 0 {
		tb.Errorf("%s: %s is not UTC at microsecond precision", what, got.Format(time.RFC3339Nano))
	}
	if got.Before(notBefore.Truncate(time.Microsecond)) {
		tb.Errorf("%s: stamped %s, before the write began (%s)", what, got.Format(time.RFC3339Nano), notBefore.Format(time.RFC3339Nano))
	}
	if got.After(time.Now().Add(time.Hour)) {
		tb.Errorf("%s: stamped %s, far in the future", what, got.Format(time.RFC3339Nano))
	}
}

func (w *writerHarness) testStamping(t *testing.T) {
	com := w.community(t)
	var last time.Time
	next := func(what string, got time.Time) {
		t.Helper()
		if !got.After(last) {
			t.Errorf("%s: modifiedDate %s is not after the previous write's %s", what, got.Format(time.RFC3339Nano), last.Format(time.RFC3339Nano))
		}
		last = got
	}
	ids := []uuid.UUID{newID(), newID(), newID()}
	created := map[uuid.UUID]time.Time{}
	old := time.Date(1999, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 30 {
		id := ids[i%3]
		r := NewRecord(id, fmt.Sprintf("Stamp %d", i))
		// Dates in the input are ignored.
		r.ModifiedDate, r.CreatedDate = old, old
		r.DefaultContact.ModifiedDate = old
		start := time.Now()
		d := w.put(t, com, r)
		checkStamp(t, "PutSupplier modifiedDate", d.ModifiedDate, start)
		next(fmt.Sprintf("write %d", i), d.ModifiedDate)
		if c, ok := created[id]; ok {
			if !d.CreatedDate.Equal(c) {
				t.Errorf("write %d: createdDate %s, want the first write's %s", i, d.CreatedDate, c)
			}
		} else {
			if !d.CreatedDate.Equal(d.ModifiedDate) {
				t.Errorf("write %d creates: createdDate %s, want the modifiedDate %s", i, d.CreatedDate, d.ModifiedDate)
			}
			created[id] = d.CreatedDate
		}
		if d.DefaultContact == nil || d.DefaultContact.ModifiedDate.Equal(old) || d.DefaultContact.CreatedDate.IsZero() {
			t.Errorf("write %d: the default contact's dates were not stamped: %+v", i, d.DefaultContact)
		}
		switch i % 3 {
		case 0:
			c, err := w.st.PutContact(ctx, com, id, supplier.Contact{ID: uuid.NewSHA1(id, []byte{byte(i)}), Name: "C", ModifiedDate: old, CreatedDate: old})
			if err != nil {
				t.Fatal(err)
			}
			checkStamp(t, "PutContact modifiedDate", c.ModifiedDate, start)
			next("PutContact", c.ModifiedDate)
			if !c.CreatedDate.Equal(c.ModifiedDate) {
				t.Errorf("a new contact: createdDate %s, want its modifiedDate %s", c.CreatedDate, c.ModifiedDate)
			}
		case 1:
			a := newAddress(uuid.NewSHA1(id, []byte{byte(i)}), "A")
			a.ModifiedDate, a.CreatedDate = old, old
			got, err := w.st.PutRemittanceAddress(ctx, com, id, a)
			if err != nil {
				t.Fatal(err)
			}
			checkStamp(t, "PutRemittanceAddress modifiedDate", got.ModifiedDate, start)
			next("PutRemittanceAddress", got.ModifiedDate)
		}
	}
	// The list sorted by modifiedDate, newest first, starts with the last
	// write; a modifiedSince of the last stamp (inclusive) finds just it.
	got, total := w.all(t, com, supplier.ListQuery{ModifiedSince: last})
	if total != 1 || len(got) != 1 || !got[0].ModifiedDate.Equal(last) {
		t.Errorf("modifiedSince=<last stamp>: %d matches, want exactly the last written supplier", total)
	}
	if _, total := w.all(t, com, supplier.ListQuery{ModifiedSince: last.Add(time.Microsecond)}); total != 0 {
		t.Errorf("modifiedSince=<last stamp + 1us>: %d matches, want 0", total)
	}
}

func (w *writerHarness) testNoOp(t *testing.T) {
	com := w.community(t)
	id := newID()
	r := NewRecord(id, "Same Name", "kw")
	d1 := w.put(t, com, r)
	cid, aid := newID(), newID()
	c1, err := w.st.PutContact(ctx, com, id, newContact(cid, "Same"))
	if err != nil {
		t.Fatal(err)
	}
	a1, err := w.st.PutRemittanceAddress(ctx, com, id, newAddress(aid, "Same"))
	if err != nil {
		t.Fatal(err)
	}
	stored := w.get(t, com, id)

	// The same content again, with other dates: nothing changes.
	r2 := NewRecord(id, "Same Name", "kw")
	r2.ModifiedDate, r2.CreatedDate = time.Now().Add(48*time.Hour), time.Now()
	d2 := w.put(t, com, r2)
	if !cmp.Equal(d2, stored) {
		t.Errorf("an unchanged PutSupplier returned something other than what is stored:\n%s", cmp.Diff(stored, d2))
	}
	c2, err := w.st.PutContact(ctx, com, id, newContact(cid, "Same"))
	if err != nil {
		t.Fatal(err)
	}
	if !cmp.Equal(c2, c1) {
		t.Errorf("an unchanged PutContact returned %+v, want the stored %+v", c2, c1)
	}
	a2, err := w.st.PutRemittanceAddress(ctx, com, id, newAddress(aid, "Same"))
	if err != nil {
		t.Fatal(err)
	}
	if !cmp.Equal(a2, a1) {
		t.Errorf("an unchanged PutRemittanceAddress returned %+v, want the stored %+v", a2, a1)
	}
	if got := w.get(t, com, id); !cmp.Equal(got, stored) {
		t.Errorf("unchanged writes changed the supplier:\n%s", cmp.Diff(stored, got))
	}
	after := stored.ModifiedDate.Add(time.Microsecond)
	if _, total := w.all(t, com, supplier.ListQuery{ModifiedSince: after}); total != 0 {
		t.Errorf("after unchanged writes, modifiedSince=<last stamp + 1us> finds %d suppliers, want none (nothing was stamped)", total)
	}
	// A change in keywords alone is a change.
	d3 := w.put(t, com, NewRecord(id, "Same Name", "other"))
	if !d3.ModifiedDate.After(stored.ModifiedDate) {
		t.Errorf("a keyword change was not stamped")
	}
	if !d3.CreatedDate.Equal(d1.CreatedDate) {
		t.Errorf("createdDate changed from %s to %s", d1.CreatedDate, d3.CreatedDate)
	}
}

// writeModel is what the suite expects a community to hold.
type writeModel struct {
	recs map[uuid.UUID]*supplier.Record
}

func (m *writeModel) list() []supplier.Record {
	out := make([]supplier.Record, 0, len(m.recs))
	for _, r := range m.recs {
		out = append(out, *r)
	}
	return out
}

var (
	writeNames = []string{"Kiwi Plumbing", "kiwi plumbing", "KIWI", "", "Ōtaki Foods", "otaki", "Apex", "apex", "Zeta Freight",
		"Kauri Timber", "Émile & Co", "123 Numbers", "(brackets)", "Harbour", "harbour freight", "Ünion"}
	writeKeywords = []string{"timber", "freight", "plumbing", "kiwifruit", "ōtaki", "Apex-1", "zz"}
)

func (w *writerHarness) randomWrite(tb testing.TB, rng *rand.Rand, com string, m *writeModel, pool []uuid.UUID) {
	tb.Helper()
	id := pool[rng.IntN(len(pool))]
	r, exists := m.recs[id]
	switch k := rng.IntN(10); {
	case k < 6 || !exists:
		rec := NewRecord(id, writeNames[rng.IntN(len(writeNames))])
		for range rng.IntN(3) {
			rec.Keywords = append(rec.Keywords, writeKeywords[rng.IntN(len(writeKeywords))])
		}
		if rng.IntN(4) == 0 {
			rec.LegalBusinessName = supplier.NewText("")
		}
		if rec.Name.String() == "" && rng.IntN(2) == 0 {
			// No name rather than an explicit empty one: both sort
			// last (docs: paging.md "Ordering").
			rec.Name = supplier.Text{}
		}
		d := w.put(tb, com, rec)
		nr := &supplier.Record{Detail: d, Keywords: rec.Keywords}
		if exists {
			nr.Contacts, nr.RemittanceAddresses = r.Contacts, r.RemittanceAddresses
		}
		m.recs[id] = nr
	case k < 8:
		c, err := w.st.PutContact(ctx, com, id, newContact(newID(), "c"))
		if err != nil {
			tb.Fatal(err)
		}
		d := w.get(tb, com, id)
		r.Detail = d
		r.Contacts = append(r.Contacts, c)
	default:
		if err := w.st.DeleteSupplier(ctx, com, id); err != nil {
			tb.Fatal(err)
		}
		delete(m.recs, id)
	}
}

// checkModel compares every list of com with the reference over m.
func (w *writerHarness) checkModel(t *testing.T, com string, m *writeModel, stamps []time.Time) {
	t.Helper()
	recs := m.list()
	sinces := []time.Time{{}}
	if len(stamps) > 0 {
		sinces = append(sinces, stamps[len(stamps)/2], stamps[len(stamps)-1])
	}
	for _, query := range []string{"", "k", "KIWI P", "ōt", "OT", "emile", "w-", "timber", "apex-"} {
		for _, since := range sinces {
			for _, s := range sorts {
				q := supplier.ListQuery{Query: query, ModifiedSince: since, Page: paging.Request{Sort: s}}
				want := Reference(recs, q)
				// Pages of 7, so that page boundaries fall inside the data.
				var got []uuid.UUID
				var items []supplier.Summary
				for p := 0; p*7 <= len(want); p++ {
					q.Page.Page, q.Page.Size = p, 7
					page, err := w.st.ListSuppliers(ctx, com, q)
					if err != nil {
						t.Fatalf("ListSuppliers(%s): %v", describe(q), err)
					}
					if page.Page.TotalElements != len(want) {
						t.Errorf("ListSuppliers(%s): total %d, want %d", describe(q), page.Page.TotalElements, len(want))
					}
					items = append(items, page.Content...)
					got = append(got, summaryIDs(page.Content)...)
				}
				if !slices.Equal(got, want) {
					t.Errorf("ListSuppliers(query=%q since=%s sort=%s) after writes:\n got %v\nwant %v", query, since.Format(time.RFC3339Nano), s, got, want)
					continue
				}
				for _, it := range items {
					if !cmp.Equal(it, m.recs[it.ID].Summary) {
						t.Errorf("listed summary differs from the one written (-written +listed):\n%s", cmp.Diff(m.recs[it.ID].Summary, it))
					}
				}
			}
		}
	}
	for id, r := range m.recs {
		if got := w.get(t, com, id); !cmp.Equal(got, r.Detail) {
			t.Errorf("Supplier(%s) differs from the last write:\n%s", id, cmp.Diff(r.Detail, got))
		}
		if got := w.contacts(t, com, id); !slices.Equal(contactIDs(got), refContacts(r)) {
			t.Errorf("ListContacts(%s) = %v, want %v", id, contactIDs(got), refContacts(r))
		}
	}
}

func (w *writerHarness) testListsAfterWrites(t *testing.T) {
	com := w.community(t)
	rng := rand.New(rand.NewPCG(9, 9))
	pool := make([]uuid.UUID, 40)
	for i := range pool {
		pool[i] = newID()
	}
	m := &writeModel{recs: map[uuid.UUID]*supplier.Record{}}
	var stamps []time.Time
	for round := range 4 {
		for range 40 {
			w.randomWrite(t, rng, com, m, pool)
		}
		stamps = stamps[:0]
		for _, r := range m.recs {
			stamps = append(stamps, r.ModifiedDate)
		}
		slices.SortFunc(stamps, time.Time.Compare)
		t.Run(fmt.Sprintf("round %d", round), func(t *testing.T) { w.checkModel(t, com, m, stamps) })
	}
}

// testPoll runs writers concurrently with a client that polls
// modifiedSince=<largest modifiedDate seen> (inclusive) sorted by
// modifiedDate; when the writers are done and the client has polled once
// more, its view must equal the final data.
func (w *writerHarness) testPoll(t *testing.T) {
	com := w.community(t)
	const writers, perWriter, suppliers = 4, 60, 30
	pool := make([]uuid.UUID, suppliers)
	for i := range pool {
		pool[i] = newID()
	}
	view := map[uuid.UUID]supplier.Summary{}
	var mark time.Time
	poll := func(tb testing.TB) {
		for {
			q := supplier.ListQuery{ModifiedSince: mark, Page: paging.Request{Size: 10, Sort: paging.Sort{Field: "modifiedDate"}}}
			page, err := w.st.ListSuppliers(ctx, com, q)
			if err != nil {
				tb.Errorf("poll: %v", err)
				return
			}
			fresh := false
			for _, s := range page.Content {
				if s.ModifiedDate.Before(mark) {
					tb.Errorf("poll since %s returned %s modified %s", mark, s.ID, s.ModifiedDate)
				}
				if old, ok := view[s.ID]; !ok || !old.ModifiedDate.Equal(s.ModifiedDate) || !cmp.Equal(old, s) {
					fresh = true
				}
				view[s.ID] = s
				if s.ModifiedDate.After(mark) {
					mark = s.ModifiedDate
				}
			}
			if !fresh {
				return
			}
		}
	}
	var wg sync.WaitGroup
	done := make(chan struct{})
	errs := make(chan error, writers)
	for g := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(g), 7))
			for i := range perWriter {
				id := pool[rng.IntN(len(pool))]
				var err error
				if i%5 == 4 {
					_, err = w.st.PutContact(ctx, com, id, newContact(newID(), "c"))
					if errors.Is(err, supplier.ErrNotFound) {
						err = nil // not created yet
					}
				} else {
					_, err = w.st.PutSupplier(ctx, com, NewRecord(id, fmt.Sprintf("%s %d %d", writeNames[rng.IntN(len(writeNames))], g, i)))
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	go func() { wg.Wait(); close(done) }()
	polls := 0
	for running := true; running; polls++ {
		select {
		case <-done:
			running = false
		default:
		}
		poll(t)
	}
	poll(t)
	close(errs)
	for err := range errs {
		t.Fatalf("writer: %v", err)
	}
	final, _ := w.all(t, com, supplier.ListQuery{})
	want := map[uuid.UUID]supplier.Summary{}
	for _, s := range final {
		want[s.ID] = s
	}
	if diff := cmp.Diff(want, view); diff != "" {
		t.Errorf("after %d polls the client's view differs from the final data (-final +view):\n%s", polls, diff)
	}
}

func (w *writerHarness) testWriteTenancy(t *testing.T) {
	a, b := w.community(t), w.community(t)
	id := newID()
	w.put(t, a, NewRecord(id, "Tenant A"))
	cid := newID()
	if _, err := w.st.PutContact(ctx, a, id, newContact(cid, "A's")); err != nil {
		t.Fatal(err)
	}
	da := w.get(t, a, id)
	_, err := w.st.PutContact(ctx, b, id, newContact(newID(), "X"))
	wantNotFound(t, "PutContact through another community", err)
	_, err = w.st.PutRemittanceAddress(ctx, b, id, newAddress(newID(), "X"))
	wantNotFound(t, "PutRemittanceAddress through another community", err)
	wantNotFound(t, "DeleteContact through another community", w.st.DeleteContact(ctx, b, id, cid))
	wantNotFound(t, "DeleteSupplier through another community", w.st.DeleteSupplier(ctx, b, id))
	// The same id in another community is another supplier.
	db := w.put(t, b, NewRecord(id, "Tenant B"))
	if got := w.get(t, a, id); !cmp.Equal(got, da) {
		t.Errorf("a write in community B changed A's supplier:\n%s", cmp.Diff(da, got))
	}
	if db.Name.String() != "Tenant B" || len(w.contacts(t, b, id)) != 0 {
		t.Errorf("B's supplier %q has A's contacts", db.Name)
	}
	if err := w.st.DeleteSupplier(ctx, b, id); err != nil {
		t.Fatal(err)
	}
	if got := w.get(t, a, id); !cmp.Equal(got, da) || len(w.contacts(t, a, id)) != 1 {
		t.Errorf("deleting B's supplier removed A's")
	}

	unknown := "w-no-such-community"
	checks := map[string]error{}
	_, checks["PutSupplier"] = w.st.PutSupplier(ctx, unknown, NewRecord(newID(), "X"))
	checks["DeleteSupplier"] = w.st.DeleteSupplier(ctx, unknown, id)
	_, checks["PutContact"] = w.st.PutContact(ctx, unknown, id, newContact(newID(), "X"))
	checks["DeleteContact"] = w.st.DeleteContact(ctx, unknown, id, cid)
	_, checks["PutRemittanceAddress"] = w.st.PutRemittanceAddress(ctx, unknown, id, newAddress(newID(), "X"))
	checks["DeleteRemittanceAddress"] = w.st.DeleteRemittanceAddress(ctx, unknown, id, cid)
	for m, err := range checks {
		if !errors.Is(err, procure.ErrUnknownCommunity) {
			t.Errorf("%s in an unknown community: err = %v, want one matching procure.ErrUnknownCommunity", m, err)
		}
	}
}

func fieldNames(err error) []string {
	var v *procure.ValidationError
	if !errors.As(err, &v) {
		return nil
	}
	var out []string
	for _, f := range v.Fields {
		out = append(out, f.Field)
	}
	return out
}

func (w *writerHarness) testValidation(t *testing.T) {
	com := w.community(t)
	sid := newID()
	w.put(t, com, NewRecord(sid, "Valid"))
	before := w.get(t, com, sid)
	long := fmt.Sprintf("%0256d", 0) // 256 characters: one over the limit
	tests := []struct {
		name  string
		write func(id uuid.UUID) error
		field string
	}{
		{"supplier email", func(id uuid.UUID) error {
			r := NewRecord(id, "X")
			r.DefaultEmailAddress = supplier.NewText("not an email")
			_, err := w.st.PutSupplier(ctx, com, r)
			return err
		}, "defaultEmailAddress"},
		{"supplier name too long", func(id uuid.UUID) error {
			_, err := w.st.PutSupplier(ctx, com, NewRecord(id, long))
			return err
		}, "name"},
		{"supplier nil id", func(uuid.UUID) error { _, err := w.st.PutSupplier(ctx, com, NewRecord(uuid.Nil, "X")); return err }, "id"},
		{"supplier with contacts", func(id uuid.UUID) error {
			r := NewRecord(id, "X")
			r.Contacts = []supplier.Contact{newContact(newID(), "c")}
			_, err := w.st.PutSupplier(ctx, com, r)
			return err
		}, "contacts"},
		{"supplier default contact without a name", func(id uuid.UUID) error {
			r := NewRecord(id, "X")
			r.DefaultContact.Name = ""
			_, err := w.st.PutSupplier(ctx, com, r)
			return err
		}, "defaultContact.name"},
		{"contact without a name", func(uuid.UUID) error {
			_, err := w.st.PutContact(ctx, com, sid, newContact(newID(), ""))
			return err
		}, "name"},
		{"contact nil id", func(uuid.UUID) error {
			_, err := w.st.PutContact(ctx, com, sid, newContact(uuid.Nil, "c"))
			return err
		}, "id"},
		{"contact bad email", func(uuid.UUID) error {
			c := newContact(newID(), "c")
			c.Email = supplier.NewText("nope")
			_, err := w.st.PutContact(ctx, com, sid, c)
			return err
		}, "email"},
		{"address without line1", func(uuid.UUID) error {
			a := newAddress(newID(), "a")
			a.Address.Line1 = ""
			_, err := w.st.PutRemittanceAddress(ctx, com, sid, a)
			return err
		}, "address.line1"},
		// Instants must fall within the years 1 to 9999 in UTC
		// (docs: values.md "Dates"), even the dates a write ignores.
		{"supplier tinLastVerifiedDate in year 10000 in UTC", func(id uuid.UUID) error {
			r := NewRecord(id, "X")
			tin := time.Date(9999, 12, 31, 23, 30, 0, 0, time.FixedZone("", -3600))
			r.TinLastVerifiedDate = &tin
			_, err := w.st.PutSupplier(ctx, com, r)
			return err
		}, "tinLastVerifiedDate"},
		{"supplier default contact createdDate in year 0 in UTC", func(id uuid.UUID) error {
			r := NewRecord(id, "X")
			r.DefaultContact.CreatedDate = time.Date(1, 1, 1, 0, 30, 0, 0, time.FixedZone("", 3600))
			_, err := w.st.PutSupplier(ctx, com, r)
			return err
		}, "defaultContact.createdDate"},
		// Text a store cannot hold (docs: values.md "Text"): both
		// stores refuse it alike, naming the field, at any depth.
		{"NUL in a supplier name", func(id uuid.UUID) error {
			_, err := w.st.PutSupplier(ctx, com, NewRecord(id, "a\x00b"))
			return err
		}, "name"},
		{"invalid UTF-8 in a keyword", func(id uuid.UUID) error {
			_, err := w.st.PutSupplier(ctx, com, NewRecord(id, "X", "ok", "\xff"))
			return err
		}, "keywords[1]"},
		{"NUL in the default address's region", func(id uuid.UUID) error {
			r := NewRecord(id, "X")
			r.DefaultRemittanceAddress.Address.Region.Name = supplier.NewText("x\x00")
			_, err := w.st.PutSupplier(ctx, com, r)
			return err
		}, "defaultRemittanceAddress.address.region.name"},
		{"NUL in a contact's phone", func(uuid.UUID) error {
			c := newContact(newID(), "c")
			c.Phone.Number = supplier.NewText("1\x00")
			_, err := w.st.PutContact(ctx, com, sid, c)
			return err
		}, "phone.number"},
		{"invalid UTF-8 in an address's city", func(uuid.UUID) error {
			a := newAddress(newID(), "a")
			a.Address.City = "\xc3"
			_, err := w.st.PutRemittanceAddress(ctx, com, sid, a)
			return err
		}, "address.city"},
		{"contact modifiedDate in year 10000", func(uuid.UUID) error {
			c := newContact(newID(), "c")
			c.ModifiedDate = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)
			_, err := w.st.PutContact(ctx, com, sid, c)
			return err
		}, "modifiedDate"},
		{"address createdDate in year 10000", func(uuid.UUID) error {
			a := newAddress(newID(), "a")
			a.CreatedDate = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)
			_, err := w.st.PutRemittanceAddress(ctx, com, sid, a)
			return err
		}, "createdDate"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id := newID()
			err := tt.write(id)
			if !errors.Is(err, procure.ErrInvalid) {
				t.Fatalf("err = %v, want a validation error", err)
			}
			if names := fieldNames(err); !slices.Contains(names, tt.field) {
				t.Errorf("the error names %q, want %q among them", names, tt.field)
			}
			_, err = w.st.Supplier(ctx, com, id)
			wantNotFound(t, "Supplier after a rejected write", err)
		})
	}
	// Nothing was written: the valid supplier is as it was, with no parts.
	if got := w.get(t, com, sid); !cmp.Equal(got, before) {
		t.Errorf("rejected writes changed the supplier:\n%s", cmp.Diff(before, got))
	}
	if got := w.contacts(t, com, sid); len(got) != 0 {
		t.Errorf("a rejected contact was stored: %v", contactIDs(got))
	}
	if got := w.addresses(t, com, sid); len(got) != 0 {
		t.Errorf("a rejected address was stored: %v", addressIDs(got))
	}
	if _, total := w.all(t, com, supplier.ListQuery{}); total != 1 {
		t.Errorf("after rejected writes the community lists %d suppliers, want 1", total)
	}
}

func (w *writerHarness) testAliasing(t *testing.T) {
	com := w.community(t)
	id := newID()
	r := NewRecord(id, "Alias", "kw")
	want := w.put(t, com, r)
	wantCopy := w.get(t, com, id)
	// Scribble over everything the input pointed to.
	r.Keywords[0] = "scribbled"
	r.DefaultContact.Name = "scribbled"
	r.DefaultContact.Phone.Number = supplier.NewText("0")
	r.DefaultRemittanceAddress.Address.Region.Name = supplier.NewText("scribbled")
	r.Settings.BuyerGroups[0].Name = "scribbled"
	r.Settings.Tags[0].Name = "scribbled"
	*r.Settings.PaymentTerm.Days = 99
	r.Settings.PaymentTerm.Code = "scribbled"
	if got := w.get(t, com, id); !cmp.Equal(got, wantCopy) || !cmp.Equal(got, want) {
		t.Errorf("changing the input after PutSupplier changed the store:\n%s", cmp.Diff(wantCopy, got))
	}
	if _, total := w.all(t, com, supplier.ListQuery{Query: "scribbled"}); total != 0 {
		t.Errorf("the store's keywords alias the input")
	}
	c := newContact(newID(), "Contact")
	if _, err := w.st.PutContact(ctx, com, id, c); err != nil {
		t.Fatal(err)
	}
	c.Phone.Number = supplier.NewText("scribbled")
	a := newAddress(newID(), "Addr")
	if _, err := w.st.PutRemittanceAddress(ctx, com, id, a); err != nil {
		t.Fatal(err)
	}
	a.Address.Region.Code = supplier.NewText("scribbled")
	if got := w.contacts(t, com, id); len(got) != 1 || got[0].Phone.Number.String() != "021555" {
		t.Errorf("changing the input after PutContact changed the store: %+v", got)
	}
	if got := w.addresses(t, com, id); len(got) != 1 || got[0].Address.Region.Code.String() != "WGN" {
		t.Errorf("changing the input after PutRemittanceAddress changed the store: %+v", got)
	}
}

// testEmptyText checks docs: values.md "Round trip" on writes: a text
// field written as "" reads back as "", no value as no value, at any
// depth, and "" becoming no value is a change.
func (w *writerHarness) testEmptyText(t *testing.T) {
	com := w.community(t)
	id := newID()
	empty := supplier.NewText("")
	r := NewRecord(id, "Empty Text")
	r.BusinessNumber = empty
	r.FirstName = supplier.Text{}
	r.DefaultContact.Email = empty
	r.DefaultRemittanceAddress.Address.Region.Code = empty
	r.BankAccount = &supplier.BankAccount{ID: newID(), Country: "NZ", BankName: empty, Address: &supplier.Address{Line1: "1", City: "W", Country: "NZ", Line2: empty}}
	r.Emails = &supplier.Emails{OrdersEmailAddress: empty}
	check := func(what string, d supplier.Detail) {
		t.Helper()
		got := []supplier.Text{d.BusinessNumber, d.FirstName, d.DefaultContact.Email, d.DefaultRemittanceAddress.Address.Region.Code,
			d.BankAccount.BankName, d.BankAccount.Address.Line2, d.BankAccount.Address.Line3, d.Emails.OrdersEmailAddress, d.Emails.RfqsEmailAddress}
		want := []supplier.Text{empty, {}, empty, empty, empty, empty, {}, empty, {}}
		if !slices.Equal(got, want) {
			t.Errorf("%s: texts %q (zero: %v); want \"\" and no value where written", what, got, zeros(got))
		}
	}
	d := w.put(t, com, r)
	check("PutSupplier", d)
	got := w.get(t, com, id)
	check("Supplier", got)
	if !cmp.Equal(got, d) {
		t.Errorf("Supplier differs from what PutSupplier returned:\n%s", cmp.Diff(d, got))
	}
	items, _ := w.all(t, com, supplier.ListQuery{})
	if len(items) != 1 || items[0].BusinessNumber != empty || !items[0].FirstName.IsZero() {
		t.Errorf("the list's summary: %+v; want businessNumber \"\" and no firstName", items)
	}
	// The same content again is no change; "" becoming no value is one.
	if d2 := w.put(t, com, r); !d2.ModifiedDate.Equal(d.ModifiedDate) {
		t.Errorf("an unchanged write (same empty texts) was stamped")
	}
	r.BusinessNumber = supplier.Text{}
	if d3 := w.put(t, com, r); !d3.ModifiedDate.After(d.ModifiedDate) || !d3.BusinessNumber.IsZero() {
		t.Errorf("\"\" becoming no value: modified %s (before %s), businessNumber %q; want a stamped change and no value", d3.ModifiedDate, d.ModifiedDate, d3.BusinessNumber)
	}
	c := newContact(newID(), "Contact")
	c.Email = empty
	c.Phone.Extension = empty
	gc, err := w.st.PutContact(ctx, com, id, c)
	if err != nil {
		t.Fatal(err)
	}
	if gc.Email != empty || gc.Phone.Extension != empty || !gc.Phone.Prefix.IsZero() {
		t.Errorf("PutContact returned %+v; want email and phone.extension \"\", no phone.prefix", gc)
	}
	if cs := w.contacts(t, com, id); len(cs) != 1 || cs[0].Email != empty || cs[0].Phone.Extension != empty || !cs[0].Phone.Prefix.IsZero() {
		t.Errorf("listed contact: %+v", cs)
	}
	a := newAddress(newID(), "")
	a.Code = supplier.Text{}
	ga, err := w.st.PutRemittanceAddress(ctx, com, id, a)
	if err != nil {
		t.Fatal(err)
	}
	if ga.CompanyName != empty || !ga.Code.IsZero() {
		t.Errorf("PutRemittanceAddress returned %+v; want companyName \"\" and no code", ga)
	}
	if as := w.addresses(t, com, id); len(as) != 1 || as[0].CompanyName != empty || !as[0].Code.IsZero() {
		t.Errorf("listed address: %+v", as)
	}
}

// zeros reports which of ts have no value.
func zeros(ts []supplier.Text) []bool {
	out := make([]bool, len(ts))
	for i, t := range ts {
		out[i] = t.IsZero()
	}
	return out
}
