package cputime_test

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/procurekit/procure/internal/cputime"
)

func TestStatField(t *testing.T) {
	line := []byte("42 (a (b) c) S 7 42 42 0 -1\n")
	for _, tc := range []struct {
		n    int
		want string
		ok   bool
	}{
		{3, "S", true},
		{4, "7", true}, // after a command name with spaces and parentheses
		{8, "-1", true},
		{9, "", false}, // past the line's end
		{2, "", false}, // the command itself is not a field here
	} {
		if got, ok := cputime.StatField(line, tc.n); got != tc.want || ok != tc.ok {
			t.Errorf("StatField(%d) = %q, %v; want %q, %v", tc.n, got, ok, tc.want, tc.ok)
		}
	}
	if _, ok := cputime.StatField([]byte("no parentheses"), 3); ok {
		t.Error("StatField of a line without a command: ok")
	}
}

// fakeStat writes proc/PID/stat for a process of parent ppid named comm
// that used utime and stime ticks, and whose children it reaped used
// cutime and cstime.
func fakeStat(t *testing.T, proc string, pid, ppid int, comm string, utime, stime, cutime, cstime int) {
	t.Helper()
	f := []string{strconv.Itoa(pid), "(" + comm + ")", "S", strconv.Itoa(ppid), "1", "1", "0", "-1", "0", "0", "0", "0", "0",
		strconv.Itoa(utime), strconv.Itoa(stime), strconv.Itoa(cutime), strconv.Itoa(cstime), "20", "0", "1"}
	dir := filepath.Join(proc, strconv.Itoa(pid))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "stat"), []byte(strings.Join(f, " ")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A server's family is its process and those it forked (not theirs, nor
// another server's); its CPU time is theirs and what the children it
// reaped used, in ticks of 10 ms.
func TestFamily(t *testing.T) {
	proc := t.TempDir()
	fakeStat(t, proc, 1, 0, "init", 900, 900, 900, 900)
	fakeStat(t, proc, 100, 1, "postgres", 10, 5, 20, 7)
	fakeStat(t, proc, 101, 100, "postgres: walwriter", 3, 1, 0, 0)
	fakeStat(t, proc, 102, 100, "postgres: db 127.0.0.1(5) idle", 40, 10, 0, 0) // parentheses in the name
	fakeStat(t, proc, 200, 1, "postgres", 77, 77, 0, 0)                         // another server
	fakeStat(t, proc, 300, 102, "child of a backend", 88, 88, 0, 0)
	if err := os.MkdirAll(filepath.Join(proc, "self"), 0o755); err != nil { // not a number: skipped
		t.Fatal(err)
	}
	pids, err := cputime.Family(proc, 100)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(pids)
	if want := []int{100, 101, 102}; !slices.Equal(pids, want) {
		t.Errorf("Family = %v, want %v", pids, want)
	}
	got, err := cputime.FamilyUsed(proc, 100)
	if want := (10 + 5 + 20 + 7 + 3 + 1 + 40 + 10) * 10 * time.Millisecond; got != want || err != nil {
		t.Errorf("FamilyUsed = %v, %v; want %v", got, err, want)
	}
	if u, err := cputime.Used(proc, 102); u != 500*time.Millisecond || err != nil {
		t.Errorf("Used(102) = %v, %v; want 500ms", u, err)
	}
	if p, err := cputime.Parent(proc, 300); p != 102 || err != nil {
		t.Errorf("Parent(300) = %d, %v; want 102", p, err)
	}
	if _, err := cputime.FamilyUsed(proc, 999); err == nil {
		t.Error("FamilyUsed of a process that is not there: no error")
	}
	if _, err := cputime.Family(filepath.Join(proc, "nope"), 100); err == nil {
		t.Error("Family of a missing /proc: no error")
	}
}

// This process's own time, from the real /proc, grows with work.
func TestUsedOfSelf(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("/proc is Linux's")
	}
	before, err := cputime.Used("/proc", os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	x := 0
	for start := time.Now(); time.Since(start) < 50*time.Millisecond; {
		x++
	}
	after, err := cputime.Used("/proc", os.Getpid())
	if err != nil || after <= before {
		t.Errorf("Used: %v then %v (%v, %d)", before, after, err, x)
	}
}
