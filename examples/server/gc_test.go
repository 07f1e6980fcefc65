package main

import (
	"bytes"
	"errors"
	"runtime"
	"runtime/metrics"
	"strings"
	"testing"
	"time"

	"github.com/procurekit/procure/internal/gcheadroom"
)

func TestGCHeadroomFlag(t *testing.T) {
	for _, c := range []struct {
		args []string
		want uint64 // the headroom asked for
		auto bool
		bad  bool
	}{
		{args: nil, auto: true},
		{args: []string{"-gc-headroom", "auto"}, auto: true},
		{args: []string{"-gc-headroom", "0"}, want: 0},
		{args: []string{"-gc-headroom", "1073741824"}, want: 1 << 30},
		{args: []string{"-gc-headroom", "512MiB"}, want: 512 << 20},
		{args: []string{"-gc-headroom=2GiB"}, want: 2 << 30},
		{args: []string{"-gc-headroom", "64KiB"}, want: 64 << 10},
		{args: []string{"-gc-headroom", "1TiB"}, want: 1 << 40},
		{args: []string{"-gc-headroom", "100B"}, want: 100},
		{args: []string{"-gc-headroom", "1.5GiB"}, bad: true},
		{args: []string{"-gc-headroom", "-1"}, bad: true},
		{args: []string{"-gc-headroom", "2GB"}, bad: true},
		{args: []string{"-gc-headroom", "MiB"}, bad: true},
		{args: []string{"-gc-headroom", "99999999TiB"}, bad: true},
	} {
		var stderr bytes.Buffer
		cfg, err := parseFlags(c.args, &stderr)
		if c.bad {
			if !errors.Is(err, errUsage) || !strings.Contains(stderr.String(), `invalid value "`) || !strings.Contains(stderr.String(), "-gc-headroom: want auto, or a size in bytes") {
				t.Errorf("%v: err %v, stderr %q; want a usage error naming -gc-headroom and the rule", c.args, err, stderr.String())
			}
			continue
		}
		if err != nil {
			t.Errorf("%v: %v", c.args, err)
			continue
		}
		if c.auto {
			if cfg.gcHeadroom.set || cfg.gcHeadroom.headroom() != gcheadroom.Auto(autoHeadroomBound) {
				t.Errorf("%v: %+v, want auto", c.args, cfg.gcHeadroom)
			}
			continue
		}
		if got := cfg.gcHeadroom.headroom(); !cfg.gcHeadroom.set || got != c.want {
			t.Errorf("%v: headroom %d (set %v), want %d", c.args, got, cfg.gcHeadroom.set, c.want)
		}
	}
	if auto := gcheadroom.Auto(autoHeadroomBound); runtime.GOOS == "linux" && (auto == 0 || auto > 1<<30) {
		t.Errorf("auto headroom on Linux is %d, want more than 0 and at most 1 GiB", auto)
	}
}

func gogcNow() int {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	return int(s[0].Value.Uint64())
}

// The server runs the headroom policy by default: after a collection
// GOGC is raised for the demo's small live heap, and put back when the
// server stops; -gc-headroom 0 and GOGC in the environment leave it alone.
func TestGCHeadroomRuns(t *testing.T) {
	if gcheadroom.Auto(autoHeadroomBound) == 0 {
		t.Skip("the machine's memory is unknown here: auto is off")
	}
	before := gogcNow()
	r := start(t, "-gc-headroom", "256MiB")
	r.logLine(t, "gc headroom line", func(l string) bool { return strings.Contains(l, `msg="gc headroom" mib=256`) })
	deadline := time.Now().Add(10 * time.Second)
	for gogcNow() <= 100 && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(50 * time.Millisecond)
	}
	if got := gogcNow(); got <= 100 {
		t.Errorf("GOGC %d while the server runs with a 256 MiB headroom over a small heap; want it raised", got)
	}
	r.cancel()
	<-r.done
	if got := gogcNow(); got != before {
		t.Errorf("GOGC %d after the server stopped, want %d as before", got, before)
	}

	off := start(t, "-gc-headroom", "0")
	runtime.GC()
	time.Sleep(300 * time.Millisecond)
	if got := gogcNow(); got != before || strings.Contains(off.stderr.String(), "gc headroom") {
		t.Errorf("-gc-headroom 0: GOGC %d (want %d), log:\n%s", got, before, off.stderr.String())
	}
	off.cancel()
	<-off.done

	t.Setenv("GOGC", "100")
	env := start(t)
	env.logLine(t, "gc headroom off line", func(l string) bool { return strings.Contains(l, "gc headroom: off, GOGC is set in the environment") })
	runtime.GC()
	time.Sleep(300 * time.Millisecond)
	if got := gogcNow(); got != before {
		t.Errorf("GOGC in the environment: GOGC %d, want %d", got, before)
	}
}
