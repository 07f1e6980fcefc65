package pgstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/procurekit/procure/paging"
	"github.com/procurekit/procure/supplier"
)

// Through a pooler (no pipe): puts planned from the cache while a
// community has maxGroups transactions in flight wait, and the next transaction commits all of
// them (write_group.go): each stamped in turn as in transactions of their
// own, the database's marks, buckets and the node's cache as after puts
// one by one. A put of a supplier whose put waits is redone under the
// lock after it; a guard that fails in a group has every put of the group
// redone under the lock, each ending as if alone.
func TestGroupedPuts(t *testing.T) {
	ctx := context.Background()
	const n = 24
	for _, stale := range []bool{false, true} {
		t.Run(fmt.Sprintf("stale=%v", stale), func(t *testing.T) {
			sups := numbered(n)
			a, other := cachedPair(t, sups...)
			a.groups.pipe = false // as through a pooler (write_pipe_internal_test.go: a direct connection's)
			max := a.groups.max
			if want := min(maxGroups, a.writeSlots.perCom); max != want || max < 2 {
				t.Fatalf("%d groups in flight; want %d (at least 2)", max, want)
			}
			// The supplier other renames behind a's cache (stale): its
			// put joins the group, whose guard then fails.
			late := n - 1
			unsync := func() {}
			if stale {
				unsync = renameBehindCache(t, a, other, sups[late].ID)
			}

			// Another session holds the community's lock, as a long write
			// would.
			tx, mark0 := holdLock(t, other)

			q := a.groups.of("c1")
			got := make([]supplier.Detail, n)
			errs := make([]error, n)
			var wg sync.WaitGroup
			put := func(i int) {
				wg.Go(func() { got[i], errs[i] = a.PutSupplier(ctx, "c1", company(sups[i].ID, fmt.Sprint("renamed ", i))) })
			}
			// The first max puts each send their own transaction and wait
			// on the lock; the rest queue.
			for i := range max {
				put(i)
			}
			waitQueue(t, q, "the first transactions", func() bool { return q.inflight == max })
			for i := max; i < n; i++ {
				put(i)
			}
			waitQueue(t, q, "the queue", func() bool { return len(q.queue) == n-max })
			// A second put of a queued supplier: redone under the lock once
			// the first has ended.
			var twice supplier.Detail
			var twiceErr error
			wg.Go(func() { twice, twiceErr = a.PutSupplier(ctx, "c1", company(sups[max].ID, "twice")) })
			waitQueue(t, q, "the second put of a supplier", func() bool { return q.waiting == 1 })
			if err := tx.Rollback(ctx); err != nil {
				t.Fatal(err)
			}
			wg.Wait()
			for i, err := range errs {
				if err != nil {
					t.Fatalf("put %d: %v", i, err)
				}
			}
			if twiceErr != nil {
				t.Fatalf("the second put of supplier %d: %v", max, twiceErr)
			}
			unsync() // a's reads below may sync

			// How they went: a group of the n-max queued puts, committed as
			// planned or (stale) redone under the lock.
			wantCounts := putCounts{grouped: int64(n - max), failed: 0, fromCache: n, raced: 1}
			if stale {
				wantCounts = putCounts{grouped: 0, failed: 1, fromCache: int64(max), raced: int64(1 + n - max)}
			}
			checkCounts(t, a, wantCounts)

			// Every put stamped apart, after the mark the lock's holder
			// saw; the database holds what each put answered (supplier
			// max: the later of its two puts).
			checkStamps(t, mark0, append(slices.Clone(got), twice)...)
			want := slices.Clone(got)
			if twice.ModifiedDate.After(got[max].ModifiedDate) {
				want[max] = twice
			} else if !stale {
				// (stale: the first put failed with its group, and its redo
				// under the lock raced the second.)
				t.Errorf("the second put of supplier %d stamped %v, not after the first's %v", max, twice.ModifiedDate, got[max].ModifiedDate)
			}
			checkStored(t, a, other, sups, want)
		})
	}
}

