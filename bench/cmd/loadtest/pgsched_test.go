package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/procurekit/procure/internal/cputime"
)

func TestParseSchedstat(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    schedTimes
		wantErr string
	}{
		{"1500000000 250000000 4321\n", schedTimes{run: 1500 * time.Millisecond, wait: 250 * time.Millisecond}, ""},
		{"0 0 0", schedTimes{}, ""},
		{"1 2", schedTimes{}, "want 3 fields"},
		{"1 x 3", schedTimes{}, "invalid syntax"},
	} {
		got, err := parseSchedstat(tc.in)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("parseSchedstat(%q) error = %v, want one containing %q", tc.in, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("parseSchedstat(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
}

// fakeProc writes a /proc with processes of the given parents, each with
// threads whose schedstat is run and wait in milliseconds.
func fakeProc(t *testing.T, procs map[int]struct {
	ppid    int
	comm    string
	threads [][2]int
}) string {
	t.Helper()
	dir := t.TempDir()
	for pid, p := range procs {
		pd := filepath.Join(dir, strconv.Itoa(pid))
		stat := strconv.Itoa(pid) + " (" + p.comm + ") S " + strconv.Itoa(p.ppid) + " 1 1 0 -1\n"
		mustWrite(t, filepath.Join(pd, "stat"), stat)
		for i, th := range p.threads {
			line := strconv.Itoa(th[0]*1e6) + " " + strconv.Itoa(th[1]*1e6) + " 7\n"
			mustWrite(t, filepath.Join(pd, "task", strconv.Itoa(pid+i), "schedstat"), line)
		}
	}
	mustWrite(t, filepath.Join(dir, "self", "stat"), "not a process of its own") // not a number: skipped
	return dir
}

func mustWrite(t *testing.T, path, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// The server's processes are the postmaster and the processes it forked;
// their times are the sums over their threads, and a process that is not
// the server's (another parent, or the postmaster's own parent) counts
// nothing.
func TestClusterSched(t *testing.T) {
	type proc = struct {
		ppid    int
		comm    string
		threads [][2]int
	}
	dir := fakeProc(t, map[int]proc{
		1:   {0, "init", [][2]int{{9000, 9000}}},
		100: {1, "postgres", [][2]int{{10, 1}}},
		101: {100, "postgres: walwriter", [][2]int{{5, 2}}},
		102: {100, "postgres: postgres db 127.0.0.1(5) idle", [][2]int{{300, 500}, {1, 1}}},
		103: {100, "a (b) c", [][2]int{{4, 4}}},  // parentheses in the name
		200: {1, "postgres", [][2]int{{77, 77}}}, // another server
		300: {102, "child of a backend", [][2]int{{88, 88}}},
	})
	pids, err := cputime.Family(dir, 100)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(pids)
	if want := []int{100, 101, 102, 103}; !slices.Equal(pids, want) {
		t.Errorf("cputime.Family = %v, want %v", pids, want)
	}
	got := (&pgSched{proc: dir, root: 100}).now()
	want := schedTimes{run: 320 * time.Millisecond, wait: 508 * time.Millisecond}
	if got != want {
		t.Errorf("times = %+v, want %+v", got, want)
	}
	// A process gone since the listing counts nothing.
	if got := schedOf(dir, []int{102, 999}); got != (schedTimes{run: 301 * time.Millisecond, wait: 501 * time.Millisecond}) {
		t.Errorf("schedOf with a gone process = %+v", got)
	}
	if _, err := cputime.Family(filepath.Join(dir, "nope"), 100); err == nil {
		t.Error("cputime.Family of a missing /proc: no error")
	}
}

// A target's phases add up, in the order of its first phase, and the
// line gives seconds on a core and waiting for one per second of phase.
func TestPGPhases(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	ps := pgPhases([]phase{
		{target: "server", from: at(0), to: at(10), pg: schedTimes{run: 3 * time.Second, wait: 5 * time.Second}},
		{target: "baseline", from: at(10), to: at(20), pg: schedTimes{run: 4500 * time.Millisecond, wait: 3 * time.Second}},
		{target: "server", from: at(25), to: at(26), pg: schedTimes{run: 300 * time.Millisecond, wait: 500 * time.Millisecond}},
	})
	want := "0.30s on a core and 0.50s waiting for one each second while wrk read the server; " +
		"0.45s on a core and 0.30s waiting for one each second while wrk read the baseline"
	if got := joinPGPhases(ps); got != want {
		t.Errorf("joinPGPhases =\n%s\nwant\n%s", got, want)
	}
	if got := (pgPhase{target: "server"}).String(); got != "server read: -" {
		t.Errorf("an empty phase = %q", got)
	}
	if d := (schedTimes{run: 5, wait: 9}).sub(schedTimes{run: 2, wait: 4}); d != (schedTimes{run: 3, wait: 5}) {
		t.Errorf("sub = %+v", d)
	}
}

// A process that ended between the listing of the server's processes and
// setRealtime is passed over, not an error (CI met one: a backend of the
// harness's own short connection).
func TestSetRealtimePassesOverEndedProcess(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("sched_setattr is Linux's")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$") // a process that ends at once
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	gone := cmd.Process.Pid
	if _, err := os.Stat("/proc/" + strconv.Itoa(gone)); err == nil {
		t.Skipf("process id %d was taken again", gone)
	}
	if err := setRealtime([]int{gone}); err != nil {
		t.Errorf("setRealtime(ended process) = %v, want nil", err)
	}
}
