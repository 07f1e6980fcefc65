package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"golang.org/x/sync/singleflight"

	"github.com/procurekit/procure/datafile"
	"github.com/procurekit/procure/internal/supplierindex"
	"github.com/procurekit/procure/supplier"
)

// The per-node supplier cache (WithSupplierCache).
//
// Each node keeps, per community, a supplier index (internal/supplierindex,
// the engine memstore serves its reads with) holding the community's
// suppliers with their contacts and addresses, and follows the database's
// changes in commit order:
//
//   - Loading: one read-only repeatable-read transaction streams the
//     community's contacts and addresses (kept as documents), then its
//     suppliers (no statement timeout), together with its
//     supplier_generation and last_modified (the high-water mark of
//     stamps); each supplier is packed with its contacts and addresses as
//     it is decoded, and a supplierindex.Builder builds the index.
//     A community of at most syncLoadMax suppliers is loaded by the read
//     that first needs it; a larger one in the background, one load at a
//     time, while reads go to the database.
//   - Following: writes stamp under the community's row lock, so stamps
//     increase in commit order, and a snapshot that sees the stamp s has
//     every write stamped below s. A sync reads, in one repeatable-read
//     snapshot, the community's row, the suppliers stamped above the mark
//     it last applied (each with all its contacts and addresses; a
//     contact or address write stamps its supplier), and the tombstones of
//     deletes stamped above it (migration 0006); it applies the tombstones,
//     then the suppliers in stamp order (supplierindex.Index.Apply), so
//     a reader of the cache sees a prefix of the commit order, never a
//     later change without an earlier one; the new mark is the snapshot's
//     last_modified. Nothing committed is skipped: a write not in the
//     snapshot stamps above its last_modified.
//   - The import keeps the file's dates, which may be below the mark: it
//     bumps the community's supplier_generation, and a sync that sees a new
//     generation marks the community stale (reads go to the database) and
//     reloads it.
//   - Freshness: a poller checks every community's generation and
//     last_modified in one query every pollInterval, syncing those that
//     moved. A read is served from the cache only when its last sync's
//     snapshot is younger than maxStale (less than one second: docs:
//     live-data.md "Visibility"), so a node that cannot reach the database - or falls
//     behind - never serves old data silently: it reads from the database,
//     whose errors are the usual 503.
//   - Read-your-writes: a write on this node applies itself to the cache
//     after its commit and before it returns (own), from what it wrote,
//     when the cache holds exactly the state the write changed (its mark
//     is the high-water mark the write read under the lock); the cache's
//     mark becomes the write's stamp. When another node's write came
//     between, the write waits among the pending ones, and the node's
//     next read syncs first (wantMark: the largest stamp this node
//     committed); a sync applies only what is stamped above the state's
//     mark, so a sync that read before this node's newer write never
//     takes the cache back, and then applies the pending writes that
//     continue its mark. An import counts itself (wseq) and the next read
//     syncs. So a node that writes reads its writes with no round trip,
//     and other nodes see them within the bound.
//   - With a read replica (WithReadDSN, replica.go) loads, syncs and polls
//     read from it while it may serve them; a snapshot's time is then the
//     replica's as-of time, not the local time of the read, so maxStale
//     still bounds what the cache serves. A replica that shows a community
//     behind what the cache holds (an older generation, or an older mark:
//     a sync from the primary or this node's own writes brought it
//     further) teaches nothing and changes nothing: generations and,
//     within one, marks only grow.

const (
	// pollInterval is how often the poller checks every community.
	pollInterval = 200 * time.Millisecond
	// maxStale is the oldest a sync may be for the cache to serve a read.
	maxStale = 900 * time.Millisecond
	// syncLoadMax is the largest community the read that needs it loads
	// (a few tens of milliseconds); larger ones load in the background.
	syncLoadMax = 20_000
	// retryLoad is how long after a failed load the next one starts.
	retryLoad = time.Second
	// tombstoneRetention is how long tombstones are kept; a cache whose
	// last sync is older than half of it reloads instead of following.
	tombstoneRetention = 24 * time.Hour
)

// WithSupplierCache has the store serve supplier reads (lists, a
// supplier, its contacts and remittance addresses) from a cache in the
// node's memory that follows the database's changes in commit order: see
// cache.go and the package doc for the design and its figures. Until a
// community is loaded, while it reloads after an import, and whenever the
// cache's last sync is older than maxStale (the database does not
// answer, or the node falls behind), reads go to the database as without
// the option. Writes always go to the database; the node that made one
// sees it at its next read, and every other node within one second.
//
// The store loads every community in the background when it opens, one
// at a time; the cache costs as much memory as memstore does for the same
// suppliers: it is the same index.
func WithSupplierCache() Option { return func(o *options) { o.cache = true } }

