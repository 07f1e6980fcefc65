package main

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
)

// TestWriter: the writer PUTs suppliers of its own pool to the admin API
// of the community under load, with the admin token, each body naming the
// id of its path, and counts what failed.
func TestWriter(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]int{}
	var bad []string
	fail := false
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var rec struct {
			ID   string `json:"id"`
			Name string `json:"name"`
		}
		id, ok := strings.CutPrefix(r.URL.Path, "/admin/v1/communities/c-load/suppliers/")
		mu.Lock()
		defer mu.Unlock()
		switch {
		case r.Method != http.MethodPut || !ok:
			bad = append(bad, r.Method+" "+r.URL.Path)
		case r.Header.Get("Authorization") != "Bearer tok" || r.Header.Get("Content-Type") != "application/json":
			bad = append(bad, "headers "+r.Header.Get("Authorization"))
		case json.Unmarshal(body, &rec) != nil || rec.ID != id || rec.Name == "":
			bad = append(bad, "body "+string(body))
		}
		seen[id]++
		if fail {
			w.WriteHeader(http.StatusInternalServerError)
		}
	}))
	defer srv.Close()

	w := newWriter(srv.URL, "tok", "c-load", "n1", 500, 16, time.Second)
	pool := map[string]bool{}
	for _, id := range w.ids {
		pool[id.String()] = true
	}
	if len(pool) != 1000 {
		t.Fatalf("a pool of %d distinct ids; want 1000", len(pool))
	}
	run := func(d time.Duration) {
		ctx, cancel := context.WithTimeout(context.Background(), d)
		defer cancel()
		w.run(ctx)
	}
	run(300 * time.Millisecond)
	st := w.stats(300 * time.Millisecond)
	mu.Lock()
	if len(bad) > 0 {
		t.Errorf("bad requests: %q", bad)
	}
	for id := range seen {
		if !pool[id] {
			t.Errorf("wrote %s, which is not in the writer's pool", id)
		}
	}
	mu.Unlock()
	if st.sent == 0 || st.errs != 0 || st.p50 <= 0 {
		t.Errorf("stats after a good run: %+v; want writes sent, none failed, a latency", st)
	}
	mu.Lock()
	fail = true
	mu.Unlock()
	before := st.sent
	run(200 * time.Millisecond)
	// Every answered write of the second run failed (one cut off by the
	// end of the run counts as sent, not failed).
	if st := w.stats(time.Second); st.errs == 0 || st.errs > st.sent-before || st.errs < st.sent-before-int64(w.workers) {
		t.Errorf("after a failing run: %+v; the writes since %d should have failed", st, before)
	}
	// The rate is the clock's, whatever ticks the loop was late for.
	for _, c := range []struct {
		d    time.Duration
		want int64
	}{{0, 0}, {time.Millisecond, 0}, {2 * time.Millisecond, 1}, {time.Second, 500}, {10*time.Second + 3*time.Millisecond, 5001}} {
		if got := w.due(c.d); got != c.want {
			t.Errorf("due(%s) at 500/s = %d; want %d", c.d, got, c.want)
		}
	}
	// The same nonce gives the same pool; another nonce another one.
	if newWriter("", "", "", "n1", 1, 1, 0).ids[7] != w.ids[7] || newWriter("", "", "", "n2", 1, 1, 0).ids[7] == w.ids[7] {
		t.Error("pool ids do not follow the nonce")
	}
	id, body := w.body(3)
	if id != w.ids[3] || !strings.Contains(string(body), id.String()) || uuid.Validate(id.String()) != nil {
		t.Errorf("body(3) = %s, %s", id, body)
	}
}

// -write-workers bounds the writes in flight: against a server that takes
// 50 ms a write, two workers send about two writes per 50 ms whatever the
// rate asked; with -write-backlog 0 the writes due while both are busy and
// the queue's two places are full are counted as missed, with 1s they
// wait in the queue (none missed, most of them waiting at the end).
func TestWriterWorkersBoundWritesInFlight(t *testing.T) {
	for _, c := range []struct {
		backlog              time.Duration
		minMissed, maxMissed int64
		minWaiting           int64
	}{
		{0, 150, 200, 2},
		{time.Second, 0, 0, 150},
	} {
		t.Run(c.backlog.String(), func(t *testing.T) {
			st, most := writeAgainstSlowServer(t, c.backlog)
			if most != 2 {
				t.Errorf("at most %d writes in flight; want 2", most)
			}
			// 400 ms at 500/s asks for 200 writes; two workers at 50 ms a
			// write send at most about 20.
			if st.sent > 24 || st.miss < c.minMissed || st.miss > c.maxMissed || st.mostWaiting < c.minWaiting {
				t.Errorf("2 workers against a 50 ms server: %+v; want at most 24 sent, %d to %d missed, at least %d waiting at once",
					st, c.minMissed, c.maxMissed, c.minWaiting)
			}
		})
	}
}

