package pgstore

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/procurekit/procure/user"
)

// The per-node user cache (WithUserCache).
//
// Each node keeps, per community it has served a user read for, every
// user of the community in memory, by id and by username key, and
// follows the database's changes:
//
//   - Following: every write of a user row records its transaction's id
//     (the column xid, set by a trigger: migration 0011). A poll reads,
//     in one repeatable-read snapshot S, S's xmin and the rows of the
//     cached communities whose xid is at least the xmin of the snapshot
//     it applied last; a transaction below that xmin had ended then, so
//     its writes were applied already. Nothing committed is skipped,
//     however the writes' commit order differs from their ids' order. A
//     row is read again while a transaction older than it still runs:
//     harmless, as below.
//   - Ordering: users are never deleted, and every stored change of a
//     user moves its version on, so a user's version orders its states: a
//     row replaces the cached user only when its version is not lower. A
//     reader never sees a user go back to an older state, whatever order
//     polls, loads and this node's own writes arrive in.
//   - Own writes: CreateUser and UpdateUser apply the user they stored
//     (the RETURNING row) to the cache as soon as they commit, before they
//     return: the node's next read sees the write, with no round trip.
//     An import on this node polls once before it returns.
//   - Usernames: a username key maps to the cached users that hold it. As
//     the cache mixes states of different times (a local write is ahead of
//     the last poll), two cached users may hold one key for a moment (one
//     renamed away on another node, the other created here): such a read
//     goes to the database, never to a guess.
//   - Freshness: a community is served only while the snapshot of its last
//     poll was taken less than maxStale ago (docs: live-data.md
//     "Visibility": one second), so a change on another node, a
//     deactivation included, shows within a second, and a node that
//     cannot reach the database reads from it (and fails as it would
//     without the cache) rather than serving older data.
//   - Loading: a community of at most userLoadMax users is loaded by the
//     read that first needs it; a larger one in the background, one load
//     at a time, while its reads go to the database. Writes of this node
//     made while a community loads are applied after the load.
//
// Polls read from the primary: version order makes any snapshot safe to
// apply, but a replica's xmin says nothing of what a primary's snapshot
// held, and the poll is one small query per pollInterval. They are reads
// there (primaryReads): counted as this node's writes, each would keep
// the node's other reads off its replica for a moment (replica.go).

// userLoadMax is the largest community the read that needs it loads.
const userLoadMax = 20_000

// WithUserCache has the store serve UserByUsername and UserByID from a
// per-node copy of the users in memory that follows the database's
// changes (usercache.go): the node that writes a user sees the write at
// its next read, every other node within one second, and a node whose
// copy is older than that (the database does not answer) reads from the
// database. The copy costs about what memstore holds for the same users.
func WithUserCache() Option { return func(o *options) { o.userCache = true } }

// userCache is the cache of one Store; nil when the option is off.
type userCache struct {
	s   *Store
	log *slog.Logger
	ctx context.Context
	end context.CancelFunc
	wg  sync.WaitGroup

	mu   sync.RWMutex
	coms map[string]*userCom

	load   chan struct{} // one background load at a time
	pollMu sync.Mutex    // one poll at a time

	served, fallbacks atomic.Int64 // reads answered from memory, and not
}

// cachedUser is a user as cached, with its username key.
type cachedUser struct {
	u   user.User
	key string
}

// userCom is one community of the user cache. Its fields are guarded by
// the cache's mu.
type userCom struct {
	loaded   bool
	loading  bool        // a load has begun and not installed its result
	pending  []user.User // this node's writes while loading
	failedAt time.Time   // the last failed load
	large    bool        // more than userLoadMax users: loaded in the background

	byID  map[string]*cachedUser
	byKey map[string][]string // username key -> ids of the cached users holding it
	// from: every transaction not seen by the snapshots applied has an
	// xid of at least from.
	from     uint64
	syncedAt time.Time // the local time just before the last applied snapshot
}

