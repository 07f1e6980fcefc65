package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
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
// the next ones. A write due while every worker is busy waits for one in
// a queue of as many places as there are workers (its latency counts from
// when a worker sends it); a write due while that queue is full too is
// counted as missed and never sent, so the rate it reports is what the
// server sustained.
type writer struct {
	base, token, community string
	rate, workers          int
	ids                    []uuid.UUID
	client                 *http.Client

	mu        sync.Mutex
	latencies []time.Duration
	n         atomic.Int64 // writes sent
	errors    atomic.Int64 // failed or not 200
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
}

// lateBurst is the number of writes due at one wake-up past which the
// wake-up counts as late (writeStats): at 1,000 a second, 5 ms.
const lateBurst = 5

func newWriter(base, token, community, nonce string, rate, workers int) *writer {
	w := &writer{base: base, token: token, community: community, rate: rate, workers: workers,
		client: &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: workers}}}
	for i := range 1000 {
		w.ids = append(w.ids, uuid.NewSHA1(uuid.NameSpaceURL, []byte("procure-bench-writer/"+nonce+"/"+strconv.Itoa(i))))
	}
	return w
}

// run writes at w.rate per second until ctx ends.
func (w *writer) run(ctx context.Context) {
	jobs := make(chan struct{}, w.workers)
	var wg sync.WaitGroup
	for range w.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range jobs {
				w.write(ctx)
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
	start, issued := time.Now(), int64(0)
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			issued = w.wake(time.Since(start), issued, jobs)
		}
	}
}

// wake starts the writes due by woke (into the run) past the issued
// first ones, counting those no worker is free for as missed and the
// wake-up's lateness, and returns how many are now issued.
func (w *writer) wake(woke time.Duration, issued int64, jobs chan<- struct{}) int64 {
	due := w.due(woke)
	late := due-issued >= lateBurst
	if late {
		w.lateWakes.Add(1)
		// The first write due now was due at issued+1 writes' time.
		if d := int64(woke - time.Duration((issued+1)*int64(time.Second)/int64(w.rate))); d > w.maxLate.Load() {
			w.maxLate.Store(d)
		}
	}
	for ; issued < due; issued++ {
		select {
		case jobs <- struct{}{}:
		default:
			w.missed.Add(1)
			if late {
				w.lateMissed.Add(1)
			}
		}
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

func (w *writer) write(ctx context.Context) {
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
	took := time.Since(start)
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
	w.mu.Unlock()
}

// writeStats is what a writer did over a run.
type writeStats struct {
	rate             int // requested, per second
	workers          int // the most writes in flight
	sent, errs, miss int64
	achieved         float64 // successful writes per second
	p50, p99         time.Duration
	// The pacing loop's lateness (writer.lateWakes).
	lateWakes, lateMissed int64
	maxLate               time.Duration
}

func (w *writer) stats(elapsed time.Duration) writeStats {
	w.mu.Lock()
	lat := slices.Clone(w.latencies)
	w.mu.Unlock()
	slices.Sort(lat)
	s := writeStats{rate: w.rate, workers: w.workers, sent: w.n.Load(), errs: w.errors.Load(), miss: w.missed.Load(),
		lateWakes: w.lateWakes.Load(), lateMissed: w.lateMissed.Load(), maxLate: time.Duration(w.maxLate.Load())}
	if elapsed > 0 {
		s.achieved = float64(len(lat)) / elapsed.Seconds()
	}
	if len(lat) > 0 {
		s.p50 = lat[len(lat)/2]
		s.p99 = lat[min(len(lat)-1, len(lat)*99/100)]
	}
	return s
}

func (s writeStats) String() string {
	return fmt.Sprintf("%d/s asked, %.0f/s done (%d sent, %d failed, %d missed; at most %d in flight), latency p50 %s p99 %s; the writer's own pacing woke %d times %d or more writes late (the longest %s), %d of the missed in those",
		s.rate, s.achieved, s.sent, s.errs, s.miss, s.workers, formatLatency(float64(s.p50.Microseconds())), formatLatency(float64(s.p99.Microseconds())),
		s.lateWakes, lateBurst, formatLatency(float64(s.maxLate.Microseconds())), s.lateMissed)
}
