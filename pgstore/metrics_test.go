package pgstore_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/shopspring/decimal"

	"github.com/procurekit/procure/auth"
	"github.com/procurekit/procure/internal/metricstest"
	"github.com/procurekit/procure/paging"
	"github.com/procurekit/procure/pgstore"
	"github.com/procurekit/procure/supplier"
)

// WithMetrics: every family of the store is scraped and parsed, with
// the labels and values that the work done gives - writes by method, the
// pool, the supplier cache of each community, the credential cache's
// hits and misses, the imports - and Close unregisters them, so that a
// store opened again registers anew.
func TestStoreMetrics(t *testing.T) {
	ctx := context.Background()
	_, dsn := openStore(t, fixture())
	reg := prometheus.NewRegistry()
	s, err := pgstore.Open(ctx, dsn, pgstore.WithSupplierCache(), pgstore.WithCredentialCache(), pgstore.WithMetrics(reg))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := pgstore.Open(ctx, dsn, pgstore.WithMetrics(reg)); !errors.As(err, new(prometheus.AlreadyRegisteredError)) {
		t.Errorf("a second store on the registry: %v; want prometheus.AlreadyRegisteredError", err)
	}
	waitReady(t, s, "ready", isReady) // the cache has loaded both communities

	// Writes.
	if err := s.PutBudget(ctx, "c1", "6100-100", decimal.RequireFromString("10")); err != nil {
		t.Fatal(err)
	}
	if err := s.PutBudget(ctx, "c1", "6100-200", decimal.RequireFromString("20")); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteSupplier(ctx, "c1", id(2)); err != nil {
		t.Fatal(err)
	}
	// Two lookups of one token: a miss, then a hit.
	for range 2 {
		if _, err := s.TokenByHash(ctx, auth.HashSecret("demo-token-c1")); err != nil {
			t.Fatal(err)
		}
	}
	// An import that succeeds and one that fails.
	var file bytes.Buffer
	if err := json.NewEncoder(&file).Encode(fixture()); err != nil {
		t.Fatal(err)
	}
	size := int64(file.Len())
	if _, err := s.ImportStreamWith(ctx, bytes.NewReader(file.Bytes()), pgstore.ImportOptions{Size: size}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ImportStream(ctx, bytes.NewReader([]byte(`{"communities": [`))); err == nil {
		t.Fatal("a truncated file imported")
	}
	// A read from the cache once the import's reload is done.
	waitCached(t, s, "c1")
	waitCached(t, s, "c2")

	fams := metricstest.Gather(t, reg)
	expect := func(name string, want float64, labels ...string) {
		t.Helper()
		got, ok := fams.Value(t, name, labels...)
		if !ok || got != want {
			t.Errorf("%s%v = %v (present %v); want %v", name, labels, got, ok, want)
		}
	}
	atLeast := func(name string, min float64, labels ...string) {
		t.Helper()
		got, ok := fams.Value(t, name, labels...)
		if !ok || got < min {
			t.Errorf("%s%v = %v (present %v); want at least %v", name, labels, got, ok, min)
		}
	}
	expect("procure_store_write_duration_seconds", 2, "op", "PutBudget")
	expect("procure_store_write_duration_seconds", 1, "op", "DeleteSupplier")
	if ops := fams.LabelValues("procure_store_write_duration_seconds", "op"); len(ops) != 2 {
		t.Errorf("write ops %v; want PutBudget and DeleteSupplier only", ops)
	}

	for _, state := range []string{"acquired", "idle", "constructing"} {
		atLeast("procure_pg_pool_connections", 0, "state", state)
	}
	atLeast("procure_pg_pool_max_connections", 1)
	atLeast("procure_pg_pool_acquires_total", 5)
	atLeast("procure_pg_pool_empty_acquires_total", 0)
	atLeast("procure_pg_pool_acquire_wait_seconds_total", 0)
	atLeast("procure_pg_pool_canceled_acquires_total", 0)

	for _, c := range []string{"c1", "c2"} {
		expect("procure_supplier_cache_loaded", 1, "community", c)
		atLeast("procure_supplier_cache_age_seconds", 0, "community", c)
		atLeast("procure_supplier_cache_sync_lag_seconds", 0, "community", c)
		atLeast("procure_supplier_cache_loading", 0, "community", c) // a reload after the import may run
	}
	expect("procure_supplier_cache_read_syncs_total", float64(pgstore.CacheReadSyncs(s))) // no read since the gather
	// c2's latest load (after the import) read all of its suppliers.
	want := float64(len(fixture().Communities[1].Suppliers))
	expect("procure_supplier_cache_load_read_suppliers", want, "community", "c2")
	expect("procure_supplier_cache_load_expected_suppliers", want, "community", "c2")

	expect("procure_pg_supplier_puts_total", 0, "path", "optimistic") // no put above
	expect("procure_pg_supplier_puts_total", 0, "path", "cache")
	expect("procure_pg_supplier_puts_total", 0, "path", "redone")
	expect("procure_pg_supplier_puts_grouped_total", 0)
	expect("procure_credential_cache_lookups_total", 1, "result", "hit")
	expect("procure_credential_cache_lookups_total", 1, "result", "miss")

	expect("procure_import_running", 0)
	expect("procure_import_read_bytes", 17) // the truncated file, the latest
	expect("procure_import_size_bytes", 0)
	atLeast("procure_import_last_start_timestamp_seconds", float64(time.Now().Add(-time.Hour).Unix()))
	expect("procure_imports_total", 1, "result", "ok")
	expect("procure_imports_total", 1, "result", "failed")

	s.Close()
	if fams := metricstest.Gather(t, reg); len(fams) != 0 {
		t.Errorf("after Close the registry still has %d families", len(fams))
	}
	again, err := pgstore.Open(ctx, dsn, pgstore.WithMetrics(reg))
	if err != nil {
		t.Fatalf("opening again on the registry: %v", err)
	}
	again.Close()
}

// waitCached waits until a list of the community is served from s's
// cache.
func waitCached(tb testing.TB, s *pgstore.Store, community string) {
	tb.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		before := pgstore.CacheServed(s)
		if _, err := s.ListSuppliers(context.Background(), community, supplier.ListQuery{Page: paging.Request{Size: 1}}); err != nil {
			tb.Fatal(err)
		}
		if pgstore.CacheServed(s) > before {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("%s is never served from the cache", community)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
