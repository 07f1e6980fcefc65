package pgstore

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Reads from a streaming replica (WithReadDSN).
//
// The node measures how far its replica has replayed the primary's WAL,
// every lagInterval: it reads the primary's WAL insert position P at the
// local time t, then the replica's replay position R; R >= P means the
// replica holds every commit made on the primary before t, so its data is
// at least as fresh as t ("as of" t). A primary that is written to all the
// time is always a little ahead of the replica, so the node keeps the
// positions of the last second's measures and takes the latest the
// replica has reached. A read that may be served a little
// old goes to the replica while
//
//   - its as-of time is within maxReplicaLag of now, which keeps docs:
//     live-data.md's one-second bound with the caches on top (a supplier
//     cache serves a sync for up to maxStale after its as-of time, a
//     credential lookup for credTTL after its as-of time), and
//   - its as-of time is after the end of this node's latest call on the
//     primary that may have written: a node reads its own writes at once.
//
// Otherwise it goes to the primary, as it does when the replica does not
// answer: a replica that lags (its replay paused, a long query holding it
// back, a lost connection to the primary) is never a source of older data,
// only of less load. The replica's positions are compared, not its replay
// timestamp, which stands still while the primary is idle.
//
// The reads that go there: the supplier cache's loads, syncs and polls,
// and every read of the database that a cache could serve (supplier
// lists, a supplier, contacts, addresses, users by username or id, user
// lists, auto-roles, budgets, and the credential lookups that
// authenticate a request). Writes, the reads inside them, and the admin
// API's reads of credentials go to the primary.

const (
	// lagInterval is how often a node measures its replica.
	lagInterval = 100 * time.Millisecond
	// maxReplicaLag is the oldest as-of time the replica may serve a read
	// at.
	maxReplicaLag = 300 * time.Millisecond
)

// WithReadDSN has the store read from a streaming replica of its database
// at dsn (a hot standby, directly or through its own pooler), as the
// package's replica.go says: only while the replica is less than 300 ms
// behind the primary, and never older than this node's own writes. Open
// connects to it as it does to the primary (WithMaxConns applies to each
// pool). A replica that does not answer costs the reads nothing but the
// primary's load.
func WithReadDSN(dsn string) Option { return func(o *options) { o.readDSN = dsn } }

// epoch is the origin of the monotonic nanoseconds of replica.
var epoch = time.Now()

// mono is the monotonic time since epoch.
func mono() int64 { return int64(time.Since(epoch)) }

// replica is a store's read replica and what the node knows of its lag.
type replica struct {
	db *db // the replica's pool
	// primary is the primary's pool for reads (its calls are not counted
	// as writes).
	primary *db
	log     *slog.Logger

	asOf  atomic.Int64 // mono: the replica holds every commit made before
	wrote atomic.Int64 // mono: when this node's latest call that may have written ended
	// writers are the primary's connections acquired for a call that may
	// write (any but a read through primary), until released.
	writers sync.Map // *pgx.Conn -> struct{}
	// served and fallbacks count the reads rd sent to the replica and to
	// the primary (metrics.go).
	served, fallbacks atomic.Int64

	blockSize, segSize int64 // WAL page and segment sizes, read at the first measure
	// samples are the primary's insert positions that measure read and
	// the replica had not yet replayed, oldest first (measure's own).
	samples []walSample

	ctx    context.Context
	end    context.CancelFunc
	wg     sync.WaitGroup
	behind atomic.Bool // for the log: the replica was last logged behind
}

// start starts measuring the replica's lag.
func (r *replica) start() {
	r.behind.Store(true) // until a measure finds it caught up
	r.ctx, r.end = context.WithCancel(context.Background())
	r.wg.Go(r.watch)
}

// close stops the measures and closes the replica's pool.
func (r *replica) close() {
	if r == nil {
		return
	}
	r.end()
	r.wg.Wait()
	r.db.pool.Close()
}

