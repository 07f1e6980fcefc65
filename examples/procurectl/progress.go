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
}

const redrawEvery = 200 * time.Millisecond

func newProgress(r io.Reader, total int64, out io.Writer) *progress {
	p := &progress{r: r, out: out, total: total, now: time.Now}
	p.start = p.now()
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
const barWidth = 30

// renderBar is one frame of the bar: "[=====>      ]  42%  1.2 GiB of
// 2.9 GiB  85.0 MiB/s"; without a total, the bytes and the rate only.
// Spaces at the end wipe what a longer previous frame left.
func renderBar(done, total int64, elapsed time.Duration) string {
	rate := ""
	if secs := elapsed.Seconds(); secs > 0 {
		rate = "  " + formatBytes(int64(float64(done)/secs)) + "/s"
	}
	if total <= 0 {
		return formatBytes(done) + " sent" + rate + "   "
	}
	frac := min(float64(done)/float64(total), 1)
	filled := int(frac * barWidth)
	bar := strings.Repeat("=", filled)
	if filled < barWidth {
		bar += ">" + strings.Repeat(" ", barWidth-filled-1)
	}
	return fmt.Sprintf("[%s] %3d%%  %s of %s%s   ", bar, int(frac*100), formatBytes(done), formatBytes(total), rate)
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
