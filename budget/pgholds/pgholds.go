// Package pgholds keeps budget holds in PostgreSQL, so that several
// connectors (or several nodes of the platform) share them
// (docs: account-codes.md "Holds"):
//
//	s, err := pgholds.Open(ctx, dsn, pgholds.Options{})
//	...
//	v, err := budget.NewTableValidator(ctx, budget.TableConfig{Load: load, Holds: s})
//
// Store implements budget.HoldStore and is checked by the holdstest
// conformance suite, like budget.MemHolds.
//
// Why it is built this way: a check must read what the other requisitions
// hold on its accounts and write its own holds with nobody changing those
// accounts in between. Each check runs in one transaction that first takes
// a transaction-level advisory lock on its requisition, then one on each
// account it touches (its claims and whatever it held before), in ascending
// order of the lock keys: every transaction takes its locks in the same
// order, so none waits for another in a cycle. Two accounts whose keys
// collide are merely serialised together. A failure anywhere rolls the
// whole transaction back: nothing is ever half-held.
//
// The schema has migrations of its own (embedded SQL, versioned in the
// table budget_holds_migrations, applied in one transaction under an
// advisory lock), so the tables can live in the customer's database or
// beside the platform's. Every table leads with community_id: the
// connector uses the empty community; the platform keeps each community's
// holds apart.
package pgholds

