package pgstore

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/procurekit/procure/datafile"
	"github.com/procurekit/procure/internal/pgtest"
	"github.com/procurekit/procure/paging"
	"github.com/procurekit/procure/supplier"
)

// A put planned outside the lock (write_fast.go) that another write
// overtakes between its plan and its lock gets a stamp above the other
// write's and leaves the database, the counts, the buckets and the
// writing node's cache exactly as if the two had run one after the other:
// in one round trip under the lock when the other write changed another
// supplier (the guard restamps it), redone under the lock when it changed
// what the put replaces.
func TestOptimisticWriteRaced(t *testing.T) {
	ctx := context.Background()
	x, y := uuid.MustParse("00000000-0000-4000-8000-0000000000a1"), uuid.MustParse("00000000-0000-4000-8000-0000000000a2")
	contactID := uuid.MustParse("00000000-0000-4000-8000-0000000000c1")
	rec := company
	contact := func(name string) supplier.Contact {
		return supplier.Contact{ID: contactID, Name: name, Email: supplier.NewText("c@example.com")}
	}

	// The write under test, and what it leaves on x when it won.
	type write struct {
		name string
		// do returns the modifiedDate the put answered with.
		do    func(s *Store) (time.Time, error)
		check func(t *testing.T, d supplier.Detail, contacts []supplier.Contact)
	}
	writes := []write{
		{"put supplier", func(s *Store) (time.Time, error) {
			r := rec(x, "mine")
			c := contact("Default")
			r.DefaultContact = &c // a date in the details document
			d, err := s.PutSupplier(ctx, "c1", r)
			return d.ModifiedDate, err
		},
			func(t *testing.T, d supplier.Detail, _ []supplier.Contact) {
				if d.Name.String() != "mine" {
					t.Errorf("x is named %q; want the put's %q", d.Name.String(), "mine")
				}
				if c := d.DefaultContact; c == nil || !c.ModifiedDate.Equal(d.ModifiedDate) || !c.CreatedDate.Equal(d.ModifiedDate) {
					t.Errorf("x's new default contact %+v; want it stamped with x (%v)", c, d.ModifiedDate)
				}
			}},
		{"put contact", func(s *Store) (time.Time, error) {
			c, err := s.PutContact(ctx, "c1", x, contact("Mine"))
			return c.ModifiedDate, err
		},
			func(t *testing.T, d supplier.Detail, contacts []supplier.Contact) {
				if len(contacts) != 1 || contacts[0].Name != "Mine" || !contacts[0].ModifiedDate.Equal(d.ModifiedDate) {
					t.Errorf("x's contacts are %+v; want the put's one contact named Mine, stamped with x (%v)", contacts, d.ModifiedDate)
				}
			}},
	}
	// What overtakes it, and whether the put must be redone.
	others := []struct {
		name   string
		do     func(t *testing.T, s *Store)
		redone bool
	}{
		{"nothing", func(*testing.T, *Store) {}, false},
		{"a put of another supplier", func(t *testing.T, s *Store) {
			if _, err := s.PutSupplier(ctx, "c1", rec(y, "y1")); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"a put of the same supplier", func(t *testing.T, s *Store) {
			if _, err := s.PutSupplier(ctx, "c1", rec(x, "theirs")); err != nil {
				t.Fatal(err)
			}
		}, true},
		{"a contact of the same supplier", func(t *testing.T, s *Store) {
			if _, err := s.PutContact(ctx, "c1", x, contact("Theirs")); err != nil {
				t.Fatal(err)
			}
		}, true},
		{"an import's generation", func(t *testing.T, s *Store) {
			if _, err := s.pool.Exec(ctx, `UPDATE communities SET supplier_generation = supplier_generation + 1 WHERE id = 'c1'`); err != nil {
				t.Fatal(err)
			}
		}, true},
	}
	for _, w := range writes {
		for _, o := range others {
			t.Run(w.name+" overtaken by "+o.name, func(t *testing.T) {
				a, other := cachedPair(t, rec(x, "x0"))

				var between time.Time // the mark the other write left
				fired := false
				a.afterPlan = func() {
					if fired {
						return
					}
					fired = true
					o.do(t, a)
					if err := other.pool.QueryRow(ctx, `SELECT coalesce(last_modified, '-infinity') FROM communities WHERE id = 'c1'`).Scan(&between); err != nil {
						t.Fatal(err)
					}
				}
				// The other write is this node's: the cache applies it, and
				// then the put, from what they wrote, with no sync (held
				// off until the end).
				cc := a.cache.entry("c1")
				cc.syncMu.Lock()
				synced := false
				sync := func() {
					if !synced {
						synced = true
						cc.syncMu.Unlock()
					}
				}
				defer sync()
				fast0, raced0 := a.writesFast.Load(), a.writesRaced.Load()
				answered, err := w.do(a)
				if err != nil {
					t.Fatal(err)
				}
				fast0++ // the other write's, when it is a put
				if o.name == "nothing" || o.name == "an import's generation" {
					fast0--
				}
				if !fired {
					t.Fatal("the write was not planned outside the lock")
				}
				fast, raced := a.writesFast.Load()-fast0, a.writesRaced.Load()-raced0
				want := int64(0)
				if o.redone {
					want = 1
				}
				if raced != want || fast != 1-want {
					t.Errorf("optimistic commits %d, redone %d; want %d and %d", fast, raced, 1-want, want)
				}

				// The put is the community's latest write, stamped above
				// what overtook it.
				var mark, xModified time.Time
				var count, real int64
				if err := other.pool.QueryRow(ctx, `SELECT c.last_modified, c.supplier_count,
					(SELECT modified_date FROM suppliers WHERE community_id = 'c1' AND id = $1),
					(SELECT count(*) FROM suppliers WHERE community_id = 'c1')
					FROM communities c WHERE c.id = 'c1'`, x).Scan(&mark, &count, &xModified, &real); err != nil {
					t.Fatal(err)
				}
				if !xModified.Equal(mark) || !mark.After(between) || !answered.Equal(mark) {
					t.Errorf("x stamped %v, the put answered %v, mark %v, the other write's mark %v; want x = answer = mark > other",
						xModified, answered, mark, between)
				}
				if count != real {
					t.Errorf("supplier_count %d; the community has %d", count, real)
				}
				checkBuckets(t, other, "c1")
				checkTerms(t, other, "c1")

				// The database, read by a node without a cache, and the
				// writing node's cache agree, and hold the put.
				fromDB, err := other.Supplier(ctx, "c1", x)
				if err != nil {
					t.Fatal(err)
				}
				contacts, err := other.ListContacts(ctx, "c1", x, paging.Request{Size: 20})
				if err != nil {
					t.Fatal(err)
				}
				w.check(t, fromDB, contacts.Content)
				if !fromDB.CreatedDate.Equal(cachedDay) {
					t.Errorf("x's createdDate %v; want the first write's %v", fromDB.CreatedDate, cachedDay)
				}
				st := cc.state.Load()
				cached, ok := st.ix.Record(x)
				if !ok || !st.mark.Equal(mark) {
					t.Fatalf("without a sync the cache holds x: %v, at mark %v; want x at %v", ok, st.mark, mark)
				}
				if diff := cmp.Diff(fromDB, cached.Detail); diff != "" {
					t.Errorf("the writing node's own writes left its cache unlike the database (-db +cache):\n%s", diff)
				}
				if diff := cmp.Diff(contacts.Content, cached.Contacts, cmpopts.EquateEmpty()); diff != "" {
					t.Errorf("the writing node's own writes left its cached contacts unlike the database's (-db +cache):\n%s", diff)
				}
				sync()
				served := a.cache.served.Load()
				fromCache, err := a.Supplier(ctx, "c1", x)
				if err != nil {
					t.Fatal(err)
				}
				cachedContacts, err := a.ListContacts(ctx, "c1", x, paging.Request{Size: 20})
				if err != nil {
					t.Fatal(err)
				}
				if a.cache.served.Load() == served {
					t.Error("the writing node's reads did not come from its cache")
				}
				if diff := cmp.Diff(fromDB, fromCache); diff != "" {
					t.Errorf("the writing node's cache differs from the database (-db +cache):\n%s", diff)
				}
				if diff := cmp.Diff(contacts.Content, cachedContacts.Content); diff != "" {
					t.Errorf("the writing node's cached contacts differ from the database's (-db +cache):\n%s", diff)
				}
			})
		}
	}
}

// The database writes a stamp into a document as Go does (stampJSONSQL
// against stampJSON), so a restamped document reads back as the stamp and
// holds the text Go would have written.
func TestStampJSONSQL(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, pgtest.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	for _, stamp := range []time.Time{
		time.Date(2026, 11, 29, 6, 19, 4, 123456000, time.UTC),
		time.Date(2026, 11, 29, 6, 19, 4, 120000000, time.UTC), // trailing zeros go
		time.Date(2026, 11, 29, 6, 19, 4, 0, time.UTC),         // no fraction at all
		time.Date(2026, 1, 2, 3, 4, 5, 1000, time.UTC),
		supplier.LastStamp,
	} {
		var got string
		if err := s.pool.QueryRow(ctx, `SELECT `+stampJSONSQL("$1::timestamptz"), stamp).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if want := stampJSON(stamp); got != want {
			t.Errorf("%v: the database writes %s; Go writes %s", stamp, got, want)
		}
	}
}

// An optimistic plan whose document holds the planned stamp's JSON in a
// text value as well as in the dates it stamped is not sent: the guard's
// rewrite would change the text too (stampsInDoc).
func TestStampsInDoc(t *testing.T) {
	stamp := time.Date(2026, 11, 29, 6, 19, 4, 123456000, time.UTC)
	older := stamp.Add(-time.Hour)
	tests := []struct {
		name    string
		contact supplier.Contact
		want    bool
	}{
		{"a new default contact: two dates", supplier.Contact{Name: "Ann", ModifiedDate: stamp, CreatedDate: stamp}, true},
		{"a changed one: one date", supplier.Contact{Name: "Ann", ModifiedDate: stamp, CreatedDate: older}, true},
		{"a name that is the stamp's text", supplier.Contact{Name: stamp.Format(time.RFC3339Nano), ModifiedDate: stamp, CreatedDate: older}, false},
		{"a name that holds it among other text", supplier.Contact{Name: "at " + stamp.Format(time.RFC3339Nano), ModifiedDate: stamp, CreatedDate: older}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := supplier.Detail{DefaultContact: &tc.contact}
			doc, err := detailsJSON(&d)
			if err != nil {
				t.Fatal(err)
			}
			if got := stampsInDoc(doc, stamp, stampedInDetails(&d, stamp)); got != tc.want {
				t.Errorf("stampsInDoc = %v; want %v (document %s)", got, tc.want, doc)
			}
		})
	}
}

