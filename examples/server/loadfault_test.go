package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/procurekit/procure/internal/pgtest"
)

// Issue 11, part 5: the example server on PostgreSQL under load while the
// database is restarted once. Readers and user writers run for a fixed
// time (loopback only; the test stops by itself); afterwards no request
// hung past its timeout, every acknowledged user write is readable, and
// no username exists twice.
func TestLoadAndFault(t *testing.T) {
	if testing.Short() {
		t.Skip("runs for ten seconds")
	}
	const (
		duration      = 10 * time.Second
		clientTimeout = 15 * time.Second // far above the statement timeout: a request that needs it hung
		readers       = 4
		writers       = 3
	)
	db := pgtest.NewServer(t)
	r := start(t, "-postgres", db.DSN()+"&statement_timeout=2000")
	client := &http.Client{Timeout: clientTimeout, Transport: &http.Transport{MaxIdleConnsPerHost: readers + writers}}

	type outcome struct {
		status int
		err    error
		took   time.Duration
	}
	var (
		mu       sync.Mutex
		statuses = map[string]map[int]int{} // kind -> status -> count
		failures []string
		acked    = map[string]string{} // username -> id, for every 200 on create
		slowest  time.Duration
	)
	note := func(kind string, o outcome, allowed ...int) {
		mu.Lock()
		defer mu.Unlock()
		slowest = max(slowest, o.took)
		if o.err != nil {
			failures = append(failures, fmt.Sprintf("%s: %v after %v", kind, o.err, o.took))
			return
		}
		if statuses[kind] == nil {
			statuses[kind] = map[int]int{}
		}
		statuses[kind][o.status]++
		for _, s := range allowed {
			if o.status == s {
				return
			}
		}
		failures = append(failures, fmt.Sprintf("%s: status %d", kind, o.status))
	}
	do := func(method, url, body string, header ...string) (outcome, []byte) {
		var rd io.Reader
		if body != "" {
			rd = strings.NewReader(body)
		}
		req, err := http.NewRequest(method, url, rd)
		if err != nil {
			return outcome{err: err}, nil
		}
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		began := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			return outcome{err: err, took: time.Since(began)}, nil
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return outcome{status: resp.StatusCode, err: err, took: time.Since(began)}, b
	}
	userAuth := []string{"Service-Account-ID", demoAccount, "Service-API-Key", demoKey}

	ctx, cancel := context.WithTimeout(context.Background(), duration)
	defer cancel()
	var wg sync.WaitGroup
	var reads, writes atomic.Int64
	for g := range readers {
		wg.Go(func() {
			for i := 0; ctx.Err() == nil; i++ {
				if (g+i)%2 == 0 {
					o, _ := do("GET", r.base+"/public/community/suppliers?size=20&query=a", "", "Authorization", "Bearer "+demoToken)
					note("read suppliers", o, 200, 503)
				} else {
					o, _ := do("GET", r.base+"/v1/users/username/JSMITH", "", userAuth...)
					note("read user", o, 200, 503)
				}
				reads.Add(1)
			}
		})
	}
	for g := range writers {
		wg.Go(func() {
			for i := 0; ctx.Err() == nil; i++ {
				name := fmt.Sprintf("load-%d-%d", g, i)
				o, b := do("POST", r.base+"/v1/users", `{"username":"`+name+`"}`, userAuth...)
				note("create user", o, 200, 503)
				writes.Add(1)
				if o.err != nil || o.status != 200 {
					continue
				}
				var u struct{ ID string }
				if err := json.Unmarshal(b, &u); err != nil || u.ID == "" {
					note("create user", outcome{err: fmt.Errorf("200 without a user: %s", b)})
					continue
				}
				mu.Lock()
				acked[name] = u.ID
				mu.Unlock()
				// The same username in another case is taken.
				o, _ = do("POST", r.base+"/v1/users", `{"username":"`+strings.ToUpper(name)+`"}`, userAuth...)
				note("create duplicate", o, 400, 503)
			}
		})
	}

	// The fault: the database stops a third of the way through and
	// comes back a second later.
	time.Sleep(duration / 3)
	db.Stop(t)
	time.Sleep(time.Second)
	db.Start(t)
	wg.Wait()

	t.Logf("%d reads, %d writes in %v; slowest request %v; statuses %v", reads.Load(), writes.Load(), duration, slowest, statuses)
	for _, f := range failures {
		t.Error(f)
	}
	if slowest >= clientTimeout {
		t.Errorf("a request took %v: it hung past its timeout", slowest)
	}
	for _, kind := range []string{"read suppliers", "read user", "create user"} {
		if statuses[kind][200] == 0 {
			t.Errorf("no %s succeeded", kind)
		}
	}
	if statuses["read suppliers"][503]+statuses["read user"][503]+statuses["create user"][503] == 0 {
		t.Errorf("no request saw the database down: the fault did not happen")
	}

	// Every acknowledged write is readable, by its username in any case.
	for name, id := range acked {
		o, b := do("GET", r.base+"/v1/users/username/"+strings.ToUpper(name), "", userAuth...)
		var u struct{ ID string }
		if o.err != nil || o.status != 200 || json.Unmarshal(b, &u) != nil || u.ID != id {
			t.Errorf("acknowledged user %s (%s): %d %v %s", name, id, o.status, o.err, b)
		}
	}
	// No username exists twice, compared as the API compares them.
	conn, err := pgx.Connect(context.Background(), db.DSN())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	rows, err := conn.Query(context.Background(), `SELECT community_id, lower(username), count(*) FROM users GROUP BY 1, 2 HAVING count(*) > 1`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var c, name string
		var n int
		if err := rows.Scan(&c, &name, &n); err != nil {
			t.Fatal(err)
		}
		t.Errorf("community %s holds %d users named %q", c, n, name)
	}
	if err := rows.Err(); err != nil && !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
}
