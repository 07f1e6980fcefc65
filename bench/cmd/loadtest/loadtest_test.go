package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

func TestParseResult(t *testing.T) {
	tests := []struct {
		name    string
		out     string
		want    result
		wantErr string
	}{
		{
			name: "after wrk's own text",
			out: "Running 10s test @ http://127.0.0.1:1/x\n  2 threads and 64 connections\n" +
				`WRK_RESULT {"requests":1200,"duration_us":2000000,"bytes":99,"connect_errors":0,"read_errors":1,"write_errors":0,"status_errors":2,"timeouts":3,"p50_us":850.0,"p90_us":1500.5,"p99_us":4000.0,"mean_us":900.2,"max_us":9000.0}` + "\n",
			want: result{Requests: 1200, DurationUS: 2000000, Bytes: 99, ReadErrors: 1, StatusErrors: 2, Timeouts: 3,
				P50: 850, P90: 1500.5, P99: 4000, Mean: 900.2, Max: 9000},
		},
		{name: "no result line", out: "unable to connect to 127.0.0.1:1 Connection refused\n", wantErr: `no "WRK_RESULT" line`},
		{name: "malformed result", out: "WRK_RESULT {\"requests\":\n", wantErr: "wrk result line"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseResult([]byte(tt.out))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("parseResult = %v, want error containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Fatalf("(-want +got):\n%s", diff)
			}
			if got.RPS() != 600 || got.Errors() != 6 {
				t.Errorf("RPS %v, Errors %d; want 600, 6", got.RPS(), got.Errors())
			}
		})
	}
}

func TestMedian(t *testing.T) {
	tests := []struct {
		name string
		in   []float64
		want float64
	}{
		{"none", nil, 0},
		{"one", []float64{7}, 7},
		{"odd, unsorted", []float64{9, 1, 5}, 5},
		{"even: mean of the middle two", []float64{4, 1, 3, 2}, 2.5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := append([]float64(nil), tt.in...)
			if got := median(tt.in); got != tt.want {
				t.Errorf("median(%v) = %v, want %v", tt.in, got, tt.want)
			}
			if !cmp.Equal(in, tt.in) {
				t.Errorf("median reordered its argument: %v", tt.in)
			}
		})
	}
}

func TestFormatLatency(t *testing.T) {
	for _, tt := range []struct {
		us   float64
		want string
	}{{0, "-"}, {850, "850µs"}, {1234, "1.23ms"}, {45678, "45.7ms"}, {234567, "235ms"}} {
		if got := formatLatency(tt.us); got != tt.want {
			t.Errorf("formatLatency(%v) = %q, want %q", tt.us, got, tt.want)
		}
	}
}

func run3(rps, p50, p99 float64, errs int64) result {
	return result{Requests: int64(rps * 10), DurationUS: 10e6, P50: p50, P99: p99, StatusErrors: errs}
}

