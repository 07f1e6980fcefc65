package httpapi_test

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/procurekit/procure/httpapi"
	"github.com/procurekit/procure/internal/metricstest"
	"github.com/procurekit/procure/internal/syncbuf"
	"github.com/procurekit/procure/memstore"
)

// Observe counts every request by API, route pattern and status class,
// under Mount and behind a prefix alike, names a host's own routes
// "other" unless Routed names them, and writes the same request id on the
// log line and in X-Request-Id.
func TestObserveMetrics(t *testing.T) {
	store, err := memstore.LoadFile(filepath.Join("suppliers", "testdata", "suppliers.json"))
	if err != nil {
		t.Fatal(err)
	}
	var logs syncbuf.Buffer
	log := slog.New(slog.NewJSONHandler(&logs, nil))
	mux := http.NewServeMux()
	httpapi.MountSuppliers(mux, httpapi.SupplierOptions{Store: store, Tokens: store, Logger: log})
	mux.Handle("/procurement/", http.StripPrefix("/procurement", httpapi.SupplierHandler(httpapi.SupplierOptions{Store: store, Tokens: store, Logger: log})))
	mux.Handle("GET /own", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	mux.Handle("GET /named", httpapi.Routed("mine", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})))

	reg := prometheus.NewRegistry()
	m, err := httpapi.NewRequestMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := httpapi.NewRequestMetrics(reg); err == nil {
		t.Error("a second NewRequestMetrics on one registry succeeded")
	}
	h := httpapi.Observe(mux, httpapi.ObserveOptions{Logger: log, Metrics: m})

	bearer := "Bearer " + alphaToken
	requests := []struct {
		method, target, auth string
		status               int
	}{
		{"GET", "/public/community/suppliers", bearer, 200},
		{"GET", "/public/community/suppliers?size=1", bearer, 200},
		{"GET", "/public/community/suppliers/" + acmeOffice, bearer, 200},
		{"GET", "/public/community/suppliers", "Bearer wrong", 401},
		{"GET", "/public/community/suppliers?size=0", bearer, 400},
		{"DELETE", "/public/community/suppliers", bearer, 405},
		{"GET", "/public/community/nowhere", bearer, 404},
		{"GET", "/procurement/suppliers", bearer, 200},
		{"GET", "/nowhere", "", 404},
		{"GET", "/own", "", 200},
		{"GET", "/named", "", 200},
	}
	for _, rq := range requests {
		req := httptest.NewRequest(rq.method, rq.target, nil)
		if rq.auth != "" {
			req.Header.Set("Authorization", rq.auth)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != rq.status {
			t.Fatalf("%s %s: %d; want %d", rq.method, rq.target, rec.Code, rq.status)
		}
	}

	fams := metricstest.Gather(t, reg)
	const hist = "procure_http_request_duration_seconds"
	for _, want := range []struct {
		api, route, class string
		count             float64
	}{
		{"suppliers", "GET /public/community/suppliers", "2xx", 2},
		{"suppliers", "GET /public/community/suppliers", "4xx", 2},
		{"suppliers", "GET /public/community/suppliers/{id}", "2xx", 1},
		{"suppliers", "/public/community/suppliers", "4xx", 1}, // the 405 of other methods
		{"suppliers", "/public/community/", "4xx", 1},          // the API's JSON 404
		{"suppliers", "GET /procurement/suppliers", "2xx", 1},  // behind a prefix
		{"other", "(no route)", "4xx", 1},
		{"other", "GET /own", "2xx", 1},
		{"mine", "GET /named", "2xx", 1},
	} {
		got, ok := fams.Value(t, hist, "api", want.api, "route", want.route, "status_class", want.class)
		if !ok || got != want.count {
			t.Errorf("%s{api=%q,route=%q,status_class=%q} = %v (present %v); want %v", hist, want.api, want.route, want.class, got, ok, want.count)
		}
	}
	total := 0.0
	for _, s := range fams.Samples(hist) {
		total += s.Value
	}
	if total != float64(len(requests)) {
		t.Errorf("%d requests counted; want %d", int(total), len(requests))
	}
	if got := fams[hist].GetMetric()[0].GetHistogram().GetBucket(); len(got) != len(httpapi.RequestDurationBuckets)+1 { // and +Inf
		t.Errorf("%d buckets; want %d and +Inf", len(got), len(httpapi.RequestDurationBuckets))
	}
	if v, ok := fams.Value(t, "procure_http_requests_in_flight"); !ok || v != 0 {
		t.Errorf("in flight after the requests: %v (present %v); want 0", v, ok)
	}

	// One log line per request, each with an id of its own.
	ids := map[string]bool{}
	hex := regexp.MustCompile(`^[0-9a-f]{32}$`)
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatal(err)
		}
		if rec["msg"] != "request" {
			continue
		}
		id, _ := rec["request_id"].(string)
		if !hex.MatchString(id) || ids[id] {
			t.Errorf("request_id %q: want a new 32-hex id per request", id)
		}
		ids[id] = true
	}
	if len(ids) != len(requests) {
		t.Errorf("%d request lines; want %d", len(ids), len(requests))
	}
}

// The in-flight gauge counts a request while its handler runs.
func TestObserveInFlight(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := httpapi.NewRequestMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	var during float64
	h := httpapi.Observe(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		during, _ = metricstest.Gather(t, reg).Value(t, "procure_http_requests_in_flight")
	}), httpapi.ObserveOptions{Metrics: m})
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/", nil))
	if during != 1 {
		t.Errorf("in flight during the request: %v; want 1", during)
	}
}
