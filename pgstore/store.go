package pgstore

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/procurekit/procure/internal/pgmigrate"
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
	pool     *pgxpool.Pool
	ownsPool bool
	usage    usageMinutes   // lastUsedAt minutes this node has written (credentials.go)
	cache    *supplierCache // nil without WithSupplierCache (cache.go)
	creds    *credCache     // nil without WithCredentialCache (credcache.go)
	// readyEarly: Ready does not wait for the cache (ready.go).
	readyEarly bool
	metrics    *storeMetrics // nil without WithMetrics (metrics.go)
	imports    importStats   // (metrics.go)
}

// Option configures Open.
type Option func(*options)

type options struct {
	maxConns         int32
	statementTimeout *time.Duration
	log              *slog.Logger
	cache            bool
	credCache        bool
	readyEarly       bool
	metrics          prometheus.Registerer
}

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

// WithStatementTimeout sets PostgreSQL's statement_timeout on every
// connection of the store: a statement that runs (or waits for a lock)
// longer is cancelled by the server, and the call returns an error with
// SQLSTATE 57014, which httpapi answers 503 UNAVAILABLE. Zero turns the
// bound off. Without this option the DSN's statement_timeout parameter
// is used, and without that DefaultStatementTimeout. Migrations, bulk
// loads (a COPY, and the rest of its transaction: the data-file imports)
// and maintenance statements (VACUUM, ANALYZE, CREATE INDEX, ...) run
// without the bound; for other long work, see WithoutStatementTimeout.
func WithStatementTimeout(d time.Duration) Option {
	return func(o *options) { o.statementTimeout = &d }
}

// WithoutStatementTimeout returns a context under which the store's
// statements run without the statement timeout: for bulk work such as a
// large import, whose COPY may stream for minutes. A connection used so
// is closed when released, so the bound holds again for every other call.
// It has an effect on stores made by Open.
func WithoutStatementTimeout(ctx context.Context) context.Context {
	return context.WithValue(ctx, noStatementTimeout{}, true)
}

type noStatementTimeout struct{}

// unbounded tracks the connections WithoutStatementTimeout lifted the
// bound on, so that they are closed when released.
type unbounded struct {
	mu    sync.Mutex
	conns map[*pgx.Conn]bool
}

// prepare lifts the bound on conn when ctx asks for it.
func (u *unbounded) prepare(ctx context.Context, conn *pgx.Conn) (bool, error) {
	if ctx.Value(noStatementTimeout{}) == nil {
		return true, nil
	}
	if _, err := conn.Exec(ctx, "SET statement_timeout = 0"); err != nil {
		return false, err
	}
	u.mu.Lock()
	u.conns[conn] = true
	u.mu.Unlock()
	return true, nil
}

