package pgstore

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// How the store runs its statements (docs: limits.md: every database call
// is bounded), so that it works the same on a direct connection and
// through a pooler in transaction mode (PgBouncer), which hands each
// transaction whichever server connection is free: the store keeps no
// session state outside a transaction.
//
// The statement timeout is therefore not a connection's setting (a
// startup parameter, which PgBouncer refuses, or a SET, which would leak
// to the pooler's other clients) but set for each transaction, in the
// same round trip as its first statement:
//
//   - a call outside a transaction (Query, QueryRow, Exec, or a batch
//     without BEGIN) is sent as a pipeline of
//     SELECT set_config('statement_timeout', N, true) and the statement(s),
//     ended by one Sync. PostgreSQL runs the statements up to a Sync as one
//     implicit transaction: the local setting holds for the statements
//     after it and ends with the Sync (each Execute restarts the timer
//     with the current value). set_config is used rather than SET LOCAL,
//     which does the same there but warns ("SET LOCAL can only be used in
//     transaction blocks") in every server log line it can;
//   - a batch that starts with BEGIN gets SET LOCAL statement_timeout = N
//     right after it;
//   - a transaction begun with Begin or BeginTx sends
//     "BEGIN ...; SET LOCAL statement_timeout = N" as one simple query.
//
// A statement of a call outside a transaction that needs more (a
// maintenance command, see maintenance) runs alone, under the server's
// own setting; inside a transaction the tracer lifts the bound for the
// rest of it with SET LOCAL (bulk loads, maintenance).

// db is one connection pool of the store and how its calls are bounded. It
// has the methods of *pgxpool.Pool that the store uses, so that the store's
// code reads as pgx code.
type db struct {
	pool *pgxpool.Pool
	// timeout is the statement timeout; 0 with set false leaves every
	// call to the server's setting (New: the caller configured the pool).
	timeout time.Duration
	set     bool
	// read marks the calls as reads (readCall): on the primary's pool, a
	// read that a replica could not serve, which is no write of this
	// node (replica.go).
	read bool
}

// mark marks ctx as the context of a read when d is for reads.
func (d *db) mark(ctx context.Context) context.Context {
	if d.read {
		return context.WithValue(ctx, readCall{}, true)
	}
	return ctx
}

// limit is the bound of one call: ms, the statement timeout in
// milliseconds as set_config takes it ("" sets none), and d, the same as
// a duration (0: none).
type limit struct {
	ms string
	d  time.Duration
}

// limit returns the bound of a call under ctx.
func (d *db) limit(ctx context.Context) limit {
	switch {
	case !d.set:
		return limit{}
	case d.timeout == 0 || ctx.Value(noStatementTimeout{}) != nil:
		return limit{ms: "0"}
	}
	return limit{ms: strconv.FormatInt(max(d.timeout.Milliseconds(), 1), 10), d: d.timeout}
}

// backstop bounds a call of n statements outside a transaction by its
// context too. pgx describes a statement it has not run on the connection
// before (QueryExecModeCacheDescribe) in a message sequence of its own,
// ahead of the set_config, where the server's own setting applies: a
// describe that waits for a lock (a migration's) would wait without end.
// The deadline, a second past n+1 statement timeouts, ends such a wait
// (the connection is closed; the call's error matches
// context.DeadlineExceeded, a 503) and never a call the server's bound
// would let finish.
func (l limit) backstop(ctx context.Context, n int) (context.Context, context.CancelFunc) {
	if l.d == 0 {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, time.Duration(n+1)*l.d+time.Second)
}

// setSQL and localSQL set the statement timeout for the rest of the
// (implicit or explicit) transaction.
func setSQL(ms string) string   { return "SELECT set_config('statement_timeout', '" + ms + "', true)" }
func localSQL(ms string) string { return "SET LOCAL statement_timeout = " + ms }

// sender is a pool or an acquired connection.
type sender interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
}

// boundQuery runs sql on s outside a transaction, under l.
func boundQuery(ctx context.Context, s sender, l limit, sql string, args ...any) (pgx.Rows, error) {
	if l.ms == "" || maintenance(sql) {
		return s.Query(ctx, sql, args...)
	}
	ctx, cancel := l.backstop(ctx, 2)
	b := &pgx.Batch{}
	b.Queue(setSQL(l.ms))
	b.Queue(sql, args...)
	br := s.SendBatch(ctx, b)
	if _, err := br.Exec(); err != nil {
		_ = br.Close()
		cancel()
		return nil, err
	}
	rows, err := br.Query()
	if err != nil {
		if rows != nil {
			rows.Close()
		}
		_ = br.Close()
		cancel()
		return nil, err
	}
	return &batchRows{Rows: rows, br: br, cancel: cancel}, nil
}

