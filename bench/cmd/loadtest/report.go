package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
)

// row is the runs of one scenario on both servers.
type row struct {
	sc         scenario
	real, base []result
}

// median of xs (the mean of the middle two for an even count); 0 for none.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// summary is the medians of a set of runs.
type summary struct {
	rps, p50, p99 float64
	errors        int64
	runs          int
}

func summarize(rs []result) summary {
	var rps, p50, p99 []float64
	var errs int64
	for _, r := range rs {
		rps = append(rps, r.RPS())
		p50 = append(p50, r.P50)
		p99 = append(p99, r.P99)
		errs += r.Errors()
	}
	return summary{rps: median(rps), p50: median(p50), p99: median(p99), errors: errs, runs: len(rs)}
}

// formatLatency renders microseconds as µs or ms with three significant
// digits.
func formatLatency(us float64) string {
	switch {
	case us <= 0:
		return "-"
	case us < 1000:
		return fmt.Sprintf("%.0fµs", us)
	case us < 10000:
		return fmt.Sprintf("%.2fms", us/1000)
	case us < 100000:
		return fmt.Sprintf("%.1fms", us/1000)
	}
	return fmt.Sprintf("%.0fms", us/1000)
}

func formatRPS(v float64) string { return fmt.Sprintf("%.0f", v) }

// writeTable prints the results as a Markdown table: per scenario the
// medians of the real server and of the baseline, the ratio of their
// throughputs, and the target ratio. goals says whether to show the
// targets (they are set for memstore); writing, whether writes ran (-writes),
// which targets apply.
func writeTable(w io.Writer, rows []row, goals, writing bool) {
	header := []string{"scenario", "req/s", "p50", "p99", "baseline req/s", "p50", "p99", "ratio"}
	if goals {
		header = append(header, "target")
	}
	header = append(header, "errors")
	cells := [][]string{header}
	for _, r := range rows {
		real, base := summarize(r.real), summarize(r.base)
		ratio := "-"
		if base.rps > 0 {
			ratio = fmt.Sprintf("%.0f%%", 100*real.rps/base.rps)
		}
		line := []string{r.sc.Name, formatRPS(real.rps), formatLatency(real.p50), formatLatency(real.p99),
			formatRPS(base.rps), formatLatency(base.p50), formatLatency(base.p99), ratio}
		if goals {
			g := r.sc.goal(writing)
			goal := fmt.Sprintf(">= %.0f%%", 100*g)
			switch {
			case g == 0:
				goal = "-"
			case base.rps > 0:
				if real.rps/base.rps >= g {
					goal += " met"
				} else {
					goal += " MISSED"
				}
			}
			line = append(line, goal)
		}
		errs := "0"
		if real.errors+base.errors > 0 {
			errs = fmt.Sprintf("%d (baseline %d)", real.errors, base.errors)
		}
		line = append(line, errs)
		cells = append(cells, line)
	}
	widths := make([]int, len(header))
	for _, line := range cells {
		for i, c := range line {
			widths[i] = max(widths[i], len([]rune(c)))
		}
	}
	for li, line := range cells {
		var b strings.Builder
		b.WriteString("|")
		for i, c := range line {
			pad := widths[i] - len([]rune(c))
			if i == 0 {
				b.WriteString(" " + c + strings.Repeat(" ", pad) + " |")
			} else {
				b.WriteString(" " + strings.Repeat(" ", pad) + c + " |")
			}
		}
		fmt.Fprintln(w, b.String())
		if li == 0 {
			b.Reset()
			b.WriteString("|")
			for i, wd := range widths {
				if i == 0 {
					b.WriteString(" " + strings.Repeat("-", wd) + " |")
				} else {
					b.WriteString(" " + strings.Repeat("-", wd-1) + ": |")
				}
			}
			fmt.Fprintln(w, b.String())
		}
	}
}

// writeCPUTable prints, when the runs measured it, the median CPU time
// per request of each server: a figure that, unlike throughput, hardly
// depends on what else the machine runs, for comparing two builds of the
// server (-server) whose throughputs differ by less than the noise.
func writeCPUTable(w io.Writer, rows []row) {
	var lines [][]string
	for _, r := range rows {
		var real, base []float64
		for _, x := range r.real {
			if v := x.CPUPerRequest(); v > 0 {
				real = append(real, v)
			}
		}
		for _, x := range r.base {
			if v := x.CPUPerRequest(); v > 0 {
				base = append(base, v)
			}
		}
		if len(real) == 0 {
			continue
		}
		lines = append(lines, []string{r.sc.Name, fmt.Sprintf("%.1f", median(real)), fmt.Sprintf("%.1f", median(base))})
	}
	if len(lines) == 0 {
		return
	}
	fmt.Fprintln(w, "\nCPU time per request, µs (medians of the runs):")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| scenario | server | baseline |")
	fmt.Fprintln(w, "| -------- | -----: | -------: |")
	for _, l := range lines {
		fmt.Fprintf(w, "| %s | %s | %s |\n", l[0], l[1], l[2])
	}
}
