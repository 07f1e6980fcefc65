package pgstore

import (
	"context"
	"sync"
)

// Connections for writes (issue 22). The writes of one community are
// serialised by its row lock (docs: live-data.md), so past a few, a write
// that holds a connection only waits on that lock inside the database. A
// burst of one community's writes larger than the pool parked every
// connection on the lock, and everything else the node asks the database -
// its cache's syncs, loads and polls, the credential and user reads that
// miss their caches, other communities' writes - waited for a connection
// behind them: in the load test (bench/README.md, session 12) the reads
// fell to 14% of the baseline with 64 writes in flight on a pool of 16,
// where 16 writes in flight left them at 44-49%.
//
// So a put or delete of a supplier, contact or address (runOptimistic,
// runWrite) takes a slot before its connection: the writes hold at most
// three quarters of the pool's connections (one less than the pool when
// it is smaller than 8, and always at least one), and one community's
// writes all of those but one (at least one),
// so that another community's writes find a connection too. Not fewer: on
// a busy node a write holds its connection for two round trips and the
// scheduling delays between them, and it takes many writes in flight to
// keep the community's lock busy (bench/README.md, session 12: the
// writer's figures with and without the slots).
type writeSlots struct {
	all    chan struct{}
	perCom int
	coms   sync.Map // community -> chan struct{}
}

// newWriteSlots returns the slots of a pool of conns connections.
func newWriteSlots(conns int32) *writeSlots {
	n := int(conns)
	w := max(1, n-max(1, n/4))
	return &writeSlots{all: make(chan struct{}, w), perCom: max(1, w-1)}
}

// take waits for a slot for a write of community and returns its
// release, or the context's error when it ends first.
func (w *writeSlots) take(ctx context.Context, community string) (release func(), err error) {
	c, ok := w.coms.Load(community)
	if !ok {
		c, _ = w.coms.LoadOrStore(community, make(chan struct{}, w.perCom))
	}
	com := c.(chan struct{})
	select {
	case com <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	select {
	case w.all <- struct{}{}:
	case <-ctx.Done():
		<-com
		return nil, ctx.Err()
	}
	return func() {
		<-w.all
		<-com
	}, nil
}

// acquireWrite takes a slot for a write of community and then a
// connection; release gives both back. A connection whose transaction
// could not be ended is closed by its release (pgxpool never reuses one in
// a transaction), which ends the transaction on the server.
func (s *Store) acquireWrite(ctx context.Context, community string) (c *conn, release func(), err error) {
	free, err := s.writeSlots.take(ctx, community)
	if err != nil {
		return nil, nil, err
	}
	c, err = s.pool.Acquire(ctx)
	if err != nil {
		free()
		return nil, nil, err
	}
	return c, func() {
		c.Release()
		free()
	}, nil
}
