package cputime_test

import (
	"runtime"
	"testing"
	"time"

	"github.com/procurekit/procure/internal/cputime"
)

// Both clocks move forward with work done on the thread, and the thread's
// never by more than the process's.
func TestClocksAdvance(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the thread's CPU time is read on Linux only")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	t0, p0 := cputime.Thread(), cputime.Process()
	x := 0
	for start := time.Now(); time.Since(start) < 20*time.Millisecond; {
		x++
	}
	dt, dp := cputime.Thread()-t0, cputime.Process()-p0
	if dt <= 0 || dp <= 0 {
		t.Fatalf("after busy work: thread +%v, process +%v; want both positive (%d)", dt, dp, x)
	}
	if dt > dp+10*time.Millisecond { // the two clocks tick at different granularity
		t.Errorf("the thread's CPU (+%v) exceeds the process's (+%v)", dt, dp)
	}
}
