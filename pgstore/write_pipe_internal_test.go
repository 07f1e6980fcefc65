package pgstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/procurekit/procure/datafile"
	"github.com/procurekit/procure/internal/pgtest"
	"github.com/procurekit/procure/supplier"
)

// On a direct connection the puts planned from the cache go through the
// community's pipe (write_pipe.go): the first put's group is sent alone
// and waits for the lock; the puts queued meanwhile go as two groups in
// flight at once, each stamped in turn, the database's marks, buckets
// and the node's cache as after puts one by one. A group whose guard
// fails (stale: a supplier another node renamed behind the cache) is
// rolled back whole and its puts are redone under the lock, while the
// group sent behind it in the pipeline commits. A second put of a
// queued supplier is redone under the lock after the first.
func TestPipedPuts(t *testing.T) {
	ctx := context.Background()
	const n = 24
	for _, stale := range []bool{false, true} {
		t.Run(fmt.Sprintf("stale=%v", stale), func(t *testing.T) {
			sups := numbered(n)
			a, other := cachedPair(t, sups...)
			if !a.groups.pipe {
				t.Fatal("no pipe on a direct connection")
			}
			// Put 12 is the last of the second group (puts 1-12); its
			// supplier is renamed behind a's cache when stale.
			const late, twiceOf = 12, 13
			unsync := func() {}
			if stale {
				unsync = renameBehindCache(t, a, other, sups[late].ID)
			}
			tx, mark0 := holdLock(t, other)

			q := a.groups.of("c1")
			got := make([]supplier.Detail, n)
			errs := make([]error, n)
			var wg sync.WaitGroup
			put := func(i int) {
				wg.Go(func() { got[i], errs[i] = a.PutSupplier(ctx, "c1", company(sups[i].ID, fmt.Sprint("renamed ", i))) })
			}
			put(0)
			waitQueue(t, q, "the first put's group", func() bool { return q.piping && len(q.queue) == 0 && len(q.busy) == 1 })
			for i := 1; i < n; i++ {
				put(i) // one at a time: the queue's order is the puts'
				waitQueue(t, q, fmt.Sprintf("put %d", i), func() bool { return len(q.queue) == i })
			}
			var twice supplier.Detail
			var twiceErr error
			wg.Go(func() { twice, twiceErr = a.PutSupplier(ctx, "c1", company(sups[twiceOf].ID, "twice")) })
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
				t.Fatalf("the second put of supplier %d: %v", twiceOf, twiceErr)
			}
			unsync()

			// Groups of 1, 12 and 11 puts; stale: the 12 redone.
			wantCounts := putCounts{grouped: n - 1, failed: 0, fromCache: n, raced: 1}
			if stale {
				wantCounts = putCounts{grouped: 11, failed: 1, fromCache: 12, raced: 13}
			}
			checkCounts(t, a, wantCounts)

			checkStamps(t, mark0, append(slices.Clone(got), twice)...)
			if !twice.ModifiedDate.After(got[twiceOf].ModifiedDate) {
				t.Errorf("the second put of supplier %d stamped %v, not after the first's %v", twiceOf, twice.ModifiedDate, got[twiceOf].ModifiedDate)
			}
			want := slices.Clone(got)
			want[twiceOf] = twice
			checkStored(t, a, other, sups, want)
			waitQueue(t, q, "the pipe's end", func() bool { return !q.piping && len(q.busy) == 0 })
		})
	}
}

