package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/procurekit/procure/internal/pgtest"
)

// probe GETs url and returns the status and body.
func probe(t *testing.T, url string) (int, string) {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, string(b)
}

// waitProbe polls url until it answers status, and returns the body.
func waitProbe(t *testing.T, url string, status int) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		code, body := probe(t, url)
		if code == status {
			return body
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s answers %d %q; want %d", url, code, body, status)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// /livez and /readyz on both listeners through a start and a shutdown:
// while the data loads the node is alive but not ready, and every API
// route answers 503 UNAVAILABLE; once loaded it is ready; when a signal
// comes, /readyz answers 503 at once while the APIs keep answering for
// -shutdown-delay, and then the server stops.
func TestProbesThroughStartAndShutdown(t *testing.T) {
	hold := make(chan struct{})
	addrs := make(chan []string, 1)
	defer func(f func([]net.Listener)) { beforeLoad = f }(beforeLoad)
	beforeLoad = func(ls []net.Listener) {
		var a []string
		for _, l := range ls {
			a = append(a, "http://"+l.Addr().String())
		}
		addrs <- a
		<-hold
	}
	t.Setenv(adminTokenEnv, "probe-test-admin-token-0123456789")
	var r *running
	started := make(chan struct{})
	go func() {
		defer close(started)
		r = start(t, "-admin-addr", "127.0.0.1:0", "-shutdown-delay", "3s")
	}()
	bases := <-addrs
	for _, base := range bases {
		if code, body := probe(t, base+"/livez"); code != 200 || body != "ok\n" {
			t.Errorf("%s/livez while loading: %d %q", base, code, body)
		}
		if code, body := probe(t, base+"/readyz"); code != 503 || body != "not ready\nfail store: starting: loading data\n" {
			t.Errorf("%s/readyz while loading: %d %q", base, code, body)
		}
	}
	expectStatus(t, bases[0]+"/public/community/suppliers", http.StatusServiceUnavailable, "Authorization", "Bearer "+demoToken)
	expectStatus(t, bases[1]+"/admin/v1/communities/acme-au", http.StatusServiceUnavailable)

	close(hold)
	<-started
	for _, base := range bases {
		if body := waitProbe(t, base+"/readyz", 200); body != "ready\nok store\n" {
			t.Errorf("%s/readyz once loaded: %q", base, body)
		}
	}
	expectStatus(t, bases[0]+"/public/community/suppliers", http.StatusOK, "Authorization", "Bearer "+demoToken)
	// Once loaded, the probes and the APIs share one mux: a probe asked
	// with another method is a 405 naming GET, and a path nobody serves a
	// 404.
	res, err := http.Post(bases[0]+"/livez", "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusMethodNotAllowed || !strings.Contains(res.Header.Get("Allow"), "GET") {
		t.Errorf("POST /livez once loaded: %d, Allow %q; want 405 allowing GET", res.StatusCode, res.Header.Get("Allow"))
	}
	expectStatus(t, bases[0]+"/no/such/route", http.StatusNotFound)

	r.cancel()
	for _, base := range bases {
		if body := waitProbe(t, base+"/readyz", 503); body != "not ready: shutting down\n" {
			t.Errorf("%s/readyz after the signal: %q", base, body)
		}
	}
	// Within the delay everything else is still served.
	if code, _ := probe(t, bases[0]+"/livez"); code != 200 {
		t.Errorf("livez during the shutdown delay: %d", code)
	}
	expectStatus(t, bases[0]+"/public/community/suppliers", http.StatusOK, "Authorization", "Bearer "+demoToken)
	select {
	case <-r.done:
		if r.err != nil {
			t.Errorf("run: %v", r.err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the server did not stop")
	}
	if _, err := http.Get(bases[0] + "/livez"); err == nil {
		t.Error("the public listener still answers after the shutdown")
	}
	log := r.stderr.String()
	for _, want := range []string{`msg="readiness changed" ready=false reason="shutting down"`, `msg="shutting down: not ready, still serving" delay_ms=3000`} {
		if !strings.Contains(log, want) {
			t.Errorf("the log lacks %s:\n%s", want, log)
		}
	}
}

// On PostgreSQL the node is ready once the database answers with the
// schema and the supplier cache has loaded; it turns unready when the
// database becomes unreachable, and ready again when it is back.
func TestReadyFollowsDatabase(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	r := start(t, "-postgres", dsn)
	if body := waitProbe(t, r.base+"/readyz", 200); body != "ready\nok store\n" {
		t.Fatalf("readyz: %q", body)
	}
	ctx := context.Background()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	db := strings.TrimPrefix(u.Path, "/")
	u.Path = "/postgres"
	admin, err := pgx.Connect(ctx, u.String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Close(ctx) }) // after the cleanup below
	allow := func(on bool) {
		t.Helper()
		sql := `ALTER DATABASE "` + db + `" ALLOW_CONNECTIONS ` + map[bool]string{true: "true", false: "false"}[on]
		if _, err := admin.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	allow(false)
	t.Cleanup(func() { allow(true) })
	if _, err := admin.Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1`, db); err != nil {
		t.Fatal(err)
	}
	if body := waitProbe(t, r.base+"/readyz", 503); body != "not ready\nfail store: database does not answer\n" {
		t.Errorf("readyz without the database: %q", body)
	}
	if code, _ := probe(t, r.base+"/livez"); code != 200 {
		t.Errorf("livez without the database: %d; want 200 (the process serves)", code)
	}
	allow(true)
	waitProbe(t, r.base+"/readyz", 200)
	if !strings.Contains(r.stderr.String(), `msg="readiness changed" ready=false store="database does not answer" store_cause=`) {
		t.Errorf("the log lacks the change with its cause:\n%s", r.stderr.String())
	}
}
