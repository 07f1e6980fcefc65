package gcheadroom

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

// The files that hold a control group's memory limit (v2, then v1), as
// seen from inside it.
var cgroupLimitFiles = []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}

func memory() uint64 {
	var si syscall.Sysinfo_t
	if syscall.Sysinfo(&si) != nil {
		return 0
	}
	total := uint64(si.Totalram) * uint64(si.Unit)
	for _, f := range cgroupLimitFiles {
		if l, ok := readLimit(f); ok {
			total = min(total, l)
		}
	}
	return total
}

// readLimit reads a control group's memory limit; ok is false when the
// file is missing or says there is none ("max").
func readLimit(path string) (uint64, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	v, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	if err != nil || v == 0 {
		return 0, false
	}
	return v, true
}