// watch measures the replica every lagInterval until the store closes.
func (r *replica) watch() {
	tick := time.NewTicker(lagInterval)
	defer tick.Stop()
	for {
		err := r.measure()
		if r.ctx.Err() != nil {
			return
		}
		if r.log != nil {
			r.logChange(err)
		}
		select {
		case <-r.ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// logChange logs when the replica falls behind (a lag over a second, or a
// failed measure) and when it has caught up again: the lag between the two
// does not flip the log line back and forth.
func (r *replica) logChange(err error) {
	lag := time.Duration(mono() - r.asOf.Load())
	switch {
	case (err != nil || lag > time.Second) && r.behind.CompareAndSwap(false, true):
		args := []any{"lag_ms", lag.Milliseconds()}
		if err != nil {
			args = append(args, "error", err)
		}
		r.log.Warn("read replica: behind, reads go to the primary", args...)
	case err == nil && lag <= maxReplicaLag && r.behind.CompareAndSwap(true, false):
		r.log.Info("read replica: caught up, reads go to it")
	}
}

// walSample is the end of the primary's WAL at a moment.
type walSample struct {
	at  int64  // mono
	end uint64 // recordEnd of the insert position
}

// maxSamples bounds replica.samples: a second of measures.
const maxSamples = int(time.Second / lagInterval)

// measure reads the primary's insert position, then the replica's replay
// position, and moves asOf on to the latest measure whose position the
// replica has reached: on a primary that writes all the time the replica
// never holds the position read just before, but it holds one of a
// moment ago, which is as fresh as the replica is.
func (r *replica) measure() error {
	ctx, cancel := context.WithTimeout(r.ctx, time.Second)
	defer cancel()
	if r.segSize == 0 {
		if err := r.primary.QueryRow(ctx, `SELECT current_setting('wal_block_size')::bigint,
			(SELECT setting::bigint FROM pg_settings WHERE name = 'wal_segment_size')`).Scan(&r.blockSize, &r.segSize); err != nil {
			return err
		}
	}
	t := mono()
	var p string
	if err := r.primary.QueryRow(ctx, `SELECT pg_current_wal_insert_lsn()::text`).Scan(&p); err != nil {
		return err
	}
	pl, err := parseLSN(p)
	if err != nil {
		return err
	}
	if len(r.samples) == maxSamples {
		r.samples = append(r.samples[:0], r.samples[1:]...)
	}
	r.samples = append(r.samples, walSample{at: t, end: r.recordEnd(pl)})
	var rp *string
	var standby bool
	if err := r.db.QueryRow(ctx, `SELECT pg_last_wal_replay_lsn()::text, pg_is_in_recovery()`).Scan(&rp, &standby); err != nil {
		return err
	}
	if !standby {
		// Promoted, or a primary named as the read DSN: current.
		raise(&r.asOf, t)
		r.samples = r.samples[:0]
		return nil
	}
	if rp == nil {
		return errors.New("the replica has replayed nothing yet")
	}
	rl, err := parseLSN(*rp)
	if err != nil {
		return err
	}
	reached := -1
	for i, x := range r.samples {
		if rl >= x.end {
			reached = i
		}
	}
	if reached >= 0 {
		raise(&r.asOf, r.samples[reached].at)
		r.samples = append(r.samples[:0], r.samples[reached+1:]...)
	}
	return nil
}

// recordEnd is the end of the last WAL record before the insert position
// p: p itself, but when p sits just past a page header (the position of
// the next record when the last one ended at a page boundary), the
// boundary, which is where the replica's replay position stops.
func (r *replica) recordEnd(p uint64) uint64 {
	const shortHeader, longHeader = 24, 40 // SizeOfXLogShortPHD, SizeOfXLogLongPHD
	switch {
	case r.segSize > 0 && p%uint64(r.segSize) == longHeader:
		return p - longHeader
	case r.blockSize > 0 && p%uint64(r.blockSize) == shortHeader:
		return p - shortHeader
	}
	return p
}

// parseLSN reads a pg_lsn's text, such as 16/B374D848.
func parseLSN(s string) (uint64, error) {
	hi, lo, ok := strings.Cut(s, "/")
	h, err1 := strconv.ParseUint(hi, 16, 32)
	l, err2 := strconv.ParseUint(lo, 16, 32)
	if !ok || err1 != nil || err2 != nil {
		return 0, fmt.Errorf("pgstore: %q is no LSN", s)
	}
	return h<<32 | l, nil
}

// fresh reports whether a read may go to the replica now, and the time
// its data is at least as fresh as.
func (r *replica) fresh() (time.Time, bool) {
	a := r.asOf.Load()
	if a <= r.wrote.Load() || mono()-a > int64(maxReplicaLag) {
		return time.Time{}, false
	}
	return epoch.Add(time.Duration(a)), true
}

// rd returns where a read that may be served a little old goes: the
// replica while it may serve it, else the primary.
func (s *Store) rd() *db {
	d, _ := s.rdAt()
	return d
}

// rdAt is rd, with the time the data read is at least as fresh as: the
// zero time for the primary (as fresh as the read).
func (s *Store) rdAt() (*db, time.Time) {
	r := s.replica
	if r == nil {
		return s.pool, time.Time{}
	}
	if at, ok := r.fresh(); ok {
		r.served.Add(1)
		return r.db, at
	}
	r.fallbacks.Add(1)
	return r.primary, time.Time{}
}

// primaryReads is the primary's pool for a read that must be current but
// is no write (a health check): with a replica, one that does not count as
// this node's write, which would keep the node's reads off the replica for
// a moment.
func (s *Store) primaryReads() *db {
	if s.replica != nil {
		return s.replica.primary
	}
	return s.pool
}

// readCall marks the context of a call on the primary that only reads.
type readCall struct{}

// TraceAcquireStart, TraceAcquireEnd and TraceRelease (pgxpool's tracers
// of the primary's pool) note the end of every call on the primary that
// may have written: the release of a connection acquired without
// readCall. pgxpool calls TraceRelease before the call returns.
func (t tracer) TraceAcquireStart(ctx context.Context, _ *pgxpool.Pool, _ pgxpool.TraceAcquireStartData) context.Context {
	return ctx
}

func (t tracer) TraceAcquireEnd(ctx context.Context, _ *pgxpool.Pool, data pgxpool.TraceAcquireEndData) {
	if t.r != nil && data.Conn != nil && ctx.Value(readCall{}) == nil {
		t.r.writers.Store(data.Conn, struct{}{})
	}
}

func (t tracer) TraceRelease(_ *pgxpool.Pool, data pgxpool.TraceReleaseData) {
	if t.r == nil {
		return
	}
	if _, ok := t.r.writers.LoadAndDelete(data.Conn); ok {
		raise(&t.r.wrote, mono())
	}
}

var _ interface {
	pgxpool.AcquireTracer
	pgxpool.ReleaseTracer
	pgx.QueryTracer
} = tracer{}