// supplierCache is the cache of one Store; nil when the option is off
// (its methods then do nothing).
type supplierCache struct {
	s   *Store
	log *slog.Logger
	ctx context.Context // the cache's lifetime; canceled by Close
	end context.CancelFunc
	wg  sync.WaitGroup

	mu   sync.RWMutex
	coms map[string]*cachedCom

	sf   singleflight.Group
	load chan struct{} // one background load at a time

	served atomic.Int64 // reads served from the cache (tests)
	// readSyncs counts the syncs reads waited for (tests, metrics): a node's own
	// writes apply without one.
	readSyncs atomic.Int64
	// hook, when set, is called by a sync before its read and before it
	// applies what it read (tests order a sync against this node's
	// writes with it).
	hook atomic.Pointer[func(stage string)]

	// Warming up (warmUp): warm is set once the cache has held every
	// community the database holds, which readiness waits for
	// (ready.go); listed once the database has answered, with the
	// counts of the latest look.
	started            time.Time
	warm, listed       atomic.Bool
	warmLoaded, warmOf atomic.Int64
}

// cachedCom is one community of the cache.
type cachedCom struct {
	id    string
	state atomic.Pointer[comState] // nil until loaded
	// wseq counts this node's imports; applied is the largest wseq a
	// sync's snapshot is known to include.
	wseq, applied atomic.Int64
	// wantMark is the largest stamp (unix microseconds) this node's
	// writes committed, or read for a write that changed nothing: a read
	// is served only by a state whose mark is at least that.
	wantMark atomic.Int64
	// writing counts this node's writes of the community that have begun
	// and not yet handed their result to own; changed, when not nil, is
	// closed at the next change of state (waitChange).
	writing atomic.Int64
	changed atomic.Pointer[chan struct{}]
	// syncMu serialises loads and syncs.
	syncMu sync.Mutex
	// applyMu orders the changes of state: a sync's or a load's result,
	// and this node's own writes (ownWrite), which wait for it only, never
	// for a round trip. pending holds own writes that do not continue
	// the state's mark yet (another node's write came between).
	applyMu    sync.Mutex
	pending    []ownWrite
	loading    atomic.Bool
	large      atomic.Bool  // more than syncLoadMax suppliers at the last count
	failedLoad atomic.Int64 // unix nanoseconds of the last failed load

	// For the metrics (metrics.go): the suppliers the last load read
	// and expected, and how far, in commit time, the database's newest
	// stamp was ahead of the applied mark at the last poll.
	loadRead, loadExpected atomic.Int64
	lag                    atomic.Int64 // nanoseconds
}

// comState is what a community's cache holds: immutable but for the
// index, which syncs update in place.
type comState struct {
	ix       *supplierindex.Index
	gen      int64
	mark     time.Time // the last_modified applied through (zero: none)
	syncedAt time.Time // the local time just before the last sync's snapshot
	stale    bool      // a new generation: reloading, not served
}

func newSupplierCache(s *Store, log *slog.Logger) *supplierCache {
	ctx, end := context.WithCancel(context.Background())
	c := &supplierCache{s: s, log: log, ctx: ctx, end: end, coms: map[string]*cachedCom{}, load: make(chan struct{}, 1), started: time.Now()}
	c.wg.Go(c.poll)
	return c
}

// close stops the poller and waits for it and the loads.
func (c *supplierCache) close() {
	if c == nil {
		return
	}
	c.end()
	c.wg.Wait()
}

