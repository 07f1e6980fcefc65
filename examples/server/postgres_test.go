package main

import (
	"net/http"
	"os"
	"testing"

	"github.com/procurekit/procure/internal/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// Issue 5: `-postgres DSN` serves the same API from PostgreSQL, with the
// demo data imported at start; starting again on the same database
// imports idempotently and serves the same answers.
func TestRunOnPostgres(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	var first []byte
	for i := range 2 {
		r := start(t, "-postgres", dsn)
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
