package pgstore

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/procurekit/procure/datafile"
	"github.com/procurekit/procure/internal/pgtest"
	"github.com/procurekit/procure/paging"
	"github.com/procurekit/procure/supplier"
	"github.com/procurekit/procure/user"
)

// BenchmarkExecModes measures the store's calls (reads from the database:
// no cache) in each of pgx's query exec modes, directly and through
// PgBouncer in transaction mode, on a community of 20,000 suppliers (or
// PGSTORE_BENCH_SUPPLIERS), one call at a time: what choosing a mode for
// pooling costs (bench/README.md "Session 8 figures: PgBouncer and
// replicas"). QueryExecModeCacheStatement is measured directly only:
// through PgBouncer it fails once two clients share a server connection.
// "Unbounded" is the default mode on a pool given to New, which sets no
// statement timeout: the cost of setting it per transaction is the
// difference.
//
//	go test -run '^$' -bench BenchmarkExecModes ./pgstore
func BenchmarkExecModes(b *testing.B) {
	ctx := context.Background()
	n := 20_000
	if testing.Short() {
		n = 2_000
	}
	if v, err := strconv.Atoi(os.Getenv("PGSTORE_BENCH_SUPPLIERS")); err == nil && v >= 1000 {
		n = v
	}
	c := syntheticCommunity("bench", n)
	c.Users = []user.User{{ID: "bench-user", Username: "bench.user", Enabled: true, Roles: user.Codes("BUYER")}}
	pooled, direct := pgtest.NewPooledDatabase(b)
	{
		s, err := Open(ctx, direct)
		if err != nil {
			b.Fatal(err)
		}
		if err := s.Import(ctx, &datafile.File{Communities: []datafile.Community{c}}); err != nil {
			b.Fatal(err)
		}
		for _, sql := range []string{"CHECKPOINT", "VACUUM (ANALYZE)"} {
			if _, err := s.pool.Exec(ctx, sql); err != nil {
				b.Fatal(err)
			}
		}
		s.Close()
	}
	type target struct{ name, dsn string }
	var targets []target
	for _, mode := range []string{"cache_statement", "cache_describe", "describe_exec", "exec", "simple_protocol"} {
		targets = append(targets, target{"direct/" + mode, direct + "&default_query_exec_mode=" + mode})
		if mode != "cache_statement" {
			targets = append(targets, target{"pgbouncer/" + mode, pooled + "&default_query_exec_mode=" + mode})
		}
	}
	for _, tg := range targets {
		s, err := Open(ctx, tg.dsn, WithMaxConns(2))
		if err != nil {
			b.Fatal(err)
		}
		execModeCases(b, tg.name, s, c)
		s.Close()
	}
	for _, tg := range []target{{"direct/unbounded", direct}, {"pgbouncer/unbounded", pooled + "&default_query_exec_mode=cache_describe"}} {
		cfg, err := pgxpool.ParseConfig(tg.dsn)
		if err != nil {
			b.Fatal(err)
		}
		pool, err := pgxpool.NewWithConfig(ctx, cfg)
		if err != nil {
			b.Fatal(err)
		}
		s, err := New(ctx, pool)
		if err != nil {
			b.Fatal(err)
		}
		execModeCases(b, tg.name, s, c)
		pool.Close()
	}
}

// execModeCases runs the calls of BenchmarkExecModes on s.
func execModeCases(b *testing.B, prefix string, s *Store, c datafile.Community) {
	ctx := context.Background()
	n := len(c.Suppliers)
	b.Run(prefix+"/ListPage0", func(b *testing.B) {
		for b.Loop() {
			if _, err := s.ListSuppliers(ctx, "bench", supplier.ListQuery{Page: paging.Request{Size: 20, Sort: paging.Sort{Field: "name"}}}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run(prefix+"/Supplier", func(b *testing.B) {
		i := 0
		for b.Loop() {
			if _, err := s.Supplier(ctx, "bench", c.Suppliers[i%n].ID); err != nil {
				b.Fatal(err)
			}
			i += 7919
		}
	})
	b.Run(prefix+"/UserByUsername", func(b *testing.B) {
		for b.Loop() {
			if _, err := s.UserByUsername(ctx, "bench", "bench.user"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run(prefix+"/UpdateUser", func(b *testing.B) {
		i := 0
		for b.Loop() {
			i++
			if _, err := s.UpdateUser(ctx, "bench", "bench-user", func(u *user.User) error {
				u.FirstName = "Mode " + strconv.Itoa(i)
				return nil
			}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run(prefix+"/Contacts", func(b *testing.B) {
		i := 0
		for b.Loop() {
			if _, err := s.ListContacts(ctx, "bench", c.Suppliers[i%n].ID, paging.Request{Size: 20}); err != nil {
				b.Fatal(err)
			}
			i += 7919
		}
	})
	b.Run(prefix+"/PutSupplier", func(b *testing.B) {
		var ds []time.Duration
		i := 0
		for b.Loop() {
			r := c.Suppliers[(i*7919)%n]
			r.Contacts, r.RemittanceAddresses = nil, nil
			r.Name = supplier.NewText("Mode " + strconv.Itoa(i))
			start := time.Now()
			if _, err := s.PutSupplier(ctx, "bench", r); err != nil {
				b.Fatal(err)
			}
			ds = append(ds, time.Since(start))
			i++
		}
		reportPercentiles(b, ds)
	})
}
