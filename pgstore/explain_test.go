package pgstore

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/procurekit/procure/datafile"
	"github.com/procurekit/procure/internal/pgtest"
	"github.com/procurekit/procure/paging"
	"github.com/procurekit/procure/supplier"
)

// The list queries, and the supplier cache's sync, are served by indexes:
// at 100,000 suppliers (after the import's ANALYZE) no plan reads a
// supplier table sequentially, whether
// PostgreSQL plans for the actual values or a generic plan for any value
// (what a prepared statement uses after a few executions).
func TestListQueriesUseIndexes(t *testing.T) {
	if testing.Short() {
		t.Skip("imports 100,000 suppliers")
	}
	ctx := context.Background()
	dsn := pgtest.NewDatabase(t)
	s, err := Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const n = 100_000
	c := syntheticCommunity("big", n)
	if err := s.Import(ctx, &datafile.File{Communities: []datafile.Community{c, syntheticCommunity("small", 50)}}); err != nil {
		t.Fatal(err)
	}

	// As on a server that has been up a while: autovacuum has set the
	// visibility map (index-only scans) and the statistics.
	// (CHECKPOINT first: the test server commits asynchronously, and
	// VACUUM marks no page all-visible before its rows' WAL is flushed.)
	for _, sql := range []string{"CHECKPOINT", "VACUUM (ANALYZE)"} {
		if _, err := s.pool.Exec(ctx, sql); err != nil {
			t.Fatal(err)
		}
	}
	// A poll's watermark: about the last tenth of the suppliers.
	dates := make([]time.Time, 0, n)
	for i := range c.Suppliers {
		dates = append(dates, c.Suppliers[i].ModifiedDate)
	}
	since := nth(dates, n*9/10)
	var cases []supplier.ListQuery
	for _, sort := range []paging.Sort{{Field: "name"}, {Field: "name", Desc: true}, {Field: "createdDate"},
		{Field: "createdDate", Desc: true}, {Field: "modifiedDate"}, {Field: "modifiedDate", Desc: true}} {
		for _, page := range []int{0, 1000} {
			r := paging.Request{Page: page, Size: 20, Sort: sort}
			cases = append(cases,
				supplier.ListQuery{Page: r},
				supplier.ListQuery{Page: r, Query: "tor"},
				supplier.ListQuery{Page: r, Query: "SUP-00012"},
				supplier.ListQuery{Page: r, ModifiedSince: since},
				supplier.ListQuery{Page: r, Query: "acme", ModifiedSince: since},
			)
		}
	}
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	for _, mode := range []string{"auto", "force_generic_plan"} {
		if _, err := conn.Exec(ctx, "SET plan_cache_mode = "+mode); err != nil {
			t.Fatal(err)
		}
		for _, q := range cases {
			count, page, err := listQueries("big", q)
			if err != nil {
				t.Fatal(err)
			}
			for _, st := range []query{count, page} {
				name := fmt.Sprintf("%s: query=%q since=%v %s page %d", mode, q.Query, !q.ModifiedSince.IsZero(), q.Page.Sort, q.Page.Page)
				if scans := seqScans(t, conn.Conn(), mode, st); len(scans) > 0 {
					t.Errorf("%s: sequential scan of %v in\n%s", name, scans, st.sql)
				}
			}
		}
	}
	// The supplier cache's sync, from a mark near the end (cache.go),
	// which forces custom plans. (The tombstones table is empty here: a
	// sequential scan is its cheapest plan.)
	if _, err := conn.Exec(ctx, "SET plan_cache_mode = force_custom_plan"); err != nil {
		t.Fatal(err)
	}
	for _, st := range syncQueries("big", nth(dates, n-10)) {
		scans := seqScans(t, conn.Conn(), "force_custom_plan", st)
		scans = slices.DeleteFunc(scans, func(rel string) bool { return rel == "supplier_tombstones" })
		if len(scans) > 0 {
			t.Errorf("sync: sequential scan of %v in\n%s", scans, st.sql)
		}
	}
}

// seqScans returns the supplier tables that the plan of st reads with a
// sequential scan.
func seqScans(tb testing.TB, conn *pgx.Conn, mode string, st query) []string {
	tb.Helper()
	ctx := context.Background()
	sql := "EXPLAIN (FORMAT JSON) " + st.sql
	if mode == "force_generic_plan" {
		// A prepared statement: EXPLAIN EXECUTE shows its generic plan.
		name := fmt.Sprintf("explain_%d", time.Now().UnixNano())
		if _, err := conn.Prepare(ctx, name, st.sql); err != nil {
			tb.Fatal(err)
		}
		defer conn.Deallocate(ctx, name)
		lits := make([]string, len(st.args))
		for i, a := range st.args {
			lits[i] = literal(tb, a)
		}
		sql = "EXPLAIN (FORMAT JSON) EXECUTE " + name + "(" + strings.Join(lits, ", ") + ")"
	}
	args := st.args
	if mode == "force_generic_plan" {
		args = nil
	}
	var plan []byte
	if err := conn.QueryRow(ctx, sql, args...).Scan(&plan); err != nil {
		tb.Fatalf("%s: %v", sql, err)
	}
	var doc []struct{ Plan map[string]any }
	if err := json.Unmarshal(plan, &doc); err != nil {
		tb.Fatal(err)
	}
	var found []string
	var walk func(node map[string]any)
	walk = func(node map[string]any) {
		if node["Node Type"] == "Seq Scan" {
			if rel, _ := node["Relation Name"].(string); rel != "communities" {
				found = append(found, rel)
			}
		}
		children, _ := node["Plans"].([]any)
		for _, c := range children {
			if m, ok := c.(map[string]any); ok {
				walk(m)
			}
		}
	}
	for _, d := range doc {
		walk(d.Plan)
	}
	return found
}

// literal renders an argument of the list queries as SQL.
func literal(tb testing.TB, v any) string {
	tb.Helper()
	switch v := v.(type) {
	case string:
		return "'" + strings.ReplaceAll(v, "'", "''") + "'"
	case int64, int32:
		return fmt.Sprint(v)
	case time.Time:
		return "'" + v.Format(time.RFC3339Nano) + "'"
	}
	tb.Fatalf("literal: unexpected %T", v)
	return ""
}