// A put that waits in the pipe's queue and whose request ends is taken
// out, unwritten. One sent whose request ends, when it is the only one in
// flight, ends the pipe's connection and returns its request's error at
// once, though the lock is held: as with any request that ends after it
// was sent, whether it was written is not known (the server has the whole
// transaction, its Sync included, and may still commit it once the lock
// is free). The pipe starts again for the next put.
func TestPipedPutCanceled(t *testing.T) {
	ctx := context.Background()
	sups := numbered(4)
	a, other := cachedPair(t, sups...)
	q := a.groups.of("c1")

	t.Run("queued", func(t *testing.T) {
		tx, _ := holdLock(t, other)
		var wg sync.WaitGroup
		var errs [3]error
		wg.Go(func() { _, errs[0] = a.PutSupplier(ctx, "c1", company(sups[0].ID, "renamed")) })
		waitQueue(t, q, "the first put's group", func() bool { return q.piping && len(q.queue) == 0 && len(q.busy) == 1 })
		wg.Go(func() { _, errs[1] = a.PutSupplier(ctx, "c1", company(sups[1].ID, "renamed")) })
		waitQueue(t, q, "the second put", func() bool { return len(q.queue) == 1 })
		short, cancel := context.WithCancel(ctx)
		wg.Go(func() { _, errs[2] = a.PutSupplier(short, "c1", company(sups[2].ID, "canceled")) })
		waitQueue(t, q, "the put to cancel", func() bool { return len(q.queue) == 2 })
		cancel()
		waitQueue(t, q, "the cancel", func() bool { return len(q.queue) == 1 })
		if err := tx.Rollback(ctx); err != nil {
			t.Fatal(err)
		}
		wg.Wait()
		if errs[0] != nil || errs[1] != nil {
			t.Errorf("the puts not canceled: %v, %v", errs[0], errs[1])
		}
		if !errors.Is(errs[2], context.Canceled) {
			t.Errorf("the canceled put: %v; want the context's error", errs[2])
		}
		for i, want := range []string{"renamed", "renamed", "s2"} {
			d, err := other.Supplier(ctx, "c1", sups[i].ID)
			if err != nil {
				t.Fatal(err)
			}
			if d.Name.String() != want {
				t.Errorf("supplier %d named %q; want %q", i, d.Name.String(), want)
			}
		}
		waitQueue(t, q, "the pipe's end", func() bool { return !q.piping && len(q.queue) == 0 && len(q.busy) == 0 })
	})

	t.Run("sent", func(t *testing.T) {
		tx, _ := holdLock(t, other)
		short, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() {
			_, err := a.PutSupplier(short, "c1", company(sups[3].ID, "canceled"))
			done <- err
		}()
		waitQueue(t, q, "the put's group", func() bool { return q.piping && len(q.queue) == 0 && len(q.busy) == 1 })
		cancel()
		select {
		case err := <-done:
			if !errors.Is(err, context.Canceled) {
				t.Errorf("the canceled put: %v; want the context's error", err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("the put in flight did not end with its request while the lock was held")
		}
		if err := tx.Rollback(ctx); err != nil {
			t.Fatal(err)
		}
		d, err := other.Supplier(ctx, "c1", sups[3].ID)
		if err != nil {
			t.Fatal(err)
		}
		if n := d.Name.String(); n != "s3" && n != "canceled" {
			t.Errorf("the canceled put's supplier is named %q; want s3 or canceled", n)
		}
		waitQueue(t, q, "the pipe's end", func() bool { return !q.piping && len(q.busy) == 0 })
		if _, err := a.PutSupplier(ctx, "c1", company(sups[3].ID, "after")); err != nil {
			t.Fatalf("a put after: %v", err)
		}
		if d, err := other.Supplier(ctx, "c1", sups[3].ID); err != nil || d.Name.String() != "after" {
			t.Errorf("after: %q, %v; want named after", d.Name.String(), err)
		}
	})
}

// A pipe that panics (a bug) ends: its puts are redone under the lock and
// succeed, nothing stays queued, in flight or busy, and the next put
// starts a pipe again.
func TestPipePanics(t *testing.T) {
	ctx := context.Background()
	sup := company(uuid.MustParse("00000000-0000-4000-8000-000000000001"), "s0")
	a, other := cachedPair(t, sup)
	q := a.groups.of("c1")
	a.beforeGroup = func() { panic("a bug in the pipe") }
	for i := range 3 {
		if _, err := a.PutSupplier(ctx, "c1", company(sup.ID, fmt.Sprint("panics ", i))); err != nil {
			t.Fatalf("put %d: %v", i, err)
		}
	}
	if r, p := a.writesRaced.Load(), a.pipePanics.Load(); r != 3 || p != 3 {
		t.Errorf("%d puts redone under the lock, %d panics; want 3, 3", r, p)
	}
	waitQueue(t, q, "the pipe's end", func() bool { return !q.piping && len(q.queue) == 0 && len(q.busy) == 0 })
	a.beforeGroup = nil
	if _, err := a.PutSupplier(ctx, "c1", company(sup.ID, "after")); err != nil {
		t.Fatalf("a put after the panics: %v", err)
	}
	if f := a.writesFromCache.Load(); f != 1 {
		t.Errorf("%d puts committed through the pipe; want 1, the last", f)
	}
	d, err := other.Supplier(ctx, "c1", sup.ID)
	if err != nil || d.Name.String() != "after" {
		t.Errorf("the supplier after: %q, %v; want named after", d.Name.String(), err)
	}
}

// A group with a statement the pipe's connection has not prepared (here a
// new supplier's: three bucket keys where a rename moves four) is sent
// once the groups before it have ended and the statement is prepared
// outside the pipeline; every put commits from the cache.
func TestPipePreparesMidway(t *testing.T) {
	ctx := context.Background()
	sups := []supplier.Record{
		company(uuid.MustParse("00000000-0000-4000-8000-000000000001"), "s0"),
		company(uuid.MustParse("00000000-0000-4000-8000-000000000002"), "s1"),
	}
	a, other := cachedPair(t, sups...)
	q := a.groups.of("c1")
	tx, _ := holdLock(t, other)
	fresh := company(uuid.MustParse("00000000-0000-4000-8000-000000000003"), "new")
	var wg sync.WaitGroup
	var errs [3]error
	wg.Go(func() { _, errs[0] = a.PutSupplier(ctx, "c1", company(sups[0].ID, "renamed 0")) })
	waitQueue(t, q, "the first put's group", func() bool { return q.piping && len(q.queue) == 0 && len(q.busy) == 1 })
	wg.Go(func() { _, errs[1] = a.PutSupplier(ctx, "c1", company(sups[1].ID, "renamed 1")) })
	waitQueue(t, q, "the rename", func() bool { return len(q.queue) == 1 })
	wg.Go(func() { _, errs[2] = a.PutSupplier(ctx, "c1", fresh) })
	waitQueue(t, q, "the new supplier", func() bool { return len(q.queue) == 2 })
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("put %d: %v", i, err)
		}
	}
	if f, r := a.writesFromCache.Load(), a.writesRaced.Load(); f != 3 || r != 0 {
		t.Errorf("%d puts from the cache, %d redone; want 3, 0", f, r)
	}
	for _, want := range []supplier.Record{company(sups[0].ID, "renamed 0"), company(sups[1].ID, "renamed 1"), fresh} {
		d, err := other.Supplier(ctx, "c1", want.ID)
		if err != nil {
			t.Fatal(err)
		}
		if d.Name != want.Name {
			t.Errorf("supplier %v named %q; want %q", want.ID, d.Name.String(), want.Name.String())
		}
	}
	checkBuckets(t, a, "c1")
}

