package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
)

// adminTokenEnv is the environment variable the example server reads its
// admin token from.
const adminTokenEnv = "PROCURE_ADMIN_TOKEN"

// writer drives supplier writes through the admin API at a steady rate
// while the read scenarios run (-writes): the "write while reading" load
// of the live-data stores. It cycles over a pool of suppliers of its own
// in the community under load, creating them on the first round and
// replacing them (a new name each time, so the sorted orders change) on
// the next ones. At most w.workers writes are in flight. A write due
// while every worker is busy waits for one, as a sync job's writes wait
// in its own queue, for as long as w.backlog (one second by default):
// the queue has w.backlog's writes of places (and never fewer than the
// workers). A write due while that queue is full is counted as missed
// and never sent: by then the server is w.backlog behind the rate asked,
// which is not keeping up with it. A write's latency is taken twice:
// from when a worker sent it (the server's time) and from when it was
// due (the writer's, with its wait for a worker: a stall of the server
// shows there even when no write was in flight through it).
type writer struct {
	base, token, community string
	rate, workers          int
	backlog                time.Duration
	ids                    []uuid.UUID
	client                 *http.Client
	start                  time.Time // of run: the writes are due from it

	mu        sync.Mutex
	latencies []time.Duration // from sending
	sinceDue  []time.Duration // from being due
	doneAt    []time.Time     // when each write that succeeded ended
	n         atomic.Int64    // writes sent
	errors    atomic.Int64    // failed or not 200
	missed    atomic.Int64
	seq       atomic.Int64

	// The pacing loop's own lateness: a loop that wakes late (the harness
	// shares the cores it loads) starts every write due by then at once,
	// and a burst larger than the free workers is missed without the
	// server being slow. lateWakes counts the wake-ups that found
	// lateBurst or more writes due, lateMissed the misses in them,
	// maxLate the longest delay of a wake-up past its first due write.
	lateWakes, lateMissed atomic.Int64
	maxLate               atomic.Int64 // nanoseconds
	// mostWaiting is the most writes due and waiting for a worker at once.
	mostWaiting atomic.Int64
}

// lateBurst is the number of writes due at one wake-up past which the
// wake-up counts as late (writeStats): at 1,000 a second, 5 ms.
const lateBurst = 5

// newWriter is a writer of rate writes a second, workers in flight at
// most and up to backlog of writes (at the rate) waiting for a worker.
func newWriter(base, token, community, nonce string, rate, workers int, backlog time.Duration) *writer {
	w := &writer{base: base, token: token, community: community, rate: rate, workers: workers, backlog: backlog,
		client: &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: workers}}}
	for i := range 1000 {
		w.ids = append(w.ids, uuid.NewSHA1(uuid.NameSpaceURL, []byte("procure-bench-writer/"+nonce+"/"+strconv.Itoa(i))))
	}
	return w
}

// run writes at w.rate per second until ctx ends.
func (w *writer) run(ctx context.Context) {
	jobs := make(chan int64, w.places())
	w.start = time.Now()
	var wg sync.WaitGroup
	for range w.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range jobs {
				if ctx.Err() == nil { // the writes still queued when the run ends are not sent
					w.write(ctx, w.dueAt(k))
				}
			}
		}()
	}
	// The writes are paced by the clock, not by counting ticks: a Ticker
	// drops the ticks its receiver is late for, and on a machine the
	// readers keep busy the loop was late for one in six at 1,000 a
	// second, which the report showed as writes the server had not done.
	// Each wake-up starts every write due by then.
	tick := time.NewTicker(time.Second / time.Duration(w.rate))
	defer func() {
		tick.Stop()
		close(jobs)
		wg.Wait()
	}()
	issued := int64(0)
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			issued = w.wake(time.Since(w.start), issued, jobs)
		}
	}
}

// places is the room of the queue of writes waiting for a worker: w.backlog
// of writes at w.rate, and at least one a worker.
func (w *writer) places() int {
	return max(w.workers, int(int64(w.backlog)*int64(w.rate)/int64(time.Second)))
}