import (
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/shopspring/decimal"

	"github.com/procurekit/procure/budget"
	"github.com/procurekit/procure/internal/pgmigrate"
	"github.com/procurekit/procure/internal/pgpool"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Advisory lock keys (the two-int form: a class and a key within it).
const (
	migrationLock    int64 = 0x6275_6467_686f_6c64 // "budghold"
	requisitionClass int32 = 0x4852_4551           // "HREQ"
	accountClass     int32 = 0x484f_4c44           // "HOLD"
)

// Options configure a Store.
type Options struct {
	// Community keeps these holds apart from other communities' in the
	// same tables; the connector leaves it empty.
	Community string
	// Now is the store's clock; nil means time.Now.
	Now func() time.Time
	// MigrateDSN, when set, is where Open applies the migrations, over a
	// connection of its own: the database's own URL when Open's goes
	// through a pooler. Empty: over the store's pool.
	MigrateDSN string
}

// Store is the PostgreSQL budget.HoldStore. It is safe for concurrent use,
// and any number of Stores, in one process or many, may share a database.
type Store struct {
	pool      *pgxpool.Pool
	ownsPool  bool
	community string
	now       func() time.Time
}

var _ budget.HoldStore = (*Store)(nil)

// Open connects to the database at dsn, applies the migrations it lacks
// and returns a store that owns the connection pool (Close closes it). The
// store works directly and through a pooler such as PgBouncer in
// transaction mode: its locks are transaction-level, and it prepares
// named statements only on a connection it finds to be direct, unless the
// DSN's default_query_exec_mode says otherwise (internal/pgpool).
func Open(ctx context.Context, dsn string, opts Options) (*Store, error) {
	cfg, _, err := pgpool.Config(ctx, dsn)
	if err != nil {
		return nil, fmt.Errorf("pgholds: %w", err)
	}
	if opts.MigrateDSN != "" {
		if err := migrateAt(ctx, opts.MigrateDSN); err != nil {
			return nil, fmt.Errorf("pgholds: %w", err)
		}
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("pgholds: %w", err)
	}
	if opts.MigrateDSN == "" {
		if err := migrate(ctx, pool); err != nil {
			pool.Close()
			return nil, fmt.Errorf("pgholds: %w", err)
		}
	}
	s := newStore(pool, opts)
	s.ownsPool = true
	return s, nil
}

// New returns a store on pool (which the caller keeps and closes), after
// applying the migrations the database lacks.
func New(ctx context.Context, pool *pgxpool.Pool, opts Options) (*Store, error) {
	if err := migrate(ctx, pool); err != nil {
		return nil, fmt.Errorf("pgholds: %w", err)
	}
	return newStore(pool, opts), nil
}

func newStore(pool *pgxpool.Pool, opts Options) *Store {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Store{pool: pool, community: opts.Community, now: opts.Now}
}

// WithCommunity returns a store of another community's holds on s's pool
// and clock, without applying the migrations again: a platform opens one
// Store and takes one per community from it. Closing the returned store
// does nothing; closing s closes the pool when s opened it.
func (s *Store) WithCommunity(community string) *Store {
	return &Store{pool: s.pool, community: community, now: s.now}
}

// Close closes the pool when the store opened it.
func (s *Store) Close() {
	if s.ownsPool {
		s.pool.Close()
	}
}

func unavailable(what string, err error) error {
	return fmt.Errorf("%w: holds: %s: %w", budget.ErrUnavailable, what, err)
}

// lockKey is an account's or a requisition's key within its class.
func (s *Store) lockKey(name string) int32 {
	h := fnv.New32a()
	h.Write([]byte(s.community))
	h.Write([]byte{0})
	h.Write([]byte(name))
	return int32(h.Sum32())
}

// lock takes the requisition's lock, then the locks of accounts plus the
// accounts the requisition holds now, in ascending key order. It returns
// what the requisition holds, by account, read once the locks are held:
// nothing else changes the requisition's rows then (Expire, which may
// have removed some while this waited, takes the accounts' locks). Each
// lock is sent in one batch with the read that follows it, so the whole
// costs two round trips; with begin, the first batch begins the
// transaction too.
func (s *Store) lock(ctx context.Context, tx querier, requisition string, accounts []string, begin bool) (map[string]budget.Hold, error) {
	b := &pgx.Batch{}
	if begin {
		b.Queue("BEGIN")
	}
	b.Queue("SELECT pg_advisory_xact_lock($1, $2)", requisitionClass, s.lockKey(requisition))
	b.Queue(ownedSQL, s.community, requisition)
	had, err := lockedRead(ctx, tx, b)
	if err != nil {
		return nil, err
	}
	keys := make([]int32, 0, len(accounts)+len(had))
	for _, a := range accounts {
		keys = append(keys, s.lockKey(a))
	}
	for _, h := range had {
		keys = append(keys, s.lockKey(h.Account))
	}
	// Only Expire can have changed them meanwhile, by removing rows, so
	// the locks taken cover what is read again after them.
	b = &pgx.Batch{}
	b.Queue(lockKeysSQL, accountClass, sortedKeys(keys))
	b.Queue(ownedSQL, s.community, requisition)
	if had, err = lockedRead(ctx, tx, b); err != nil {
		return nil, err
	}
	own := make(map[string]budget.Hold, len(had))
	for _, h := range had {
		own[h.Account] = h
	}
	return own, nil
}

// ownedSQL reads a requisition's rows.
const ownedSQL = `SELECT requisition, account, amount::text, held_at, expires_at, confirmed_at
	FROM budget_holds WHERE community_id = $1 AND requisition = $2`

// lockKeysSQL takes the locks of an account class's keys in the order of
// the array (unnest yields them in it).
const lockKeysSQL = "SELECT pg_advisory_xact_lock($1, k) FROM unnest($2::int4[]) AS k"

// lockedRead sends b, statements (a lock last) followed by a read of
// holds, and returns what the read found.
func lockedRead(ctx context.Context, tx querier, b *pgx.Batch) (hs []budget.Hold, err error) {
	br := tx.SendBatch(ctx, b)
	defer func() {
		if cerr := br.Close(); err == nil {
			err = cerr
		}
	}()
	for range b.Len() - 1 {
		if _, err := br.Exec(); err != nil {
			return nil, err
		}
	}
	rows, err := br.Query()
	if err != nil {
		return nil, err
	}
	return scanHolds(rows)
}

func sortedKeys(keys []int32) []int32 {
	slices.Sort(keys)
	return slices.Compact(keys)
}

// lockAccounts takes the locks of accounts in ascending key order.
func (s *Store) lockAccounts(ctx context.Context, tx pgx.Tx, accounts []string) error {
	keys := make([]int32, len(accounts))
	for i, a := range accounts {
		keys[i] = s.lockKey(a)
	}
	return s.lockKeys(ctx, tx, keys)
}

func (s *Store) lockKeys(ctx context.Context, tx pgx.Tx, keys []int32) error {
	_, err := tx.Exec(ctx, lockKeysSQL, accountClass, sortedKeys(keys))
	return err
}

// Hold implements budget.HoldStore.
func (s *Store) Hold(ctx context.Context, c budget.HoldCheck, decide budget.Decide) (bool, error) {
	if err := budget.ValidHoldCheck(c); err != nil {
		return false, err
	}
	forDur := c.For
	if forDur <= 0 {
		forDur = budget.DefaultHoldFor
	}
	accounts := make([]string, len(c.Claims))
	for i, cl := range c.Claims {
		accounts[i] = cl.Account
	}
	// The transaction begins in the batch of the first lock and commits in
	// the batch of the writes: two round trips fewer than a pgx.Tx's. On
	// a failure the connection goes back to the pool still in the
	// transaction, and the pool closes such a connection, which rolls the
	// transaction back: nothing is half-held.
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return false, unavailable("hold", err)
	}
	defer conn.Release()
	var held bool
	err = func() error {
		tx := conn
		own, err := s.lock(ctx, tx, c.Requisition, accounts, true)
		if err != nil {
			return err
		}
		// The clock is read once the locks are held: a check that waited
		// sees the time it decides at.
		now := budget.HoldsTime(s.now())
		others, err := s.held(ctx, tx, now, c.Claims)
		if err != nil {
			return err
		}
		// The requisition's own holds do not count against it.
		for i, cl := range c.Claims {
			h, ok := own[cl.Account]
			if !ok {
				continue
			}
			if h.Committed() && (cl.AsOf.IsZero() || h.Confirmed.After(budget.HoldsTime(cl.AsOf))) || !h.Committed() && h.Expires.After(now) {
				others[i] = others[i].Sub(h.Amount)
			}
		}
		held = decide(others)
		if !held {
			if _, err := s.deleteHolds(ctx, tx, "requisition = $2", c.Requisition); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, "COMMIT")
			return err
		}
		// The rows: inserted where new (accs), updated in place where the
		// requisition claims an account again (again), deleted where it no
		// longer does. Its rows were read under its lock, so no insert
		// meets a row, and a plain INSERT and UPDATE cost less than an
		// upsert of each. The totals move by the difference from what it
		// held (read under the locks, so exact); a re-check of the same
		// amounts leaves them as they are. A plain UPDATE of totals rows
		// made to exist first is cheaper than an upsert of each.
		accs, amounts := []string{}, []string{}
		again, againAmounts := []string{}, []string{}
		var tAccs, tHeld, tCommitted []string
		var tNew []bool
		moved := func(account string, held, committed decimal.Decimal, isNew bool) {
			if held.IsZero() && committed.IsZero() {
				return
			}
			tAccs, tNew = append(tAccs, account), append(tNew, isNew)
			tHeld, tCommitted = append(tHeld, held.String()), append(tCommitted, committed.String())
		}
		claimed := make(map[string]bool, len(c.Claims))
		for _, cl := range c.Claims {
			if cl.Amount.Sign() <= 0 {
				continue
			}
			claimed[cl.Account] = true
			if _, ok := own[cl.Account]; ok {
				again, againAmounts = append(again, cl.Account), append(againAmounts, budget.FormatAmount(cl.Amount))
			} else {
				accs, amounts = append(accs, cl.Account), append(amounts, budget.FormatAmount(cl.Amount))
			}
			dh, dk := cl.Amount, decimal.Decimal{}
			if h, ok := own[cl.Account]; ok && h.Committed() {
				dk = h.Amount.Neg()
			} else if ok {
				dh = dh.Sub(h.Amount)
			}
			moved(cl.Account, dh, dk, true)
		}
		dropped := []string{}
		for account, h := range own {
			if claimed[account] {
				continue
			}
			dropped = append(dropped, account)
			if h.Committed() {
				moved(account, decimal.Decimal{}, h.Amount.Neg(), false)
			} else {
				moved(account, h.Amount.Neg(), decimal.Decimal{}, false)
			}
		}
		// Both statements and the commit go in one batch: one round trip.
		b := &pgx.Batch{}
		b.Queue(`INSERT INTO budget_hold_totals (community_id, account)
			SELECT $1, a FROM unnest($2::text[]) AS a WHERE NOT EXISTS (
				SELECT 1 FROM budget_hold_totals t WHERE t.community_id = $1 AND t.account = a)
			ON CONFLICT DO NOTHING`, s.community, tAccs)
		b.Queue(`
			WITH del AS (
				DELETE FROM budget_holds WHERE community_id = $1 AND requisition = $2 AND account = ANY($7::text[])),
			ins AS (
				INSERT INTO budget_holds (community_id, requisition, account, amount, held_at, expires_at)
				SELECT $1, $2, a, m::numeric, $5, $6 FROM unnest($3::text[], $4::text[]) AS u(a, m)),
			up AS (
				UPDATE budget_holds h SET amount = u.m::numeric, held_at = $5, expires_at = $6, confirmed_at = NULL
				FROM unnest($12::text[], $13::text[]) AS u(a, m)
				WHERE h.community_id = $1 AND h.requisition = $2 AND h.account = u.a)
			UPDATE budget_hold_totals t SET held = t.held + d.h::numeric, committed = t.committed + d.k::numeric,
				soonest = CASE WHEN d.n THEN least(t.soonest, $6::timestamptz) ELSE t.soonest END
			FROM unnest($8::text[], $9::text[], $10::text[], $11::bool[]) AS d(a, h, k, n)
			WHERE t.community_id = $1 AND t.account = d.a`,
			s.community, c.Requisition, accs, amounts, now, now.Add(forDur), dropped, tAccs, tHeld, tCommitted, tNew, again, againAmounts)
		b.Queue("COMMIT")
		return tx.SendBatch(ctx, b).Close()
	}()
	if err != nil {
		return false, unavailable("hold", err)
	}
	return held, nil
}

