package pgtest

import (
	"os/exec"
	"strconv"
	"testing"
)

func itoa(i int) string { return strconv.Itoa(i) }

// deadPID returns the pid of a process that has exited.
func deadPID(tb testing.TB) int {
	tb.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		tb.Skipf("cannot run true: %v", err)
	}
	return cmd.Process.Pid
}
