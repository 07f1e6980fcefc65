package pgstore

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/google/uuid"

	"github.com/procurekit/procure/paging"
	"github.com/procurekit/procure/supplier"
)

// A put whose community the node's cache serves is planned from the cache
// (write_fast.go: no read before the lock) when the cache shows it to
// change something; a no-op, and a put the cache is behind for (another
// node's write of the supplier, not synced yet), end as the database
// says: the no-op read from it, the stale plan redone under the lock.
// Either way the write is stamped from the database's clock, and the
// database and the writing node's cache agree.
func TestPutPlannedFromCache(t *testing.T) {
	ctx := context.Background()
	x := uuid.MustParse("00000000-0000-4000-8000-0000000000b1")
	y := uuid.MustParse("00000000-0000-4000-8000-0000000000b2")
	contactID := uuid.MustParse("00000000-0000-4000-8000-0000000000c1")
	addressID := uuid.MustParse("00000000-0000-4000-8000-0000000000d1")
	contact := func(name string) supplier.Contact {
		return supplier.Contact{ID: contactID, Name: name, Email: supplier.NewText("c@example.com")}
	}
	address := func(line string) supplier.RemittanceAddress {
		return supplier.RemittanceAddress{ID: addressID, Address: supplier.Address{Line1: line, City: "Wellington", Country: "NZ"}}
	}
	withDefault := func(id uuid.UUID, name, contactName string) supplier.Record {
		r := company(id, name)
		c := contact(contactName)
		r.DefaultContact = &c
		return r
	}
	// put is what a case's write answers: the modifiedDate it stamped (the
	// stored one for a no-op) and its createdDate.
	type put struct{ modified, created time.Time }
	putSupplier := func(s *Store, r supplier.Record) (put, error) {
		d, err := s.PutSupplier(ctx, "c1", r)
		return put{d.ModifiedDate, d.CreatedDate}, err
	}
	putContact := func(s *Store, c supplier.Contact) (put, error) {
		c, err := s.PutContact(ctx, "c1", x, c)
		return put{c.ModifiedDate, c.CreatedDate}, err
	}
	putAddress := func(s *Store, a supplier.RemittanceAddress) (put, error) {
		a, err := s.PutRemittanceAddress(ctx, "c1", x, a)
		return put{a.ModifiedDate, a.CreatedDate}, err
	}
	// before is what the case writes first; other is the node without a
	// cache, a the node under test, whose syncs are held off throughout.
	cases := []struct {
		name   string
		before func(t *testing.T, a, other *Store) time.Time // the createdDate the write must keep (zero: its own stamp)
		do     func(a *Store) (put, error)
		// from the cache, optimistic (read first), redone under the lock;
		// all zero: a no-op, nothing written.
		cache, optimistic, redone int64
		onY                       bool // the write is of supplier y, not x
		check                     func(t *testing.T, d supplier.Detail, contacts []supplier.Contact, addrs []supplier.RemittanceAddress)
	}{
		{name: "a changed supplier",
			before: func(*testing.T, *Store, *Store) time.Time { return cachedDay },
			do:     func(a *Store) (put, error) { return putSupplier(a, company(x, "renamed")) },
			cache:  1,
			check: func(t *testing.T, d supplier.Detail, _ []supplier.Contact, _ []supplier.RemittanceAddress) {
				if d.Name.String() != "renamed" {
					t.Errorf("x is named %q; want renamed", d.Name.String())
				}
			}},
		{name: "a new supplier",
			do:    func(a *Store) (put, error) { return putSupplier(a, company(y, "new")) },
			cache: 1, onY: true},
		{name: "an unchanged supplier",
			do: func(a *Store) (put, error) { return putSupplier(a, company(x, "x0")) }},
		{name: "a new contact",
			do:    func(a *Store) (put, error) { return putContact(a, contact("First")) },
			cache: 1},
		{name: "a changed contact",
			before: func(t *testing.T, a, _ *Store) time.Time {
				p, err := putContact(a, contact("First"))
				if err != nil {
					t.Fatal(err)
				}
				return p.created
			},
			do:    func(a *Store) (put, error) { return putContact(a, contact("Second")) },
			cache: 1,
			check: func(t *testing.T, _ supplier.Detail, contacts []supplier.Contact, _ []supplier.RemittanceAddress) {
				if len(contacts) != 1 || contacts[0].Name != "Second" {
					t.Errorf("contacts %+v; want the one named Second", contacts)
				}
			}},
		{name: "an unchanged contact",
			before: func(t *testing.T, a, _ *Store) time.Time {
				if _, err := putContact(a, contact("First")); err != nil {
					t.Fatal(err)
				}
				return time.Time{}
			},
			do: func(a *Store) (put, error) { return putContact(a, contact("First")) }},
		{name: "a changed address",
			before: func(t *testing.T, a, _ *Store) time.Time {
				p, err := putAddress(a, address("1 First St"))
				if err != nil {
					t.Fatal(err)
				}
				return p.created
			},
			do:    func(a *Store) (put, error) { return putAddress(a, address("2 Second St")) },
			cache: 1,
			check: func(t *testing.T, _ supplier.Detail, _ []supplier.Contact, addrs []supplier.RemittanceAddress) {
				if len(addrs) != 1 || addrs[0].Address.Line1 != "2 Second St" {
					t.Errorf("addresses %+v; want the one at 2 Second St", addrs)
				}
			}},
		{name: "a supplier another node changed meanwhile",
			// The same default contact as theirs: kept with their dates,
			// which only the stored record shows.
			before: func(t *testing.T, _, other *Store) time.Time {
				if _, err := putSupplier(other, withDefault(x, "theirs", "Shared")); err != nil {
					t.Fatal(err)
				}
				return cachedDay
			},
			do:     func(a *Store) (put, error) { return putSupplier(a, withDefault(x, "mine", "Shared")) },
			redone: 1,
			check: func(t *testing.T, d supplier.Detail, _ []supplier.Contact, _ []supplier.RemittanceAddress) {
				if d.Name.String() != "mine" {
					t.Errorf("x is named %q; want mine", d.Name.String())
				}
				if c := d.DefaultContact; c == nil || !c.ModifiedDate.Before(d.ModifiedDate) {
					t.Errorf("x's default contact %+v; want the other node's dates, before x's %v", c, d.ModifiedDate)
				}
			}},
		{name: "a supplier another node changed meanwhile, put back as the cache holds it",
			// No no-op from the cache: the database holds theirs.
			before: func(t *testing.T, _, other *Store) time.Time {
				if _, err := putSupplier(other, company(x, "theirs")); err != nil {
					t.Fatal(err)
				}
				return cachedDay
			},
			do:         func(a *Store) (put, error) { return putSupplier(a, company(x, "x0")) },
			optimistic: 1,
			check: func(t *testing.T, d supplier.Detail, _ []supplier.Contact, _ []supplier.RemittanceAddress) {
				if d.Name.String() != "x0" {
					t.Errorf("x is named %q; want x0 again", d.Name.String())
				}
			}},
		{name: "a supplier another node created meanwhile",
			before: func(t *testing.T, _, other *Store) time.Time {
				p, err := putSupplier(other, company(y, "theirs"))
				if err != nil {
					t.Fatal(err)
				}
				return p.created
			},
			do:     func(a *Store) (put, error) { return putSupplier(a, company(y, "mine")) },
			redone: 1, onY: true},
		{name: "a contact of a supplier another node changed meanwhile",
			before: func(t *testing.T, _, other *Store) time.Time {
				if _, err := putSupplier(other, company(x, "theirs")); err != nil {
					t.Fatal(err)
				}
				return time.Time{}
			},
			do:     func(a *Store) (put, error) { return putContact(a, contact("First")) },
			redone: 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a, other := cachedPair(t, company(x, "x0"))
			cc := a.cache.entry("c1")
			cc.syncMu.Lock() // no sync: the cache moves by a's own writes only
			held := true
			release := func() {
				if held {
					held = false
					cc.syncMu.Unlock()
				}
			}
			defer release()
			var keep time.Time
			if tc.before != nil {
				keep = tc.before(t, a, other)
			}
			// However long the case took so far, the cache counts as
			// synced now: it serves, and so plans.
			cc.applyMu.Lock()
			st := *cc.state.Load()
			st.syncedAt = time.Now()
			cc.storeState(&st)
			cc.applyMu.Unlock()

			clock := func() time.Time {
				var now time.Time
				if err := other.pool.QueryRow(ctx, `SELECT clock_timestamp()`).Scan(&now); err != nil {
					t.Fatal(err)
				}
				return now.UTC()
			}
			var mark *time.Time
			if err := other.pool.QueryRow(ctx, `SELECT last_modified FROM communities WHERE id = 'c1'`).Scan(&mark); err != nil {
				t.Fatal(err)
			}
			cache0, fast0, raced0 := a.writesFromCache.Load(), a.writesFast.Load(), a.writesRaced.Load()
			start := clock()
			got, err := tc.do(a)
			if err != nil {
				t.Fatal(err)
			}
			end := clock()
			cached, fast, raced := a.writesFromCache.Load()-cache0, a.writesFast.Load()-fast0, a.writesRaced.Load()-raced0
			if cached != tc.cache || fast-cached != tc.optimistic || raced != tc.redone {
				t.Errorf("puts from the cache %d, optimistic %d, redone %d; want %d, %d, %d", cached, fast-cached, raced, tc.cache, tc.optimistic, tc.redone)
			}

			var after *time.Time
			if err := other.pool.QueryRow(ctx, `SELECT last_modified FROM communities WHERE id = 'c1'`).Scan(&after); err != nil {
				t.Fatal(err)
			}
			if tc.cache+tc.optimistic+tc.redone == 0 {
				// A no-op: nothing stamped, the stored dates answered.
				if (mark == nil) != (after == nil) || (mark != nil && !mark.Equal(*after)) {
					t.Errorf("a no-op moved the mark from %v to %v", mark, after)
				}
				if got.modified.After(*mark) {
					t.Errorf("the no-op answered modifiedDate %v, past the mark %v", got.modified, *mark)
				}
			} else {
				// The database's clock, read under the lock: not the
				// planned placeholder (the mark + 1 µs).
				if got.modified.Before(start) || got.modified.After(end) || after == nil || !got.modified.Equal(*after) {
					t.Errorf("stamped %v, mark now %v; want the mark, the database's clock between %v and %v", got.modified, after, start, end)
				}
				want := keep
				if want.IsZero() {
					want = got.modified
				}
				if !got.created.Equal(want) {
					t.Errorf("createdDate %v; want %v", got.created, want)
				}
			}

			id := x
			if tc.onY {
				id = y
			}
			fromDB, err := other.Supplier(ctx, "c1", id)
			if err != nil {
				t.Fatal(err)
			}
			contacts, err := other.ListContacts(ctx, "c1", id, paging.Request{Size: 20})
			if err != nil {
				t.Fatal(err)
			}
			addrs, err := other.ListRemittanceAddresses(ctx, "c1", id, supplier.AddressQuery{Page: paging.Request{Size: 20}})
			if err != nil {
				t.Fatal(err)
			}
			if tc.check != nil {
				tc.check(t, fromDB, contacts.Content, addrs.Content)
			}
			checkBuckets(t, other, "c1")
			checkTerms(t, other, "c1")

			release()
			fromCache, err := a.Supplier(ctx, "c1", id)
			if err != nil {
				t.Fatal(err)
			}
			cachedContacts, err := a.ListContacts(ctx, "c1", id, paging.Request{Size: 20})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(fromDB, fromCache); diff != "" {
				t.Errorf("the writing node's cache differs from the database (-db +cache):\n%s", diff)
			}
			if diff := cmp.Diff(contacts.Content, cachedContacts.Content, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("the writing node's cached contacts differ from the database's (-db +cache):\n%s", diff)
			}
		})
	}
}