// deleteHolds deletes the rows of the store's community that match where
// (in which $1 is the community and $2, ... args), takes them out of the
// totals, and returns the deleted rows. The caller holds the locks of
// the rows' accounts, as every writer of the totals does, so that no two
// transactions wait for each other's rows.
func (s *Store) deleteHolds(ctx context.Context, q querier, where string, args ...any) ([]budget.Hold, error) {
	rows, err := q.Query(ctx, `
		WITH gone AS (
			DELETE FROM budget_holds WHERE community_id = $1 AND `+where+`
			RETURNING `+holdColumns+`, amount AS n),
		sums AS (
			SELECT account,
				coalesce(sum(n) FILTER (WHERE confirmed_at IS NULL), 0) AS held,
				coalesce(sum(n) FILTER (WHERE confirmed_at IS NOT NULL), 0) AS committed
			FROM gone GROUP BY account),
		upd AS (
			UPDATE budget_hold_totals t SET held = t.held - sums.held, committed = t.committed - sums.committed
			FROM sums WHERE t.community_id = $1 AND t.account = sums.account)
		SELECT requisition, account, amount::text, held_at, expires_at, confirmed_at FROM gone`, append([]any{s.community}, args...)...)
	if err != nil {
		return nil, err
	}
	return scanHolds(rows)
}