// writeAgainstSlowServer runs a writer of 500/s, 2 workers and backlog for
// 400 ms against a server that takes 50 ms a write, and returns its stats
// and the most writes the server had in flight at once.
func writeAgainstSlowServer(t *testing.T, backlog time.Duration) (writeStats, int64) {
	var inFlight, most atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		n := inFlight.Add(1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		time.Sleep(50 * time.Millisecond)
		inFlight.Add(-1)
	}))
	defer srv.Close()
	w := newWriter(srv.URL, "tok", "c-load", "n1", 500, 2, backlog)
	ctx, cancel := context.WithTimeout(context.Background(), 400*time.Millisecond)
	defer cancel()
	w.run(ctx)
	return w.stats(400 * time.Millisecond), most.Load()
}

// The writer keeps its connections: against a server that answers each
// write with a body (the stored supplier, as the admin API does), its
// writes share at most one connection a worker.
func TestWriterKeepsConnections(t *testing.T) {
	var conns, writes atomic.Int64
	body := `{"id":"x","name":"` + strings.Repeat("n", 2000) + `"}`
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		writes.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, body)
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	w := newWriter(srv.URL, "tok", "c-load", "n1", 200, 2, time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	w.run(ctx)
	if n := writes.Load(); n < 20 {
		t.Fatalf("%d writes in 500 ms at 200/s", n)
	}
	if n := conns.Load(); n > 2 {
		t.Errorf("%d writes opened %d connections; want at most 2 (one a worker)", writes.Load(), n)
	}
}

// A wake-up of the pacing loop starts every write due by then; one that
// finds lateBurst or more due counts as late, with how late its first
// write was and which of the misses were its own (writeStats).
func TestWriterWakeLateness(t *testing.T) {
	w := newWriter("http://127.0.0.1:1", "tok", "c", "n", 1000, 3, 0)
	jobs := make(chan int64, w.places())
	steps := []struct {
		woke                        time.Duration
		issued                      int64 // after the wake-up
		missed, lateWakes, lateMiss int64
		maxLate                     time.Duration
	}{
		// 2 due: on time, both started.
		{2 * time.Millisecond, 2, 0, 0, 0, 0},
		// 3 due (3..5 ms): on time, started.
		{5 * time.Millisecond, 5, 0, 0, 0, 0},
		// 10 due at 15 ms, the first of them (the 6th) due at 6 ms: late
		// by 9 ms; 3 started (as many as the jobs' room), 7 missed.
		{15 * time.Millisecond, 15, 7, 1, 7, 9 * time.Millisecond},
		// 1 due: on time, started.
		{16 * time.Millisecond, 16, 7, 1, 7, 9 * time.Millisecond},
		// 5 due at 21 ms (the first due at 17 ms): lateBurst, so late, by
		// 4 ms; 2 missed; the longest lateness stays 9 ms.
		{21 * time.Millisecond, 21, 9, 2, 9, 9 * time.Millisecond},
		// 1 due: on time.
		{22 * time.Millisecond, 22, 9, 2, 9, 9 * time.Millisecond},
	}
	issued, taken := int64(0), int64(0)
	for i, st := range steps {
		issued = w.wake(st.woke, issued, jobs)
		s := w.stats(time.Second)
		if issued != st.issued || s.miss != st.missed || s.lateWakes != st.lateWakes || s.lateMissed != st.lateMiss || s.maxLate != st.maxLate {
			t.Fatalf("wake-up %d at %v: issued %d, missed %d, late wake-ups %d (%d missed in them, longest %v); want %d, %d, %d (%d, %v)",
				i, st.woke, issued, s.miss, s.lateWakes, s.lateMissed, s.maxLate, st.issued, st.missed, st.lateWakes, st.lateMiss, st.maxLate)
		}
		for len(jobs) > 0 { // the workers take the jobs queued, which are the writes' numbers in turn
			if k := <-jobs; k <= taken {
				t.Fatalf("wake-up %d queued write %d after %d", i, k, taken)
			} else {
				taken = k
			}
		}
	}
	if taken != 22 {
		t.Errorf("the last write queued is the %dth; want the 22nd", taken)
	}
	got := w.stats(time.Second)
	if got.mostWaiting != 3 {
		t.Errorf("at most %d writes waiting at once; want 3 (the queue's places, full at 15 ms)", got.mostWaiting)
	}
	if !strings.Contains(got.String(), "woke 2 times 5 or more writes late (the longest 9.00ms), 9 of the missed in those") {
		t.Errorf("report %q does not give the pacing's lateness", got)
	}
}

