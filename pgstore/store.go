package pgstore

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/procurekit/procure/internal/pgmigrate"
	"github.com/procurekit/procure/internal/pgpool"
	"github.com/procurekit/procure/internal/storemetrics"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// migrationLock is the key of the advisory lock held while migrating
// ("pgstore" in ASCII), so that nodes starting together apply each
// migration once.
const migrationLock int64 = 0x7067_7374_6f72_65

// Store is the PostgreSQL backend. It is safe for concurrent use by any
// number of goroutines, and any number of Stores (in one process or many)
// may share one database.
type Store struct {
	pool     *db      // the primary (db.go)
	replica  *replica // nil without WithReadDSN (replica.go)
	ownsPool bool
	usage    usageMinutes   // lastUsedAt minutes this node has written (credentials.go)
	cache    *supplierCache // nil without WithSupplierCache (cache.go)
	creds    *credCache     // nil without WithCredentialCache (credcache.go)
	users    *userCache     // nil without WithUserCache (usercache.go)
	// userReads counts the user reads that went to the database (tests).
	userReads atomic.Int64
	// writesFast counts the puts of suppliers, contacts and addresses
	// that committed planned outside the community's lock, writesRaced
	// those whose guard failed and were redone under it (write_fast.go).
	writesFast, writesRaced atomic.Int64
	// writesFromCache counts those of writesFast planned from the node's
	// cache, with no read before the lock (write_fast.go).
	writesFromCache atomic.Int64
	// writesGrouped counts those of writesFromCache committed in one
	// transaction with other puts, groupsFailed the transactions of more
	// than one put that failed and had their puts redone under the lock
	// (write_group.go).
	writesGrouped, groupsFailed atomic.Int64
	// groups queues the puts planned from the cache (write_group.go).
	groups writeGroups
	// pipePanics counts the panics a write pipe recovered from (a bug:
	// its puts were redone under the lock; write_pipe.go).
	pipePanics atomic.Int64
	// writeSlots bounds the connections the supplier writes hold
	// (write_slots.go).
	writeSlots *writeSlots
	// afterPlan, when set (tests), runs between an optimistic write's
	// plan and its lock.
	afterPlan func()
	// afterCommit, when set (tests), runs between a supplier put's commit
	// and its own.
	afterCommit func()
	// beforeGroup, when set (tests), runs as a group of puts is sent
	// (write_group.go).
	beforeGroup func()
	// cachedUpdates counts the user updates made in one round trip from
	// the user cache's copy (updateCached; tests).
	cachedUpdates atomic.Int64
	// readyEarly: Ready does not wait for the cache (ready.go).
	readyEarly bool
	metrics    *storeMetrics        // nil without WithMetrics (metrics.go)
	imports    storemetrics.Imports // counted always, collected with WithMetrics
}

// Option configures Open.
type Option func(*options)

type options struct {
	maxConns         int32
	defaultMaxConns  int32
	statementTimeout *time.Duration
	log              *slog.Logger
	cache            bool
	credCache        bool
	userCache        bool
	readyEarly       bool
	metrics          prometheus.Registerer
	migrateDSN       string
	readDSN          string
	noPipe           bool
}

// WithWritePipe sets whether a community's grouped supplier puts (those
// the node's supplier cache plans) go through one connection in
// PostgreSQL's pipeline mode, up to four transactions ahead of their
// answers (the default on a direct connection), or each transaction on a
// connection of its own, up to eight at a time (always through a pooler,
// which cannot keep the pipe's prepared statements). The pipe takes the
// hand-off of the community's lock between backends out of each write:
// the writers alone commit about 60% more puts a second, and on a node
// that serves HTTP reads it commits more of 1,000 writes a second and
// leaves the reads more of the cores (bench/README.md, "Session 23"). Its
// one goroutine a busy community must get a core for each answer,
// though: in a process whose other goroutines run the cores without
// pause (no I/O), the writes slow to half where the readers gain; turn
// it off there.
func WithWritePipe(on bool) Option { return func(o *options) { o.noPipe = !on } }