// querier is a connection or a transaction.
type querier interface {
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// held sums what every requisition holds on each claim's account.
func (s *Store) held(ctx context.Context, q querier, now time.Time, claims []budget.Claim) ([]decimal.Decimal, error) {
	accounts := make([]string, len(claims))
	asOf := make([]*time.Time, len(claims))
	for i, cl := range claims {
		accounts[i] = cl.Account
		if !cl.AsOf.IsZero() {
			t := budget.HoldsTime(cl.AsOf)
			asOf[i] = &t
		}
	}
	// From each account's totals, less the expired holds not yet removed
	// (looked for only once the account's soonest expiry has passed) and
	// the commitments the figures include (as_of): one row per account
	// however many requisitions hold it. The totals are looked up per
	// account by primary key (a LATERAL subquery that OFFSET 0 keeps the
	// planner from flattening into a join): the join it chose from a new
	// table's statistics compared every claim with every row.
	rows, err := q.Query(ctx, heldSQL, s.community, accounts, asOf, now)
	if err != nil {
		return nil, err
	}
	sums, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, err
	}
	out := make([]decimal.Decimal, len(sums))
	for i, t := range sums {
		if out[i], err = decimal.NewFromString(t); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// heldSQL sums what is held on each account of $2 (with the as_of of $3)
// at $4, in the order of $2.
const heldSQL = `
		SELECT (coalesce(t.held, 0)
			- CASE WHEN t.soonest <= $4 THEN coalesce((SELECT sum(x.amount) FROM budget_holds x
				WHERE x.community_id = $1 AND x.account = c.account AND x.expires_at <= $4), 0) ELSE 0 END
			+ CASE WHEN c.as_of IS NULL THEN coalesce(t.committed, 0)
				WHEN t.committed = 0 THEN 0
				ELSE coalesce((SELECT sum(y.amount) FROM budget_holds y
					WHERE y.community_id = $1 AND y.account = c.account AND y.confirmed_at > c.as_of), 0) END
			)::text
		FROM unnest($2::text[], $3::timestamptz[]) WITH ORDINALITY AS c(account, as_of, i)
		LEFT JOIN LATERAL (SELECT held, committed, soonest FROM budget_hold_totals
			WHERE community_id = $1 AND account = c.account OFFSET 0) t ON true
		ORDER BY c.i`

// Held implements budget.HoldStore.
func (s *Store) Held(ctx context.Context, claims []budget.Claim) ([]decimal.Decimal, error) {
	var out []decimal.Decimal
	err := s.read(ctx, func(tx pgx.Tx, now time.Time) error {
		var err error
		out, err = s.held(ctx, tx, now, claims)
		return err
	})
	if err != nil {
		return nil, unavailable("held", err)
	}
	return out, nil
}

// read runs f in a read-only transaction whose snapshot is taken before
// the clock is read, so that what f reads is judged at a time no earlier
// than the snapshot: a hold that expired before the time f is given is
// never counted, and every hold that counts at that time is in the
// snapshot, which a check that committed before it decided with.
func (s *Store) read(ctx context.Context, f func(tx pgx.Tx, now time.Time) error) error {
	return pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT 1"); err != nil { // takes the snapshot
			return err
		}
		return f(tx, budget.HoldsTime(s.now()))
	})
}