func newUserCache(s *Store, log *slog.Logger) *userCache {
	ctx, end := context.WithCancel(context.Background())
	c := &userCache{s: s, log: log, ctx: ctx, end: end, coms: map[string]*userCom{}, load: make(chan struct{}, 1)}
	c.wg.Go(c.poll)
	return c
}

func (c *userCache) close() {
	if c == nil {
		return
	}
	c.end()
	c.wg.Wait()
}

// byUsername answers from memory: ok is false when the read must go to
// the database.
func (c *userCache) byUsername(community, username string) (u user.User, found, ok bool) {
	if c == nil {
		return user.User{}, false, false
	}
	key := user.UsernameKey(username)
	ok = c.read(community, func(uc *userCom) bool {
		var hit *cachedUser
		for _, id := range uc.byKey[key] {
			if e := uc.byID[id]; e != nil && e.key == key {
				if hit != nil {
					return false // states of different times: the database decides
				}
				hit = e
			}
		}
		if hit != nil {
			u, found = hit.u.Clone(), true
		}
		return true
	})
	return u, found, ok
}

// byID answers from memory: ok is false when the read must go to the
// database.
func (c *userCache) byID(community, id string) (u user.User, found, ok bool) {
	if c == nil {
		return user.User{}, false, false
	}
	ok = c.read(community, func(uc *userCom) bool {
		if e := uc.byID[id]; e != nil {
			u, found = e.u.Clone(), true
		}
		return true
	})
	return u, found, ok
}

// read calls f with the community under the read lock when it may serve
// a read now, loading it first when it is small and not loaded; it
// reports whether f answered (f returns false to send the read to the
// database).
func (c *userCache) read(community string, f func(*userCom) bool) bool {
	for try := 0; ; try++ {
		c.mu.RLock()
		uc := c.coms[community]
		if c.fresh(uc) {
			ok := f(uc)
			c.mu.RUnlock()
			if ok {
				c.served.Add(1)
			} else {
				c.fallbacks.Add(1)
			}
			return ok
		}
		c.mu.RUnlock()
		if try == 1 || !c.ensure(community) {
			c.fallbacks.Add(1)
			return false
		}
	}
}

// fresh reports whether uc may serve a read now (c.mu held).
func (c *userCache) fresh(uc *userCom) bool {
	return uc != nil && uc.loaded && time.Since(uc.syncedAt) <= maxStale
}

// ensure loads the community when it is not loaded and no load of it
// runs: at once when it is small, in the background otherwise. It reports
// whether a load ran to its end (the caller may look again).
func (c *userCache) ensure(community string) bool {
	c.mu.Lock()
	uc := c.coms[community]
	if uc == nil {
		uc = &userCom{}
		c.coms[community] = uc
	}
	start := !uc.loaded && !uc.loading && time.Since(uc.failedAt) >= retryLoad
	large := uc.large
	if start {
		uc.loading = true
		uc.pending = nil
	}
	c.mu.Unlock()
	if !start {
		return false
	}
	if large {
		c.background(community)
		return false
	}
	err := c.loadCom(community, userLoadMax)
	return err == nil
}

// background loads a large community, one load at a time.
func (c *userCache) background(community string) {
	c.wg.Go(func() {
		select {
		case c.load <- struct{}{}:
		case <-c.ctx.Done():
			return
		}
		defer func() { <-c.load }()
		_ = c.loadCom(community, 0)
	})
}