// WithLogger has Open log, at Info, each migration it applies (version,
// name and duration) and the schema version it ends at, so that an
// operator sees what a start did to the database, and warn of stored
// usernames the user API now refuses. Without it Open logs nothing.
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.log = l } }

// DefaultStatementTimeout bounds every statement of a store made by Open,
// unless WithStatementTimeout or the DSN says otherwise (docs: limits.md: every database call is bounded; a request that hits the bound
// is a 503). Five seconds is far above any query of the API on good
// indexes and far below the example server's write timeout, so a
// statement that hits it fails before its request would hang.
const DefaultStatementTimeout = 5 * time.Second

// WithStatementTimeout sets the statement timeout of the store's calls: a
// statement that runs (or waits for a lock) longer is cancelled by the
// server, and the call returns an error with SQLSTATE 57014, which httpapi
// answers 503 UNAVAILABLE. Zero turns the bound off. Without this option
// the DSN's statement_timeout parameter is used (as a number of
// milliseconds, or with PostgreSQL's units: 2s, 1min), and without that
// DefaultStatementTimeout. The bound is set per transaction, never on the
// connection (see db.go), so it holds through a pooler in transaction
// mode. Migrations, bulk loads (a COPY, and the rest of its transaction:
// the data-file imports) and maintenance statements (VACUUM, ANALYZE,
// CREATE INDEX, ...) run without it; for other long work, see
// WithoutStatementTimeout.
func WithStatementTimeout(d time.Duration) Option {
	return func(o *options) { o.statementTimeout = &d }
}

// WithoutStatementTimeout returns a context under which the store's
// statements run without the statement timeout: for bulk work such as a
// large import, whose COPY may stream for minutes. It has an effect on
// stores made by Open.
func WithoutStatementTimeout(ctx context.Context) context.Context {
	return context.WithValue(ctx, noStatementTimeout{}, true)
}

type noStatementTimeout struct{}

// tracer is the pgx tracer of the store's connections. It lifts the
// statement timeout, for the rest of a transaction, from a bulk load and
// a maintenance statement run inside one (outside one db.go sets no bound
// on them), and with a read replica it notes this node's writes on the
// primary's pool (replica.go).
type tracer struct{ r *replica }

// TraceQueryStart lifts the bound for a maintenance statement (VACUUM,
// ANALYZE, CHECKPOINT, REINDEX, CLUSTER, CREATE INDEX): an operator's or a
// test's deliberate long work, never an API call's. Every other statement
// passes untouched.
func (tracer) TraceQueryStart(ctx context.Context, conn *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	if maintenance(data.SQL) {
		lift(ctx, conn)
	}
	return ctx
}

// maintenance reports whether sql starts with a maintenance command.
func maintenance(sql string) bool {
	sql = strings.TrimSpace(sql)
	for _, w := range [...]string{"VACUUM", "ANALYZE", "CHECKPOINT", "REINDEX", "CLUSTER", "CREATE INDEX", "CREATE UNIQUE INDEX"} {
		if len(sql) >= len(w) && strings.EqualFold(sql[:len(w)], w) {
			return true
		}
	}
	return false
}

// lift lifts the bound on conn for the rest of its transaction (SET
// LOCAL); outside one there is nothing to lift. On failure the statement
// simply stays bounded.
func lift(ctx context.Context, conn *pgx.Conn) {
	if pc := conn.PgConn(); pc.TxStatus() == 'T' {
		_, _ = pc.Exec(ctx, "SET LOCAL statement_timeout = 0").ReadAll()
	}
}