// Writers on two nodes at once, on a few suppliers of one community, so
// that plans overtake each other all the time (restamped by the guard, or
// redone under the lock when they wrote the same supplier): the counts
// and the buckets stay exact, every supplier's stamp is its own, and the
// community's high-water mark is the largest.
func TestOptimisticWritesConcurrent(t *testing.T) {
	withBucketSize(t, 4) // splits happen
	ctx := context.Background()
	dsn := pgtest.NewDatabase(t)
	var nodes [2]*Store
	for i := range nodes {
		s, err := Open(ctx, dsn, WithSupplierCache())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
		nodes[i] = s
	}
	c := syntheticCommunity("cw", 30)
	if err := nodes[0].Import(ctx, &datafile.File{Communities: []datafile.Community{c}}); err != nil {
		t.Fatal(err)
	}
	ids := make([]uuid.UUID, 12) // few, so that writers meet on them
	for i := range ids {
		ids[i] = c.Suppliers[i].ID
	}
	const writers, each = 8, 40
	errs := make(chan error, writers)
	for w := range writers {
		go func() {
			s := nodes[w%2]
			for k := range each {
				id := ids[(w*7+k*5)%len(ids)]
				var err error
				switch k % 4 {
				case 0, 1:
					r := supplier.Record{Detail: supplier.Detail{Summary: supplier.Summary{ID: id, ProfileType: supplier.ProfileCompany,
						Name: supplier.NewText(fmt.Sprintf("W%d-%d", w, k))}}}
					_, err = s.PutSupplier(ctx, "cw", r)
				case 2:
					_, err = s.PutContact(ctx, "cw", id, supplier.Contact{ID: ids[k%len(ids)], Name: fmt.Sprintf("C%d-%d", w, k)})
				default:
					err = s.DeleteSupplier(ctx, "cw", id)
				}
				if err != nil && !isNotFound(err) {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range writers {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	var fast, cached, redone int64
	for _, s := range nodes {
		fast += s.writesFast.Load()
		cached += s.writesFromCache.Load()
		redone += s.writesRaced.Load()
	}
	t.Logf("%d puts committed as planned (%d of them from a node's cache), %d redone under the lock", fast, cached, redone)
	if fast == 0 || cached == 0 {
		t.Error("no put committed as planned, or none planned from a cache")
	}

	checkBuckets(t, nodes[0], "cw")
	checkTerms(t, nodes[0], "cw")
	var count, real, distinct int64
	var mark, newest time.Time
	if err := nodes[0].pool.QueryRow(ctx, `SELECT c.supplier_count, c.last_modified,
		(SELECT count(*) FROM suppliers WHERE community_id = 'cw'),
		(SELECT count(DISTINCT modified_date) FROM suppliers WHERE community_id = 'cw'),
		(SELECT max(modified_date) FROM suppliers WHERE community_id = 'cw')
		FROM communities c WHERE c.id = 'cw'`).Scan(&count, &mark, &real, &distinct, &newest); err != nil {
		t.Fatal(err)
	}
	if count != real || distinct != real {
		t.Errorf("supplier_count %d, %d suppliers, %d distinct stamps; want all equal", count, real, distinct)
	}
	if newest.After(mark) {
		t.Errorf("a supplier is stamped %v, above the community's mark %v", newest, mark)
	}
	// Every supplier's contacts and default documents carry no date above
	// its own stamp.
	rows, err := nodes[0].pool.Query(ctx, `SELECT s.id FROM suppliers s JOIN supplier_contacts ct ON ct.community_id = s.community_id AND ct.supplier_id = s.id
		WHERE s.community_id = 'cw' AND (ct.doc->>'modifiedDate')::timestamptz > s.modified_date`)
	if err != nil {
		t.Fatal(err)
	}
	bad, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
	if err != nil {
		t.Fatal(err)
	}
	if len(bad) > 0 {
		t.Errorf("suppliers with a contact stamped after them: %v", bad)
	}
	// Both nodes' caches end where the database is.
	want := map[uuid.UUID]supplier.Detail{}
	plain, err := Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	for _, id := range ids {
		if d, err := plain.Supplier(ctx, "cw", id); err == nil {
			want[id] = d
		} else if !isNotFound(err) {
			t.Fatal(err)
		}
	}
	// A node sees the other node's last writes within the visibility
	// bound (docs/live-data.md: one second), not at once: the writers of
	// both nodes interleave, so the last write may be the other node's.
	deadline := time.Now().Add(time.Second)
	for i, s := range nodes {
		for {
			var diffs []string
			for _, id := range ids {
				d, err := s.Supplier(ctx, "cw", id)
				if w, ok := want[id]; !ok {
					if !isNotFound(err) {
						diffs = append(diffs, fmt.Sprintf("node %d: deleted supplier %s: %v", i, id, err))
					}
				} else if err != nil {
					diffs = append(diffs, fmt.Sprintf("node %d: supplier %s: %v", i, id, err))
				} else if diff := cmp.Diff(w, d); diff != "" {
					diffs = append(diffs, fmt.Sprintf("node %d: supplier %s differs from the database (-db +node):\n%s", i, id, diff))
				}
			}
			if len(diffs) == 0 {
				break
			}
			if time.Now().After(deadline) {
				for _, d := range diffs {
					t.Error(d)
				}
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// A bucket count of the planned stamp's key goes to the bucket of the
// stamp the guard made, which may be one that starts after the planned
// stamp: the order's last (stampKeys). A name order's key that happens to
// read like the stamp's is counted where it falls.
func TestBucketDeltaRestamped(t *testing.T) {
	ctx := context.Background()
	s := importedStore(t, syntheticCommunity("bd", 5))
	planned := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC) // above the file's dates
	// The guard may make a later stamp than the planned one (another
	// node's write in between): a second later, say.
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	// A bucket that starts between the two (another node's write split
	// the last bucket at its stamp).
	between := dateKey(planned.Add(time.Millisecond))
	if _, err := tx.Exec(ctx, `INSERT INTO supplier_buckets (community_id, ord, lo, n) VALUES ('bd', $1, $2, 0)`, int16(ordModified), between); err != nil {
		t.Fatal(err)
	}
	nameBucket := func() int64 {
		var n int64
		if err := tx.QueryRow(ctx, `SELECT n FROM supplier_buckets WHERE community_id = 'bd' AND ord = $1
			AND lo = (SELECT max(lo) FROM supplier_buckets WHERE community_id = 'bd' AND ord = $1 AND lo <= $2)`,
			int16(ordName), dateKey(planned)).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	named := nameBucket()
	b := &pgx.Batch{}
	var split []bucketRef
	queueBucketDeltas(b, "bd", stampKeys([]bucketDelta{{ordModified, dateKey(planned), 1}, {ordName, dateKey(planned), 1}}, planned), &split)
	if err := tx.SendBatch(ctx, b).Close(); err != nil {
		t.Fatal(err)
	}
	var n int64
	if err := tx.QueryRow(ctx, `SELECT n FROM supplier_buckets WHERE community_id = 'bd' AND ord = $1 AND lo = $2`, int16(ordModified), between).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Errorf("the bucket from %s (where the made stamp falls) counts %d; want 1", between, n)
	}
	// The name order's key is no date: it is counted where it falls.
	if n := nameBucket(); n != named+1 {
		t.Errorf("the name order's bucket of the key counts %d; want %d", n, named+1)
	}
}
