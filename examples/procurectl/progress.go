package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
)

// isTerminal reports whether w is a terminal (a character device), where
// a progress bar that redraws itself makes sense; a file or a pipe gets
// no bar.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// progress counts the bytes read through it and, when out is not nil,
// redraws a bar on out at most every redrawEvery. Read runs on the HTTP
// transport's goroutine, finish on the caller's: a mutex keeps them apart.
type progress struct {
	r     io.Reader
	out   io.Writer // nil: count only
	total int64     // -1: unknown
	now   func() time.Time

	mu    sync.Mutex
	done  int64
	start time.Time
	drawn time.Time

	stop    chan struct{} // closed by finish: ends the ticker
	stopped chan struct{} // closed when the ticker has ended
}

const redrawEvery = 200 * time.Millisecond

// tickEvery is how often the bar is redrawn while nothing is read: the
// server may stop reading for minutes while it writes what it has read
// (pgstore upserts a community when its entry ends), and the elapsed
// time shows the import is alive.
const tickEvery = time.Second

func newProgress(r io.Reader, total int64, out io.Writer) *progress {
	p := &progress{r: r, out: out, total: total, now: time.Now, stop: make(chan struct{}), stopped: make(chan struct{})}
	p.start = p.now()
	if out == nil {
		close(p.stopped)
		return p
	}
	go func() {
		defer close(p.stopped)
		t := time.NewTicker(tickEvery)
		defer t.Stop()
		for {
			select {
			case <-p.stop:
				return
			case <-t.C:
				p.mu.Lock()
				if now := p.now(); now.Sub(p.drawn) >= tickEvery {
					p.drawn = now
					fmt.Fprint(p.out, "\r"+renderBar(p.done, p.total, now.Sub(p.start)))
				}
				p.mu.Unlock()
			}
		}
	}()
	return p
}

func (p *progress) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done += int64(n)
	if p.out != nil {
		if now := p.now(); now.Sub(p.drawn) >= redrawEvery {
			p.drawn = now
			fmt.Fprint(p.out, "\r"+renderBar(p.done, p.total, now.Sub(p.start)))
		}
	}
	return n, err
}

// finish draws the bar one last time and ends its line; it returns the
// bytes read and the time taken.
func (p *progress) finish() (int64, time.Duration) {
	close(p.stop)
	<-p.stopped
	p.mu.Lock()
	defer p.mu.Unlock()
	elapsed := p.now().Sub(p.start)
	if p.out != nil {
		fmt.Fprint(p.out, "\r"+renderBar(p.done, p.total, elapsed)+"\n")
	}
	return p.done, elapsed
}

// barWidth is the bar's length in characters; the whole line stays under
// 80 columns.
const barWidth = 16

// renderBar is one frame of the bar: "[=====>      ]  42%  1.2 GiB of
// 2.9 GiB  85.0 MiB/s  1m05s"; without a total, the bytes, the rate and
// the time only. Once everything is sent the server still writes the
// rest: the frame says so. Spaces at the end wipe what a longer previous
// frame left.
func renderBar(done, total int64, elapsed time.Duration) string {
	rate := ""
	if secs := elapsed.Seconds(); secs > 0 {
		rate = "  " + formatBytes(int64(float64(done)/secs)) + "/s"
	}
	clock := "  " + elapsed.Truncate(time.Second).String()
	if total <= 0 {
		return formatBytes(done) + " sent" + rate + clock + "   "
	}
	frac := min(float64(done)/float64(total), 1)
	filled := int(frac * barWidth)
	bar := strings.Repeat("=", filled)
	if filled < barWidth {
		bar += ">" + strings.Repeat(" ", barWidth-filled-1)
	}
	line := fmt.Sprintf("[%s] %3d%%  %s of %s%s%s", bar, int(frac*100), formatBytes(done), formatBytes(total), rate, clock)
	if done >= total {
		line += "  server writing"
	}
	return line + "   "
}

// formatBytes renders n bytes in binary units with one decimal.
func formatBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 4; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTP"[exp])
}
