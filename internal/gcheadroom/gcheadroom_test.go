package gcheadroom

import (
	"errors"
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"testing"
	"time"
)

func TestPercent(t *testing.T) {
	const (
		mib = 1 << 20
		gib = 1 << 30
	)
	for _, c := range []struct {
		name           string
		live, headroom uint64
		base, want     int
	}{
		{"nothing measured yet", 0, gib, 100, 100},
		{"no headroom asked", 300 * mib, 0, 100, 100},
		{"a small index: the headroom decides", 256 * mib, gib, 100, 400},
		{"rounded up, never below the headroom", 300 * mib, gib, 100, 342},
		{"the live heap as large as the headroom: base", gib, gib, 100, 100},
		{"a large index: base", 3 * gib, gib, 100, 100},
		{"a base above the headroom's ratio", 256 * mib, gib, 500, 500},
		{"a tiny heap: bounded", 1, gib, 100, MaxPercent},
		{"no overflow at the top", math.MaxUint64, math.MaxUint64, 100, 100},
		{"no overflow in the remainder", math.MaxUint64 - 1, math.MaxUint64, 1, 101},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := Percent(c.live, c.headroom, c.base); got != c.want {
				t.Errorf("Percent(%d, %d, %d) = %d, want %d", c.live, c.headroom, c.base, got, c.want)
			}
		})
	}
}

// gogc is the GOGC the runtime runs with now.
func gogc(t *testing.T) int {
	t.Helper()
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	return int(s[0].Value.Uint64())
}

type changes struct {
	mu   sync.Mutex
	seen [][2]uint64 // percent, live
}

func (c *changes) note(p int, live uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seen = append(c.seen, [2]uint64{uint64(p), live})
}

func (c *changes) last() (p int, live uint64, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.seen) == 0 {
		return 0, 0, false
	}
	l := c.seen[len(c.seen)-1]
	return int(l[0]), l[1], true
}

// Keep raises GOGC after a collection to what the headroom needs for the
// live heap that collection found, and stop puts back the GOGC before.
func TestKeepRaisesGOGCAndRestores(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(77))
	const headroom = 1 << 30 // far above this test binary's live heap
	var ch changes
	stop, err := Keep(headroom, 100, ch.note)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	// Collections until Keep has seen the live heap steady over two.
	deadline := time.Now().Add(10 * time.Second)
	p, live, ok := ch.last()
	for !ok && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(2 * interval)
		p, live, ok = ch.last()
	}
	if !ok {
		t.Fatal("no GOGC set within 10 s of a collection")
	}
	if want := Percent(live, headroom, 100); p != want || p <= 100 {
		t.Errorf("set GOGC %d for a live heap of %d bytes, want Percent's %d (above 100)", p, live, want)
	}
	// A later collection may have set it again meanwhile: compare with
	// the last value set, read after the runtime's.
	if got := gogc(t); got <= 100 {
		t.Errorf("the runtime runs with GOGC %d, want the headroom's (%d set)", got, p)
	} else if last, _, _ := ch.last(); got != last {
		t.Errorf("the runtime runs with GOGC %d, want the %d set last", got, last)
	}
	stop()
	if got := gogc(t); got != 77 {
		t.Errorf("after stop GOGC is %d, want the 77 from before Keep", got)
	}
}

// A headroom smaller than what base leaves already changes nothing: GOGC
// stays at base through collections.
func TestKeepNeverBelowBase(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	var ch changes
	stop, err := Keep(1<<10, 150, ch.note)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	for range 3 {
		runtime.GC()
		time.Sleep(2 * interval)
	}
	if p, live, ok := ch.last(); ok {
		t.Errorf("GOGC set to %d (live %d) for a 1 KiB headroom; want base kept", p, live)
	}
	if got := gogc(t); got != 150 {
		t.Errorf("GOGC is %d, want base 150", got)
	}
}

// GOGC is process-wide: a second policy is refused until the first stops.
func TestKeepOneAtATime(t *testing.T) {
	stop, err := Keep(1<<30, 100, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Keep(1<<30, 100, nil); !errors.Is(err, ErrActive) {
		t.Errorf("second Keep: err %v, want ErrActive", err)
	}
	stop()
	stop() // stopping twice is harmless
	stop2, err := Keep(1<<30, 100, nil)
	if err != nil {
		t.Fatalf("Keep after stop: %v", err)
	}
	stop2()
	if _, err := Keep(1<<30, 0, nil); err == nil {
		t.Error("Keep with base 0: no error")
	}
}

// Auto is a quarter of the memory the process may use, bounded.
func TestAuto(t *testing.T) {
	m := Memory()
	if runtime.GOOS == "linux" && m == 0 {
		t.Fatal("Memory is 0 on Linux")
	}
	if got, want := Auto(math.MaxUint64), m/4; got != want {
		t.Errorf("Auto(no bound) = %d, want a quarter of %d", got, m)
	}
	if m >= 4<<20 {
		if got := Auto(1 << 20); got != 1<<20 {
			t.Errorf("Auto(1 MiB) = %d, want the bound", got)
		}
	}
}

// The policy's decisions over a sequence of collections: the headroom's
// GOGC while the live heap is steady, base while it grows by more than a
// quarter from one collection to the next, nothing new without a new
// collection, and no change smaller than a twentieth. (Against the real
// runtime a test cannot control the collections: an allocation may start
// one of its own between two of the test's.)
func TestObserve(t *testing.T) {
	const mib = 1 << 20
	type step struct {
		cycles, live uint64
		want         int // GOGC after the step
		set          bool
	}
	for _, c := range []struct {
		name  string
		steps []step
	}{
		{"steady from the start", []step{
			{1, 256 * mib, 100, false}, // first collection: growth from nothing
			{2, 256 * mib, 400, true},
			{3, 260 * mib, 400, false}, // 394: less than a twentieth off
			{4, 300 * mib, 342, true},
		}},
		{"a load, then serving", []step{
			{1, 10 * mib, 100, false},
			{2, 20 * mib, 100, false},
			{3, 40 * mib, 100, false},
			{5, 80 * mib, 100, false},
			{6, 90 * mib, 1138, true}, // +12.5%: settled
			{7, 200 * mib, 100, true}, // an import: base again
			{8, 210 * mib, 488, true},
		}},
		{"no new collection, no decision", []step{
			{1, 256 * mib, 100, false},
			{1, 256 * mib, 100, false},
			{2, 256 * mib, 400, true},
			{2, 1024 * mib, 400, false},
		}},
		{"a heap above the headroom keeps base", []step{
			{1, 2048 * mib, 100, false},
			{2, 2048 * mib, 100, false},
			{3, 1500 * mib, 100, false},
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			set := -1 // the GOGC set by the step, -1 for none
			k := &keeper{headroom: 1 << 30, base: 100, cur: 100, set: func(p int) { set = p }}
			for i, s := range c.steps {
				set = -1
				k.observe(s.cycles, s.live)
				if k.cur != s.want || (set >= 0) != s.set || (s.set && set != s.want) {
					t.Errorf("step %d (cycle %d, live %d MiB): GOGC %d, set %d; want %d, set %v",
						i, s.cycles, s.live/mib, k.cur, set, s.want, s.set)
				}
			}
		})
	}
}
