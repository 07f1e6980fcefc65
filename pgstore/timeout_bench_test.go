package pgstore

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/procurekit/procure/internal/pgpool"
	"github.com/procurekit/procure/internal/pgtest"
)

// BenchmarkStatementTimeout compares ways of bounding one primary-key
// lookup by a statement timeout without session state (db.go), on one
// connection, directly and through PgBouncer in transaction mode, each in
// the exec mode internal/pgpool chooses there (bench/README.md "Session 8
// figures: PgBouncer and replicas"):
//
//   - none: the lookup alone, unbounded (the old session setting's cost);
//   - set_config: SELECT set_config('statement_timeout', ..., true) and the
//     lookup in one pipeline, one Sync: what the store does;
//   - begin-pipelined: BEGIN, SET LOCAL, the lookup and COMMIT in one
//     pipeline;
//   - begin-query: BEGIN and SET LOCAL as one simple query, then the lookup,
//     then COMMIT: three round trips (BeginTx with a BeginQuery);
//   - begin-separate: BEGIN, SET LOCAL, the lookup, COMMIT: four.
//
// Run it with
//
//	go test -run '^$' -bench BenchmarkStatementTimeout ./pgstore
func BenchmarkStatementTimeout(b *testing.B) {
	ctx := context.Background()
	pooled, direct := pgtest.NewPooledDatabase(b)
	setup, err := pgx.Connect(ctx, direct)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := setup.Exec(ctx, `CREATE TABLE t (id int PRIMARY KEY, name text);
		INSERT INTO t SELECT g, 'n' || g FROM generate_series(1, 100000) g; ANALYZE t`); err != nil {
		b.Fatal(err)
	}
	setup.Close(ctx)
	const lookup = `SELECT name FROM t WHERE id = $1`
	for _, target := range []struct{ name, dsn string }{{"direct", direct}, {"pgbouncer", pooled}} {
		cfg, _, err := pgpool.Config(ctx, target.dsn)
		if err != nil {
			b.Fatal(err)
		}
		conn, err := pgx.ConnectConfig(ctx, cfg.ConnConfig)
		if err != nil {
			b.Fatal(err)
		}
		var name string
		ways := []struct {
			name string
			call func(i int) error
		}{
			{"none", func(i int) error { return conn.QueryRow(ctx, lookup, i).Scan(&name) }},
			{"set_config", func(i int) error {
				bt := &pgx.Batch{}
				bt.Queue(setSQL("5000"))
				bt.Queue(lookup, i).QueryRow(func(r pgx.Row) error { return r.Scan(&name) })
				return conn.SendBatch(ctx, bt).Close()
			}},
			{"begin-pipelined", func(i int) error {
				bt := &pgx.Batch{}
				bt.Queue("BEGIN")
				bt.Queue(localSQL("5000"))
				bt.Queue(lookup, i).QueryRow(func(r pgx.Row) error { return r.Scan(&name) })
				bt.Queue("COMMIT")
				return conn.SendBatch(ctx, bt).Close()
			}},
			{"begin-query", func(i int) error {
				tx, err := conn.BeginTx(ctx, txOptions(pgx.TxOptions{}, "5000"))
				if err != nil {
					return err
				}
				if err := tx.QueryRow(ctx, lookup, i).Scan(&name); err != nil {
					return err
				}
				return tx.Commit(ctx)
			}},
			{"begin-separate", func(i int) error {
				tx, err := conn.Begin(ctx)
				if err != nil {
					return err
				}
				if _, err := tx.Exec(ctx, localSQL("5000")); err != nil {
					return err
				}
				if err := tx.QueryRow(ctx, lookup, i).Scan(&name); err != nil {
					return err
				}
				return tx.Commit(ctx)
			}},
		}
		for _, w := range ways {
			b.Run(target.name+"/"+w.name, func(b *testing.B) {
				i := 0
				for b.Loop() {
					i = i%100000 + 1
					if err := w.call(i); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
		conn.Close(ctx)
	}
}