// A put waiting in the queue whose request ends is taken out, unwritten.
func TestGroupedPutCanceled(t *testing.T) {
	ctx := context.Background()
	sups := numbered(maxGroups + 2)
	a, other := cachedPair(t, sups...)
	a.groups.pipe = false
	max := a.groups.max
	sups = sups[:max+2]
	tx, _ := holdLock(t, other)
	q := a.groups.of("c1")
	queued := func() (int, int) {
		q.mu.Lock()
		defer q.mu.Unlock()
		return q.inflight, len(q.queue)
	}
	var wg sync.WaitGroup
	errs := make([]error, len(sups))
	for i := range max + 1 {
		wg.Go(func() { _, errs[i] = a.PutSupplier(ctx, "c1", company(sups[i].ID, "renamed")) })
		waitQueue(t, q, fmt.Sprintf("put %d", i), func() bool { return q.inflight+len(q.queue) == i+1 })
	}
	short, cancel := context.WithCancel(ctx)
	last := len(sups) - 1
	wg.Go(func() { _, errs[last] = a.PutSupplier(short, "c1", company(sups[last].ID, "canceled")) })
	waitQueue(t, q, "the put to cancel", func() bool { return len(q.queue) == 2 })
	if f, w := queued(); f != max || w != 2 {
		t.Fatalf("%d in flight, %d queued; want %d, 2", f, w, max)
	}
	cancel()
	waitQueue(t, q, "the cancel", func() bool { return len(q.queue) == 1 })
	if _, w := queued(); w != 1 {
		t.Errorf("%d queued after the cancel; want 1", w)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	for i, err := range errs[:last] {
		if err != nil {
			t.Errorf("put %d: %v", i, err)
		}
	}
	if !errors.Is(errs[last], context.Canceled) {
		t.Errorf("the canceled put: %v; want the context's error", errs[last])
	}
	d, err := other.Supplier(ctx, "c1", sups[last].ID)
	if err != nil {
		t.Fatal(err)
	}
	if d.Name != sups[last].Name {
		t.Errorf("the canceled put's supplier is named %q; want %q, unwritten", d.Name.String(), sups[last].Name.String())
	}
	if f, w := queued(); f != 0 || w != 0 || len(q.busy) != 0 {
		t.Errorf("after: %d in flight, %d queued, %d suppliers busy; want none", f, w, len(q.busy))
	}
}

// A group's transaction ends with its puts' requests only when all of
// them have ended.
func TestGroupContext(t *testing.T) {
	type key struct{}
	ctxs := make([]context.Context, 3)
	cancels := make([]context.CancelFunc, 3)
	group := make([]*groupedPut, 3)
	for i := range ctxs {
		ctxs[i], cancels[i] = context.WithCancel(context.WithValue(context.Background(), key{}, i))
		group[i] = &groupedPut{ctx: ctxs[i]}
	}
	ctx, stop := groupContext(group)
	defer stop()
	if v := ctx.Value(key{}); v != 0 {
		t.Errorf("the group's context has value %v; want the first put's, 0", v)
	}
	for i, cancel := range cancels {
		cancel()
		select {
		case <-ctx.Done():
			if i < len(cancels)-1 {
				t.Fatalf("done after %d of %d requests ended", i+1, len(cancels))
			}
		case <-time.After(map[bool]time.Duration{false: 20 * time.Millisecond, true: 5 * time.Second}[i == len(cancels)-1]):
			if i == len(cancels)-1 {
				t.Fatal("not done once every request ended")
			}
		}
	}
}

// A leader that panics (a bug) ends its group and moves the queue on:
// later puts of the community neither queue behind a group counted in
// flight forever nor find their supplier busy.
func TestGroupedPutLeaderPanics(t *testing.T) {
	ctx := context.Background()
	sup := company(uuid.MustParse("00000000-0000-4000-8000-000000000001"), "s0")
	a, other := cachedPair(t, sup)
	a.groups.pipe = false
	q := a.groups.of("c1")
	a.beforeGroup = func() { panic("a bug in the leader") }
	for i := range a.groups.max + 1 {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("put %d: no panic", i)
				}
			}()
			_, _ = a.PutSupplier(ctx, "c1", company(sup.ID, fmt.Sprint("panics ", i)))
		}()
	}
	q.mu.Lock()
	inflight, queued, busy := q.inflight, len(q.queue), len(q.busy)
	q.mu.Unlock()
	if inflight != 0 || queued != 0 || busy != 0 {
		t.Errorf("after the panics: %d in flight, %d queued, %d suppliers busy; want none", inflight, queued, busy)
	}
	a.beforeGroup = nil
	short, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, err := a.PutSupplier(short, "c1", company(sup.ID, "after")); err != nil {
		t.Fatalf("a put after the panics: %v", err)
	}
	d, err := other.Supplier(ctx, "c1", sup.ID)
	if err != nil || d.Name.String() != "after" {
		t.Errorf("the supplier after: %q, %v; want named after", d.Name.String(), err)
	}
}