// loadCom reads the community's users in one snapshot and installs them;
// with limit > 0, a community of more users is left to a background load.
// The community is marked loading by the caller.
func (c *userCache) loadCom(community string, limit int) error {
	start := time.Now()
	users, from, err := c.fetch(community, limit)
	c.mu.Lock()
	defer c.mu.Unlock()
	uc := c.coms[community]
	if err != nil {
		uc.loading = false
		uc.failedAt = time.Now()
		if c.log != nil && c.ctx.Err() == nil {
			c.log.Warn("user cache: load failed", "community", community, "error", err)
		}
		return err
	}
	if limit > 0 && len(users) > limit {
		uc.large = true
		c.background(community) // still loading: writes keep going to pending
		return nil
	}
	uc.byID = make(map[string]*cachedUser, len(users))
	uc.byKey = make(map[string][]string, len(users))
	for i := range users {
		uc.put(users[i])
	}
	for i := range uc.pending {
		uc.put(uc.pending[i])
	}
	uc.pending = nil
	uc.from, uc.syncedAt = from, start
	uc.loading, uc.loaded = false, true
	if c.log != nil && uc.large {
		c.log.Info("user cache: community loaded", "community", community, "users", len(users),
			"duration_ms", time.Since(start).Milliseconds())
	}
	return nil
}

// fetch reads the community's users (at most limit+1 of them when limit >
// 0) and the snapshot's xmin.
func (c *userCache) fetch(community string, limit int) ([]user.User, uint64, error) {
	sql := `SELECT ` + userSelect + ` FROM users WHERE community_id = $1`
	args := []any{community}
	if limit > 0 {
		sql += ` LIMIT $2`
		args = append(args, limit+1)
	}
	var users []user.User
	ctx := c.ctx
	if limit == 0 {
		// A background load of a large community outlasts the bound.
		ctx = WithoutStatementTimeout(ctx)
	}
	from, err := c.snapshot(ctx, func(b *pgx.Batch) {
		b.Queue(sql, args...).Query(func(rows pgx.Rows) error {
			var err error
			users, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (user.User, error) { return scanUser(row) })
			return err
		})
	})
	return users, from, err
}

// snapshot runs the queries queue adds in one read-only repeatable-read
// transaction (one round trip) and returns the snapshot's xmin.
func (c *userCache) snapshot(ctx context.Context, queue func(*pgx.Batch)) (uint64, error) {
	var snap string
	b := &pgx.Batch{}
	b.Queue(`BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY`)
	b.Queue(`SELECT pg_current_snapshot()::text`).QueryRow(func(row pgx.Row) error { return row.Scan(&snap) })
	queue(b)
	b.Queue(`COMMIT`)
	if err := c.s.primaryReads().SendBatch(ctx, b).Close(); err != nil {
		return 0, err
	}
	return snapshotXmin(snap)
}

// snapshotXmin is the xmin of a pg_snapshot's text form, xmin:xmax:xip.
func snapshotXmin(snap string) (uint64, error) {
	x, _, ok := strings.Cut(snap, ":")
	if !ok {
		return 0, errors.New("pgstore: user cache: snapshot " + strconv.Quote(snap))
	}
	return strconv.ParseUint(x, 10, 64)
}

// put makes u, which the cache keeps (no one else may change its lists),
// the cached state of its user unless a later one is cached (uc's maps
// made, c.mu held). Only a version above the cached one is
// news; an equal one is the same state, and replacing it changes nothing.
func (uc *userCom) put(u user.User) {
	old := uc.byID[u.ID]
	if old != nil && old.u.Version > u.Version {
		return
	}
	e := &cachedUser{u: u, key: user.UsernameKey(u.Username)}
	uc.byID[u.ID] = e
	if old != nil {
		if old.key == e.key {
			return
		}
		ids := uc.byKey[old.key]
		for i, id := range ids {
			if id == u.ID {
				ids = append(ids[:i:i], ids[i+1:]...)
				break
			}
		}
		if len(ids) == 0 {
			delete(uc.byKey, old.key)
		} else {
			uc.byKey[old.key] = ids
		}
	}
	uc.byKey[e.key] = append(uc.byKey[e.key], u.ID)
}

// wrote applies a user this node stored (committed) to the cache.
func (c *userCache) wrote(community string, u user.User) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	uc := c.coms[community]
	switch {
	case uc == nil:
	case uc.loaded:
		uc.put(u.Clone())
	case uc.loading:
		uc.pending = append(uc.pending, u.Clone())
	}
}