// dueAt is when the k-th write (from 1) is due, from the start of the run.
func (w *writer) dueAt(k int64) time.Duration {
	return time.Duration(k * int64(time.Second) / int64(w.rate))
}

// wake queues the writes due by woke (into the run) past the issued
// first ones for the workers, counting those the queue has no room for as
// missed, the wake-up's lateness and the queue's length, and returns how
// many are now issued.
func (w *writer) wake(woke time.Duration, issued int64, jobs chan<- int64) int64 {
	due := w.due(woke)
	late := due-issued >= lateBurst
	if late {
		w.lateWakes.Add(1)
		// The first write due now was due at issued+1 writes' time.
		if d := int64(woke - w.dueAt(issued+1)); d > w.maxLate.Load() {
			w.maxLate.Store(d)
		}
	}
	for ; issued < due; issued++ {
		select {
		case jobs <- issued + 1:
		default:
			w.missed.Add(1)
			if late {
				w.lateMissed.Add(1)
			}
		}
	}
	if n := int64(len(jobs)); n > w.mostWaiting.Load() {
		w.mostWaiting.Store(n)
	}
	return issued
}

// due is how many writes w.rate asks for in the first d of a run.
func (w *writer) due(d time.Duration) int64 {
	return int64(d) * int64(w.rate) / int64(time.Second)
}

// body is the supplier written by the k-th write.
func (w *writer) body(k int64) (uuid.UUID, []byte) {
	id := w.ids[k%int64(len(w.ids))]
	// Names spread over the alphabet, so that writes land all over the
	// name order rather than at one end.
	name := string(rune('A'+k*7%26)) + fmt.Sprintf("%06d bench writer", k%1000003)
	return id, fmt.Appendf(nil, `{"id":%q,"name":%q,"profileType":"COMPANY","connectionState":"CONNECTED","keywords":["benchwriter"]}`, id, name)
}

// write sends one write, due at due into the run.
func (w *writer) write(ctx context.Context, due time.Duration) {
	id, body := w.body(w.seq.Add(1))
	url := w.base + "/admin/v1/communities/" + w.community + "/suppliers/" + id.String()
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, url, bytes.NewReader(body))
	if err != nil {
		w.errors.Add(1)
		return
	}
	req.Header.Set("Authorization", "Bearer "+w.token)
	req.Header.Set("Content-Type", "application/json")
	start := time.Now()
	res, err := w.client.Do(req)
	took, late := time.Since(start), time.Since(w.start)-due
	w.n.Add(1)
	if err != nil {
		if ctx.Err() == nil {
			w.errors.Add(1)
		}
		return
	}
	// Read to the end, so that the connection is kept for the next write:
	// a body closed unread closes its connection, and until session 19
	// every write paid a connection of its own (its accept, a goroutine,
	// the handshake), which a client that keeps its connections does not.
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		w.errors.Add(1)
		return
	}
	w.mu.Lock()
	w.latencies = append(w.latencies, took)
	w.sinceDue = append(w.sinceDue, max(late, took))
	w.doneAt = append(w.doneAt, time.Now())
	w.mu.Unlock()
}

// phase is a stretch of the load during which wrk read one target.
type phase struct {
	target   string // "server" or "baseline"
	from, to time.Time
	pg       schedTimes // what the throwaway PostgreSQL server's processes got of the cores (-postgres)
}

// byTarget groups phases by target, the targets in the order of their
// first phase.
func byTarget(phases []phase) [][]phase {
	var out [][]phase
	at := map[string]int{}
	for _, p := range phases {
		i, ok := at[p.target]
		if !ok {
			i = len(out)
			at[p.target] = i
			out = append(out, nil)
		}
		out[i] = append(out[i], p)
	}
	return out
}