// The table shows medians, the ratio of throughputs, and whether the
// target is met, in aligned Markdown columns.
func TestWriteTable(t *testing.T) {
	rows := []row{
		{
			sc:   scenario{Name: "list", Goal: 0.75},
			real: []result{run3(800, 1000, 5000, 0), run3(900, 1100, 6000, 0), run3(700, 900, 4000, 0)},
			base: []result{run3(1000, 500, 2000, 0), run3(1000, 500, 2000, 0), run3(1000, 500, 2000, 0)},
		},
		{
			sc:   scenario{Name: "create-user", Goal: 0.40},
			real: []result{run3(300, 2000, 9000, 4)},
			base: []result{run3(1000, 500, 2000, 0)},
		},
	}
	var b strings.Builder
	writeTable(&b, rows, true, false)
	lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
	if len(lines) != 4 {
		t.Fatalf("table has %d lines, want 4:\n%s", len(lines), b.String())
	}
	for _, l := range lines {
		if utf8.RuneCountInString(l) != utf8.RuneCountInString(lines[0]) {
			t.Errorf("ragged table:\n%s", b.String())
			break
		}
	}
	cells := func(l string) []string {
		var out []string
		for _, c := range strings.Split(strings.Trim(l, "|"), "|") {
			out = append(out, strings.TrimSpace(c))
		}
		return out
	}
	want := [][]string{
		{"scenario", "req/s", "p50", "p99", "baseline req/s", "p50", "p99", "ratio", "target", "errors"},
		{"list", "800", "1.00ms", "5.00ms", "1000", "500µs", "2.00ms", "80%", ">= 75% met", "0"},
		{"create-user", "300", "2.00ms", "9.00ms", "1000", "500µs", "2.00ms", "30%", ">= 40% MISSED", "4 (baseline 0)"},
	}
	got := [][]string{cells(lines[0]), cells(lines[2]), cells(lines[3])}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("table cells (-want +got):\n%s\n%s", diff, b.String())
	}

	// With writes running, the writing targets apply; a scenario
	// without one shows none.
	b.Reset()
	rows[0].sc.WritesGoal = 0.50
	writeTable(&b, rows, true, true)
	lines = strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
	if c := cells(lines[2]); c[8] != ">= 50% met" {
		t.Errorf("list while writing: target %q, want >= 50%% met", c[8])
	}
	if c := cells(lines[3]); c[8] != "-" {
		t.Errorf("create-user while writing: target %q, want -", c[8])
	}

	b.Reset()
	writeTable(&b, rows, false, false)
	if strings.Contains(b.String(), "target") {
		t.Errorf("targets shown when not asked for:\n%s", b.String())
	}
}