// boundExec runs sql on s outside a transaction, under l. Without
// arguments sql may hold several statements (pgx then uses the simple
// protocol): the bound is set by a first statement of the same query
// string, which runs as one implicit transaction.
func boundExec(ctx context.Context, s sender, l limit, sql string, args ...any) (pgconn.CommandTag, error) {
	if l.ms == "" || maintenance(sql) {
		return s.Exec(ctx, sql, args...)
	}
	ctx, cancel := l.backstop(ctx, 2)
	defer cancel()
	if len(args) == 0 {
		return s.Exec(ctx, setSQL(l.ms)+";\n"+sql)
	}
	b := &pgx.Batch{}
	b.Queue(setSQL(l.ms))
	b.Queue(sql, args...)
	br := s.SendBatch(ctx, b)
	_, err := br.Exec()
	var tag pgconn.CommandTag
	if err == nil {
		tag, err = br.Exec()
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	return tag, err
}

// boundBatch sends b on s outside a transaction, under l.
func boundBatch(ctx context.Context, s sender, l limit, b *pgx.Batch) pgx.BatchResults {
	if l.ms == "" || len(b.QueuedQueries) == 0 {
		return s.SendBatch(ctx, b)
	}
	ctx, cancel := l.backstop(ctx, len(b.QueuedQueries))
	set := (&pgx.Batch{}).Queue(setSQL(l.ms))
	at := 0
	if begins(b.QueuedQueries[0].SQL) {
		set.SQL, at = localSQL(l.ms), 1
	}
	b.QueuedQueries = append(b.QueuedQueries[:at], append([]*pgx.QueuedQuery{set}, b.QueuedQueries[at:]...)...)
	return &skipResults{BatchResults: s.SendBatch(ctx, b), skip: at, cancel: cancel}
}

// begins reports whether sql starts a transaction block.
func begins(sql string) bool {
	sql = strings.TrimSpace(sql)
	for _, w := range [...]string{"BEGIN", "START TRANSACTION"} {
		if len(sql) >= len(w) && strings.EqualFold(sql[:len(w)], w) {
			return true
		}
	}
	return false
}

// txOptions adds the bound ms to a transaction's BEGIN, which pgx sends as
// a simple query: one round trip for both.
func txOptions(o pgx.TxOptions, ms string) pgx.TxOptions {
	if ms == "" {
		return o
	}
	begin := o.BeginQuery
	if begin == "" {
		begin = "BEGIN"
		if o.IsoLevel != "" {
			begin += " ISOLATION LEVEL " + string(o.IsoLevel)
		}
		if o.AccessMode != "" {
			begin += " " + string(o.AccessMode)
		}
		if o.DeferrableMode != "" {
			begin += " " + string(o.DeferrableMode)
		}
	}
	o.BeginQuery = begin + "; " + localSQL(ms)
	return o
}

// Query, QueryRow, Exec, SendBatch, Begin and BeginTx are those of the
// pool, each call bounded as described above.

func (d *db) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	return boundQuery(d.mark(ctx), d.pool, d.limit(ctx), sql, args...)
}

func (d *db) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	rows, err := d.Query(ctx, sql, args...)
	return &row{rows, err}
}

func (d *db) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	return boundExec(d.mark(ctx), d.pool, d.limit(ctx), sql, args...)
}

func (d *db) SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	return boundBatch(d.mark(ctx), d.pool, d.limit(ctx), b)
}

func (d *db) Begin(ctx context.Context) (pgx.Tx, error) {
	return d.BeginTx(ctx, pgx.TxOptions{})
}

func (d *db) BeginTx(ctx context.Context, o pgx.TxOptions) (pgx.Tx, error) {
	return d.pool.BeginTx(d.mark(ctx), txOptions(o, d.limit(ctx).ms))
}

// CopyFrom is the pool's: a bulk load runs without the bound (outside a
// transaction no bound is set; inside one the tracer lifts it).
func (d *db) CopyFrom(ctx context.Context, table pgx.Identifier, columns []string, src pgx.CopyFromSource) (int64, error) {
	return d.pool.CopyFrom(d.mark(ctx), table, columns, src)
}

