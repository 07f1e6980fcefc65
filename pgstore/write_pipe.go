package pgstore

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Grouped puts through one connection in pipeline mode (issue 22).
//
// The groups of write_group.go each take a connection of their own and
// wait in the database for the community's lock, up to maxGroups of them.
// Each time the lock passes, PostgreSQL wakes the backend that waits next,
// which then needs a core before it runs: on a node whose cores the reads
// keep busy, that hand-off is a good part of the lock's cycle, and with
// the commit's flush it is what bounds one community's writes (bench/
// README.md, session 23: eight connections in a closed loop took 250-256
// transactions a second on a durable database with the cores busy, where
// one connection with four transactions in its pipeline took 444-482).
//
// So on a direct connection (named prepared statements: the pool's
// QueryExecModeCacheStatement; through a pooler the groups keep their own
// connections), a community's grouped puts go through one connection of
// the node, its pipe, in PostgreSQL's pipeline mode: each group is an
// implicit transaction (its statements, then a Sync, which commits it; an
// error in any of them rolls all of them back and the connection is ready
// for the next group at the Sync), and up to pipeDepth groups are sent
// ahead of their results. The backend runs one group after another with
// no hand-off between them, and the node's turn-around (reading a group's
// results, waking its puts, forming the next group) overlaps the next
// group's run. The puts, their guards and their outcomes are those of
// write_group.go: a group whose guard fails, or that fails in any other
// way, has all its puts redone under the lock.
//
// The cost: the pipe's goroutine must get a core at each answer before
// the next groups go, where eight puts' own goroutines each wait in
// parallel. A server's goroutines yield at every read and write of their
// connections, and there the pipe commits more and leaves the reads more;
// in a process whose goroutines run the cores without pause the writes
// slow to about half (BenchmarkPutSupplierWhileReading), which is what
// WithWritePipe(false) is for.
//
// One goroutine a community runs the pipe while it has puts queued or in
// flight (runPipe): it takes the queue as groups, sends them, and reads
// the oldest group's results; once nothing is queued or in flight it
// closes the pipeline and gives its connection back. A put that waits in
// the queue is taken out when its request ends; a put sent is seen
// through, and the pipe's context ends only when the requests of every
// put in flight have ended (then the connection is closed and the puts in
// flight are redone under the lock, which their ended requests end).

// pipeDepth is the most groups a pipe has in flight.
const pipeDepth = 4

// pipeGroup is a group of puts sent through a pipe: its statements, in
// order, and the puts' stops of their request watches.
type pipeGroup struct {
	puts    []*groupedPut
	queries []*pgx.QueuedQuery
	stops   []func() bool
}

// commitPiped commits writes, the statements of a put planned from the
// cache (o), through the community's pipe. It returns errRaced, having
// written nothing, when the put is to be redone under the lock.
func (s *Store) commitPiped(ctx context.Context, q *putQueue, community string, p *groupedPut) error {
	// q.mu is held; p's supplier is marked busy.
	q.queue = append(q.queue, p)
	if !q.piping {
		q.piping = true
		go s.runPipe(community, q)
	}
	q.mu.Unlock()
	select {
	case <-p.done:
		return p.err
	case <-ctx.Done():
	}
	q.mu.Lock()
	if !p.taken {
		q.queue = removePut(q.queue, p)
		q.unbusy(p)
		q.mu.Unlock()
		return ctx.Err()
	}
	q.mu.Unlock()
	<-p.done // sent: see it through
	return p.err
}

// runPipe runs the community's pipe while q has puts; it runs pipe again
// after a failed connection as long as puts are queued.
func (s *Store) runPipe(community string, q *putQueue) {
	for {
		err := s.pipe(community, q)
		q.mu.Lock()
		if len(q.queue) == 0 || err == nil {
			// nil: pipe found nothing left to do and cleared q.piping.
			if err != nil {
				q.piping = false
			}
			q.mu.Unlock()
			return
		}
		q.mu.Unlock()
	}
}

