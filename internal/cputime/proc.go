package cputime

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Other processes' CPU time, from Linux's /proc (proc names its root,
// "/proc" but in tests; elsewhere there is none, and these return an
// error): what a PostgreSQL server on the same machine uses while a
// benchmark or the load test runs, for one.

// clockTicks is the unit of /proc/PID/stat's CPU times: USER_HZ, 100 on
// every Linux this runs on.
const clockTicks = 100

// StatField returns field n (counted from 1, n > 2) of a /proc/PID/stat
// line, or false when the line has none. The command name, field 2, is in
// parentheses and may hold spaces and parentheses: fields are counted
// after its closing one.
func StatField(b []byte, n int) (string, bool) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || n < 3 {
		return "", false
	}
	f := strings.Fields(string(b[i+1:])) // f[0] is field 3
	if len(f) < n-2 {
		return "", false
	}
	return f[n-3], true
}

// statInts reads fields ns of process pid's stat line as integers.
func statInts(proc string, pid int, ns ...int) ([]int64, error) {
	path := filepath.Join(proc, strconv.Itoa(pid), "stat")
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	out := make([]int64, len(ns))
	for i, n := range ns {
		f, ok := StatField(b, n)
		if !ok {
			return nil, fmt.Errorf("%s: no field %d", path, n)
		}
		if out[i], err = strconv.ParseInt(f, 10, 64); err != nil {
			return nil, fmt.Errorf("%s: field %d: %w", path, n, err)
		}
	}
	return out, nil
}

// Parent returns the process id of pid's parent.
func Parent(proc string, pid int) (int, error) {
	f, err := statInts(proc, pid, 4)
	if err != nil {
		return 0, err
	}
	return int(f[0]), nil
}

// Used returns the CPU time (user and system) process pid has used.
func Used(proc string, pid int) (time.Duration, error) {
	f, err := statInts(proc, pid, 14, 15) // utime, stime
	if err != nil {
		return 0, err
	}
	return time.Duration(f[0]+f[1]) * time.Second / clockTicks, nil
}

// Family returns root, first, and the processes whose parent it is: a
// PostgreSQL server's postmaster and what it forked (backends, WAL
// writer, checkpointer, autovacuum), which is all of the server's
// processes. A process that ends while proc is read is left out.
func Family(proc string, root int) ([]int, error) {
	ents, err := os.ReadDir(proc)
	if err != nil {
		return nil, err
	}
	pids := []int{root}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == root {
			continue
		}
		if ppid, err := Parent(proc, pid); err == nil && ppid == root {
			pids = append(pids, pid)
		}
	}
	return pids, nil
}

// FamilyUsed returns the CPU time root and its children (Family) have
// used, the children that ended and root has reaped included (its cutime
// and cstime): the difference over a run is what the run cost them.
func FamilyUsed(proc string, root int) (time.Duration, error) {
	pids, err := Family(proc, root)
	if err != nil {
		return 0, err
	}
	f, err := statInts(proc, root, 14, 15, 16, 17) // utime, stime, cutime, cstime
	if err != nil {
		return 0, err
	}
	total := time.Duration(f[0]+f[1]+f[2]+f[3]) * time.Second / clockTicks
	for _, pid := range pids[1:] { // pids[0] is root
		t, err := Used(proc, pid)
		if errors.Is(err, os.ErrNotExist) {
			continue // ended since the listing
		}
		if err != nil {
			return 0, err
		}
		total += t
	}
	return total, nil
}