// poll polls every pollInterval until the store closes.
func (c *userCache) poll() {
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	for {
		select {
		case <-c.ctx.Done():
			return
		case <-tick.C:
		}
		if err := c.pollOnce(); isTimeout(err) {
			c.reset()
		}
	}
}

// isTimeout reports whether err is a statement that hit the statement
// timeout.
func isTimeout(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "57014"
}

// reset forgets every community: a poll that hit the statement timeout
// (after an import of many users on another node, say) would hit it
// again, while a load reads a large community in the background, without
// the bound. The reads go to the database until the communities have
// loaded again.
func (c *userCache) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for id, uc := range c.coms {
		if !uc.loading {
			delete(c.coms, id)
		}
	}
	if c.log != nil {
		c.log.Warn("user cache: a poll hit the statement timeout: reloading")
	}
}

// pollOnce applies, to every loaded community, the rows written since the
// snapshots it applied. Polls run one at a time.
func (c *userCache) pollOnce() error {
	c.pollMu.Lock()
	defer c.pollMu.Unlock()
	return c.pollLocked()
}

// imported has the node see at once the users an import on it wrote: a
// poll that begins after the import committed.
func (c *userCache) imported() {
	if c != nil {
		_ = c.pollOnce()
	}
}

func (c *userCache) pollLocked() error {
	p, err := c.pollRead()
	if err != nil {
		return err
	}
	c.pollApply(p)
	return nil
}

// polled is what a poll read: the communities it covers, the rows
// written since their snapshots, and its own snapshot's xmin and time.
type polled struct {
	ids   []string
	rows  []polledUser
	xmin  uint64
	start time.Time
}

type polledUser struct {
	community string
	u         user.User
}

// pollRead reads the rows of the loaded communities written since the
// snapshots they applied.
func (c *userCache) pollRead() (polled, error) {
	var p polled
	var from uint64
	c.mu.RLock()
	for id, uc := range c.coms {
		if uc.loaded {
			if len(p.ids) == 0 || uc.from < from {
				from = uc.from
			}
			p.ids = append(p.ids, id)
		}
	}
	c.mu.RUnlock()
	if len(p.ids) == 0 {
		return p, nil
	}
	p.start = time.Now()
	var err error
	p.xmin, err = c.snapshot(c.ctx, func(b *pgx.Batch) {
		b.Queue(`SELECT community_id, `+userSelect+` FROM users WHERE xid >= $1::text::xid8 AND community_id = ANY($2)`,
			strconv.FormatUint(from, 10), p.ids).Query(func(rs pgx.Rows) error {
			var err error
			p.rows, err = pgx.CollectRows(rs, func(r pgx.CollectableRow) (polledUser, error) {
				var pu polledUser
				var err error
				pu.u, err = scanUser(prefixed{r, &pu.community})
				return pu, err
			})
			return err
		})
	})
	return p, err
}

// pollApply applies what a poll read: each row unless a later state of
// its user is cached (put), whatever this node wrote meanwhile.
func (c *userCache) pollApply(p polled) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := range p.rows {
		if uc := c.coms[p.rows[i].community]; uc != nil && uc.loaded {
			uc.put(p.rows[i].u)
		}
	}
	for _, id := range p.ids {
		uc := c.coms[id]
		if uc == nil || !uc.loaded {
			continue // forgotten meanwhile (reset)
		}
		uc.from = max(uc.from, p.xmin)
		if p.start.After(uc.syncedAt) {
			uc.syncedAt = p.start
		}
	}
}

// prefixed scans a row whose first column goes to first and the rest to
// what Scan is given.
type prefixed struct {
	pgx.Row
	first any
}

func (p prefixed) Scan(dest ...any) error { return p.Row.Scan(append([]any{p.first}, dest...)...) }
