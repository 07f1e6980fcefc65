package main

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// realtimePriority is the SCHED_RR priority -postgres-realtime gives the
// throwaway server's processes: above every process of the default
// policy, low among real-time ones.
const realtimePriority = 10

// setRealtime puts each of pids under SCHED_RR at realtimePriority.
// Processes the postmaster forks later (each new connection's backend)
// inherit its policy. Needs root (CAP_SYS_NICE).
func setRealtime(pids []int) error {
	for _, pid := range pids {
		attr := unix.SchedAttr{Policy: unix.SCHED_RR, Priority: realtimePriority}
		if err := unix.SchedSetAttr(pid, &attr, 0); err != nil {
			return fmt.Errorf("real-time priority for process %d: %w", pid, err)
		}
	}
	return nil
}