// entry returns the community's cache entry, made on first use.
func (c *supplierCache) entry(community string) *cachedCom {
	c.mu.RLock()
	cc := c.coms[community]
	c.mu.RUnlock()
	if cc != nil {
		return cc
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	cc = c.coms[community]
	if cc == nil {
		cc = &cachedCom{id: community}
		c.coms[community] = cc
	}
	return cc
}

// wrote records a committed import of this node to the community.
func (c *supplierCache) wrote(community string) {
	if c == nil {
		return
	}
	c.mu.RLock()
	cc := c.coms[community]
	c.mu.RUnlock()
	if cc != nil {
		cc.wseq.Add(1)
	}
}

// wroteAll records an import's writes.
func (c *supplierCache) wroteAll(communities []string) {
	for _, id := range communities {
		c.wrote(id)
	}
}

// reader returns the index that may serve a read of the community now, or
// nil when the read must go to the database.
func (c *supplierCache) reader(community string) *supplierindex.Index {
	if c == nil {
		return nil
	}
	cc := c.entry(community)
	if st := cc.state.Load(); st == nil || st.stale {
		c.ensure(cc)
		if st := cc.state.Load(); st == nil || st.stale {
			return nil // loading: never wait for a load behind its lock
		}
	}
	// Read-your-writes: the state must hold every write this node
	// committed before the read - its own writes are applied when they
	// commit (own), so this holds unless another node's write came
	// between, or an import - and otherwise a sync brings it. A sync
	// already running may have taken its snapshot before the last
	// write: then one more.
	//
	// When only this node's own writes are missing and some of its writes
	// are still on their way, the read waits a little for them instead
	// (ownWait): a write that committed after another of this node's
	// waits among the pending ones until the other one's goroutine hands
	// it over, which on busy cores comes a scheduling delay later, and a
	// sync per read in that gap cost a round trip and a query each (0.7
	// syncs a write with sixteen writers and eight readers on two cores).
	want, wantMark := cc.wseq.Load(), cc.wantMark.Load()
	var st *comState
	var deadline time.Time
	for i := 0; ; {
		st = cc.state.Load()
		// holds every import: then only the node's own writes may be missing
		holds := st != nil && !st.stale && cc.applied.Load() >= want
		if holds && (wantMark == 0 || st.mark.UnixMicro() >= wantMark) {
			break
		}
		if holds && cc.writing.Load() > 0 {
			if deadline.IsZero() {
				deadline = time.Now().Add(ownWait)
			}
			if cc.waitChange(st, deadline) {
				continue
			}
		}
		if i == 3 {
			return nil
		}
		i++
		c.readSyncs.Add(1)
		if _, err, _ := c.sf.Do("sync:"+cc.id, func() (any, error) { return nil, c.sync(cc, true) }); err != nil {
			return nil
		}
	}
	if time.Since(st.syncedAt) > maxStale {
		return nil
	}
	c.served.Add(1)
	return st.ix
}

// ownWait is how long a read waits for this node's writes in flight
// before it syncs (reader). It bounds what a read pays when the missing
// write is another node's after all (it then syncs, as it would have),
// and covers a goroutine's scheduling delay on busy cores: with 2 ms the
// syncs per write fell from 0.72 to 0.18 (sixteen writers, eight
// readers, two cores), with 5 ms to 0.05. A variable for the tests.
var ownWait = 2 * time.Millisecond

// storeState makes st the community's state and wakes the reads waiting
// for a change (waitChange).
func (cc *cachedCom) storeState(st *comState) {
	cc.state.Store(st)
	if p := cc.changed.Swap(nil); p != nil {
		close(*p)
	}
}

// waitChange waits until the community's state is no longer cur, or
// until deadline; it reports whether the state changed.
func (cc *cachedCom) waitChange(cur *comState, deadline time.Time) bool {
	d := time.Until(deadline)
	if d <= 0 {
		return false
	}
	ch := make(chan struct{})
	p := &ch
	if !cc.changed.CompareAndSwap(nil, p) {
		if p = cc.changed.Load(); p == nil {
			return true // swapped out since: the state changed
		}
	}
	if cc.state.Load() != cur {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-*p:
		return true
	case <-t.C:
		return false
	}
}

// writing counts a write of this node to the community from its start
// until the returned function is called, after its own (reader).
func (c *supplierCache) writing(community string) (done func()) {
	if c == nil {
		return func() {}
	}
	c.mu.RLock()
	cc := c.coms[community]
	c.mu.RUnlock()
	if cc == nil {
		return func() {}
	}
	cc.writing.Add(1)
	return func() { cc.writing.Add(-1) }
}

// ensure loads the community when it is not loaded: at once when it is
// small, in the background otherwise (unless that load runs already).
//
// A small community is loaded by the read even when the poller has
// started a background load of it (after an import, say): the read joins
// that load if it has begun, or loads first and the background load finds
// it done. Otherwise the node that imported would answer from the
// database until the poller's turn came.
func (c *supplierCache) ensure(cc *cachedCom) {
	if (cc.loading.Load() && cc.large.Load()) || time.Now().UnixNano()-cc.failedLoad.Load() < int64(retryLoad) {
		return
	}
	var count int64
	err := c.s.rd().QueryRow(c.ctx, `SELECT supplier_count FROM communities WHERE id = $1`, cc.id).Scan(&count)
	if err != nil {
		// An unknown community (or no database): the database answers.
		cc.failedLoad.Store(time.Now().UnixNano())
		return
	}
	cc.large.Store(count > syncLoadMax)
	if count <= syncLoadMax {
		_, _, _ = c.sf.Do("load:"+cc.id, func() (any, error) { return nil, c.loadCom(cc) })
		return
	}
	c.background(cc)
}

// background starts loading the community unless a load of it runs.
func (c *supplierCache) background(cc *cachedCom) {
	if time.Now().UnixNano()-cc.failedLoad.Load() < int64(retryLoad) || !cc.loading.CompareAndSwap(false, true) {
		return
	}
	c.wg.Go(func() {
		defer cc.loading.Store(false)
		select {
		case c.load <- struct{}{}:
		case <-c.ctx.Done():
			return
		}
		defer func() { <-c.load }()
		_, _, _ = c.sf.Do("load:"+cc.id, func() (any, error) { return nil, c.loadCom(cc) })
		// Catch up at once: the load's snapshot is as old as the load.
		_ = c.sync(cc, false)
	})
}

// poll checks every loaded community each pollInterval and syncs the
// ones that changed; until the cache is warm it also loads every
// community the database holds (warmUp).
func (c *supplierCache) poll() {
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	for {
		if !c.warm.Load() {
			c.warmUp()
		}
		select {
		case <-c.ctx.Done():
			return
		case <-tick.C:
		}
		c.pollOnce()
	}
}

// warmUp lists the communities the database holds, queues a background
// load of each one not loaded yet, and counts them; once every one has
// been loaded, the cache is warm - for good (once the database holds
// any community at all): a community that comes
// later, or reloads after an import, is read from the database
// meanwhile without making the store unready - and it logs "supplier
// cache: ready", the line an operator, or a benchmark, waits for
// before measuring the cache. A node that starts with an import (the
// example server with -data) thus warms up with what it imported.
func (c *supplierCache) warmUp() {
	rows, err := c.s.rd().Query(c.ctx, `SELECT id FROM communities ORDER BY id`)
	if err != nil {
		return
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return
	}
	loaded := 0
	for _, id := range ids {
		cc := c.entry(id)
		// A state, stale or not, is left by a completed load.
		if cc.state.Load() != nil {
			loaded++
		} else {
			c.background(cc)
		}
	}
	c.warmLoaded.Store(int64(loaded))
	c.warmOf.Store(int64(len(ids)))
	c.listed.Store(true)
	// An empty database is no start: the first communities to come
	// are waited for (ready.go answers ready meanwhile).
	if loaded == len(ids) && len(ids) > 0 {
		c.warm.Store(true)
		if c.log != nil {
			c.log.Info("supplier cache: ready", "communities", len(ids), "duration_ms", time.Since(c.started).Milliseconds())
		}
	}
}

// imported has a cache that is not yet warm look at the communities
// again at once, after an import through the store: so that Ready,
// asked next, counts what the import added.
func (c *supplierCache) imported() {
	if c != nil && !c.warm.Load() {
		c.warmUp()
	}
}

// warmth reports whether the cache is warm and, if not, how many of the
// communities of the latest look were loaded, of how many; listed is
// false while the database has not answered a look.
func (c *supplierCache) warmth() (warm bool, loaded, of int64, listed bool) {
	return c.warm.Load(), c.warmLoaded.Load(), c.warmOf.Load(), c.listed.Load()
}

// pollOnce is one round of the poller: one query for every community.
func (c *supplierCache) pollOnce() {
	c.mu.RLock()
	ids := make([]string, 0, len(c.coms))
	for id := range c.coms {
		ids = append(ids, id)
	}
	c.mu.RUnlock()
	if len(ids) == 0 {
		return
	}
	q, start := c.source()
	rows, err := q.Query(c.ctx, `SELECT id, supplier_generation, last_modified FROM communities WHERE id = ANY($1)`, ids)
	if err != nil {
		return
	}
	type head struct {
		gen  int64
		mark *time.Time
	}
	heads := map[string]head{}
	for rows.Next() {
		var id string
		var h head
		if err := rows.Scan(&id, &h.gen, &h.mark); err != nil {
			rows.Close()
			return
		}
		heads[id] = h
	}
	if rows.Err() != nil {
		return
	}
	for _, id := range ids {
		cc := c.entry(id)
		h, ok := heads[id]
		st := cc.state.Load()
		if ok && st != nil && h.mark != nil {
			cc.lag.Store(max(int64(h.mark.Sub(st.mark)), 0))
		}
		switch {
		case !ok:
			continue
		case st == nil || st.stale:
			c.background(cc)
		case h.gen < st.gen:
			// A replica behind a reload from the primary: nothing to
			// learn from it yet. (A mark behind the state's, in its
			// generation, is a replica behind, or this node's own writes
			// applied since the look: the state holds all the source
			// held, which the default case counts as fresh.)
			continue
		case h.gen != st.gen || start.Sub(st.syncedAt) > tombstoneRetention/2:
			c.markStale(cc)
			c.background(cc)
		case h.mark != nil && h.mark.After(st.mark):
			_, _, _ = c.sf.Do("sync:"+cc.id, func() (any, error) { return nil, c.sync(cc, false) })
		default:
			// Nothing committed since the mark (or beyond it: this node's
			// own writes, applied already), as of a snapshot taken after
			// start.
			cc.applyMu.Lock()
			if cur := cc.state.Load(); cur != nil && !cur.stale && cur.gen == h.gen && (h.mark == nil || !h.mark.After(cur.mark)) && start.After(cur.syncedAt) {
				next := *cur
				next.syncedAt = start
				cc.storeState(&next)
			}
			cc.applyMu.Unlock()
		}
	}
}

// markStale stops serving the community until it is reloaded.
func (c *supplierCache) markStale(cc *cachedCom) {
	cc.syncMu.Lock()
	defer cc.syncMu.Unlock()
	cc.applyMu.Lock()
	defer cc.applyMu.Unlock()
	if st := cc.state.Load(); st != nil && !st.stale {
		cc.storeState(staleState(st))
		cc.pending = nil
	}
}

// staleState is st marked stale, without its index: it is not served
// again, and its memory is free for the reload.
func staleState(st *comState) *comState {
	next := *st
	next.stale = true
	next.ix = nil
	return &next
}

// errStale is a sync that found a new generation.
var errStale = errors.New("pgstore: supplier cache: the community was imported: reloading")

// sync applies the community's changes since its mark. inline says that a
// read waits for it: a new generation of a small community is then
// reloaded at once.
func (c *supplierCache) sync(cc *cachedCom, inline bool) error {
	cc.syncMu.Lock()
	err := c.syncLocked(cc)
	cc.syncMu.Unlock()
	if errors.Is(err, errStale) {
		if inline {
			c.ensure(cc)
			if st := cc.state.Load(); st != nil && !st.stale {
				return nil
			}
		} else {
			c.background(cc)
		}
	}
	return err
}

func (c *supplierCache) syncLocked(cc *cachedCom) error {
	st := cc.state.Load()
	if st == nil || st.stale {
		return errStale
	}
	seq := cc.wseq.Load()
	q, start := c.source()
	var gen int64
	var mark *time.Time
	found := false
	var puts []supplier.Record
	var contacts []childRow[supplier.Contact]
	var addrs []childRow[supplier.RemittanceAddress]
	var deleted []uuid.UUID
	var deletedAt []tombstone
	b := &pgx.Batch{}
	b.Queue(`BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY`)
	// A generic plan (what a prepared statement may get after a few
	// runs) cannot know that the mark keeps a handful of suppliers, and
	// would join every contact and address of the community.
	b.Queue(`SET LOCAL plan_cache_mode = force_custom_plan`)
	b.Queue(`SELECT supplier_generation, last_modified FROM communities WHERE id = $1`, cc.id).Query(func(rows pgx.Rows) error {
		for rows.Next() {
			found = true
			if err := rows.Scan(&gen, &mark); err != nil {
				return err
			}
		}
		return rows.Err()
	})
	qs := syncQueries(cc.id, st.mark)
	b.Queue(qs[0].sql, qs[0].args...).Query(func(rows pgx.Rows) error {
		var err error
		puts, err = pgx.CollectRows(rows, scanRecord)
		return err
	})
	b.Queue(qs[1].sql, qs[1].args...).Query(func(rows pgx.Rows) error {
		var err error
		contacts, err = collectChildren[supplier.Contact](rows)
		return err
	})
	b.Queue(qs[2].sql, qs[2].args...).Query(func(rows pgx.Rows) error {
		var err error
		addrs, err = collectChildren[supplier.RemittanceAddress](rows)
		return err
	})
	b.Queue(qs[3].sql, qs[3].args...).Query(func(rows pgx.Rows) error {
		var err error
		deletedAt, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (tombstone, error) {
			var t tombstone
			err := row.Scan(&t.id, &t.at)
			deleted = append(deleted, t.id)
			return t, err
		})
		return err
	})
	b.Queue(`COMMIT`)
	c.syncHook("read")
	if err := q.SendBatch(c.ctx, b).Close(); err != nil {
		return err
	}
	c.syncHook("apply")
	cc.applyMu.Lock()
	defer cc.applyMu.Unlock()
	// This node's own writes may have moved the state on since st.
	cur := cc.state.Load()
	if cur.stale {
		return errStale
	}
	if found && gen < cur.gen {
		// A replica behind a reload from the primary holds nothing
		// newer, and every write of this node counted in seq: it was
		// chosen only once it held them (replica.go), so the cache,
		// further still, holds them too. (A mark behind the state's in
		// its generation - a replica behind, or this node's own writes
		// applied meanwhile - applies nothing below.)
		raise(&cc.applied, seq)
		return nil
	}
	if !found || gen != cur.gen {
		cc.storeState(staleState(cur))
		cc.pending = nil
		return errStale
	}
	next := *cur
	if start.After(next.syncedAt) {
		next.syncedAt = start
	}
	if mark != nil && mark.After(cur.mark) {
		// What the state lacks: the changes stamped above its mark.
		// Those at or below it are in it already, applied by this
		// node's writes as they committed, and the snapshot shows them
		// as they were then (a later change would be stamped above).
		if cur != st {
			puts = slices.DeleteFunc(puts, func(r supplier.Record) bool { return !r.ModifiedDate.After(cur.mark) })
			deleted = deleted[:0]
			for _, id := range deletedAt {
				if id.at.After(cur.mark) {
					deleted = append(deleted, id.id)
				}
			}
		}
		attach(puts, contacts, addrs)
		for i := range puts {
			puts[i].Normalize()
		}
		cur.ix.Apply(puts, deleted)
		next.mark = mark.UTC()
	}
	c.drain(cc, &next)
	raise(&cc.applied, seq)
	return nil
}