// pipe takes a connection and runs q's puts through it until nothing is
// queued or in flight (nil; q.piping is then cleared under q.mu, so the
// next put starts a pipe again) or the connection fails (its error; the
// groups taken and not committed end redone under the lock, as they do
// when the pipe panics, a bug).
func (s *Store) pipe(community string, q *putQueue) (err error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// groups are the groups taken from the queue and not yet ended, the
	// first sent groups first; sent counts those sent.
	var groups []*pipeGroup
	sent := 0
	// live counts the puts sent whose requests have not ended; the pipe's
	// context ends when the last one's request ends.
	var live atomic.Int64
	end := func(g *pipeGroup, err error) {
		for _, stop := range g.stops {
			if stop() {
				live.Add(-1)
			}
		}
		s.endGroup(q, g.puts, err)
	}
	defer func() {
		if r := recover(); r != nil {
			s.pipePanics.Add(1)
			err = fmt.Errorf("pgstore: write pipe: %v", r)
		}
		for _, g := range groups {
			end(g, errRaced) // not committed, or its outcome unknown: redone
		}
	}()

	c, release, err := s.acquireWrite(ctx, community)
	if err != nil {
		q.mu.Lock()
		for _, p := range q.queue {
			p.taken = true
		}
		groups = append(groups, &pipeGroup{puts: q.queue})
		q.queue = nil
		q.mu.Unlock()
		return err
	}
	defer release()
	pc := c.Conn()
	// prepared are the statements this pipe has prepared on pc (pgx
	// keeps them prepared on the connection: once a connection, each
	// costs a round trip; then only the lookup).
	prepared := map[string]*pgconn.StatementDescription{}
	var pl *pgconn.Pipeline
	defer func() {
		if pl != nil {
			_ = pl.Close() // with a group unsynced, closes the connection
		}
	}()
	// readFirst reads the oldest group's results and ends it; an error
	// other than a statement's is the connection's.
	readFirst := func() error {
		g := groups[0]
		err := s.readPipeGroup(pl, pc, g)
		groups, sent = groups[1:], sent-1
		end(g, err)
		if err != nil && !isPgError(err) {
			return err
		}
		return nil
	}

	for {
		// Take the next groups: into an empty pipe, the queue as two groups
		// when it holds two puts or more, so that the backend has the
		// second to run while the node turns the first's results around.
		q.mu.Lock()
		for len(groups) < pipeDepth && len(q.queue) > 0 {
			n := min(len(q.queue), maxGroupPuts)
			if len(groups) == 0 && n >= 2 {
				n = (n + 1) / 2
			}
			g := &pipeGroup{}
			for _, p := range q.queue[:n] {
				p.taken = true
				g.puts = append(g.puts, p)
			}
			q.queue = q.queue[n:]
			groups = append(groups, g)
		}
		if len(groups) == 0 {
			q.piping = false
			q.mu.Unlock()
			return nil
		}
		q.mu.Unlock()

		for sent < len(groups) {
			g := groups[sent]
			if s.beforeGroup != nil {
				s.beforeGroup()
			}
			// A put whose request ended before it was sent is not sent.
			keep := g.puts[:0]
			for _, p := range g.puts {
				if err := p.ctx.Err(); err != nil {
					s.endPut(q, p, err)
					continue
				}
				keep = append(keep, p)
			}
			g.puts = keep
			if len(g.puts) == 0 {
				groups = append(groups[:sent], groups[sent+1:]...)
				continue
			}
			g.queries = pipeQueries(c.l, community, g.puts)
			// A statement the connection has not prepared is prepared
			// outside the pipeline, once the groups sent have ended (once
			// a statement a connection).
			if !allPrepared(prepared, g.queries) {
				if sent > 0 {
					if err := pl.Flush(); err != nil {
						return err
					}
				}
				for sent > 0 {
					if err := readFirst(); err != nil {
						return err
					}
				}
				if pl != nil {
					err := pl.Close()
					pl = nil
					if err != nil {
						return err
					}
				}
				for _, qq := range g.queries {
					pctx, stop := c.l.backstop(ctx, 1)
					sd, err := pc.Prepare(pctx, qq.SQL, qq.SQL)
					stop()
					if err != nil {
						return err
					}
					prepared[qq.SQL] = sd
				}
				continue // groups[0] is g now
			}
			if pl == nil {
				pl = pc.PgConn().StartPipeline(ctx)
			}
			for _, p := range g.puts {
				live.Add(1)
				g.stops = append(g.stops, context.AfterFunc(p.ctx, func() {
					if live.Add(-1) == 0 {
						cancel()
					}
				}))
			}
			sent++
			if err := sendPipeGroup(pl, pc, prepared, g); err != nil {
				return err
			}
		}
		if len(groups) == 0 {
			continue // every put taken had lost its request
		}
		if err := pl.Flush(); err != nil {
			return err
		}
		if err := readFirst(); err != nil {
			return err
		}
	}
}

// allPrepared reports whether every statement of qs is in prepared.
func allPrepared(prepared map[string]*pgconn.StatementDescription, qs []*pgx.QueuedQuery) bool {
	for _, qq := range qs {
		if _, ok := prepared[qq.SQL]; !ok {
			return false
		}
	}
	return true
}

// isPgError reports whether err is the server's error of a statement
// (the connection is still good: the group's transaction is rolled back
// at its Sync) or errRaced.
func isPgError(err error) bool {
	_, ok := errors.AsType[*pgconn.PgError](err)
	return ok || errors.Is(err, errRaced)
}

// pipeQueries are the statements of a group's implicit transaction: the
// statement timeout (when the store sets one), the community's lock,
// each put's guard and writes in turn, and their counts (queueGroup).
func pipeQueries(l limit, community string, puts []*groupedPut) []*pgx.QueuedQuery {
	b := &pgx.Batch{}
	if l.ms != "" {
		b.Queue(setSQL(l.ms))
	}
	queueGroup(b, community, puts)
	return b.QueuedQueries
}