// Which path the grouped puts take: the pipe on a direct connection
// unless WithWritePipe(false); never when the statements are not
// prepared by name (a pooler's exec modes, which pgpool picks through
// PgBouncer or the DSN's default_query_exec_mode names).
func TestWritePipeChoice(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	sep := "?"
	if strings.Contains(dsn, "?") {
		sep = "&"
	}
	for _, c := range []struct {
		name string
		dsn  string
		opts []Option
		want bool
	}{
		{"direct", dsn, nil, true},
		{"direct, turned off", dsn, []Option{WithWritePipe(false)}, false},
		{"direct, asked for", dsn, []Option{WithWritePipe(true)}, true},
		{"exec mode", dsn + sep + "default_query_exec_mode=exec", nil, false},
		{"describe exec mode, asked for", dsn + sep + "default_query_exec_mode=describe_exec", []Option{WithWritePipe(true)}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := openWith(t, c.dsn, c.opts...).groups.pipe; got != c.want {
				t.Errorf("pipe %v; want %v", got, c.want)
			}
		})
	}
}

// A group's end counts as this node's write for its replica's reads
// (replica.go) before its puts return: the pipe keeps its connection, so
// the connection's release, which counts the other writes, comes later.
func TestPipeGroupEndIsAWrite(t *testing.T) {
	for _, err := range []error{nil, errRaced} {
		s := &Store{replica: &replica{}}
		q := &putQueue{busy: map[uuid.UUID]chan struct{}{}}
		p := &groupedPut{supplier: uuid.New(), done: make(chan struct{})}
		q.busy[p.supplier] = make(chan struct{})
		before := mono()
		s.endGroup(q, []*groupedPut{p}, err)
		<-p.done
		if w := s.replica.wrote.Load(); w < before {
			t.Errorf("after a group that ended with %v, the node's last write is %d; want at least %d", err, w, before)
		}
		if !errors.Is(p.err, err) || len(q.busy) != 0 {
			t.Errorf("the put ended with %v, %d suppliers busy; want %v, none", p.err, len(q.busy), err)
		}
	}
}

