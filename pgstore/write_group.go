package pgstore

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Puts planned from the node's cache, committed together (issue 22).
//
// The writes of one community pass its row lock one transaction at a
// time (docs/live-data.md). On a busy node the lock's handoff costs more
// than the write: when a transaction commits, the backend that waits
// next has to be woken and given a core before it runs its part, and at
// a thousand puts a second on two cores the readers keep busy that was
// two thirds of the lock's cycle (bench/README.md, session 16: 0.5 ms of
// statements in a 1.57 ms cycle).
//
// So the puts of a community that runOptimistic planned from the node's
// cache (the one-round-trip kind) go through a queue: while fewer than
// maxGroups transactions of the community are in flight from this node,
// a put sends its own, as before; otherwise it waits in the queue, and
// when a transaction ends, the first put waiting leads the next one: it
// takes the queue (up to maxGroupPuts, at most one put a supplier) and
// sends BEGIN, the lock, each put's guard and writes in turn, the
// search terms the puts drop and add, the community's mark and count and
// the puts' bucket changes in one statement each, and COMMIT in one
// batch. Each put's guard runs after
// the writes before it, so it sees the stamp of the put before (the
// transaction's stamp setting; guardSQL) and makes the next, and checks
// what its own plan rests on, exactly as in a transaction of its own;
// the puts of a group commit at once, in the order of their stamps. The
// other transactions in flight keep the lock's queue in the database busy while the queue in
// the node forms the next group, so the node's own scheduling delays stay
// off the lock's cycle. (Session 12 tried one group in flight, and the
// group's round trip and the goroutines' hand-offs became the cycle.)
//
// On a direct connection the groups go through one connection of the
// community in pipeline mode instead (write_pipe.go), which takes the
// hand-off between backends out of the lock's cycle; what follows holds
// through a pooler, and the queue, the guards and the outcomes are the
// same either way.
//
// One guard that fails fails the group's transaction: then every put of
// the group is redone under the lock (errRaced), as one raced put is.
// A put planned while another put of its supplier is queued or in flight
// is redone under the lock once the other has ended: the cache it was
// planned from does not show the other put, so its guard would fail on
// the other's stamp, and with it the group it joined.

const (
	// maxGroups is the most transactions of grouped puts one community
	// has in flight from a node (and at most its write slots). Fewer
	// make larger groups and longer waits in the queue: with four, a
	// node under read load took 870-904 of 1,000 writes a second where
	// it took 965-972 with eight and without groups; with eight, the
	// same, and the reads alongside 13-22% faster than without groups,
	// and the writers alone 31% more puts a second (bench/README.md,
	// session 17).
	maxGroups = 8
	// maxGroupPuts is the most puts in one transaction.
	maxGroupPuts = 32
)

// groupedPut is a put waiting for, or in, a group.
type groupedPut struct {
	ctx      context.Context
	o        *optimistic
	writes   *pgx.Batch
	supplier uuid.UUID
	err      error
	done     chan struct{} // closed once err is the put's outcome
	lead     chan struct{} // receives when the put is to lead the next group
	// taken: the put is in a group (guarded by its queue's mutex).
	taken bool
}

// putQueue is one community's queue of grouped puts.
type putQueue struct {
	mu sync.Mutex
	// inflight counts the groups sent and not yet ended, and a leader told
	// to lead that has not yet taken its group.
	inflight int
	// leading: a put at the queue's head was told to lead.
	leading bool
	queue   []*groupedPut
	// busy holds, for each supplier with a put queued or in flight, a
	// channel closed when it ends; waiting counts the puts waiting for
	// one (tests).
	busy    map[uuid.UUID]chan struct{}
	waiting int
	// piping: a goroutine runs the community's pipe (write_pipe.go).
	piping bool
}

// writeGroups holds the communities' queues.
type writeGroups struct {
	max int // groups in flight a community
	// pipe: the groups go through a pipe (write_pipe.go), on a direct
	// connection.
	pipe   bool
	queues sync.Map
}

func (g *writeGroups) of(community string) *putQueue {
	q, ok := g.queues.Load(community)
	if !ok {
		q, _ = g.queues.LoadOrStore(community, &putQueue{busy: map[uuid.UUID]chan struct{}{}})
	}
	return q.(*putQueue)
}