// Acquire returns a connection of the pool whose calls are bounded alike;
// Release returns it.
func (d *db) Acquire(ctx context.Context) (*conn, error) {
	c, err := d.pool.Acquire(d.mark(ctx))
	if err != nil {
		return nil, err
	}
	return &conn{pc: c, l: d.limit(ctx)}, nil
}

// conn is an acquired connection. Calls outside a transaction are bounded
// as the pool's are; inside one (begun by BeginTx or by a batch's BEGIN)
// they run as they are, under the transaction's bound.
type conn struct {
	pc *pgxpool.Conn
	l  limit
}

// Release returns the connection to the pool (which closes it instead
// when it is still in a transaction).
func (c *conn) Release() { c.pc.Release() }

// Conn is the underlying connection.
func (c *conn) Conn() *pgx.Conn { return c.pc.Conn() }

// endTx rolls back the transaction c is in, if any: after a batch that
// failed, whose COMMIT did not run (runWrite, runOptimistic).
func (c *conn) endTx(ctx context.Context) {
	if pc := c.pc.Conn().PgConn(); !pc.IsClosed() && pc.TxStatus() != 'I' {
		_, _ = pc.Exec(ctx, "ROLLBACK").ReadAll()
	}
}

// limit is the bound of a call: none inside a transaction.
func (c *conn) limit() limit {
	if c.pc.Conn().PgConn().TxStatus() != 'I' {
		return limit{}
	}
	return c.l
}

func (c *conn) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	return boundQuery(ctx, c.pc, c.limit(), sql, args...)
}

func (c *conn) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	rows, err := c.Query(ctx, sql, args...)
	return &row{rows, err}
}

func (c *conn) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	return boundExec(ctx, c.pc, c.limit(), sql, args...)
}

func (c *conn) SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	return boundBatch(ctx, c.pc, c.limit(), b)
}

func (c *conn) Begin(ctx context.Context) (pgx.Tx, error) {
	return c.BeginTx(ctx, pgx.TxOptions{})
}

func (c *conn) BeginTx(ctx context.Context, o pgx.TxOptions) (pgx.Tx, error) {
	return c.pc.BeginTx(ctx, txOptions(o, c.l.ms))
}

// batchRows are the rows of a statement sent in a batch after the
// timeout's set_config: the batch ends (and the pool's connection is
// released) when the rows are read or closed, and an error of its end
// (the implicit transaction's commit) is the rows' error.
type batchRows struct {
	pgx.Rows
	br     pgx.BatchResults
	err    error
	cancel context.CancelFunc // the backstop's
}

func (r *batchRows) Next() bool {
	if r.Rows.Next() {
		return true
	}
	r.Close()
	return false
}

func (r *batchRows) Close() {
	if r.br == nil {
		return
	}
	r.Rows.Close()
	r.err = r.br.Close()
	r.br = nil
	r.cancel()
}

func (r *batchRows) Err() error {
	if err := r.Rows.Err(); err != nil {
		return err
	}
	return r.err
}

// row is pgx's QueryRow over Query: Scan reads the first row and closes
// the rows.
type row struct {
	rows pgx.Rows
	err  error
}

func (r *row) Scan(dest ...any) error {
	if r.err != nil {
		return r.err
	}
	defer r.rows.Close()
	if !r.rows.Next() {
		if err := r.rows.Err(); err != nil {
			return err
		}
		return pgx.ErrNoRows
	}
	if err := r.rows.Scan(dest...); err != nil {
		return err
	}
	r.rows.Close()
	return r.rows.Err()
}

// skipResults hides the result of the statement boundBatch inserted, so
// that a caller reading results one by one sees its own statements'. (The
// callbacks of Close read the inserted one as a statement without a
// callback.)
type skipResults struct {
	pgx.BatchResults
	skip, next int
	cancel     context.CancelFunc // the backstop's
}

func (r *skipResults) Close() error {
	defer r.cancel()
	return r.BatchResults.Close()
}

// pass reads the inserted statement's result when it is next. Its error,
// if any, ends the batch and is what the following results return.
func (r *skipResults) pass() {
	if r.next == r.skip {
		_, _ = r.BatchResults.Exec()
	}
	r.next++
}

func (r *skipResults) Exec() (pgconn.CommandTag, error) {
	r.pass()
	return r.BatchResults.Exec()
}

func (r *skipResults) Query() (pgx.Rows, error) {
	r.pass()
	return r.BatchResults.Query()
}

func (r *skipResults) QueryRow() pgx.Row {
	r.pass()
	return r.BatchResults.QueryRow()
}
