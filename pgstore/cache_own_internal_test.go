package pgstore

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/procurekit/procure/datafile"
	"github.com/procurekit/procure/internal/pgtest"
	"github.com/procurekit/procure/supplier"
)

// A node's own writes and its syncs, in the orders a busy node sees them:
// the cache never goes back to an older state, and ends where the
// database is.
func TestCacheOwnWriteAgainstSync(t *testing.T) {
	ctx := context.Background()
	x, y := uuid.MustParse("00000000-0000-4000-8000-000000000001"), uuid.MustParse("00000000-0000-4000-8000-000000000002")
	rec := company
	open := func(t *testing.T) (a, other *Store, cc *cachedCom) {
		a, other = cachedPair(t, rec(x, "x0"), rec(y, "y0"))
		return a, other, a.cache.entry("c1")
	}
	put := func(t *testing.T, s *Store, id uuid.UUID, name string) supplier.Detail {
		t.Helper()
		d, err := s.PutSupplier(ctx, "c1", rec(id, name))
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	// stop has the next sync of a wait at stage until the returned
	// function is called (later syncs pass).
	stop := func(a *Store, stage string) (reached chan struct{}, release func()) {
		reached, go_ := make(chan struct{}), make(chan struct{})
		var once sync.Once
		h := func(s string) {
			if s == stage {
				once.Do(func() { close(reached); <-go_ })
			}
		}
		a.cache.hook.Store(&h)
		return reached, func() { close(go_) }
	}
	name := func(t *testing.T, cc *cachedCom, id uuid.UUID) string {
		t.Helper()
		r, ok := cc.state.Load().ix.Record(id)
		if !ok {
			t.Fatalf("the cache lost %s", id)
		}
		return r.Name.String()
	}

	t.Run("a sync that read before this node's newer write applies after it", func(t *testing.T) {
		a, _, cc := open(t)
		// The sync takes the state before x1 and reads after it, so it
		// brings x1; x2 is applied before it applies.
		reached, release := stop(a, "read")
		done := make(chan error)
		go func() { done <- a.cache.sync(cc, false) }()
		<-reached
		put(t, a, x, "x1")
		reachedApply, releaseApply := stop(a, "apply")
		release()
		<-reachedApply
		d2 := put(t, a, x, "x2")
		releaseApply()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if got := name(t, cc, x); got != "x2" {
			t.Fatalf("after the late sync the cache holds %q; want x2", got)
		}
		if m := cc.state.Load().mark; !m.Equal(d2.ModifiedDate) {
			t.Fatalf("mark %v; want x2's stamp %v", m, d2.ModifiedDate)
		}
	})

	t.Run("a write after another node's waits for the sync that brings it", func(t *testing.T) {
		a, other, cc := open(t)
		release := func() func() { cc.syncMu.Lock(); return cc.syncMu.Unlock }() // no sync meanwhile
		put(t, other, y, "y1")
		d := put(t, a, x, "x1")
		if got := name(t, cc, x); got != "x0" {
			t.Fatalf("x1 applied before y1 was: the cache holds %q", got)
		}
		if len(cc.pending) != 1 {
			t.Fatalf("%d writes pending; want x1's", len(cc.pending))
		}
		release()
		if err := a.cache.sync(cc, false); err != nil {
			t.Fatal(err)
		}
		if got := name(t, cc, x) + name(t, cc, y); got != "x1y1" {
			t.Fatalf("after the sync the cache holds %q; want x1y1", got)
		}
		if m := cc.state.Load().mark; !m.Equal(d.ModifiedDate) {
			t.Fatalf("mark %v; want x1's stamp %v", m, d.ModifiedDate)
		}
		if len(cc.pending) != 0 {
			t.Fatalf("%d writes still pending", len(cc.pending))
		}
	})
}

// A read that finds this node's latest write waiting among the pending
// ones for an earlier write of this node (committed, its goroutine not
// yet at own) waits for it instead of syncing; when no write of this node
// is on its way, the missing write is another node's and the read syncs
// at once.
func TestReadWaitsForOwnWritesInFlight(t *testing.T) {
	defer func(d time.Duration) { ownWait = d }(ownWait)
	ownWait = time.Minute // the test, not the clock, ends the wait
	ctx := context.Background()
	x, y := uuid.MustParse("00000000-0000-4000-8000-000000000011"), uuid.MustParse("00000000-0000-4000-8000-000000000012")
	rec := company
	a, other := cachedPair(t, rec(x, "x0"), rec(y, "y0"))
	cc := a.cache.entry("c1")

	t.Run("this node's earlier write on its way", func(t *testing.T) {
		syncs := a.cache.readSyncs.Load()
		got := make(chan string, 1)
		fired := false
		a.afterCommit = func() {
			if fired {
				return
			}
			fired = true
			// x1 committed; y1 commits after it and waits for it among
			// the pending writes.
			if _, err := a.PutSupplier(ctx, "c1", rec(y, "y1")); err != nil {
				t.Error(err)
			}
			go func() {
				d, err := a.Supplier(ctx, "c1", y)
				if err != nil {
					t.Error(err)
				}
				got <- d.Name.String()
			}()
			// Until the read waits (or was served: a poll may have synced).
			for deadline := time.Now().Add(10 * time.Second); cc.changed.Load() == nil && len(got) == 0; {
				if time.Now().After(deadline) {
					t.Error("the read neither waited nor was served")
					return
				}
				time.Sleep(time.Millisecond)
			}
		}
		defer func() { a.afterCommit = nil }()
		if _, err := a.PutSupplier(ctx, "c1", rec(x, "x1")); err != nil {
			t.Fatal(err)
		}
		if name := <-got; name != "y1" {
			t.Errorf("the read after y1 answered %q", name)
		}
		if n := a.cache.readSyncs.Load() - syncs; n != 0 {
			t.Errorf("the read synced %d times; want it to wait for x1's own", n)
		}
	})

	t.Run("another node's write", func(t *testing.T) {
		syncs := a.cache.readSyncs.Load()
		cc.syncMu.Lock() // no poll brings y2 before the read
		if _, err := other.PutSupplier(ctx, "c1", rec(y, "y2")); err != nil {
			cc.syncMu.Unlock()
			t.Fatal(err)
		}
		if _, err := a.PutSupplier(ctx, "c1", rec(x, "x2")); err != nil {
			cc.syncMu.Unlock()
			t.Fatal(err)
		}
		cc.syncMu.Unlock()
		start := time.Now()
		d, err := a.Supplier(ctx, "c1", x)
		if err != nil {
			t.Fatal(err)
		}
		if d.Name.String() != "x2" {
			t.Errorf("the read after x2 answered %q", d.Name.String())
		}
		if took := time.Since(start); took > 30*time.Second {
			t.Errorf("the read waited %v for writes of this node; none was on its way", took)
		}
		if n := a.cache.readSyncs.Load() - syncs; n < 1 {
			t.Errorf("the read synced %d times; want a sync for y2", n)
		}
	})
}

// company is a supplier of profile COMPANY with only an id and a name.
func company(id uuid.UUID, name string) supplier.Record {
	return supplier.Record{Detail: supplier.Detail{Summary: supplier.Summary{ID: id, Name: supplier.NewText(name), ProfileType: supplier.ProfileCompany}}}
}

// cachedDay is the date cachedPair's suppliers were created and modified.
var cachedDay = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// cachedPair opens two nodes on a fresh database, a with the supplier
// cache and other without, imports community c1 holding sups (dated
// cachedDay) and loads c1 into a's cache (the first supplier's read).
func cachedPair(t *testing.T, sups ...supplier.Record) (a, other *Store) {
	t.Helper()
	ctx := context.Background()
	dsn := pgtest.NewDatabase(t)
	var err error
	if a, err = Open(ctx, dsn, WithSupplierCache()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	if other, err = Open(ctx, dsn); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(other.Close)
	for i := range sups {
		sups[i].CreatedDate, sups[i].ModifiedDate = cachedDay, cachedDay
	}
	if err := a.Import(ctx, &datafile.File{Communities: []datafile.Community{{ID: "c1", Name: "One", Region: datafile.NZ, Suppliers: sups}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Supplier(ctx, "c1", sups[0].ID); err != nil { // loads c1
		t.Fatal(err)
	}
	return a, other
}
