package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/procurekit/procure/bench/internal/fixture"
)

// The random scenarios (random-supplier, random-page) send what users
// send: each request names a supplier, or a page of 20 by name, drawn at
// random from all of the community's. The harness reads the whole list
// from the server first (collectIDs), records the answer to every request
// of the set (recordAll) for the baseline, which so holds every answer in
// memory and pays the same random memory access as the server, and wrk's
// Lua draws the requests (randomSupplierLua, randomPageLua).

const (
	randomSupplier = "supplier" // scenario.Random: every supplier of the community
	randomPage     = "page"     // scenario.Random: every page of 20 by name
	pageSize       = 20
)

// recordRequestID is the X-Request-Id the harness sends while recording
// the random sets: the server repeats a caller's well-formed id, so every
// recorded answer carries the same header (the baseline shares one header
// map between them) of the length of the server's own ids.
const recordRequestID = "0be7c4b00000000000000000000000b1"

// randomTargets is the request set of a random scenario: every supplier's
// detail, or every page of 20 of a community of total suppliers.
func randomTargets(kind string, ids []string, total int) []string {
	var out []string
	switch kind {
	case randomSupplier:
		out = make([]string, len(ids))
		for i, id := range ids {
			out[i] = suppliersPath + "/" + id
		}
	case randomPage:
		n := pages(total)
		out = make([]string, n)
		for p := range n {
			out[p] = suppliersPath + "?page=" + strconv.Itoa(p)
		}
	}
	return out
}

// pages is the number of pages of 20 of total suppliers.
func pages(total int) int { return (total + pageSize - 1) / pageSize }

// randomPrelude numbers wrk's threads and seeds each thread's generator
// from its number and the run tag, so that the threads and the runs draw
// different sequences.
const randomPrelude = `
local threads = 0
function setup(thread)
  threads = threads + 1
  thread:set("tid", threads)
end
local tag = "run"
local function seed()
  local s = tid or 0
  for i = 1, #tag do s = (s * 31 + tag:byte(i)) % 2147483647 end
  math.randomseed(s + 1)
end
`

// randomSupplierLua requests the detail of a supplier drawn at random from
// the ids in idsPath (one a line), read by each thread when it starts.
func randomSupplierLua(idsPath string) string {
	return randomPrelude + fmt.Sprintf(`
local ids = {}
function init(args)
  if args[1] then tag = args[1] end
  seed()
  for line in io.lines(%q) do ids[#ids + 1] = line end
end
function request()
  return wrk.format(nil, %q .. ids[math.random(#ids)])
end
`, idsPath, suppliersPath+"/")
}

// randomPageLua requests a page drawn at random of the n pages of 20.
func randomPageLua(n int) string {
	return randomPrelude + fmt.Sprintf(`
function init(args)
  if args[1] then tag = args[1] end
  seed()
end
function request()
  return wrk.format(nil, %q .. (math.random(%d) - 1))
end
`, suppliersPath+"?page=", n)
}

// writeIDs writes ids one a line.
func writeIDs(path string, ids []string) error {
	return os.WriteFile(path, []byte(strings.Join(ids, "\n")+"\n"), 0o644)
}

// recorder fetches answers from the server under test for the random
// sets, with the supplier API's bearer token.
type recorder struct {
	base   string
	cr     creds
	client *http.Client
}

func newRecorder(base string, cr creds, workers int) *recorder {
	return &recorder{base: base, cr: cr, client: &http.Client{Timeout: 30 * time.Second,
		Transport: &http.Transport{MaxIdleConnsPerHost: workers}}}
}

func (rc *recorder) get(ctx context.Context, target string) (*http.Response, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rc.base+target, nil)
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+rc.cr.token)
	req.Header.Set("X-Request-Id", recordRequestID)
	resp, err := rc.client.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp, b, err
}

// collectIDs reads the community's whole supplier list in pages of 100
// and returns every supplier id in name order. It fails unless the list
// holds exactly total suppliers, each once: the random sets must cover
// the community the generator made.
func (rc *recorder) collectIDs(ctx context.Context, total int) ([]string, error) {
	ids := make([]string, 0, total)
	seen := make(map[string]bool, total)
	for p := 0; ; p++ {
		target := suppliersPath + "?size=100&page=" + strconv.Itoa(p)
		resp, body, err := rc.get(ctx, target)
		if err != nil {
			return nil, fmt.Errorf("reading the supplier list: %w", err)
		}
		if resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("reading the supplier list: %s: status %d: %s", target, resp.StatusCode, clip(body))
		}
		var pg struct {
			Content []struct {
				ID string `json:"id"`
			} `json:"content"`
			Page struct {
				TotalElements int `json:"totalElements"`
			} `json:"page"`
		}
		if err := json.Unmarshal(body, &pg); err != nil {
			return nil, fmt.Errorf("reading the supplier list: %s: %w", target, err)
		}
		if pg.Page.TotalElements != total {
			return nil, fmt.Errorf("reading the supplier list: %s says %d suppliers, the generator made %d", target, pg.Page.TotalElements, total)
		}
		for _, s := range pg.Content {
			if !safeID.MatchString(s.ID) || seen[s.ID] {
				return nil, fmt.Errorf("reading the supplier list: %s: id %q is malformed or listed twice", target, s.ID)
			}
			seen[s.ID] = true
			ids = append(ids, s.ID)
		}
		if len(pg.Content) < 100 {
			break
		}
	}
	if len(ids) != total {
		return nil, fmt.Errorf("reading the supplier list: %d suppliers listed, the generator made %d", len(ids), total)
	}
	return ids, nil
}

