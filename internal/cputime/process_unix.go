//go:build unix

package cputime

import (
	"syscall"
	"time"
)

// Process is the CPU time of the whole process (user and system, the
// garbage collector's work on other threads included), or 0 when it
// cannot be read.
func Process() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