// TraceQueryEnd completes pgx.QueryTracer.
func (tracer) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// TraceCopyFromStart lifts the bound for a bulk load: a COPY streams for
// as long as its source does (a data-file import of a million suppliers),
// and the statements that follow it in its transaction merge as many rows.
func (tracer) TraceCopyFromStart(ctx context.Context, conn *pgx.Conn, _ pgx.TraceCopyFromStartData) context.Context {
	lift(ctx, conn)
	return ctx
}

func (tracer) TraceCopyFromEnd(context.Context, *pgx.Conn, pgx.TraceCopyFromEndData) {}

// WithMaxConns sets the largest number of connections the store keeps open
// (pgxpool's default is the greater of 4 and the number of CPUs). The DSN
// parameter pool_max_conns does the same.
func WithMaxConns(n int32) Option { return func(o *options) { o.maxConns = n } }

// WithDefaultMaxConns sets the largest number of connections the store
// keeps open to the primary when neither WithMaxConns nor the DSN's
// pool_max_conns says: a default of the program's own in place of
// pgxpool's (the greater of 4 and the number of CPUs, four times that
// through a pooler; internal/pgpool). A node that takes many writes wants
// more than pgxpool's default, which is sized for queries that keep a
// core busy: each supplier write holds a connection for two round trips,
// most of it waiting (README "Sizing"). The read replica's pool keeps
// pgxpool's default.
func WithDefaultMaxConns(n int32) Option { return func(o *options) { o.defaultMaxConns = n } }

// WithMigrateDSN has Open apply the migrations over a connection of its
// own to dsn, closed once they are done, rather than over the store's
// pool: for a store whose DSN goes through a pooler, give the database's
// own address here (a pooler's limits on a transaction's length, or on
// what a client may run, are no place for a schema change). The database
// must be the one the store's DSN reaches.
func WithMigrateDSN(dsn string) Option { return func(o *options) { o.migrateDSN = dsn } }

// Open connects to the database at dsn (a URL such as
// postgres://user:pass@host:5432/db, or keyword=value pairs; pgxpool's
// pool_* parameters are understood), applies the migrations it lacks, and
// returns the store. Close releases it.
//
// The store works on a direct connection and through PgBouncer (or
// another pooler) in transaction or session mode alike: it keeps no
// session state outside a transaction (the statement timeout is set per
// transaction, locks are transaction-level), and it prepares named
// statements only on a connection it finds to be direct, unless the DSN's
// default_query_exec_mode says otherwise (internal/pgpool; WithLogger
// logs the choice). See the README's "PostgreSQL" section.
func Open(ctx context.Context, dsn string, opts ...Option) (*Store, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	cfg, direct, err := pgpool.Config(ctx, dsn)
	if err != nil {
		return nil, fmt.Errorf("pgstore: connect: %w", err)
	}
	if o.log != nil {
		o.log.InfoContext(ctx, "postgres", "query_exec_mode", cfg.ConnConfig.DefaultQueryExecMode.String(), "direct", direct)
	}
	switch {
	case o.maxConns > 0:
		cfg.MaxConns = o.maxConns
	case o.defaultMaxConns > 0 && !pgpool.NamesParam(dsn, "pool_max_conns"):
		cfg.MaxConns = o.defaultMaxConns
	}
	timeout := DefaultStatementTimeout
	// Never a startup parameter: PgBouncer refuses it.
	if v, ok := cfg.ConnConfig.RuntimeParams["statement_timeout"]; ok {
		delete(cfg.ConnConfig.RuntimeParams, "statement_timeout")
		if timeout, err = parseTimeout(v); err != nil {
			return nil, fmt.Errorf("pgstore: the DSN's statement_timeout: %w", err)
		}
	}
	if o.statementTimeout != nil {
		timeout = max(*o.statementTimeout, 0)
	}
	var r *replica
	if o.readDSN != "" {
		r = &replica{log: o.log}
	}
	if cfg.ConnConfig.Tracer == nil {
		cfg.ConnConfig.Tracer = tracer{r}
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("pgstore: connect: %w", err)
	}
	d := &db{pool: pool, timeout: timeout, set: true}
	if err := migrateFor(ctx, d, o); err != nil {
		pool.Close()
		return nil, err
	}
	s, err := newStore(ctx, d, o.log)
	if err != nil {
		pool.Close()
		return nil, err
	}
	if r != nil {
		if err := openReplica(ctx, r, d, o); err != nil {
			pool.Close()
			return nil, err
		}
		s.replica = r
	}
	s.ownsPool = true
	s.readyEarly = o.readyEarly
	if o.noPipe {
		s.groups.pipe = false
	}
	if o.credCache {
		s.creds = newCredCache()
	}
	if o.cache {
		s.cache = newSupplierCache(s, o.log)
	}
	if o.userCache {
		s.users = newUserCache(s, o.log)
	}
	if o.metrics != nil {
		if err := s.registerMetrics(o.metrics); err != nil {
			s.Close()
			return nil, fmt.Errorf("pgstore: metrics: %w", err)
		}
	}
	return s, nil
}