// source returns where the cache's next read goes (the replica while it
// is fresh enough, else the primary: replica.go) and the time its data is
// at least as fresh as: the replica's as-of time, or now.
func (c *supplierCache) source() (*db, time.Time) {
	q, at := c.s.rdAt()
	if at.IsZero() {
		at = time.Now()
	}
	return q, at
}

func (c *supplierCache) syncHook(stage string) {
	if h := c.hook.Load(); h != nil {
		(*h)(stage)
	}
}

// writeBase is what a put of supplier id planned from this node's cache
// rests on (write_fast.go): the supplier's record as the cache holds it
// (shared with the index: read only), the community's generation, and
// the state's mark (useCache plans above it and above the record's own
// dates, which the index, updated before the mark moves, may hold newer).
// ok is false when the cache
// holds no state it would serve a read from (none, stale, or its last
// sync older than maxStale): the put then reads from the database.
// Nothing here need be current: the write's guard checks, under the lock,
// that the record and the generation are the stored ones.
func (c *supplierCache) writeBase(community string, id uuid.UUID) (b cacheBase, ok bool) {
	if c == nil {
		return b, false
	}
	c.mu.RLock()
	cc := c.coms[community]
	c.mu.RUnlock()
	if cc == nil {
		return b, false
	}
	st := cc.state.Load()
	if st == nil || st.stale || time.Since(st.syncedAt) > maxStale {
		return b, false
	}
	b.gen, b.mark = st.gen, st.mark
	b.rec, b.found = st.ix.Record(id)
	return b, true
}