// commitGrouped commits writes, the statements of a put planned from the
// cache (o), in a transaction with the other puts of community queued
// meanwhile, or alone. It returns errRaced, having written nothing, when
// the put is to be redone under the lock.
func (s *Store) commitGrouped(ctx context.Context, community string, o *optimistic, writes *pgx.Batch) error {
	q := s.groups.of(community)
	p := &groupedPut{ctx: ctx, o: o, writes: writes, supplier: o.supplierID, done: make(chan struct{}), lead: make(chan struct{}, 1)}
	q.mu.Lock()
	if free, ok := q.busy[p.supplier]; ok {
		// Planned from a cache that does not show the supplier's put in
		// flight: its guard would fail on that put's stamp. Redone under
		// the lock once that put has ended: before, the redo could commit
		// first and fail the put's group instead.
		q.waiting++
		q.mu.Unlock()
		var err error
		select {
		case <-free:
			s.writesRaced.Add(1)
			err = errRaced
		case <-ctx.Done():
			err = ctx.Err()
		}
		q.mu.Lock()
		q.waiting--
		q.mu.Unlock()
		return err
	}
	q.busy[p.supplier] = make(chan struct{})
	if s.groups.pipe {
		return s.commitPiped(ctx, q, community, p)
	}
	if q.inflight < s.groups.max && len(q.queue) == 0 {
		q.inflight++
		p.taken = true
		q.mu.Unlock()
		s.sendGroup(community, q, []*groupedPut{p})
		return p.err
	}
	q.queue = append(q.queue, p)
	q.mu.Unlock()
	select {
	case <-p.done:
		return p.err
	case <-p.lead:
	case <-ctx.Done():
		q.mu.Lock()
		if !p.taken && !(q.leading && q.queue[0] == p) {
			q.queue = removePut(q.queue, p)
			q.unbusy(p)
			q.mu.Unlock()
			return ctx.Err()
		}
		q.mu.Unlock()
		// In a group already, or told to lead: see it through.
		select {
		case <-p.done:
			return p.err
		case <-p.lead:
		}
	}
	q.mu.Lock()
	q.leading = false
	group := takeGroup(q)
	q.mu.Unlock()
	s.sendGroup(community, q, group)
	<-p.done // the leader is its group's first put
	return p.err
}

// takeGroup takes from q's queue the next group: its first
// maxGroupPuts puts. q's mutex is held.
func takeGroup(q *putQueue) []*groupedPut {
	n := min(len(q.queue), maxGroupPuts)
	group := slices.Clone(q.queue[:n])
	for _, p := range group {
		p.taken = true
	}
	q.queue = append(q.queue[:0], q.queue[n:]...)
	return group
}

// unbusy frees p's supplier; q's mutex is held.
func (q *putQueue) unbusy(p *groupedPut) {
	close(q.busy[p.supplier])
	delete(q.busy, p.supplier)
}

// removePut returns queue without p.
func removePut(queue []*groupedPut, p *groupedPut) []*groupedPut {
	for i, x := range queue {
		if x == p {
			return append(queue[:i], queue[i+1:]...)
		}
	}
	return queue
}

// sendGroup commits group in one transaction, tells the queue's next
// leader to lead (or counts the group out), and gives each put its
// outcome.
func (s *Store) sendGroup(community string, q *putQueue, group []*groupedPut) {
	live := group[:0:0]
	for _, p := range group {
		if err := p.ctx.Err(); err != nil {
			p.err = err // not sent: nothing written
			continue
		}
		live = append(live, p)
	}
	// Whatever happens to the leader (a panic included), the queue moves
	// on and the group's puts end: as redone under the lock unless the
	// group's outcome is known.
	err := errRaced
	defer func() {
		q.mu.Lock()
		for _, p := range group {
			q.unbusy(p)
		}
		if len(q.queue) > 0 && !q.leading {
			q.leading = true
			q.queue[0].lead <- struct{}{}
		} else {
			q.inflight--
		}
		q.mu.Unlock()
		for _, p := range live {
			p.err = err
		}
		for _, p := range group {
			close(p.done)
		}
	}()
	if len(live) > 0 {
		if s.beforeGroup != nil {
			s.beforeGroup()
		}
		ctx, stop := groupContext(live)
		defer stop()
		err = s.commitGroup(ctx, community, live)
	}
}

