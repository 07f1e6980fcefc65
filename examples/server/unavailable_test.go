package main

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/procurekit/procure/httpapi"
	"github.com/procurekit/procure/internal/pgtest"
)

// Issue 11: a statement that hits the statement timeout, or a database
// that is down, is a 503 UNAVAILABLE with Retry-After (docs: limits.md); other requests go on being served, and the server recovers
// by itself when the database is back.

// expectStatus sends a GET with the header pairs and checks the status;
// for a 503 it checks the code and Retry-After too.
func expectStatus(t *testing.T, url string, want int, header ...string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	client := &http.Client{Timeout: 20 * time.Second} // no request may hang
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	var e httpapi.ErrorBody
	_ = json.NewDecoder(resp.Body).Decode(&e)
	if resp.StatusCode != want {
		t.Fatalf("GET %s = %d %s %q; want %d", url, resp.StatusCode, e.Code, e.Message, want)
	}
	if want == http.StatusServiceUnavailable {
		if e.Code != httpapi.CodeUnavailable || resp.Header.Get("Retry-After") != "5" {
			t.Errorf("503 with code %q and Retry-After %q; want UNAVAILABLE and 5", e.Code, resp.Header.Get("Retry-After"))
		}
	}
}

func TestUnavailableDatabase(t *testing.T) {
	db := pgtest.NewServer(t)
	// A short statement timeout, set through the DSN.
	r := start(t, "-postgres", db.DSN()+"&statement_timeout=300")
	users := r.base + "/v1/users/username/jsmith"
	userAuth := []string{"Service-Account-ID", demoAccount, "Service-API-Key", demoKey}
	suppliers := r.base + "/public/community/suppliers"
	bearer := []string{"Authorization", "Bearer " + demoToken}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("server log:\n%s", r.stderr.String())
		}
	})

	expectStatus(t, users, 200, userAuth...)
	expectStatus(t, suppliers, 200, bearer...)

	t.Run("statement timeout", func(t *testing.T) {
		ctx := context.Background()
		conn, err := pgx.Connect(ctx, db.DSN())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		tx, err := conn.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(ctx, "LOCK TABLE users IN ACCESS EXCLUSIVE MODE"); err != nil {
			t.Fatal(err)
		}
		// With -pg-cache (the default) the node may answer from memory
		// what it read less than a second ago (docs: live-data.md).
		time.Sleep(time.Second)
		expectStatus(t, users, 503, userAuth...)
		// The supplier API does not touch the users table: it is served.
		expectStatus(t, suppliers, 200, bearer...)
		if err := tx.Rollback(ctx); err != nil {
			t.Fatal(err)
		}
		expectStatus(t, users, 200, userAuth...)
	})

	t.Run("database down and back", func(t *testing.T) {
		db.Stop(t)
		// With -pg-cache (the default) a node may answer from memory what
		// it read less than a second ago (docs: live-data.md); past that
		// bound every request that needs the database is a 503.
		time.Sleep(time.Second)
		expectStatus(t, users, 503, userAuth...)
		expectStatus(t, suppliers, 503, bearer...)
		// The demo checkout (a host's own route) answers alike.
		status, body := rawRequest(t, r.base, "POST", "/demo/checkout", bearer, `{"requisitionId":"R","lines":[{"lineNumber":1,"account":"A","amount":"1"}]}`)
		if status != 503 || !strings.Contains(body, httpapi.CodeUnavailable) {
			t.Errorf("demo checkout with the database down: %d %s; want 503 UNAVAILABLE", status, body)
		}
		db.Start(t)
		// The pool reconnects by itself; a connection that died with the
		// server may fail one more request (503), never more than the
		// pool's size.
		var last int
		for range 20 {
			req, _ := http.NewRequest(http.MethodGet, suppliers, nil)
			req.Header.Set(bearer[0], bearer[1])
			resp, err := (&http.Client{Timeout: 20 * time.Second}).Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			last = resp.StatusCode
			if last == 200 {
				break
			}
			if last != 503 {
				t.Fatalf("after the restart: %d; want 200 or 503", last)
			}
		}
		if last != 200 {
			t.Fatalf("after the restart the server still answers %d", last)
		}
		expectStatus(t, users, 200, userAuth...)
	})

	if s := r.stderr.String(); strings.Contains(s, "level=ERROR") {
		t.Errorf("an unavailable database was logged as an error, not a warning:\n%s", s)
	}
}