// numbered returns n companies with the ids ...0001, ...0002, ... and the
// names s0, s1, ...
func numbered(n int) []supplier.Record {
	sups := make([]supplier.Record, n)
	for i := range sups {
		sups[i] = company(uuid.MustParse(fmt.Sprintf("00000000-0000-4000-8000-%012d", i+1)), fmt.Sprint("s", i))
	}
	return sups
}

// putCounts is how a store's grouped puts went: puts committed in a group,
// groups whose guard failed, puts planned from the cache, puts redone
// under the lock.
type putCounts struct {
	grouped, failed, fromCache, raced int64
}

// checkCounts checks a's counts of its puts against want.
func checkCounts(t *testing.T, a *Store, want putCounts) {
	t.Helper()
	got := putCounts{a.writesGrouped.Load(), a.groupsFailed.Load(), a.writesFromCache.Load(), a.writesRaced.Load()}
	if got != want {
		t.Errorf("puts grouped %d, failed groups %d, from the cache %d, redone %d; want %d, %d, %d, %d",
			got.grouped, got.failed, got.fromCache, got.raced, want.grouped, want.failed, want.fromCache, want.raced)
	}
}

// waitQueue waits until ok, called with q's mutex held, reports true,
// and fails the test after five seconds.
func waitQueue(t *testing.T, q *putQueue, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		q.mu.Lock()
		done := ok()
		inflight, queued := q.inflight, len(q.queue)
		q.mu.Unlock()
		if done {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s: %d in flight, %d queued", what, inflight, queued)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// renameBehindCache has other rename supplier id of community c1 while
// a's cache neither syncs nor stops serving (so a plans from a copy the
// guard will find stale). unsync lets the cache sync again; the test's
// end calls it too.
func renameBehindCache(t *testing.T, a, other *Store, id uuid.UUID) (unsync func()) {
	t.Helper()
	cc := a.cache.entry("c1")
	cc.syncMu.Lock() // no sync: a's cache does not see other's write
	held := true
	unsync = func() {
		if held {
			held = false
			cc.syncMu.Unlock()
		}
	}
	t.Cleanup(unsync)
	if _, err := other.PutSupplier(context.Background(), "c1", company(id, "theirs")); err != nil {
		t.Fatal(err)
	}
	cc.applyMu.Lock()
	st := *cc.state.Load()
	st.syncedAt = time.Now() // serves, and so plans
	cc.storeState(&st)
	cc.applyMu.Unlock()
	return unsync
}

// holdLock begins a transaction of other's that holds community c1's
// lock, as a long write would, and returns it and the mark it read.
func holdLock(t *testing.T, other *Store) (pgx.Tx, time.Time) {
	t.Helper()
	ctx := context.Background()
	tx, err := other.pool.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tx.Rollback(ctx) })
	var mark time.Time
	if err := tx.QueryRow(ctx, `SELECT last_modified FROM communities WHERE id = 'c1' FOR UPDATE`).Scan(&mark); err != nil {
		t.Fatal(err)
	}
	return tx, mark
}

