package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/procurekit/procure/internal/metricstest"
	"github.com/procurekit/procure/internal/pgtest"
)

const metricsTestToken = testAdminToken

// On PostgreSQL with the admin listener, /metrics answers every family
// of docs/operations.md, parsed as a scraper parses it, with the label
// values the traffic driven before gives.
func TestMetricsOnPostgres(t *testing.T) {
	t.Setenv(adminTokenEnv, metricsTestToken)
	dsn := pgtest.NewDatabase(t)
	a := startAdmin(t, "-postgres", dsn)
	waitProbe(t, a.base+"/readyz", 200)
	bearer := []string{"Authorization", "Bearer " + demoToken}
	for range 3 {
		expectStatus(t, a.base+"/public/community/suppliers?size=2", http.StatusOK, bearer...)
	}
	expectStatus(t, a.base+"/public/community/suppliers", http.StatusUnauthorized, "Authorization", "Bearer nope")
	expectStatus(t, a.base+"/v1/users/username/jsmith", http.StatusOK, "Service-Account-ID", demoAccount, "Service-API-Key", demoKey)
	if st, body := a.adminDo(t, http.MethodPut, "/communities/acme-au/budgets/6100-999", `{"budget": "12.50"}`); st != http.StatusOK {
		t.Fatalf("budget put: %d %s", st, body)
	}
	const metricsSupplier = "7b1f2a9e-5c3d-4e8f-9a0b-1c2d3e4f5a6b"
	if st, body := a.adminDo(t, http.MethodPut, "/communities/acme-au/suppliers/"+metricsSupplier,
		`{"id": "`+metricsSupplier+`", "name": "Metrics Ltd", "profileType": "COMPANY"}`); st != http.StatusOK {
		t.Fatalf("supplier put: %d %s", st, body)
	}

	fams := metricstest.Scrape(t, a.admin+"/metrics", "Authorization", "Bearer "+metricsTestToken)
	families := []string{
		"procure_http_request_duration_seconds",
		"procure_http_requests_in_flight",
		"procure_store_write_duration_seconds",
		"procure_pg_pool_connections",
		"procure_pg_pool_max_connections",
		"procure_pg_pool_acquires_total",
		"procure_pg_pool_empty_acquires_total",
		"procure_pg_pool_acquire_wait_seconds_total",
		"procure_pg_pool_canceled_acquires_total",
		"procure_supplier_cache_loaded",
		"procure_supplier_cache_age_seconds",
		"procure_supplier_cache_sync_lag_seconds",
		"procure_supplier_cache_load_read_suppliers",
		"procure_supplier_cache_load_expected_suppliers",
		"procure_supplier_cache_loading",
		"procure_supplier_cache_read_syncs_total",
		"procure_credential_cache_lookups_total",
		"procure_pg_supplier_puts_total",
		"procure_pg_supplier_puts_grouped_total",
		"procure_import_running",
		"procure_import_read_bytes",
		"procure_import_size_bytes",
		"procure_import_last_start_timestamp_seconds",
		"procure_imports_total",
		"go_goroutines",
		"go_gc_duration_seconds",
		"go_memstats_heap_alloc_bytes",
		"process_cpu_seconds_total",
		"process_resident_memory_bytes",
		"process_open_fds",
	}
	for _, name := range families {
		if len(fams.Samples(name)) == 0 {
			t.Errorf("no %s in the scrape", name)
		}
	}
	// Every procure_ family is one of those above: the list is the
	// whole set (and docs/operations.md lists the same).
	for name := range fams {
		if strings.HasPrefix(name, "procure_") && !contains(families, name) {
			t.Errorf("family %s is not in the test's list (nor, probably, in docs/operations.md)", name)
		}
	}

	type labels = []string
	checks := []struct {
		name   string
		labels labels
		min    float64
	}{
		{"procure_http_request_duration_seconds", labels{"api", "suppliers", "route", "GET /public/community/suppliers", "status_class", "2xx"}, 3},
		{"procure_http_request_duration_seconds", labels{"api", "suppliers", "route", "GET /public/community/suppliers", "status_class", "4xx"}, 1},
		{"procure_http_request_duration_seconds", labels{"api", "users", "route", "GET /v1/users/username/{username}", "status_class", "2xx"}, 1},
		{"procure_http_request_duration_seconds", labels{"api", "admin", "route", "PUT /admin/v1/communities/{c}/budgets/{account}", "status_class", "2xx"}, 1},
		{"procure_http_request_duration_seconds", labels{"api", "health", "route", "GET /readyz", "status_class", "2xx"}, 1},
		{"procure_http_requests_in_flight", nil, 1}, // the scrape itself
		{"procure_store_write_duration_seconds", labels{"op", "PutBudget"}, 1},
		{"procure_supplier_cache_loaded", labels{"community", "acme-au"}, 1},
		{"procure_supplier_cache_loaded", labels{"community", "globex-us"}, 1},
		{"procure_supplier_cache_load_expected_suppliers", labels{"community", "acme-au"}, 1},
		{"procure_pg_supplier_puts_total", labels{"path", "optimistic"}, 0},
		{"procure_pg_supplier_puts_total", labels{"path", "cache"}, 1}, // the supplier put: the cache serves acme-au once ready
		{"procure_pg_supplier_puts_total", labels{"path", "redone"}, 0},
		{"procure_pg_supplier_puts_grouped_total", nil, 0}, // one put: alone
		{"procure_credential_cache_lookups_total", labels{"result", "miss"}, 1},
		{"procure_credential_cache_lookups_total", labels{"result", "hit"}, 1},
		{"procure_imports_total", labels{"result", "ok"}, 1}, // the demo data at start
		{"procure_import_size_bytes", nil, float64(len(demoData))},
		{"procure_import_read_bytes", nil, float64(len(demoData))},
	}
	for _, c := range checks {
		got, ok := fams.Value(t, c.name, c.labels...)
		if !ok || got < c.min {
			t.Errorf("%s%v = %v (present %v); want at least %v", c.name, c.labels, got, ok, c.min)
		}
	}
	// The server's own pool size: the test's URL names none (storeConns).
	if got, ok := fams.Value(t, "procure_pg_pool_max_connections"); !ok || got != float64(storeConns()) {
		t.Errorf("procure_pg_pool_max_connections = %v (present %v); want %d", got, ok, storeConns())
	}
	if got := fams.LabelValues("procure_http_request_duration_seconds", "api"); !contains(got, "suppliers") || !contains(got, "users") || !contains(got, "admin") || !contains(got, "health") {
		t.Errorf("api labels %v", got)
	}

	// The start-up import of the demo data is logged with the file, the
	// counts and the duration in milliseconds.
	var done map[string]any
	a.logLine(t, "import done line", func(line string) bool {
		var rec map[string]any // a fresh map: Unmarshal merges into a used one
		if json.Unmarshal([]byte(line), &rec) != nil || rec["msg"] != "import done" {
			return false
		}
		done = rec
		return true
	})
	if done["file"] != "built-in demo.json" || done["communities"] != float64(2) || done["suppliers"] == nil || done["duration_ms"] == nil {
		t.Errorf("the start-up import's log line: %v; want file, counts and duration_ms", done)
	}
}