// The statement timeout bounds a piped group as it does a transaction of
// its own: a put that waits for its community's lock past it fails with
// SQLSTATE 57014 (httpapi's 503), written nowhere, and the pipe goes on.
func TestPipeStatementTimeout(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.NewDatabase(t)
	a := openWith(t, dsn, WithSupplierCache(), WithStatementTimeout(300*time.Millisecond))
	other := openWith(t, dsn)
	sup := company(uuid.MustParse("00000000-0000-4000-8000-000000000001"), "s0")
	sup.CreatedDate, sup.ModifiedDate = cachedDay, cachedDay
	if err := a.Import(ctx, &datafile.File{Communities: []datafile.Community{{ID: "c1", Name: "One", Region: datafile.NZ, Suppliers: []supplier.Record{sup}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Supplier(ctx, "c1", sup.ID); err != nil { // loads c1
		t.Fatal(err)
	}
	if !a.groups.pipe {
		t.Fatal("no pipe")
	}
	tx, _ := holdLock(t, other)
	done := make(chan error, 1)
	go func() {
		_, err := a.PutSupplier(ctx, "c1", company(sup.ID, "waited"))
		done <- err
	}()
	select {
	case err := <-done:
		if pgErr, ok := errors.AsType[*pgconn.PgError](err); !ok || pgErr.Code != "57014" {
			t.Fatalf("a put waiting for the lock: %v; want SQLSTATE 57014", err)
		}
	case <-time.After(5 * time.Second):
		_ = tx.Rollback(ctx)
		t.Fatalf("a put waited for the lock past 5s under a 300ms bound (it ended with %v once the lock was free)", <-done)
	}
	if f := a.writesFromCache.Load(); f != 0 {
		t.Errorf("%d puts counted as committed from the cache; want none", f)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	d, err := other.Supplier(ctx, "c1", sup.ID)
	if err != nil || d.Name.String() != "s0" {
		t.Fatalf("the supplier after the failed put: %q, %v; want s0", d.Name.String(), err)
	}
	if _, err := a.PutSupplier(ctx, "c1", company(sup.ID, "after")); err != nil {
		t.Fatalf("a put after: %v", err)
	}
	if f := a.writesFromCache.Load(); f != 1 {
		t.Errorf("%d puts committed from the cache; want 1", f)
	}
}

// A put whose request ends after the pipe took it and before it was sent
// ends with its request's error, unwritten; the pipe, with nothing left
// to send, stops, and starts again for the next put.
func TestPipeRequestEndedBeforeSent(t *testing.T) {
	ctx := context.Background()
	sup := company(uuid.MustParse("00000000-0000-4000-8000-000000000001"), "s0")
	a, other := cachedPair(t, sup)
	q := a.groups.of("c1")
	short, cancel := context.WithCancel(ctx)
	a.beforeGroup = cancel // the pipe has taken the put: its request ends
	if _, err := a.PutSupplier(short, "c1", company(sup.ID, "ended")); !errors.Is(err, context.Canceled) {
		t.Fatalf("the put: %v; want the context's error", err)
	}
	waitQueue(t, q, "the pipe's end", func() bool { return !q.piping && len(q.queue) == 0 && len(q.busy) == 0 })
	a.beforeGroup = nil
	if f, r, p := a.writesFromCache.Load(), a.writesRaced.Load(), a.pipePanics.Load(); f != 0 || r != 0 || p != 0 {
		t.Errorf("%d puts committed from the cache, %d redone, %d panics; want none", f, r, p)
	}
	if d, err := other.Supplier(ctx, "c1", sup.ID); err != nil || d.Name.String() != "s0" {
		t.Errorf("the supplier: %q, %v; want s0, unwritten", d.Name.String(), err)
	}
	if _, err := a.PutSupplier(ctx, "c1", company(sup.ID, "after")); err != nil {
		t.Fatalf("a put after: %v", err)
	}
}