// openReplica connects r to o.readDSN and starts measuring its lag; until
// the first measure after Open's migrations, reads go to the primary.
func openReplica(ctx context.Context, r *replica, primary *db, o options) error {
	cfg, direct, err := pgpool.Config(ctx, o.readDSN)
	if err != nil {
		return fmt.Errorf("pgstore: read replica: connect: %w", err)
	}
	if o.log != nil {
		o.log.InfoContext(ctx, "postgres read replica", "query_exec_mode", cfg.ConnConfig.DefaultQueryExecMode.String(), "direct", direct)
	}
	if o.maxConns > 0 {
		cfg.MaxConns = o.maxConns
	}
	delete(cfg.ConnConfig.RuntimeParams, "statement_timeout")
	if cfg.ConnConfig.Tracer == nil {
		cfg.ConnConfig.Tracer = tracer{}
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return fmt.Errorf("pgstore: read replica: connect: %w", err)
	}
	r.db = &db{pool: pool, timeout: primary.timeout, set: primary.set}
	r.primary = &db{pool: primary.pool, timeout: primary.timeout, set: primary.set, read: true}
	raise(&r.wrote, mono()) // the migrations
	r.start()
	return nil
}

// migrateFor applies the migrations over a connection to o.migrateDSN, or
// else over d's pool.
func migrateFor(ctx context.Context, d *db, o options) error {
	if o.migrateDSN == "" {
		return migrate(ctx, d.pool, o.log)
	}
	cfg, err := pgpool.ParseConfig(o.migrateDSN)
	if err != nil {
		return fmt.Errorf("pgstore: migrations: %w", err)
	}
	conn, err := pgx.ConnectConfig(ctx, cfg.ConnConfig)
	if err != nil {
		return fmt.Errorf("pgstore: migrations: connect: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	return migrate(ctx, conn, o.log)
}

// parseTimeout reads a statement_timeout as PostgreSQL does: a whole
// number of milliseconds, or a number with one of the units us, ms, s,
// min, h, d.
func parseTimeout(v string) (time.Duration, error) {
	v = strings.TrimSpace(v)
	i := strings.IndexFunc(v, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	num, unit := v, "ms"
	if i >= 0 {
		num, unit = v[:i], strings.TrimSpace(v[i:])
	}
	units := map[string]time.Duration{"us": time.Microsecond, "ms": time.Millisecond, "s": time.Second,
		"min": time.Minute, "h": time.Hour, "d": 24 * time.Hour}
	f, err := strconv.ParseFloat(num, 64)
	u, ok := units[unit]
	if err != nil || !ok || f < 0 {
		return 0, fmt.Errorf("%q is not a duration (a number of milliseconds, or with a unit: us, ms, s, min, h, d)", v)
	}
	return time.Duration(f * float64(u)), nil
}

// New returns a store over a pool the caller configured and keeps: Close
// does not close it. Like Open, it applies the migrations the database
// lacks. The pool's configuration is the caller's, the statement timeout
// included: New sets none (Open's DefaultStatementTimeout is a sane value
// for a pool's RuntimeParams on a direct connection).
func New(ctx context.Context, pool *pgxpool.Pool) (*Store, error) {
	d := &db{pool: pool}
	if err := migrate(ctx, pool, nil); err != nil {
		return nil, err
	}
	return newStore(ctx, d, nil)
}

func newStore(ctx context.Context, d *db, log *slog.Logger) (*Store, error) {
	if log != nil {
		if err := reportHiddenUsernames(ctx, d, log); err != nil { // username_fold.go
			return nil, err
		}
	}
	slots := newWriteSlots(d.pool.Config().MaxConns)
	// Pipes need named prepared statements (write_pipe.go).
	pipe := d.pool.Config().ConnConfig.DefaultQueryExecMode == pgx.QueryExecModeCacheStatement
	return &Store{pool: d, writeSlots: slots, groups: writeGroups{max: min(maxGroups, slots.perCom), pipe: pipe}}, nil
}

// Close closes the connections Open made. It waits for queries in flight.
func (s *Store) Close() {
	s.metrics.unregister()
	s.cache.close()
	s.users.close()
	s.replica.close()
	if s.ownsPool {
		s.pool.pool.Close()
	}
}

// Ping checks that the database answers, for health checks.
func (s *Store) Ping(ctx context.Context) error {
	d := s.primaryReads()
	return d.pool.Ping(d.mark(ctx))
}

// beginner is what migrations run on: a pool or a connection.
type beginner interface {
	Begin(context.Context) (pgx.Tx, error)
}

// migrate applies the migrations the database lacks, all in one
// transaction under a transaction-level advisory lock
// (internal/pgmigrate): a node that starts while another migrates waits,
// then finds the work done. A failed migration leaves the database as it
// was.
func migrate(ctx context.Context, db beginner, log *slog.Logger) error {
	ms, err := pgmigrate.Load(migrationFiles)
	if err != nil {
		return fmt.Errorf("pgstore: %w", err)
	}
	if err := applyMigrations(ctx, db, log, ms); err != nil {
		return fmt.Errorf("pgstore: %w", err)
	}
	return nil
}

// applyMigrations applies those of ms the database lacks (tests apply a
// prefix, to make a database of an older version), each with its
// migrationHooks entry.
func applyMigrations(ctx context.Context, db beginner, log *slog.Logger, ms []pgmigrate.Migration) error {
	ran, err := pgmigrate.Apply(ctx, db, ms, pgmigrate.Options{
		Table: "schema_migrations",
		Lock:  migrationLock,
		Hook: func(ctx context.Context, tx pgx.Tx, m pgmigrate.Migration) error {
			if hook := migrationHooks[m.Version]; hook != nil {
				return hook(ctx, tx)
			}
			return nil
		},
	})
	if err != nil || log == nil {
		return err
	}
	// Logged once the transaction has committed: what is logged is done.
	for _, d := range ran {
		log.InfoContext(ctx, "migration applied", "version", d.Version, "name", d.Name, "duration_ms", d.Took.Milliseconds())
	}
	if len(ms) > 0 {
		log.InfoContext(ctx, "schema", "version", ms[len(ms)-1].Version, "migrations_applied", len(ran))
	}
	return nil
}

// SchemaVersion returns the highest migration version applied to the
// database.
func (s *Store) SchemaVersion(ctx context.Context) (int, error) {
	var v int
	err := s.primaryReads().QueryRow(ctx, "SELECT coalesce(max(version), 0) FROM schema_migrations").Scan(&v)
	return v, err
}

// uniqueViolation returns the constraint (or unique index) a unique
// violation broke, or "" when err is not one.
func uniqueViolation(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "23505" {
		return pe.ConstraintName
	}
	return ""
}
