package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// freePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	port := ln.Addr().(*net.TCPAddr).Port
	return port, ln.Close()
}

// proc is a child process the harness started and must stop.
type proc struct {
	name    string
	cmd     *exec.Cmd
	logPath string
	done    chan struct{}
	err     error // set before done is closed
}

// startProc starts bin in its own process group (so that stopping it also
// stops anything it started, and a Ctrl-C reaches the harness first),
// with its output going to logPath.
func startProc(name, logPath, bin string, args ...string) (*proc, error) {
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout = logf
	cmd.Stderr = logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &proc{name: name, cmd: cmd, logPath: logPath, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		logf.Close()
		close(p.done)
	}()
	return p, nil
}

func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// stop sends SIGTERM to the process group, and SIGKILL if it has not
// exited within grace.
func (p *proc) stop(grace time.Duration) error {
	if p.exited() {
		return nil
	}
	pgid := -p.cmd.Process.Pid
	if err := syscall.Kill(pgid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("stop %s: %w", p.name, err)
	}
	select {
	case <-p.done:
		return nil
	case <-time.After(grace):
	}
	if err := syscall.Kill(pgid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("kill %s: %w", p.name, err)
	}
	<-p.done
	return fmt.Errorf("%s did not stop within %s and was killed", p.name, grace)
}

// logTail returns the end of the process's log, for error messages.
func (p *proc) logTail() string {
	b, err := os.ReadFile(p.logPath)
	if err != nil {
		return ""
	}
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(b)
}

// cleanup runs registered stop functions in reverse order, once.
type cleanup struct {
	mu    sync.Mutex
	funcs []func() error
}

func (c *cleanup) add(f func() error) {
	c.mu.Lock()
	c.funcs = append(c.funcs, f)
	c.mu.Unlock()
}

func (c *cleanup) run(w io.Writer) {
	c.mu.Lock()
	funcs := c.funcs
	c.funcs = nil
	c.mu.Unlock()
	for i := len(funcs) - 1; i >= 0; i-- {
		if err := funcs[i](); err != nil {
			fmt.Fprintln(w, "loadtest: cleanup:", err)
		}
	}
}

// probe asks a server once; a connection error means it is not up yet.
type probe func(ctx context.Context) (status int, body []byte, err error)

// waitReady calls probe until the server answers 200. A 503 (the example
// server answers it while its data loads) and connection errors are
// retried until timeout, or until the process exits; any other answer
// from a running server is an error at once (wrong credentials, missing
// route).
func waitReady(ctx context.Context, p *proc, ask probe, timeout time.Duration) error {
	var last error // the latest connection error, for the timeout's message
	return pollProc(ctx, p, timeout, 200*time.Millisecond,
		func(ctx context.Context) (bool, error) {
			status, body, err := ask(ctx)
			if last = err; err != nil {
				return false, nil
			}
			if status == http.StatusServiceUnavailable {
				last = fmt.Errorf("%s answers 503: %s", p.name, clip(body))
				return false, nil
			}
			if status != http.StatusOK {
				return false, fmt.Errorf("%s is up but answers %d: %s", p.name, status, clip(body))
			}
			return true, nil
		},
		func() error {
			return fmt.Errorf("%s exited before it was ready (%v); its log ends:\n%s", p.name, p.err, p.logTail())
		},
		func() error {
			return fmt.Errorf("%s not ready after %s (last error: %v); its log ends:\n%s", p.name, timeout, last, p.logTail())
		})
}

// waitLog waits until the process's log contains text: for a server that
// answers at once but warms up in the background (pgstore's supplier
// cache loads while reads go to the database), the line that says it is
// warm.
func waitLog(ctx context.Context, p *proc, text string, timeout time.Duration) error {
	return pollProc(ctx, p, timeout, 500*time.Millisecond,
		func(context.Context) (bool, error) {
			b, err := os.ReadFile(p.logPath)
			return err == nil && bytes.Contains(b, []byte(text)), nil
		},
		func() error {
			return fmt.Errorf("%s exited before its log said %q (%v); its log ends:\n%s", p.name, text, p.err, p.logTail())
		},
		func() error {
			return fmt.Errorf("%s: its log did not say %q within %s; its log ends:\n%s", p.name, text, timeout, p.logTail())
		})
}

// pollProc calls check at once and then every interval until it reports
// done or fails. It gives up with exited's error when p exits first, with
// timedOut's when timeout passes, and with ctx's error when ctx ends.
func pollProc(ctx context.Context, p *proc, timeout, interval time.Duration,
	check func(context.Context) (done bool, err error), exited, timedOut func() error) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		if done, err := check(ctx); done || err != nil {
			return err
		}
		select {
		case <-p.done:
			return exited()
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return timedOut()
			}
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// rssOf returns the resident memory of pid in bytes (Linux).
func rssOf(pid int) (int64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			f := strings.Fields(rest)
			if len(f) >= 1 {
				kb, err := strconv.ParseInt(f[0], 10, 64)
				return kb * 1024, err
			}
		}
	}
	return 0, errors.New("no VmRSS in /proc/" + strconv.Itoa(pid) + "/status")
}
