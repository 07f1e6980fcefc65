// Package gcheadroom keeps the Go collector from running more often than
// a fixed memory allowance requires: after each collection it sets GOGC
// so that the next one starts no sooner than when the heap has grown by
// a number of bytes (the headroom) over what the last one found live,
// and never sooner than GOGC's base value would start it.
//
// Why a server of this module wants it: a procure node's heap is mostly
// its stores' indexes, a large, long-lived and pointer-dense structure,
// while each request allocates a few kilobytes that die at once. With
// GOGC=100 the collector runs each time the requests have allocated as
// much as the index holds, and every run marks the whole index again, so
// its cost per request (the index's marking divided by the requests
// between two runs) is the same at any size of index: a third of the
// server's CPU per request at 100,000 suppliers (bench/README.md,
// session 14). Fixing the allowance in bytes instead makes it cheap where
// memory is plentiful for the data; the allowance is what an operator
// budgets, and GOMEMLIMIT still caps the heap when set. The Go runtime
// has a ratio (GOGC) and a ceiling (GOMEMLIMIT) but no floor in bytes;
// this package is that floor, from debug.SetGCPercent and runtime/metrics.
package gcheadroom

import (
	"errors"
	"math/bits"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"time"
)

// MaxPercent bounds the GOGC this package sets (for a tiny live heap a
// large headroom asks for a huge ratio; the runtime's own bound on GOGC
// is far above).
const MaxPercent = 1 << 20

// Percent is the GOGC that makes the next collection start when the heap
// has grown by at least headroom bytes over live bytes, and no sooner
// than base (a GOGC of at least 1) would start it. A live heap of 0
// (nothing measured yet) gets base.
func Percent(live, headroom uint64, base int) int {
	if live == 0 || headroom == 0 {
		return base
	}
	// ceil(headroom*100/live) without overflow for any inputs; below
	// the bound q*100 + 100 < MaxPercent, so the sum needs no check.
	q := headroom / live
	if q >= MaxPercent/100 {
		return MaxPercent
	}
	p := q * 100
	if r := headroom % live; r != 0 {
		// r < live, so r*100/live < 100 and the quotient fits.
		hi, lo := bits.Mul64(r, 100)
		f, rem := bits.Div64(hi, lo, live)
		if rem != 0 {
			f++
		}
		p += f
	}
	return max(int(p), base)
}

// ErrActive is Keep's error when a policy already runs in the process:
// GOGC is process-wide, so one policy at a time.
var ErrActive = errors.New("gcheadroom: a headroom policy is already running in this process")

var active sync.Mutex // held while a policy runs (TryLock: one at a time)

// interval is how often Keep looks for a finished collection. A policy
// set 100 ms after a collection still governs the one after it.
const interval = 100 * time.Millisecond

// Keep starts keeping GOGC at Percent(live heap after each collection,
// headroom, base) while the live heap is steady (base while it grows by
// more than a quarter from one collection to the next) and returns the
// function that stops it and puts back the GOGC the process had. changed, when not nil, is called (from
// Keep's goroutine) with each GOGC it sets and the live heap it set it
// for; a change smaller than a twentieth is not made, so that a live
// heap moving by a few bytes does not reset the pacer at every
// collection.
func Keep(headroom uint64, base int, changed func(percent int, live uint64)) (stop func(), err error) {
	if base < 1 {
		return nil, errors.New("gcheadroom: base GOGC must be at least 1")
	}
	if !active.TryLock() {
		return nil, ErrActive
	}
	old := debug.SetGCPercent(base)
	k := &keeper{headroom: headroom, base: base, cur: base, changed: changed,
		set:     func(p int) { debug.SetGCPercent(p) },
		samples: []metrics.Sample{{Name: cyclesMetric}, {Name: liveMetric}}}
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(interval)
		defer t.Stop()
		k.check()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				k.check()
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			close(done)
			<-finished
			debug.SetGCPercent(old)
			active.Unlock()
		})
	}, nil
}

const (
	cyclesMetric = "/gc/cycles/total:gc-cycles"
	liveMetric   = "/gc/heap/live:bytes"
)

type keeper struct {
	headroom uint64
	base     int
	cur      int    // the GOGC last set
	cycles   uint64 // the collections seen
	live     uint64 // the live heap at the last collection seen
	samples  []metrics.Sample
	changed  func(int, uint64)
	set      func(int) // sets GOGC (debug.SetGCPercent; a test's own)
}

// check sets GOGC for the live heap of the last collection, if one
// finished since the last check.
func (k *keeper) check() {
	metrics.Read(k.samples)
	k.observe(k.samples[0].Value.Uint64(), k.samples[1].Value.Uint64())
}

// observe decides GOGC from the count of collections so far and the live
// heap the last one found, and sets it through k.set when it changes.
func (k *keeper) observe(cycles, live uint64) {
	if cycles == k.cycles {
		return
	}
	k.cycles = cycles
	p := Percent(live, k.headroom, k.base)
	if live > k.live+k.live/4 {
		// A heap that grew by more than a quarter since the last
		// collection is being filled (a store loading, an import): a
		// headroom then only lets it balloon with the load's garbage,
		// and loads measured slower with it (bench/README.md, session
		// 14). The headroom comes back once the live heap settles.
		p = k.base
	}
	k.live = live
	if d := p - k.cur; 20*d < k.cur && -20*d < k.cur {
		return // less than a twentieth off
	}
	k.set(p)
	k.cur = p
	if k.changed != nil {
		k.changed(p, live)
	}
}

// Auto is the headroom a server takes by default: a quarter of the
// memory the process may use (Memory), at most bound; 0 when that memory
// is unknown. A quarter leaves a node sized for its live heap (README,
// "Sizing a node": 1.7 times it, plus 200 MB) room for a heap that
// grows by the headroom before a collection.
func Auto(bound uint64) uint64 {
	return min(Memory()/4, bound)
}

// Memory is the memory this process may use: the machine's, or its
// control group's limit when lower; 0 when unknown (other systems than
// Linux).
func Memory() uint64 { return memory() }
