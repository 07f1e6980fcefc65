package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/procurekit/procure/internal/maintest"
	"github.com/procurekit/procure/internal/pgtest"
)

func TestMain(m *testing.M) {
	maintest.Run(main)
	os.Exit(pgtest.Main(m))
}

// Issue 5: `-postgres DSN` serves the same API from PostgreSQL, with the
// demo data imported at start; starting again on the same database
// imports idempotently and serves the same answers. The first start
// serves supplier reads from the per-node cache (the default), the second
// from the database (-pg-cache=false).
func TestRunOnPostgres(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	var first []byte
	for i := range 2 {
		args := []string{"-postgres", dsn}
		if i == 1 {
			args = append(args, "-pg-cache=false")
		}
		r := start(t, args...)
		status, body := get(t, r.base+"/public/community/suppliers?size=100&sort=modifiedDate,desc", "demo-acme-read-token")
		if status != http.StatusOK {
			t.Fatalf("run %d: status %d: %s", i, status, body)
		}
		if i == 0 {
			first = body
		} else if string(body) != string(first) {
			t.Errorf("second start on the same database answers differently:\n%s\nvs\n%s", body, first)
		}
		r.cancel()
		<-r.done
		if r.err != nil {
			t.Fatalf("run %d: %v", i, r.err)
		}
	}
	// The memstore server gives the same page for the same data.
	r := start(t)
	_, mem := get(t, r.base+"/public/community/suppliers?size=100&sort=modifiedDate,desc", "demo-acme-read-token")
	if string(mem) != string(first) {
		t.Errorf("PostgreSQL and memory answers differ:\n%s\nvs\n%s", first, mem)
	}
}

// Issue 9 part 6: a -data file is streamed into PostgreSQL at start (an
// upsert, so starting again changes nothing), with progress and totals
// on standard error.
func TestRunImportsDataFileOnPostgres(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	defer func(d time.Duration) { importEvery = d }(importEvery)
	importEvery = 0 // every read logs its progress

	var b strings.Builder
	b.WriteString(`{"communities": [{"id": "big", "name": "Big", "region": "AU",
		"tokens": [{"token": "big-read-token", "scopes": ["suppliers:read"]}], "suppliers": [`)
	const n = 300
	for i := range n {
		if i > 0 {
			b.WriteString(",\n")
		}
		fmt.Fprintf(&b, `{"id": "0f0f0f0f-0000-4000-8000-%012d", "name": "Supplier %03d", "profileType": "COMPANY",
			"modifiedDate": "2026-01-01T00:00:00Z", "createdDate": "2026-01-01T00:00:00Z"}`, i+1, i)
	}
	b.WriteString("]}]}")
	path := filepath.Join(t.TempDir(), "big.json")
	writeFile(t, path, b.String())

	for i := range 2 {
		r := start(t, "-postgres", dsn, "-data", path)
		status, body := get(t, r.base+"/public/community/suppliers?size=1", "big-read-token")
		if status != http.StatusOK || !strings.Contains(string(body), `"totalElements":300`) {
			t.Fatalf("start %d: status %d: %s", i, status, body)
		}
		r.cancel()
		<-r.done
		log := r.stderr.String()
		wantMigrations := "migrations_applied=0"
		if i == 0 {
			wantMigrations = "msg=\"migration applied\" version=1 name=0001_init.sql"
		}
		for _, want := range []string{wantMigrations, "msg=schema", "msg=\"import started\"", "msg=\"import progress\"", "percent=", "msg=\"import done\"", "suppliers=300", "communities=1"} {
			if !strings.Contains(log, want) {
				t.Errorf("start %d: the log has no %s:\n%s", i, want, log)
			}
		}
		if strings.Contains(log, "big-read-token") {
			t.Errorf("start %d: the log shows a secret of the file", i)
		}
	}
}

// -pg-cache is on by default and turned off with -pg-cache=false.
func TestPgCacheFlag(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want bool
	}{
		{nil, true},
		{[]string{"-pg-cache=false"}, false},
		{[]string{"-pg-cache"}, true},
	} {
		cfg, err := parseFlags(tt.args, io.Discard)
		if err != nil || cfg.pgCache != tt.want {
			t.Errorf("%v: pgCache %v, %v; want %v", tt.args, cfg.pgCache, err, tt.want)
		}
	}
}

// The deployment of the README's "PostgreSQL" section: the server reaches
// the database through PgBouncer in transaction mode, migrates it
// directly (-postgres-migrate) and reads from a streaming replica
// (-postgres-read), and answers as on one direct connection.
func TestRunThroughPgBouncerWithReplica(t *testing.T) {
	r := pgtest.NewReplicatedDatabase(t)
	want := start(t, "-postgres", r.Primary, "-pg-cache=false")
	_, wantBody := get(t, want.base+"/public/community/suppliers?size=100&sort=modifiedDate,desc", "demo-acme-read-token")
	want.cancel()
	<-want.done
	for _, cache := range []string{"-pg-cache=true", "-pg-cache=false"} {
		run := start(t, "-postgres", r.Pooled(t), "-postgres-migrate", r.Primary, "-postgres-read", r.Replica, cache)
		status, body := get(t, run.base+"/public/community/suppliers?size=100&sort=modifiedDate,desc", "demo-acme-read-token")
		if status != http.StatusOK || string(body) != string(wantBody) {
			t.Errorf("%s: status %d, body:\n%s\nwant the direct server's:\n%s", cache, status, body, wantBody)
		}
		run.cancel()
		<-run.done
		if run.err != nil {
			t.Fatalf("%s: %v", cache, run.err)
		}
		for _, line := range []string{`msg=postgres query_exec_mode="cache describe" direct=false`, `msg="postgres read replica"`} {
			if !strings.Contains(run.stderr.String(), line) {
				t.Errorf("%s: the log has no %s:\n%s", cache, line, run.stderr.String())
			}
		}
	}
}
