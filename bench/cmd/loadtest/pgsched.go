package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/procurekit/procure/internal/cputime"
)

// What the throwaway PostgreSQL server's processes get of the cores.
//
// The harness, the node, wrk, the baseline and the throwaway server share
// one machine's cores, where a deployment gives the database a host of its
// own. On two cores, a durable database's backend that runs a node's
// writes spends about as long waiting for a core after each wake-up (its
// commit's flush, the next statements' arrival) as it spends running,
// whatever its nice value: half a second of each every second while wrk
// reads the node (bench/README.md, session 24). The report says how long
// the server's processes ran and waited in each phase (schedstat), and
// -postgres-realtime puts them ahead of everything else on the machine,
// as a host of their own would, so that what is left is the node's.

// schedTimes is how long a set of processes ran on a core and waited,
// runnable, for one.
type schedTimes struct {
	run, wait time.Duration
}

func (a schedTimes) sub(b schedTimes) schedTimes {
	return schedTimes{run: a.run - b.run, wait: a.wait - b.wait}
}

func (a schedTimes) add(b schedTimes) schedTimes {
	return schedTimes{run: a.run + b.run, wait: a.wait + b.wait}
}

// parseSchedstat reads a /proc/.../schedstat line: the time on a core and
// the time waiting on a run queue, in nanoseconds, then the count of
// slices.
func parseSchedstat(s string) (schedTimes, error) {
	f := strings.Fields(s)
	if len(f) != 3 {
		return schedTimes{}, fmt.Errorf("schedstat %q: want 3 fields", s)
	}
	run, err1 := strconv.ParseInt(f[0], 10, 64)
	wait, err2 := strconv.ParseInt(f[1], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return schedTimes{}, fmt.Errorf("schedstat %q: %w", s, err)
	}
	return schedTimes{run: time.Duration(run), wait: time.Duration(wait)}, nil
}

// postmasterPID reads the server's process id from its data directory.
func (pg *postgres) postmasterPID() (int, error) {
	b, err := os.ReadFile(filepath.Join(pg.dir, "data", "postmaster.pid"))
	if err != nil {
		return 0, err
	}
	line, _, _ := bytes.Cut(b, []byte("\n"))
	pid, err := strconv.Atoi(strings.TrimSpace(string(line)))
	if err != nil || pid <= 0 {
		return 0, fmt.Errorf("postmaster.pid: no process id in %q", line)
	}
	return pid, nil
}

// schedOf sums the schedstat times of every thread of pids; a process
// that has gone since the listing counts nothing.
func schedOf(proc string, pids []int) schedTimes {
	var t schedTimes
	for _, pid := range pids {
		dir := filepath.Join(proc, strconv.Itoa(pid), "task")
		tasks, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, task := range tasks {
			b, err := os.ReadFile(filepath.Join(dir, task.Name(), "schedstat"))
			if err != nil {
				continue
			}
			if s, err := parseSchedstat(string(b)); err == nil {
				t = t.add(s)
			}
		}
	}
	return t
}

// pgSched follows the throwaway server's processes across the phases.
// Backends that ended within a phase take their times with them, so a
// phase's figures count the processes that lived through it: the node's
// connections do, being pooled.
type pgSched struct {
	proc string
	root int
}

// now is the server's processes' times so far.
func (p *pgSched) now() schedTimes {
	pids, err := cputime.Family(p.proc, p.root)
	if err != nil {
		return schedTimes{}
	}
	return schedOf(p.proc, pids)
}

// pgPhase is what the server's processes got of the cores while wrk read
// one target.
type pgPhase struct {
	target string
	times  schedTimes
	length time.Duration
}

// pgPhases sums the server's processes' times (phase.pg) of each target's
// phases, the targets in the order of their first phase.
func pgPhases(phases []phase) []pgPhase {
	var out []pgPhase
	for _, ps := range byTarget(phases) {
		sum := pgPhase{target: ps[0].target}
		for _, p := range ps {
			sum.times = sum.times.add(p.pg)
			sum.length += p.to.Sub(p.from)
		}
		out = append(out, sum)
	}
	return out
}

func (p pgPhase) String() string {
	if p.length <= 0 {
		return p.target + " read: -"
	}
	sec := p.length.Seconds()
	return fmt.Sprintf("%.2fs on a core and %.2fs waiting for one each second while wrk read the %s",
		p.times.run.Seconds()/sec, p.times.wait.Seconds()/sec, p.target)
}

func joinPGPhases(ps []pgPhase) string {
	parts := make([]string, len(ps))
	for i, p := range ps {
		parts[i] = p.String()
	}
	return strings.Join(parts, "; ")
}
