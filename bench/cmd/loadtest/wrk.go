package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// result is one wrk run, as printed by the done hook of luaDone.
type result struct {
	Requests      int64   `json:"requests"`
	DurationUS    int64   `json:"duration_us"`
	Bytes         int64   `json:"bytes"`
	ConnectErrors int64   `json:"connect_errors"`
	ReadErrors    int64   `json:"read_errors"`
	WriteErrors   int64   `json:"write_errors"`
	StatusErrors  int64   `json:"status_errors"` // responses with status >= 400
	Timeouts      int64   `json:"timeouts"`
	P50           float64 `json:"p50_us"`
	P90           float64 `json:"p90_us"`
	P99           float64 `json:"p99_us"`
	Mean          float64 `json:"mean_us"`
	Max           float64 `json:"max_us"`

	// CPU is the CPU time (user and system) the server under load spent
	// during the run, measured by the harness (cputime.Used); 0 when unknown.
	CPU time.Duration `json:"-"`
}

// CPUPerRequest is the run's server CPU time per request, in
// microseconds; 0 when unknown.
func (r result) CPUPerRequest() float64 {
	if r.CPU <= 0 || r.Requests <= 0 {
		return 0
	}
	return float64(r.CPU.Microseconds()) / float64(r.Requests)
}

// RPS is the run's throughput in requests per second.
func (r result) RPS() float64 {
	if r.DurationUS <= 0 {
		return 0
	}
	return float64(r.Requests) / (float64(r.DurationUS) / 1e6)
}

// Errors counts failed requests: socket errors, timeouts and error
// statuses.
func (r result) Errors() int64 {
	return r.ConnectErrors + r.ReadErrors + r.WriteErrors + r.StatusErrors + r.Timeouts
}

const resultPrefix = "WRK_RESULT "

// parseResult finds the done hook's line in wrk's output.
func parseResult(out []byte) (result, error) {
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, resultPrefix); ok {
			var r result
			if err := json.Unmarshal([]byte(rest), &r); err != nil {
				return result{}, fmt.Errorf("wrk result line %q: %w", line, err)
			}
			return r, nil
		}
	}
	return result{}, fmt.Errorf("no %q line in wrk's output:\n%s", strings.TrimSpace(resultPrefix), clip(out))
}

// wrkOptions are the load parameters of every run.
type wrkOptions struct {
	bin         string
	threads     int
	connections int
	timeout     time.Duration
}

// runWrk drives base+target with the scenario's script for d and returns
// the parsed result. tag is passed to the script (unique usernames).
func runWrk(ctx context.Context, o wrkOptions, scriptPath, base, target string, d time.Duration, tag string) (result, error) {
	args := []string{
		"-t" + strconv.Itoa(o.threads), "-c" + strconv.Itoa(o.connections),
		"-d" + strconv.Itoa(int(d.Round(time.Second)/time.Second)) + "s",
		"--timeout", strconv.Itoa(int(o.timeout/time.Second)) + "s",
		"-s", scriptPath, base + target, "--", tag,
	}
	// The run ends by itself after d; the extra minute bounds a wrk that
	// hangs.
	ctx, cancel := context.WithTimeout(ctx, d+time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, o.bin, args...)
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return result{}, ctx.Err()
		}
		return result{}, fmt.Errorf("wrk %s: %w\n%s", strings.Join(args, " "), err, clip(out.Bytes()))
	}
	return parseResult(out.Bytes())
}

// findWrk returns the path of wrk, installing it from Debian's packages
// when it is missing and this process may (root with apt-get); otherwise
// the error says how to install it.
func findWrk(ctx context.Context, path string, install bool, logf func(string, ...any)) (string, error) {
	if path != "" {
		return exec.LookPath(path)
	}
	if p, err := exec.LookPath("wrk"); err == nil {
		return p, nil
	}
	const how = "wrk is not installed: install it with `apt-get install -y wrk` (Debian/Ubuntu) or from https://github.com/wg/wrk, or pass -wrk PATH"
	apt, err := exec.LookPath("apt-get")
	if !install || err != nil || os.Geteuid() != 0 {
		return "", errors.New(how)
	}
	logf("wrk is not installed; installing it with apt-get (running as root)")
	for _, args := range [][]string{{"update"}, {"install", "-y", "wrk"}} {
		cmd := exec.CommandContext(ctx, apt, args...)
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", fmt.Errorf("apt-get %s: %w\n%s\n%s", strings.Join(args, " "), err, clip(out), how)
		}
	}
	return exec.LookPath("wrk")
}

// wrkVersion returns wrk's version line ("wrk 4.1.0 [epoll] ...").
func wrkVersion(bin string) string {
	out, _ := exec.Command(bin, "-v").CombinedOutput() // wrk -v exits 1 after printing
	line, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	line, _, _ = strings.Cut(line, " Copyright")
	return strings.TrimSpace(line)
}