// Release implements budget.HoldStore.
func (s *Store) Release(ctx context.Context, requisition string) (int, error) {
	var n int64
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := s.lock(ctx, tx, requisition, nil, false); err != nil {
			return err
		}
		now := budget.HoldsTime(s.now())
		gone, err := s.deleteHolds(ctx, tx, "requisition = $2", requisition)
		// Expired rows end too, without counting.
		for _, h := range gone {
			if h.Committed() || h.Expires.After(now) {
				n++
			}
		}
		return err
	})
	if err != nil {
		return 0, unavailable("release", err)
	}
	return int(n), nil
}

// Confirm implements budget.HoldStore.
func (s *Store) Confirm(ctx context.Context, requisition string) (int, error) {
	var n int64
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := s.lock(ctx, tx, requisition, nil, false); err != nil {
			return err
		}
		now := budget.HoldsTime(s.now())
		tag, err := tx.Exec(ctx, `
			WITH conf AS (
				UPDATE budget_holds SET confirmed_at = $3, expires_at = NULL
				WHERE community_id = $1 AND requisition = $2 AND expires_at > $3
				RETURNING account, amount)
			UPDATE budget_hold_totals t SET held = t.held - conf.amount, committed = t.committed + conf.amount
			FROM conf WHERE t.community_id = $1 AND t.account = conf.account`, s.community, requisition, now)
		n = tag.RowsAffected()
		return err
	})
	if err != nil {
		return 0, unavailable("confirm", err)
	}
	return int(n), nil
}

const holdColumns = "requisition, account, amount, held_at, expires_at, confirmed_at"

func scanHolds(rows pgx.Rows) ([]budget.Hold, error) {
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (budget.Hold, error) {
		var (
			h                  budget.Hold
			amount             string
			expires, confirmed *time.Time
		)
		if err := r.Scan(&h.Requisition, &h.Account, &amount, &h.Held, &expires, &confirmed); err != nil {
			return h, err
		}
		var err error
		h.Amount, err = decimal.NewFromString(amount)
		h.Held = h.Held.UTC()
		if expires != nil {
			h.Expires = expires.UTC()
		}
		if confirmed != nil {
			h.Confirmed = confirmed.UTC()
		}
		return h, err
	})
}