// ownWrite is a write this node committed, to apply to its cache from
// what it wrote, without reading it back.
type ownWrite struct {
	// prev is the community's mark the write read under its lock (zero:
	// none), stamp the write's stamp: the write takes the state from
	// prev to stamp, nothing else committing in between.
	prev, stamp time.Time
	// apply makes the write's change to an index that holds the state
	// at prev, from its records (a contact write: the supplier's record
	// with the contact put, and its stamp).
	apply func(ix *supplierindex.Index)
}

// maxPending bounds the own writes waiting for a sync: past it they are
// forgotten, and the next read syncs.
const maxPending = 256

// own applies a write this node committed to the cache, before the write
// returns, in stamp order against the syncs: it applies when the state's
// mark is the write's prev (the state is then exactly the one the write
// changed, and the result is what the write committed), waits among the
// pending writes when another write came between (the next read syncs,
// as wantMark says, and the sync's result lets it apply or covers it), and
// is dropped when a sync has brought it already. A write with a nil apply
// changed nothing: the node's next read waits for a state with its mark.
func (c *supplierCache) own(community string, w ownWrite) {
	if c == nil || w.stamp.IsZero() {
		return
	}
	c.mu.RLock()
	cc := c.coms[community]
	c.mu.RUnlock()
	if cc == nil {
		return // not loaded: reads go to the database, or load after the commit
	}
	raise(&cc.wantMark, w.stamp.UnixMicro())
	if w.apply == nil {
		return
	}
	cc.applyMu.Lock()
	defer cc.applyMu.Unlock()
	st := cc.state.Load()
	if st == nil || st.stale || !st.mark.Before(w.stamp) {
		return
	}
	cc.pending = append(cc.pending, w)
	next := *st
	c.drain(cc, &next)
}