func TestSelectScenarios(t *testing.T) {
	var all []scenario
	for _, n := range scenarioNames {
		all = append(all, scenario{Name: n})
	}
	names := func(scs []scenario) []string {
		var out []string
		for _, s := range scs {
			out = append(out, s.Name)
		}
		return out
	}
	tests := []struct {
		name, list string
		want       []string
		wantErr    string
	}{
		{"all", "all", scenarioNames, ""},
		{"empty means all", "", scenarioNames, ""},
		{"subset in canonical order", "get-user, list", []string{"list", "get-user"}, ""},
		{"unknown", "list,lsit", nil, `unknown scenario "lsit"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := selectScenarios(all, tt.list)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, names(got)); diff != "" {
				t.Fatalf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseFlags(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"defaults are fine", nil, ""},
		{"no suppliers", []string{"-suppliers", "0"}, "-suppliers: must be at least 1"},
		{"sub-second run", []string{"-duration", "500ms"}, "-duration: must be at least 1s"},
		{"sub-second warm-up", []string{"-warmup", "300ms"}, "-warmup: must be 0 or at least 1s"},
		{"no runs", []string{"-runs", "0"}, "-runs: must be at least 1"},
		{"fewer connections than threads", []string{"-threads", "4", "-connections", "2"}, "need at least one thread and a connection per thread"},
		{"data without manifest", []string{"-data", "x.json"}, "-data and -manifest go together"},
		{"both postgres flags", []string{"-postgres", "-postgres-dsn", "postgres://x"}, "give one"},
		{"pgbouncer without a throwaway server", []string{"-pgbouncer", "-postgres-dsn", "postgres://x"}, "-pgbouncer needs -postgres"},
		{"durable without a throwaway server", []string{"-postgres-durable", "-postgres-dsn", "postgres://x"}, "-postgres-durable needs -postgres"},
		{"real-time without a throwaway server", []string{"-postgres-realtime", "-postgres-dsn", "postgres://x"}, "-postgres-realtime needs -postgres"},
		{"parameters without a throwaway server", []string{"-postgres-params", "pool_max_conns=16"}, "-postgres-params needs -postgres"},
		{"unknown scenario", []string{"-scenarios", "nope"}, `unknown scenario "nope"`},
		{"stray argument", []string{"now"}, `unexpected argument "now"`},
		{"preloaded without a database", []string{"-preloaded", "-data", "x.json", "-manifest", "m.json"}, "-preloaded needs -postgres-dsn"},
		{"preloaded without the data", []string{"-preloaded", "-postgres-dsn", "postgres://x"}, "-preloaded needs -postgres-dsn and the -data"},
		{"negative writes", []string{"-writes", "-1"}, "-writes: must be from 0 to 100000"},
		{"no write workers", []string{"-writes", "100", "-write-workers", "0"}, "-write-workers: must be from 1 to 1024"},
		{"negative write backlog", []string{"-writes", "100", "-write-backlog", "-1s"}, "-write-backlog: must be from 0 to 1m"},
		{"write backlog over a minute", []string{"-writes", "100", "-write-backlog", "2m"}, "-write-backlog: must be from 0 to 1m"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := parseFlags(tt.args, io.Discard)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				if o.suppliers != 100000 || o.conns != 64 || o.threads != 2 || o.runs != 3 {
					t.Errorf("defaults: %+v", o)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("parseFlags(%q) = %v, want error containing %q", tt.args, err, tt.wantErr)
			}
		})
	}
}

func TestChecks(t *testing.T) {
	page := func(n, total int) []byte {
		items := make([]map[string]string, n)
		for i := range items {
			items[i] = map[string]string{"id": strconv.Itoa(i)}
		}
		b, _ := json.Marshal(map[string]any{"content": items, "page": map[string]int{"totalElements": total}})
		return b
	}
	tests := []struct {
		name    string
		check   func(int, []byte) error
		status  int
		body    []byte
		wantErr string
	}{
		{"page ok", pageCheck(2, 10), 200, page(2, 10), ""},
		{"page: wrong total", pageCheck(2, 10), 200, page(2, 9), "2 items of 9, want 2 of 10"},
		{"page: wrong count", pageCheck(20, 100), 200, page(19, 100), "19 items of 100"},
		{"page: error status", pageCheck(2, 2), 401, []byte(`{"code":"UNAUTHENTICATED"}`), "status 401"},
		{"page: not a page", pageCheck(2, 2), 200, []byte(`[1,2]`), "body is not a page"},
		{"field ok, case-insensitive", fieldCheck("username", "Jo.Smith1"), 200, []byte(`{"username":"jo.smith1"}`), ""},
		{"field differs", fieldCheck("id", "a"), 200, []byte(`{"id":"b"}`), `id = "b", want "a"`},
		{"field: error status", fieldCheck("id", "a"), 404, []byte(`{}`), "status 404"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.check(tt.status, tt.body)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("check = %v, want error containing %q", err, tt.wantErr)
			}
		})
	}
}

func testManifest(t *testing.T) *manifest {
	t.Helper()
	const js = `{"seed":1,"communities":[{"id":"c1","region":"AU","suppliers":50000,"users":3,
	 "tokens":[{"kind":"noscope","token":"t-no"},{"kind":"read","token":"t-read"}],
	 "serviceAccounts":[{"id":"sa-erp","key":"k-erp","allowedIPs":["203.0.113.0/24"]},{"id":"sa-1","key":"k-1"}],
	 "sample":{"supplierId":"8c7f5a1e-3b7a-4c55-9d2e-0a1b2c3d4e5f","query":"sun","queryMatches":120,
	  "modifiedSince":"2025-10-01T00:00:00Z","modifiedSinceMatches":5000,
	  "users":[{"id":"u-1","username":"ana.kim0"},{"id":"EMP-0-000001","username":"Bo.Lee1"},{"id":"bad id","username":"x"}]}}]}`
	var m manifest
	if err := json.Unmarshal([]byte(js), &m); err != nil {
		t.Fatal(err)
	}
	return &m
}

func TestScenariosFromManifest(t *testing.T) {
	m := testManifest(t)
	cr, err := m.creds()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(creds{token: "t-read", accountID: "sa-1", key: "k-1"}, cr, cmp.AllowUnexported(creds{})); diff != "" {
		t.Errorf("creds: the read token and the account without allowlist (-want +got):\n%s", diff)
	}
	scs, err := scenarios(m, "n1")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, sc := range scs {
		got[sc.Name] = sc.Method + " " + sc.Target
	}
	want := map[string]string{
		"list":            "GET /public/community/suppliers",
		"list-query":      "GET /public/community/suppliers?query=sun",
		"list-modified":   "GET /public/community/suppliers?modifiedSince=2025-10-01T00%3A00%3A00Z",
		"page-1000":       "GET /public/community/suppliers?page=1000",
		"get-supplier":    "GET /public/community/suppliers/8c7f5a1e-3b7a-4c55-9d2e-0a1b2c3d4e5f",
		"contacts":        "GET /public/community/suppliers/8c7f5a1e-3b7a-4c55-9d2e-0a1b2c3d4e5f/contacts",
		"get-user":        "GET /v1/users/username/ana.kim0",
		"create-user":     "POST /v1/users",
		"update-user":     "PUT /v1/users",
		"random-supplier": "GET /public/community/suppliers/8c7f5a1e-3b7a-4c55-9d2e-0a1b2c3d4e5f",
		"random-page":     "GET /public/community/suppliers?page=0",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("scenarios (-want +got):\n%s", diff)
	}
	if len(scs) != len(scenarioNames) {
		t.Fatalf("%d scenarios, want %d", len(scs), len(scenarioNames))
	}
	for i, sc := range scs {
		if sc.Name != scenarioNames[i] {
			t.Errorf("scenario %d is %s, want %s", i, sc.Name, scenarioNames[i])
		}
	}
	// Ids that would need escaping in Lua or JSON are left out.
	if s := named(t, scs, "update-user").Lua; strings.Contains(s, "bad id") || !strings.Contains(s, `{"EMP-0-000001", "Bo.Lee1"}`) {
		t.Errorf("update script users:\n%s", s)
	}
}

// named returns the scenario of that name.
func named(t *testing.T, scs []scenario, name string) scenario {
	t.Helper()
	for _, sc := range scs {
		if sc.Name == name {
			return sc
		}
	}
	t.Fatalf("no scenario %s", name)
	return scenario{}
}

// wrkTest runs a scenario's script with wrk against a recording server for
// one second. It skips when wrk is not installed.
func wrkTest(t *testing.T, sc scenario, cr creds) (result, []*http.Request, [][]byte) {
	t.Helper()
	bin, err := exec.LookPath("wrk")
	if err != nil {
		t.Skip("wrk is not installed (apt-get install -y wrk)")
	}
	var mu sync.Mutex
	var reqs []*http.Request
	var bodies [][]byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body) // a failed read shows as a wrong body below
		mu.Lock()
		if len(reqs) < 5000 {
			reqs = append(reqs, r.Clone(context.Background()))
			bodies = append(bodies, b)
		}
		mu.Unlock()
		w.Write([]byte(`{}`))
	}))
	t.Cleanup(srv.Close)
	script := filepath.Join(t.TempDir(), "s.lua")
	if err := os.WriteFile(script, []byte(sc.script(cr)), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := runWrk(ctx, wrkOptions{bin: bin, threads: 2, connections: 4, timeout: 5 * time.Second}, script, srv.URL, sc.Target, time.Second, "T")
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if res.Requests == 0 || len(reqs) == 0 {
		t.Fatalf("wrk made no requests: %+v", res)
	}
	return res, reqs, bodies
}

// The create script sends valid JSON with a username that is new on every
// request, built exactly like the recorded request's body, with the
// service account headers.
func TestCreateScriptUnderWrk(t *testing.T) {
	m := testManifest(t)
	cr, _ := m.creds()
	scs, _ := scenarios(m, "n1")
	_, reqs, bodies := wrkTest(t, named(t, scs, "create-user"), cr)
	seen := map[string]bool{}
	for i, r := range reqs {
		if r.Method != "POST" || r.URL.Path != "/v1/users" {
			t.Fatalf("request %d: %s %s", i, r.Method, r.URL)
		}
		if r.Header.Get("Service-Account-ID") != "sa-1" || r.Header.Get("Service-API-Key") != "k-1" ||
			r.Header.Get("Content-Type") != "application/json; charset=utf-8" {
			t.Fatalf("request %d headers: %v", i, r.Header)
		}
		var u struct {
			Username string `json:"username"`
		}
		if err := json.Unmarshal(bodies[i], &u); err != nil {
			t.Fatalf("request %d body is not JSON: %v\n%s", i, err, bodies[i])
		}
		if seen[u.Username] {
			t.Fatalf("username %q sent twice", u.Username)
		}
		seen[u.Username] = true
		// load-TAG-THREAD-N: the body is the one Go builds for the
		// recorded request.
		parts := strings.Split(u.Username, "-")
		n, err := strconv.Atoi(parts[len(parts)-1])
		if len(parts) != 4 || parts[1] != "T" || err != nil {
			t.Fatalf("username %q is not load-T-thread-n", u.Username)
		}
		if want := createUserBody(u.Username, n); string(bodies[i]) != want {
			t.Fatalf("Lua body differs from Go's:\n lua: %s\n  go: %s", bodies[i], want)
		}
	}
}

// The update script PUTs the sample users in turn with changing fields.
func TestUpdateScriptUnderWrk(t *testing.T) {
	m := testManifest(t)
	cr, _ := m.creds()
	scs, _ := scenarios(m, "n1")
	_, reqs, bodies := wrkTest(t, named(t, scs, "update-user"), cr)
	users := map[string]string{"u-1": "ana.kim0", "EMP-0-000001": "Bo.Lee1"}
	hit := map[string]bool{}
	names := map[string]bool{}
	for i, r := range reqs {
		if r.Method != "PUT" || r.URL.Path != "/v1/users" {
			t.Fatalf("request %d: %s %s", i, r.Method, r.URL)
		}
		var u struct {
			ID       string `json:"id"`
			Username string `json:"username"`
			LastName string `json:"lastName"`
		}
		if err := json.Unmarshal(bodies[i], &u); err != nil {
			t.Fatalf("request %d body is not JSON: %v\n%s", i, err, bodies[i])
		}
		if users[u.ID] != u.Username {
			t.Fatalf("request %d updates %s/%s, not a sample user", i, u.ID, u.Username)
		}
		hit[u.ID] = true
		names[u.LastName] = true
		n, _ := strconv.Atoi(strings.TrimPrefix(u.LastName, "Run "))
		if want := updateUserBody(u.ID, u.Username, n); string(bodies[i]) != want {
			t.Fatalf("Lua body differs from Go's:\n lua: %s\n  go: %s", bodies[i], want)
		}
	}
	if len(hit) != 2 || len(names) < 2 {
		t.Errorf("updates touched users %v with last names %d distinct; want both users and changing fields", hit, len(names))
	}
}

// A GET scenario sends the bearer token and the same request every time.
func TestGetScriptUnderWrk(t *testing.T) {
	m := testManifest(t)
	cr, _ := m.creds()
	scs, _ := scenarios(m, "n1")
	res, reqs, _ := wrkTest(t, named(t, scs, "list-query"), cr)
	for i, r := range reqs {
		if r.Method != "GET" || r.URL.RequestURI() != "/public/community/suppliers?query=sun" || r.Header.Get("Authorization") != "Bearer t-read" {
			t.Fatalf("request %d: %s %s %v", i, r.Method, r.URL, r.Header)
		}
	}
	if res.P50 <= 0 || res.P99 < res.P50 || res.DurationUS < 900000 {
		t.Errorf("implausible result: %+v", res)
	}
}

// The CPU table shows each scenario's median CPU time per request, and
// nothing when no run measured it.
func TestWriteCPUTable(t *testing.T) {
	withCPU := func(r result, cpu time.Duration) result { r.CPU = cpu; return r }
	r := run3(1000, 500, 2000, 0) // 1000 req/s for the run's duration
	n := r.Requests
	rows := []row{{
		sc:   scenario{Name: "list"},
		real: []result{withCPU(r, time.Duration(n)*40*time.Microsecond), withCPU(r, time.Duration(n)*50*time.Microsecond), withCPU(r, time.Duration(n)*45*time.Microsecond)},
		base: []result{withCPU(r, time.Duration(n)*10*time.Microsecond)},
	}}
	var b strings.Builder
	writeCPUTable(&b, rows)
	if !strings.Contains(b.String(), "| list | 45.0 | 10.0 |") {
		t.Errorf("CPU table:\n%s", b.String())
	}
	b.Reset()
	writeCPUTable(&b, []row{{sc: scenario{Name: "list"}, real: []result{r}}})
	if b.Len() != 0 {
		t.Errorf("a CPU table without measures:\n%s", b.String())
	}
}