// Holds implements budget.HoldStore.
func (s *Store) Holds(ctx context.Context, account string) ([]budget.Hold, error) {
	var hs []budget.Hold
	err := s.read(ctx, func(tx pgx.Tx, now time.Time) error {
		rows, err := tx.Query(ctx, `SELECT requisition, account, amount::text, held_at, expires_at, confirmed_at FROM budget_holds
			WHERE community_id = $1 AND account = $2 AND (confirmed_at IS NOT NULL OR expires_at > $3)
			ORDER BY requisition COLLATE "C"`, s.community, account, now)
		if err != nil {
			return err
		}
		hs, err = scanHolds(rows)
		return err
	})
	if err != nil {
		return nil, unavailable("list", err)
	}
	return hs, nil
}

// Expire implements budget.HoldStore.
func (s *Store) Expire(ctx context.Context) ([]budget.Hold, error) {
	now := budget.HoldsTime(s.now())
	// The accounts with expired holds, found without locks, then locked
	// (in the order every transaction uses) before their rows and totals
	// change; holds that expire meanwhile are left for the next call.
	rows, err := s.pool.Query(ctx, "SELECT DISTINCT account FROM budget_holds WHERE community_id = $1 AND expires_at <= $2", s.community, now)
	if err != nil {
		return nil, unavailable("expire", err)
	}
	accounts, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, unavailable("expire", err)
	}
	if len(accounts) == 0 {
		return nil, nil
	}
	var hs []budget.Hold
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if err := s.lockAccounts(ctx, tx, accounts); err != nil {
			return err
		}
		var err error
		if hs, err = s.deleteHolds(ctx, tx, "expires_at <= $2 AND account = ANY($3::text[])", now, accounts); err != nil || len(hs) == 0 {
			return err
		}
		// The accounts' soonest expiry moves on to their next one.
		_, err = tx.Exec(ctx, `UPDATE budget_hold_totals t SET soonest = (
				SELECT min(h.expires_at) FROM budget_holds h WHERE h.community_id = t.community_id AND h.account = t.account AND h.expires_at IS NOT NULL)
			WHERE t.community_id = $1 AND t.account = ANY($2)`, s.community, accounts)
		return err
	})
	if err != nil {
		return nil, unavailable("expire", err)
	}
	budget.SortHolds(hs)
	return hs, nil
}

// Record appends e to the audit table beside the holds (budget.AuditLog).
func (s *Store) Record(ctx context.Context, e budget.AuditEntry) error {
	b, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("pgholds: audit: %w", err)
	}
	if _, err := s.pool.Exec(ctx, "INSERT INTO budget_audit (community_id, at, event, requisition, entry) VALUES ($1, $2, $3, $4, $5)",
		s.community, e.Time, e.Event, e.Requisition, string(b)); err != nil {
		return unavailable("audit", err)
	}
	return nil
}

// Audit returns the audit entries of the store's community in the order
// they were recorded, after the first skip.
func (s *Store) Audit(ctx context.Context, skip int) ([]budget.AuditEntry, error) {
	rows, err := s.pool.Query(ctx, "SELECT entry::text FROM budget_audit WHERE community_id = $1 ORDER BY id OFFSET $2", s.community, skip)
	if err != nil {
		return nil, unavailable("audit", err)
	}
	texts, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, unavailable("audit", err)
	}
	out := make([]budget.AuditEntry, len(texts))
	for i, t := range texts {
		if err := json.Unmarshal([]byte(t), &out[i]); err != nil {
			return nil, fmt.Errorf("pgholds: audit entry %d: %w", skip+i+1, err)
		}
	}
	return out, nil
}

// migrateAt applies the migrations over a connection of its own to dsn.
func migrateAt(ctx context.Context, dsn string) error {
	cfg, err := pgpool.ParseConfig(dsn)
	if err != nil {
		return fmt.Errorf("migrations: %w", err)
	}
	conn, err := pgx.ConnectConfig(ctx, cfg.ConnConfig)
	if err != nil {
		return fmt.Errorf("migrations: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	return migrate(ctx, conn)
}

// migrate applies the migrations the database lacks in one transaction
// under a transaction-level advisory lock (internal/pgmigrate): connectors
// starting together apply each migration once, and a failed one leaves the
// database as it was.
func migrate(ctx context.Context, db interface {
	Begin(context.Context) (pgx.Tx, error)
}) error {
	ms, err := pgmigrate.Load(migrationFiles)
	if err != nil {
		return err
	}
	_, err = pgmigrate.Apply(ctx, db, ms, pgmigrate.Options{Table: "budget_holds_migrations", Lock: migrationLock})
	return err
}