// groupContext is the context of a group's transaction: done when every
// put's context is done (a request that ends takes only its own put
// with it, and only while it waits in the queue), with the first put's
// values. stop releases it.
func groupContext(group []*groupedPut) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancel(context.WithoutCancel(group[0].ctx))
	var left atomic.Int64
	left.Store(int64(len(group)))
	stops := make([]func() bool, len(group))
	for i, p := range group {
		stops[i] = context.AfterFunc(p.ctx, func() {
			if left.Add(-1) == 0 {
				cancel()
			}
		})
	}
	return ctx, func() {
		for _, f := range stops {
			f()
		}
		cancel()
	}
}

// commitGroup commits the group's puts (sendPuts). A failed guard, or
// any other failure of a group of more than one put, is errRaced: each
// put is redone under the lock, where an error of its own is its own.
func (s *Store) commitGroup(ctx context.Context, community string, group []*groupedPut) error {
	conn, release, err := s.acquireWrite(ctx, community)
	if err != nil {
		return err
	}
	defer release()
	raced, err := sendPuts(ctx, conn, community, group)
	return s.groupOutcome(len(group), raced, err)
}

// groupOutcome counts a group of n puts planned from the cache that
// ended with err (raced: a guard failed) and returns each put's outcome:
// nil, committed; errRaced, to be redone under the lock (a failed guard,
// or any failure of a group of more than one put, where an error of one
// put's own would fail the others); or err, a lone put's own.
func (s *Store) groupOutcome(n int, raced bool, err error) error {
	if err == nil {
		s.writesFast.Add(int64(n))
		s.writesFromCache.Add(int64(n))
		if n > 1 {
			s.writesGrouped.Add(int64(n))
		}
		return nil
	}
	if raced || n > 1 {
		s.writesRaced.Add(int64(n))
		if n > 1 {
			s.groupsFailed.Add(1)
		}
		return errRaced
	}
	return err
}

// queueGroup queues the statements of a group's transaction between its
// start and its end, for both paths (sendPuts, pipeQueries): the
// community's lock, each put's guard and writes in turn, then the search
// terms all of them add and drop (queueTermChanges, a statement each),
// and the counts of all of them (queueCounts): the community's mark and count, and the
// puts' bucket changes in one statement - a bucket statement costs the
// database much the same for one put's keys as for a group's
// (bench/README.md, session 25). Each put's keys are known when it is
// planned; the one its guard may change, the stamp's, is lastKey
// (stampKeys). The buckets that grow past their size are split after the
// first put that names where to note them (optimistic.split; splitLater).
func queueGroup(b *pgx.Batch, community string, puts []*groupedPut) {
	queueLock(b, community)
	added := 0
	var ds []bucketDelta
	var split *[]bucketRef
	ts := make([]termChanges, 0, len(puts))
	for _, p := range puts {
		p.o.queueGuard(b, community)
		b.QueuedQueries = append(b.QueuedQueries, p.writes.QueuedQueries...)
		if p.o.creates() {
			added++
		}
		ds = append(ds, p.o.buckets...)
		ts = append(ts, p.o.terms)
		if split == nil {
			split = p.o.split
		}
	}
	queueTermChanges(b, community, ts)
	queueCounts(b, community, added, ds, split)
}

// sendPuts sends BEGIN, the community's lock, each put's guard and
// writes in turn, their search terms and counts, and COMMIT in one batch on conn.
// On an error the transaction is ended, nothing written; raced reports
// that a guard failed.
func sendPuts(ctx context.Context, conn *conn, community string, puts []*groupedPut) (raced bool, err error) {
	n := 7 // BEGIN, the lock, the terms dropped and added, the mark, the bucket changes, COMMIT
	for _, p := range puts {
		n += 1 + len(p.writes.QueuedQueries)
	}
	b := &pgx.Batch{QueuedQueries: make([]*pgx.QueuedQuery, 0, n)}
	b.Queue(`BEGIN`)
	queueGroup(b, community, puts)
	b.Queue(`COMMIT`)
	if err := conn.SendBatch(ctx, b).Close(); err != nil {
		conn.endTx(ctx)
		pgErr, ok := errors.AsType[*pgconn.PgError](err)
		return ok && pgErr.Code == divisionByZero, err
	}
	return false, nil
}