// recordAll fetches every target with workers requests at a time and
// appends each answer to w, in the order of targets. check judges each
// answer (the i-th target's); it returns how many answers failed their
// check and the first such failure. An error fetching (not a wrong
// answer) ends the recording. progress, if not nil, is called now and
// then with the number recorded.
func (rc *recorder) recordAll(ctx context.Context, targets []string, workers int, w *fixture.Writer,
	check func(i int, status int, body []byte) error, progress func(done int)) (bad int, firstBad, err error) {
	type answer struct {
		r   fixture.Response
		err error
	}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() { cancel(); wg.Wait() }()
	// Each target gets its own channel of one, so the writer takes the
	// answers in order while the workers run ahead by a bounded window.
	window := make(chan chan answer, 4*workers)
	jobs := make(chan struct {
		i   int
		out chan answer
	})
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				resp, body, err := rc.get(ctx, targets[j.i])
				if err != nil {
					j.out <- answer{err: fmt.Errorf("recording %s: %w", targets[j.i], err)}
					continue
				}
				j.out <- answer{r: fixture.Record(http.MethodGet, targets[j.i], resp, body)}
			}
		}()
	}
	go func() {
		defer close(window)
		defer close(jobs)
		for i := range targets {
			out := make(chan answer, 1)
			select {
			case window <- out:
			case <-ctx.Done():
				return
			}
			select {
			case jobs <- struct {
				i   int
				out chan answer
			}{i, out}:
			case <-ctx.Done():
				return
			}
		}
	}()
	i := 0
	for out := range window {
		a := <-out
		if a.err != nil {
			return bad, firstBad, a.err
		}
		if cerr := check(i, a.r.Status, a.r.Body); cerr != nil {
			bad++
			if firstBad == nil {
				firstBad = fmt.Errorf("%s: %w", targets[i], cerr)
			}
		}
		if err := w.Write(a.r); err != nil {
			return bad, firstBad, err
		}
		i++
		if progress != nil && i%10000 == 0 {
			progress(i)
		}
	}
	if i != len(targets) {
		return bad, firstBad, ctx.Err()
	}
	return bad, firstBad, nil
}

// randomCheck is the check of the i-th answer of a random set: a
// supplier with the i-th id, or the i-th page with its 20 suppliers (the
// last page's rest) of total.
func randomCheck(kind string, ids []string, total int) func(i, status int, body []byte) error {
	if kind == randomSupplier {
		return func(i, status int, body []byte) error { return fieldCheck("id", ids[i])(status, body) }
	}
	return func(i, status int, body []byte) error {
		return pageCheck(min(pageSize, total-i*pageSize), total)(status, body)
	}
}

// recordRandomSets records, for the random scenarios among scs, every
// answer of their sets into fw (skipping those already recorded), writes
// the ids file the supplier script reads, and sets that script. It
// returns the check failures, as the report lists them.
func recordRandomSets(ctx context.Context, scs []scenario, recorded map[string]bool, fw *fixture.Writer,
	base string, cr creds, total int, work string, logf func(string, ...any)) ([]string, error) {
	var ids []string
	var failed []string
	const workers = 8
	rc := newRecorder(base, cr, workers)
	for i := range scs {
		sc := &scs[i]
		if sc.Random == "" {
			continue
		}
		if ids == nil {
			logf("reading the whole supplier list (%d suppliers) for the random scenarios", total)
			var err error
			if ids, err = rc.collectIDs(ctx, total); err != nil {
				return nil, err
			}
			idsPath := filepath.Join(work, "supplier-ids.txt")
			if err := writeIDs(idsPath, ids); err != nil {
				return nil, err
			}
			for j := range scs {
				if scs[j].Random == randomSupplier {
					scs[j].Lua = randomSupplierLua(idsPath)
				}
			}
		}
		all := randomTargets(sc.Random, ids, total)
		check := randomCheck(sc.Random, ids, total)
		var targets []string
		var index []int // of targets in all, for the check
		for k, t := range all {
			if key := fixture.Key(http.MethodGet, t); !recorded[key] {
				recorded[key] = true
				targets = append(targets, t)
				index = append(index, k)
			}
		}
		start := time.Now()
		logf("%s: recording %d answers for the baseline", sc.Name, len(targets))
		bad, first, err := rc.recordAll(ctx, targets, workers, fw,
			func(k, status int, body []byte) error { return check(index[k], status, body) },
			func(done int) {
				if done%(max(10000, len(targets)/10/10000*10000)) == 0 {
					logf("%s: %d of %d recorded", sc.Name, done, len(targets))
				}
			})
		if err != nil {
			return nil, fmt.Errorf("scenario %s: %w", sc.Name, err)
		}
		logf("%s: %d answers recorded in %.1fs", sc.Name, len(targets), time.Since(start).Seconds())
		if bad > 0 {
			f := fmt.Sprintf("%s: %d of %d answers wrong; the first: %v", sc.Name, bad, len(targets), first)
			failed = append(failed, f)
			logf("CHECK FAILED %s", f)
		}
	}
	return failed, nil
}