// sendPipeGroup queues g's statements and a Sync into pl (not flushed).
func sendPipeGroup(pl *pgconn.Pipeline, pc *pgx.Conn, prepared map[string]*pgconn.StatementDescription, g *pipeGroup) error {
	var eqb pgx.ExtendedQueryBuilder
	for _, qq := range g.queries {
		sd := prepared[qq.SQL]
		if err := eqb.Build(pc.TypeMap(), sd, qq.Arguments); err != nil {
			// Nothing of the group is flushed yet, but its earlier
			// statements are queued: the connection cannot be trusted.
			return fmt.Errorf("pgstore: write pipe: %w", err)
		}
		pl.SendQueryPrepared(sd.Name, eqb.ParamValues, eqb.ParamFormats, eqb.ResultFormats)
	}
	pl.SendPipelineSync()
	return nil
}

// readPipeGroup reads g's results from pl, running the statements'
// callbacks, up to and including its Sync. It returns nil when the group
// committed; errRaced when its guard failed; another *pgconn.PgError
// when a statement or the commit failed (the server rolled the group back
// at its Sync: the connection is good); errRaced wrapping a callback's
// own error (a scan's: the group committed, its puts are redone under the
// lock as a batch's would be); or any other error, when the connection
// is not good.
func (s *Store) readPipeGroup(pl *pgconn.Pipeline, pc *pgx.Conn, g *pipeGroup) error {
	var failed error
	for _, qq := range g.queries {
		r, err := pl.GetResults()
		if err != nil {
			if !isPgError(err) {
				return err
			}
			failed = err
			break // the server skips the rest of the group up to its Sync
		}
		rr, ok := r.(*pgconn.ResultReader)
		if !ok {
			return fmt.Errorf("pgstore: write pipe: got %T; want a statement's results", r)
		}
		if qq.Fn != nil {
			err = qq.Fn(&pipeResults{rr: rr, m: pc})
		} else {
			_, err = rr.Close()
		}
		if err == nil {
			continue
		}
		if isPgError(err) {
			failed = err // the statement's own: as above
			break
		}
		if _, cerr := rr.Close(); cerr != nil && isPgError(cerr) {
			failed = cerr
			break
		}
		if failed == nil {
			failed = fmt.Errorf("%w: %w", errRaced, err)
		}
	}
	for {
		r, err := pl.GetResults()
		if err != nil {
			if !isPgError(err) {
				return err
			}
			failed = err // the commit's
			continue
		}
		if _, ok := r.(*pgconn.PipelineSync); ok {
			break
		}
		if r == nil {
			return errors.New("pgstore: write pipe: no Sync after a group")
		}
		if rr, ok := r.(*pgconn.ResultReader); ok {
			_, _ = rr.Close()
		}
	}
	if pgErr, ok := errors.AsType[*pgconn.PgError](failed); ok && pgErr.Code == divisionByZero {
		return errRaced
	}
	return failed
}

// endGroup gives each put of a group its outcome (groupOutcome, which
// counts it): err nil, committed; else redone under the lock, or, for a
// put alone whose error is the server's and not the guard's, that error.
func (s *Store) endGroup(q *putQueue, puts []*groupedPut, err error) {
	if len(puts) == 0 {
		return
	}
	// A failed guard, and a lone put's failure other than the server's
	// (the pipe's connection: its outcome unknown), are redone.
	raced := errors.Is(err, errRaced) || (err != nil && !isPgError(err))
	out := s.groupOutcome(len(puts), raced, err)
	if s.replica != nil {
		// The pipe keeps its connection past this group, so its release
		// (replica.go: TraceRelease) comes too late to keep this node's
		// next reads off a replica that may not have the group yet.
		raise(&s.replica.wrote, mono())
	}
	q.mu.Lock()
	for _, p := range puts {
		q.unbusy(p)
	}
	q.mu.Unlock()
	for _, p := range puts {
		if p.err == nil {
			p.err = out
		}
		close(p.done)
	}
}

// endPut ends p, not sent, with err, its request's.
func (s *Store) endPut(q *putQueue, p *groupedPut, err error) {
	q.mu.Lock()
	q.unbusy(p)
	q.mu.Unlock()
	p.err = err
	close(p.done)
}

// pipeResults reads one statement's results for its callback
// (pgx.QueuedQuery's Fn).
type pipeResults struct {
	rr *pgconn.ResultReader
	m  *pgx.Conn
}

func (r *pipeResults) Exec() (pgconn.CommandTag, error) { return r.rr.Close() }

func (r *pipeResults) Query() (pgx.Rows, error) {
	return pgx.RowsFromResultReader(r.m.TypeMap(), r.rr), nil
}

func (r *pipeResults) QueryRow() pgx.Row {
	rows, _ := r.Query()
	return &row{rows: rows}
}

// Tx is nil: a group's transaction is implicit.
func (r *pipeResults) Tx() pgx.Tx { return nil }

func (r *pipeResults) Close() error {
	_, err := r.rr.Close()
	return err
}