// A server that stalls for 150 ms: with a second's backlog the writes due
// meanwhile wait for a worker and are all sent once it answers again
// (none missed; their latency from being due shows the stall), where a
// queue of one place a worker misses most of them.
func TestWriterBacklogRidesOutAStall(t *testing.T) {
	for _, c := range []struct {
		backlog    time.Duration
		wantMissed func(int64) bool
	}{
		{0, func(n int64) bool { return n >= 15 }},
		{time.Second, func(n int64) bool { return n == 0 }},
	} {
		t.Run(c.backlog.String(), func(t *testing.T) {
			var stalling atomic.Bool
			release := make(chan struct{})
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.Copy(io.Discard, r.Body)
				if stalling.Load() {
					<-release
				}
			}))
			defer srv.Close()
			var once sync.Once
			unstall := func() { once.Do(func() { stalling.Store(false); close(release) }) }
			defer unstall() // before srv.Close, which waits for stalled handlers
			time.AfterFunc(100*time.Millisecond, func() { stalling.Store(true) })
			time.AfterFunc(250*time.Millisecond, unstall)
			w := newWriter(srv.URL, "tok", "c-load", "n1", 200, 2, c.backlog)
			ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
			defer cancel()
			w.run(ctx)
			st := w.stats(500 * time.Millisecond)
			if !c.wantMissed(st.miss) || st.errs != 0 {
				t.Fatalf("a 150 ms stall at 200/s with backlog %s: %+v (missed %d, failed %d)", c.backlog, st, st.miss, st.errs)
			}
			if c.backlog == 0 {
				return
			}
			// 100 writes due in 500 ms; the ones due in the stall are done
			// after it, and at the end at most a few are left in flight.
			if done := int64(st.achieved * 0.5); done < 90 || st.mostWaiting < 20 || st.dueP99 < 100*time.Millisecond || st.dueP50 >= 100*time.Millisecond {
				t.Errorf("after the stall: %d done, at most %d waiting, latency from being due p50 %s p99 %s; want 90 or more done, 20 or more waiting, a p99 of 100ms or more and a p50 under it",
					done, st.mostWaiting, st.dueP50, st.dueP99)
			}
			// The writes due in the stall waited for it; only the two in
			// flight when it began took long from their sending.
			slow := func(d []time.Duration) (n int) {
				for _, l := range d {
					if l >= 50*time.Millisecond {
						n++
					}
				}
				return n
			}
			if due, sent := slow(w.sinceDue), slow(w.latencies); due < 15 || sent > 4 {
				t.Errorf("%d writes took 50 ms or more from being due and %d from being sent; want 15 or more and at most 4", due, sent)
			}
		})
	}
}

// The writes done by phase: each write counts in the phase it ended in,
// each target's phases are summed, and a write between phases counts in
// none.
func TestPhaseRates(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	w := &writer{}
	// 10 writes in the server's first second, 20 in the baseline's
	// second, 1 in the gap, 5 in the server's second phase (half a
	// second), and one exactly at a phase's end (the next's start).
	for i := range 10 {
		w.doneAt = append(w.doneAt, at(i*100))
	}
	for i := range 20 {
		w.doneAt = append(w.doneAt, at(1000+i*50))
	}
	w.doneAt = append(w.doneAt, at(2100))
	for i := range 5 {
		w.doneAt = append(w.doneAt, at(2200+i*100))
	}
	phases := []phase{
		{target: "server", from: at(0), to: at(1000)},
		{target: "baseline", from: at(1000), to: at(2000)},
		{target: "server", from: at(2200), to: at(2700)},
	}
	got := w.phaseRates(phases)
	want := []phaseRate{{"server", 15, 1500 * time.Millisecond}, {"baseline", 20, time.Second}}
	if !slices.Equal(got, want) {
		t.Fatalf("phaseRates = %+v; want %+v", got, want)
	}
	if s := joinRates(got); s != "10/s while wrk read the server (1.5s); 20/s while wrk read the baseline (1.0s)" {
		t.Errorf("the report's line: %q", s)
	}
}