// TraceQueryStart lifts the bound for a maintenance statement (VACUUM,
// ANALYZE, CHECKPOINT, REINDEX, CLUSTER, CREATE INDEX): an operator's or a
// test's deliberate long work, never an API call's. Every other statement
// passes untouched.
func (u *unbounded) TraceQueryStart(ctx context.Context, conn *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	if maintenance(data.SQL) {
		u.lift(ctx, conn)
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

// lift lifts the bound on conn: in a transaction for the rest of it (SET
// LOCAL), outside one for the connection, which is then closed on
// release. On failure the statement simply stays bounded.
func (u *unbounded) lift(ctx context.Context, conn *pgx.Conn) {
	pc := conn.PgConn()
	if pc.TxStatus() == 'T' {
		_, _ = pc.Exec(ctx, "SET LOCAL statement_timeout = 0").ReadAll()
		return
	}
	if _, err := pc.Exec(ctx, "SET statement_timeout = 0").ReadAll(); err == nil {
		u.mu.Lock()
		u.conns[conn] = true
		u.mu.Unlock()
	}
}

// TraceQueryEnd completes pgx.QueryTracer.
func (u *unbounded) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// TraceCopyFromStart lifts the bound for a bulk load: a COPY streams for
// as long as its source does (a data-file import of a million suppliers),
// and the statements that follow it in its transaction merge as many rows.
func (u *unbounded) TraceCopyFromStart(ctx context.Context, conn *pgx.Conn, _ pgx.TraceCopyFromStartData) context.Context {
	u.lift(ctx, conn)
	return ctx
}

func (u *unbounded) TraceCopyFromEnd(context.Context, *pgx.Conn, pgx.TraceCopyFromEndData) {}

// release keeps conn in the pool unless its bound was lifted.
func (u *unbounded) release(conn *pgx.Conn) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.conns[conn] {
		delete(u.conns, conn)
		return false
	}
	return true
}

// WithMaxConns sets the largest number of connections the store keeps open
// (pgxpool's default is the greater of 4 and the number of CPUs). The DSN
// parameter pool_max_conns does the same.
func WithMaxConns(n int32) Option { return func(o *options) { o.maxConns = n } }

// Open connects to the database at dsn (a URL such as
// postgres://user:pass@host:5432/db, or keyword=value pairs; pgxpool's
// pool_* parameters are understood), applies the migrations it lacks, and
// returns the store. Close releases it.
func Open(ctx context.Context, dsn string, opts ...Option) (*Store, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		// pgx's message may quote the DSN, password included.
		return nil, errors.New("pgstore: the database URL does not parse")
	}
	if o.maxConns > 0 {
		cfg.MaxConns = o.maxConns
	}
	switch _, inDSN := cfg.ConnConfig.RuntimeParams["statement_timeout"]; {
	case o.statementTimeout != nil:
		cfg.ConnConfig.RuntimeParams["statement_timeout"] = strconv.FormatInt(max(o.statementTimeout.Milliseconds(), 0), 10)
	case !inDSN:
		cfg.ConnConfig.RuntimeParams["statement_timeout"] = strconv.FormatInt(DefaultStatementTimeout.Milliseconds(), 10)
	}
	u := &unbounded{conns: map[*pgx.Conn]bool{}}
	cfg.PrepareConn, cfg.AfterRelease = u.prepare, u.release
	if cfg.ConnConfig.Tracer == nil {
		cfg.ConnConfig.Tracer = u
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("pgstore: connect: %w", err)
	}
	s, err := newStore(ctx, pool, o.log)
	if err != nil {
		pool.Close()
		return nil, err
	}
	s.ownsPool = true
	s.readyEarly = o.readyEarly
	if o.credCache {
		s.creds = newCredCache()
	}
	if o.cache {
		s.cache = newSupplierCache(s, o.log)
	}
	if o.metrics != nil {
		if err := s.registerMetrics(o.metrics); err != nil {
			s.Close()
			return nil, fmt.Errorf("pgstore: metrics: %w", err)
		}
	}
	return s, nil
}

// New returns a store over a pool the caller configured and keeps: Close
// does not close it. Like Open, it applies the migrations the database
// lacks. The pool's configuration is the caller's: set statement_timeout
// in its RuntimeParams (Open's DefaultStatementTimeout is a sane value),
// since New cannot add the bound to connections already made.
func New(ctx context.Context, pool *pgxpool.Pool) (*Store, error) {
	return newStore(ctx, pool, nil)
}

func newStore(ctx context.Context, pool *pgxpool.Pool, log *slog.Logger) (*Store, error) {
	if err := migrate(ctx, pool, log); err != nil {
		return nil, fmt.Errorf("pgstore: %w", err)
	}
	if log != nil {
		if err := reportHiddenUsernames(ctx, pool, log); err != nil { // username_fold.go
			return nil, err
		}
	}
	return &Store{pool: pool}, nil
}

// Close closes the connections Open made. It waits for queries in flight.
func (s *Store) Close() {
	s.metrics.unregister()
	s.cache.close()
	if s.ownsPool {
		s.pool.Close()
	}
}

// Ping checks that the database answers, for health checks.
func (s *Store) Ping(ctx context.Context) error { return s.pool.Ping(ctx) }

// migrate applies the migrations the database lacks, all in one
// transaction under an advisory lock (internal/pgmigrate): a node that
// starts while another migrates waits, then finds the work done. A failed
// migration leaves the database as it was.
func migrate(ctx context.Context, pool *pgxpool.Pool, log *slog.Logger) error {
	ms, err := pgmigrate.Load(migrationFiles)
	if err != nil {
		return err
	}
	return applyMigrations(ctx, pool, log, ms)
}

// applyMigrations applies those of ms the database lacks (tests apply a
// prefix, to make a database of an older version), each with its
// migrationHooks entry.
func applyMigrations(ctx context.Context, pool *pgxpool.Pool, log *slog.Logger, ms []pgmigrate.Migration) error {
	ran, err := pgmigrate.Apply(ctx, pool, ms, pgmigrate.Options{
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
	err := s.pool.QueryRow(ctx, "SELECT coalesce(max(version), 0) FROM schema_migrations").Scan(&v)
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