// phaseRates returns, for each target in the order of their first phase,
// the writes a second that succeeded while wrk read it: the writes that
// ended within its phases over their total length. The writes do not
// stop between the servers' runs, so a server that keeps up only while
// wrk reads the other one shows here (bench/README.md, session 23).
func (w *writer) phaseRates(phases []phase) []phaseRate {
	w.mu.Lock()
	done := slices.Clone(w.doneAt)
	w.mu.Unlock()
	var out []phaseRate
	for _, ps := range byTarget(phases) {
		r := phaseRate{target: ps[0].target}
		for _, p := range ps {
			r.length += p.to.Sub(p.from)
			for _, t := range done {
				if !t.Before(p.from) && t.Before(p.to) {
					r.writes++
				}
			}
		}
		out = append(out, r)
	}
	return out
}

// phaseRate is what phaseRates found for one target.
type phaseRate struct {
	target string
	writes int
	length time.Duration
}

func (r phaseRate) String() string {
	if r.length <= 0 {
		return r.target + " read: -"
	}
	return fmt.Sprintf("%.0f/s while wrk read the %s (%.1fs)", float64(r.writes)/r.length.Seconds(), r.target, r.length.Seconds())
}

// writeStats is what a writer did over a run.
type writeStats struct {
	rate             int // requested, per second
	workers          int // the most writes in flight
	places           int // the most writes waiting for a worker
	backlog          time.Duration
	sent, errs, miss int64
	achieved         float64 // successful writes per second
	p50, p99         time.Duration
	// Of the latencies from when each write was due.
	dueP50, dueP99 time.Duration
	mostWaiting    int64
	// The pacing loop's lateness (writer.lateWakes).
	lateWakes, lateMissed int64
	maxLate               time.Duration
}

func (w *writer) stats(elapsed time.Duration) writeStats {
	w.mu.Lock()
	lat, due := slices.Clone(w.latencies), slices.Clone(w.sinceDue)
	w.mu.Unlock()
	s := writeStats{rate: w.rate, workers: w.workers, places: w.places(), backlog: w.backlog,
		sent: w.n.Load(), errs: w.errors.Load(), miss: w.missed.Load(), mostWaiting: w.mostWaiting.Load(),
		lateWakes: w.lateWakes.Load(), lateMissed: w.lateMissed.Load(), maxLate: time.Duration(w.maxLate.Load())}
	if elapsed > 0 {
		s.achieved = float64(len(lat)) / elapsed.Seconds()
	}
	s.p50, s.p99 = percentiles(lat)
	s.dueP50, s.dueP99 = percentiles(due)
	return s
}

// percentiles sorts d and returns its 50th and 99th percentiles (zero
// when d is empty).
func percentiles(d []time.Duration) (p50, p99 time.Duration) {
	if len(d) == 0 {
		return 0, 0
	}
	slices.Sort(d)
	return d[len(d)/2], d[min(len(d)-1, len(d)*99/100)]
}

func (s writeStats) String() string {
	ms := func(d time.Duration) string { return formatLatency(float64(d.Microseconds())) }
	return fmt.Sprintf("%d/s asked, %.0f/s done (%d sent, %d failed, %d missed; at most %d in flight, and %d due may wait for a worker, %s of writes), "+
		"latency from sending p50 %s p99 %s, from being due p50 %s p99 %s, at most %d waiting at once; "+
		"the writer's own pacing woke %d times %d or more writes late (the longest %s), %d of the missed in those",
		s.rate, s.achieved, s.sent, s.errs, s.miss, s.workers, s.places, s.backlog,
		ms(s.p50), ms(s.p99), ms(s.dueP50), ms(s.dueP99), s.mostWaiting,
		s.lateWakes, lateBurst, ms(s.maxLate), s.lateMissed)
}

// joinRates lists rates, separated by semicolons.
func joinRates(rates []phaseRate) string {
	parts := make([]string, len(rates))
	for i, r := range rates {
		parts[i] = r.String()
	}
	return strings.Join(parts, "; ")
}
