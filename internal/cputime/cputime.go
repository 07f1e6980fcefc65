// Package cputime reads CPU time for the benchmarks and load tools: the
// calling thread's (Thread, on Linux) and the process's (Process, on Unix
// systems), elsewhere both 0, and a benchmark reports wall time only; and
// other processes' from Linux's /proc (Used, FamilyUsed: a PostgreSQL
// server's on the same machine), elsewhere an error.
// On a machine whose other load preempts a benchmark, ns/op measures the
// scheduler as much as the code; the thread's CPU per op does not.
package cputime

import (
	"runtime"
	"testing"
)

// PerOp locks the benchmark's goroutine to its thread and returns the
// function that, called when the benchmark's loop ends, reports the
// thread's CPU time per op as cpu-ns/op and unlocks the thread:
//
//	defer cputime.PerOp(b)()
func PerOp(b *testing.B) func() {
	runtime.LockOSThread()
	c0 := Thread()
	return func() {
		b.ReportMetric(float64(Thread()-c0)/float64(max(b.N, 1)), "cpu-ns/op")
		runtime.UnlockOSThread()
	}
}