// drain applies the pending own writes that continue next's mark, one
// after another, stores next as the community's state and drops the
// pending writes it covers (applyMu held).
func (c *supplierCache) drain(cc *cachedCom, next *comState) {
	for {
		i := slices.IndexFunc(cc.pending, func(w ownWrite) bool { return w.prev.Equal(next.mark) })
		if i < 0 {
			break
		}
		w := cc.pending[i]
		w.apply(next.ix)
		next.mark = w.stamp
		cc.pending = slices.Delete(cc.pending, i, i+1)
	}
	cc.pending = slices.DeleteFunc(cc.pending, func(w ownWrite) bool { return !next.mark.Before(w.stamp) })
	if len(cc.pending) > maxPending {
		cc.pending = nil
	}
	cc.storeState(next)
}

// syncQueries are the reads of a sync after the community's row: the
// suppliers stamped above mark (full records, in stamp order), their
// contacts, their addresses (supplier_id, doc), and the ids
// of the suppliers deleted above mark.
func syncQueries(community string, mark time.Time) [4]query {
	args := []any{community, mark}
	return [4]query{
		{`SELECT ` + summaryColumns + `, s.details, s.keywords FROM suppliers s
			WHERE s.community_id = $1 AND s.modified_date > $2 ORDER BY s.modified_date, s.id`, args},
		{`SELECT c.supplier_id, c.doc FROM supplier_contacts c JOIN suppliers s ON s.community_id = c.community_id AND s.id = c.supplier_id
			WHERE s.community_id = $1 AND s.modified_date > $2`, args},
		{`SELECT a.supplier_id, a.doc FROM remittance_addresses a JOIN suppliers s ON s.community_id = a.community_id AND s.id = a.supplier_id
			WHERE s.community_id = $1 AND s.modified_date > $2`, args},
		{`SELECT id, deleted_at FROM supplier_tombstones WHERE community_id = $1 AND deleted_at > $2`, args},
	}
}

