package main

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// realtimePriority is the SCHED_RR priority -postgres-realtime gives the
// throwaway server's processes: above every process of the default
// policy, low among real-time ones.
const realtimePriority = 10

// setRealtime puts each of pids under SCHED_RR at realtimePriority.
// Processes the postmaster forks later (each new connection's backend)
// inherit its policy. A process that has ended since pids were listed (a
// connection's backend, an autovacuum worker) is passed over. Needs root
// (CAP_SYS_NICE).
func setRealtime(pids []int) error {
	for _, pid := range pids {
		attr := unix.SchedAttr{Policy: unix.SCHED_RR, Priority: realtimePriority}
		err := unix.SchedSetAttr(pid, &attr, 0)
		if errors.Is(err, unix.ESRCH) {
			continue
		}
		if err != nil {
			return fmt.Errorf("real-time priority for process %d: %w", pid, err)
		}
	}
	return nil
}