// checkStamps checks that every put was stamped apart, after mark0 (the
// mark the lock's holder saw).
func checkStamps(t *testing.T, mark0 time.Time, puts ...supplier.Detail) {
	t.Helper()
	stamps := map[time.Time]int{}
	for i, d := range puts {
		if !d.ModifiedDate.After(mark0) {
			t.Errorf("put %d stamped %v, not after the mark %v", i, d.ModifiedDate, mark0)
		}
		stamps[d.ModifiedDate]++
	}
	if len(stamps) != len(puts) {
		t.Errorf("%d distinct stamps of %d puts", len(stamps), len(puts))
	}
}

// checkStored checks that the database holds want[i] (what the last put
// of sups[i] answered), that node a shows what the database holds (its
// own writes at once), that community c1's mark is the newest stamp and
// its count len(sups), and its buckets.
func checkStored(t *testing.T, a, other *Store, sups []supplier.Record, want []supplier.Detail) {
	t.Helper()
	ctx := context.Background()
	var newest time.Time
	for i := range sups {
		d, err := other.Supplier(ctx, "c1", sups[i].ID)
		if err != nil {
			t.Fatal(err)
		}
		if d.Name != want[i].Name || !d.ModifiedDate.Equal(want[i].ModifiedDate) {
			t.Errorf("supplier %d stored as %q at %v; the put answered %q at %v", i, d.Name.String(), d.ModifiedDate, want[i].Name.String(), want[i].ModifiedDate)
		}
		if d.ModifiedDate.After(newest) {
			newest = d.ModifiedDate
		}
		c, err := a.Supplier(ctx, "c1", sups[i].ID)
		if err != nil {
			t.Fatal(err)
		}
		if c.Name != d.Name || !c.ModifiedDate.Equal(d.ModifiedDate) {
			t.Errorf("node a shows supplier %d as %q at %v; the database %q at %v", i, c.Name.String(), c.ModifiedDate, d.Name.String(), d.ModifiedDate)
		}
	}
	var mark time.Time
	var count int64
	if err := other.pool.QueryRow(ctx, `SELECT last_modified, supplier_count FROM communities WHERE id = 'c1'`).Scan(&mark, &count); err != nil {
		t.Fatal(err)
	}
	if !mark.Equal(newest) || count != int64(len(sups)) {
		t.Errorf("the community's mark %v, count %d; want the newest stamp %v, %d", mark, count, newest, len(sups))
	}
	checkBuckets(t, a, "c1")
}

// A group's puts change the buckets in one statement (queueGroup):
// renames (a name key and a modifiedDate key out, the stamp's in), new
// suppliers (three keys of the stamp in) and contact puts (a modifiedDate
// key moved) of one group leave every bucket exact, the stamps' keys
// counted in the last buckets of the date orders - the first bucket in
// the first round, a later one in the second; the modifiedDate order's
// last bucket, which each round grows past its size, the first put of the
// group then splits (splitLater). Buckets are cut to 3 keys, so that the
// orders have many. Through the pipe and through a pooler.
func TestGroupedPutsBuckets(t *testing.T) {
	withBucketSize(t, 3)
	ctx := context.Background()
	for _, pipe := range []bool{true, false} {
		t.Run(fmt.Sprintf("pipe=%v", pipe), func(t *testing.T) {
			sups := numbered(14)
			a, other := cachedPair(t, sups...)
			a.groups.pipe = pipe
			modifiedBuckets := func() int {
				t.Helper()
				var n int
				if err := a.pool.QueryRow(ctx, `SELECT count(*) FROM supplier_buckets WHERE community_id = 'c1' AND ord = $1`, int16(ordModified)).Scan(&n); err != nil {
					t.Fatal(err)
				}
				return n
			}
			// Each supplier stamped apart first, so that the modifiedDate
			// order has keys to cut buckets at (the import dated them all
			// alike).
			for i, r := range sups {
				if _, err := a.PutSupplier(ctx, "c1", company(r.ID, fmt.Sprint("warm ", i))); err != nil {
					t.Fatal(err)
				}
			}
			for round := range 2 {
				before := modifiedBuckets()
				groupedPutsRound(t, a, other, pipe, sups, round)
				checkBuckets(t, a, "c1")
				checkTerms(t, a, "c1")
				if after := modifiedBuckets(); after <= before {
					t.Errorf("round %d: the modifiedDate order has %d buckets after the puts, %d before; want its last one split", round, after, before)
				}
			}
		})
	}
}