// tombstone is a delete the sync reads.
type tombstone struct {
	id uuid.UUID
	at time.Time
}

// raise sets *a to v when v is larger.
func raise(a *atomic.Int64, v int64) {
	for {
		cur := a.Load()
		if cur >= v || a.CompareAndSwap(cur, v) {
			return
		}
	}
}

// loadCom loads the community in full from one snapshot.
func (c *supplierCache) loadCom(cc *cachedCom) error {
	cc.syncMu.Lock()
	defer cc.syncMu.Unlock()
	if st := cc.state.Load(); st != nil && !st.stale {
		return nil // loaded meanwhile
	}
	seq := cc.wseq.Load()
	start := time.Now()
	q, at := c.source()
	st, n, err := c.read(cc, q)
	if err != nil {
		cc.failedLoad.Store(time.Now().UnixNano())
		if c.log != nil && c.ctx.Err() == nil {
			c.log.Warn("supplier cache: load failed", "community", cc.id, "error", err)
		}
		return err
	}
	st.syncedAt = at
	cc.applyMu.Lock()
	c.drain(cc, st)
	cc.applyMu.Unlock()
	raise(&cc.applied, seq)
	if c.log != nil && n > syncLoadMax {
		c.log.Info("supplier cache: community loaded", "community", cc.id, "suppliers", n,
			"duration_ms", time.Since(start).Milliseconds())
	}
	return nil
}

// read reads the community from q in one read-only repeatable-read
// transaction, without the statement timeout, and builds its index.
func (c *supplierCache) read(cc *cachedCom, q *db) (*comState, int, error) {
	community := cc.id
	ctx := WithoutStatementTimeout(c.ctx)
	conn, err := q.Acquire(ctx)
	if err != nil {
		return nil, 0, err
	}
	defer conn.Release()
	tx, err := conn.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return nil, 0, err
	}
	defer func() { _ = tx.Rollback(ctx) }()
	st := &comState{}
	var mark *time.Time
	var expected int64
	if err := tx.QueryRow(ctx, `SELECT supplier_generation, last_modified, supplier_count FROM communities WHERE id = $1`, community).Scan(&st.gen, &mark, &expected); err != nil {
		return nil, 0, err
	}
	cc.loadRead.Store(0)
	cc.loadExpected.Store(expected)
	if mark != nil {
		st.mark = mark.UTC()
	}
	// The contacts and addresses first, as undecoded documents
	// (cache_children.go), then the suppliers: each is decoded with its
	// contacts and addresses, packed and dropped on the worker that
	// decoded it, while the rows stream in (decodeRows).
	kids := newChildDocs()
	for _, q := range []struct {
		sql  string
		addr bool
	}{
		{`SELECT supplier_id, doc FROM supplier_contacts WHERE community_id = $1`, false},
		{`SELECT supplier_id, doc FROM remittance_addresses WHERE community_id = $1`, true},
	} {
		rows, err := tx.Query(ctx, q.sql, community)
		if err != nil {
			return nil, 0, err
		}
		if err := kids.read(rows, q.addr); err != nil {
			return nil, 0, err
		}
	}
	rows, err := tx.Query(ctx, `SELECT `+summaryColumns+`, s.details, s.keywords FROM suppliers s
		WHERE s.community_id = $1`, community)
	if err != nil {
		return nil, 0, err
	}
	type loaded struct {
		r supplier.Record
		p supplierindex.Packed
	}
	var b supplierindex.Builder
	err = decodeRows(rows, func(row pgx.Rows, raw *[]byte) (loaded, error) {
		cc.loadRead.Add(1)
		var l loaded
		err := scanSummary(row, &l.r.Summary, raw, &l.r.Keywords)
		if len(l.r.Keywords) == 0 {
			l.r.Keywords = nil
		}
		return l, err
	}, func(d *datafile.Decoder, l *loaded, raw []byte) error {
		if raw != nil {
			// The details document has the nested objects' keys of a
			// supplier: decoded as a supplier, of which it keeps those.
			var doc supplier.Record
			if err := d.Record(raw, &doc); err != nil {
				return err
			}
			detailsOf(&doc.Detail).restore(&l.r.Detail)
		}
		if err := kids.attach(d, &l.r); err != nil {
			return err
		}
		l.p = supplierindex.Pack(&l.r)
		return nil
	}, func(part []loaded) {
		for i := range part {
			b.AddPacked(part[i].p)
		}
	})
	if err != nil {
		return nil, 0, err
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, 0, err
	}
	n := b.Len()
	if st.ix, err = b.Build(); err != nil {
		return nil, 0, fmt.Errorf("supplier cache: %w", err)
	}
	return st, n, nil
}

