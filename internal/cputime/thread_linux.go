package cputime

import (
	"syscall"
	"time"
	"unsafe"
)

// Thread is the CPU time the calling OS thread has used
// (clock_gettime(CLOCK_THREAD_CPUTIME_ID)), or 0 when it cannot be read;
// the caller locks its goroutine to the thread, so that the difference
// over a call is that call's own CPU.
func Thread() time.Duration {
	var ts syscall.Timespec
	const clockThreadCPUTime = 3
	if _, _, e := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTime, uintptr(unsafe.Pointer(&ts)), 0); e != 0 {
		return 0
	}
	return time.Duration(ts.Nano())
}