// In memory, /metrics has the request families, the runtime's, and
// memstore's write latency and imports (the pool and cache families are
// PostgreSQL's alone).
func TestMetricsInMemory(t *testing.T) {
	t.Setenv(adminTokenEnv, metricsTestToken)
	a := startAdmin(t)
	waitProbe(t, a.base+"/readyz", 200)
	for _, budget := range []string{"12.50", "13.00"} {
		if st, body := a.adminDo(t, http.MethodPut, "/communities/acme-au/budgets/6100-999", `{"budget": "`+budget+`"}`); st != http.StatusOK {
			t.Fatalf("budget put: %d %s", st, body)
		}
	}
	fams := metricstest.Scrape(t, a.admin+"/metrics", "Authorization", "Bearer "+metricsTestToken)
	if got, ok := fams.Value(t, "procure_store_write_duration_seconds", "op", "PutBudget"); !ok || got != 2 {
		t.Errorf("procure_store_write_duration_seconds{op=PutBudget} = %v (present %v); want 2", got, ok)
	}
	for _, name := range []string{"procure_http_request_duration_seconds", "procure_http_requests_in_flight", "procure_import_running",
		"procure_import_read_bytes", "procure_import_size_bytes", "procure_import_last_start_timestamp_seconds", "procure_imports_total",
		"go_goroutines", "process_cpu_seconds_total"} {
		if len(fams.Samples(name)) == 0 {
			t.Errorf("no %s in the scrape", name)
		}
	}
	for name := range fams {
		if strings.HasPrefix(name, "procure_pg_") || strings.HasPrefix(name, "procure_supplier_cache_") {
			t.Errorf("family %s in memory", name)
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// /metrics and the profiles need the admin token; -metrics-open serves
// /metrics without it, never the profiles. The profiles are
// net/http/pprof's, a CPU profile included (it records past nothing of
// the write timeout's).
func TestMetricsAndProfilesNeedTheToken(t *testing.T) {
	t.Setenv(adminTokenEnv, metricsTestToken)
	token := []string{"Authorization", "Bearer " + metricsTestToken}
	for _, open := range []bool{false, true} {
		var args []string
		if open {
			args = append(args, "-metrics-open")
		}
		a := startAdmin(t, args...)
		wantMetrics := http.StatusUnauthorized
		if open {
			wantMetrics = http.StatusOK
		}
		if st, body := a.do(t, http.MethodGet, a.admin+"/metrics", ""); st != wantMetrics {
			t.Errorf("open=%v: /metrics without the token: %d %s; want %d", open, st, body, wantMetrics)
		}
		if st, _ := a.do(t, http.MethodGet, a.admin+"/metrics", "", "Authorization", "Bearer wrong-token-0123456789"); !open && st != http.StatusUnauthorized {
			t.Errorf("/metrics with a wrong token: %d; want 401", st)
		}
		metricstest.Scrape(t, a.admin+"/metrics", token...)
		if st, _ := a.do(t, http.MethodGet, a.base+"/metrics", "", token...); st != http.StatusNotFound {
			t.Errorf("/metrics on the public listener: %d; want 404", st)
		}
		for _, path := range []string{"/debug/pprof/", "/debug/pprof/heap", "/debug/pprof/goroutine?debug=1", "/debug/pprof/cmdline", "/debug/pprof/symbol", "/debug/pprof/profile?seconds=1", "/debug/pprof/trace?seconds=1"} {
			if st, body := a.do(t, http.MethodGet, a.admin+path, ""); st != http.StatusUnauthorized {
				t.Errorf("open=%v: %s without the token: %d %.200s; want 401", open, path, st, body)
			}
			if st, _ := a.do(t, http.MethodGet, a.base+path, "", token...); st != http.StatusNotFound {
				t.Errorf("%s on the public listener: %d; want 404", path, st)
			}
		}
		if open {
			continue // the profiles served once is enough
		}
		for path, want := range map[string]string{
			"/debug/pprof/":                  "Types of profiles available",
			"/debug/pprof/goroutine?debug=1": "goroutine profile:",
			"/debug/pprof/heap":              "", // a gzipped protobuf
			"/debug/pprof/profile?seconds=1": "",
		} {
			st, body := a.do(t, http.MethodGet, a.admin+path, "", token...)
			if st != http.StatusOK || len(body) == 0 || !strings.Contains(string(body), want) {
				t.Errorf("%s with the token: %d %.200q; want 200 with %q", path, st, body, want)
			}
		}
	}
}

// A profile that records for longer than the server's write timeout is
// not refused by net/http/pprof (which reads the timeout from the
// request's server) and gets a write deadline past its recording.
func TestLongWriteLiftsTheWriteTimeout(t *testing.T) {
	var seen time.Duration = -1
	h := longWrite(func(w http.ResponseWriter, r *http.Request) {
		if srv, ok := r.Context().Value(http.ServerContextKey).(*http.Server); ok {
			seen = srv.WriteTimeout
		}
	}, 30)
	srv := httptest.NewUnstartedServer(h)
	srv.Config.WriteTimeout = writeTimeout
	srv.Start()
	defer srv.Close()
	res, err := http.Get(srv.URL + "/debug/pprof/profile?seconds=45")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if seen != 0 {
		t.Errorf("the handler saw a write timeout of %v; want none", seen)
	}
}