// childRow is a contact or address read with its supplier's id.
type childRow[T any] struct {
	supplierID uuid.UUID
	v          T
}

// collectChildren reads rows of (supplier_id, doc).
func collectChildren[T any](rows pgx.Rows) ([]childRow[T], error) {
	var out []childRow[T]
	err := forChildren(rows, func(id uuid.UUID, v T) { out = append(out, childRow[T]{id, v}) })
	return out, err
}

// forChildren calls add with each row of (supplier_id, doc) decoded, and
// closes rows.
func forChildren[T any](rows pgx.Rows, add func(uuid.UUID, T)) error {
	defer rows.Close()
	var id uuid.UUID
	var raw []byte
	for rows.Next() {
		if err := rows.Scan(&id, &raw); err != nil {
			return err
		}
		var v T
		if err := json.Unmarshal(raw, &v); err != nil {
			return err
		}
		add(id, v)
	}
	return rows.Err()
}

// recordFinder returns a function that finds a record of recs by id.
func recordFinder(recs []supplier.Record) func(uuid.UUID) *supplier.Record {
	at := make(map[uuid.UUID]int32, len(recs))
	for i := range recs {
		at[recs[i].ID] = int32(i)
	}
	return func(id uuid.UUID) *supplier.Record {
		i, ok := at[id]
		if !ok {
			return nil
		}
		return &recs[i]
	}
}

// decodeChunkSize is how many rows decodeRows hands a decoder at a time.
const decodeChunkSize = 2048

// decodeChunk is rows scanned, with their raw JSON, for a decoder.
type decodeChunk[T any] struct {
	items []T
	raws  [][]byte
	err   error
	done  chan struct{}
}

// decodeRows reads rows on this goroutine with scan, which leaves a row's
// JSON in *raw (nil: none), and calls decode with each item and its JSON
// on one worker per core, a chunk at a time, while the reading goes on;
// each worker decodes with its own datafile.Decoder (decode's d). It hands emit
// the items in row order, chunk by chunk, as soon as they are decoded, so
// that few raw rows are held at once. It closes rows.
func decodeRows[T any](rows pgx.Rows, scan func(pgx.Rows, *[]byte) (T, error), decode func(d *datafile.Decoder, item *T, raw []byte) error, emit func([]T)) error {
	defer rows.Close()
	work := make(chan *decodeChunk[T])
	var wg sync.WaitGroup
	for range max(runtime.GOMAXPROCS(0), 1) {
		wg.Go(func() {
			d := datafile.NewDecoder()
			for ch := range work {
				for i, raw := range ch.raws {
					if ch.err == nil {
						ch.err = decode(d, &ch.items[i], raw)
					}
				}
				ch.raws = nil
				close(ch.done)
			}
		})
	}
	var queue []*decodeChunk[T] // sent, not yet emitted, in order
	var failed error
	flush := func(wait bool) {
		for len(queue) > 0 {
			ch := queue[0]
			if !wait {
				select {
				case <-ch.done:
				default:
					return
				}
			}
			<-ch.done
			if ch.err != nil && failed == nil {
				failed = ch.err
			}
			if failed == nil {
				emit(ch.items)
			}
			queue = queue[1:]
		}
	}
	newChunk := func() *decodeChunk[T] {
		return &decodeChunk[T]{items: make([]T, 0, decodeChunkSize), raws: make([][]byte, 0, decodeChunkSize), done: make(chan struct{})}
	}
	cur := newChunk()
	send := func() {
		queue = append(queue, cur)
		work <- cur
		cur = newChunk()
		flush(false)
	}
	var err error
	for rows.Next() {
		var raw []byte
		var it T
		if it, err = scan(rows, &raw); err != nil {
			break
		}
		cur.items = append(cur.items, it)
		cur.raws = append(cur.raws, raw)
		if len(cur.items) == decodeChunkSize {
			send()
		}
	}
	if err == nil && len(cur.items) > 0 {
		send()
	}
	close(work)
	flush(true)
	wg.Wait()
	if err == nil {
		err = rows.Err()
	}
	if err == nil {
		err = failed
	}
	return err
}

// attach gives each record its contacts and addresses.
func attach(recs []supplier.Record, contacts []childRow[supplier.Contact], addrs []childRow[supplier.RemittanceAddress]) {
	find := recordFinder(recs)
	for i := range contacts {
		if r := find(contacts[i].supplierID); r != nil {
			r.Contacts = append(r.Contacts, contacts[i].v)
		}
	}
	for i := range addrs {
		if r := find(addrs[i].supplierID); r != nil {
			r.RemittanceAddresses = append(r.RemittanceAddresses, addrs[i].v)
		}
	}
}