// groupedPutsRound puts, while other holds the community's lock, renames
// of sups[:10], six new suppliers and contacts of sups[10:14] through a's
// write groups, and checks that they all commit from the cache, all but
// the first (the pipe's first group) or the first a.groups.max (the
// pooler's transactions in flight) in groups.
func groupedPutsRound(t *testing.T, a, other *Store, pipe bool, sups []supplier.Record, round int) {
	t.Helper()
	ctx := context.Background()
	var puts []func() error
	for i := range 10 {
		name := fmt.Sprint(string(rune('A'+(i+round)*7%26)), " renamed ", round)
		puts = append(puts, func() error { _, err := a.PutSupplier(ctx, "c1", company(sups[i].ID, name)); return err })
	}
	for i := range 6 {
		name := fmt.Sprint(string(rune('B'+(i+round)*5%26)), " new")
		puts = append(puts, func() error { _, err := a.PutSupplier(ctx, "c1", company(uuid.New(), name)); return err })
	}
	for i := 10; i < 14; i++ {
		puts = append(puts, func() error {
			_, err := a.PutContact(ctx, "c1", sups[i].ID, supplier.Contact{ID: uuid.New(), Name: "contact"})
			return err
		})
	}
	grouped, raced, syncs := a.writesGrouped.Load(), a.writesRaced.Load(), a.cache.readSyncs.Load()
	tx, mark0 := holdLock(t, other)
	q := a.groups.of("c1")
	first := 1
	if !pipe {
		first = a.groups.max
	}
	errs := make([]error, len(puts))
	var wg sync.WaitGroup
	for i := range first {
		wg.Go(func() { errs[i] = puts[i]() })
	}
	if pipe {
		waitQueue(t, q, "the first group", func() bool { return q.piping && len(q.queue) == 0 && len(q.busy) == 1 })
	} else {
		waitQueue(t, q, "the first transactions", func() bool { return q.inflight == first })
	}
	for i := first; i < len(puts); i++ {
		wg.Go(func() { errs[i] = puts[i]() })
	}
	waitQueue(t, q, "the queue", func() bool { return len(q.queue) == len(puts)-first })
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("round %d: put %d: %v", round, i, err)
		}
	}
	if g, r := a.writesGrouped.Load()-grouped, a.writesRaced.Load()-raced; g < int64(len(puts)-first) || r != 0 {
		t.Errorf("round %d: %d puts committed in groups, %d redone; want at least %d, 0", round, g, r, len(puts)-first)
	}
	// A group writes the community's mark and count once, after its puts
	// (queueCounts): the mark is the newest stamp, the count takes the six
	// new suppliers of each round, and each put's guard reported the
	// previous put's stamp as the state it changed, so that node a
	// applied the group's puts to its cache in a row and reads them
	// without a sync.
	page, err := a.ListSuppliers(ctx, "c1", supplier.ListQuery{Page: paging.Request{Size: 1, Sort: paging.Sort{Field: "modifiedDate", Desc: true}}})
	if err != nil {
		t.Fatal(err)
	}
	if n := a.cache.readSyncs.Load() - syncs; n != 0 {
		t.Errorf("round %d: node a synced %d times to read its own puts; want none", round, n)
	}
	var mark time.Time
	var count int
	if err := other.pool.QueryRow(ctx, `SELECT last_modified, supplier_count FROM communities WHERE id = 'c1'`).Scan(&mark, &count); err != nil {
		t.Fatal(err)
	}
	if want := len(sups) + 6*(round+1); count != want || page.Page.TotalElements != want {
		t.Errorf("round %d: the community counts %d suppliers, node a lists %d; want %d", round, count, page.Page.TotalElements, want)
	}
	if len(page.Content) != 1 || !mark.After(mark0) || !page.Content[0].ModifiedDate.Equal(mark) {
		t.Errorf("round %d: the community's mark %v (before the round %v); want the newest stamp, node a's newest %v", round, mark, mark0, page.Content)
	}
}
