package main

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"

	"github.com/procurekit/procure/internal/gcheadroom"
)

// autoHeadroomBound is the most -gc-headroom=auto asks for: at 100,000
// suppliers (a live heap of about 300 MB) it runs the collector about a
// third as often as GOGC=100 (bench/README.md, "Session 14").
const autoHeadroomBound = 1 << 30

// headroomFlag is -gc-headroom: auto (the zero value, the default), or a
// size in bytes (0: off).
type headroomFlag struct {
	set   bool // a size was given, not auto
	bytes uint64
}

// The units -gc-headroom accepts after a number.
var sizeUnits = []struct {
	suffix string
	shift  uint
}{{"KiB", 10}, {"MiB", 20}, {"GiB", 30}, {"TiB", 40}, {"B", 0}}

func (h *headroomFlag) String() string {
	if h == nil || !h.set {
		return "auto"
	}
	return strconv.FormatUint(h.bytes, 10)
}

func (h *headroomFlag) Set(v string) error {
	if v == "auto" {
		*h = headroomFlag{}
		return nil
	}
	n, shift := v, uint(0)
	for _, u := range sizeUnits {
		if rest, ok := strings.CutSuffix(v, u.suffix); ok {
			n, shift = rest, u.shift
			break
		}
	}
	b, err := strconv.ParseUint(strings.TrimSpace(n), 10, 64)
	if err != nil || (shift > 0 && b > (1<<(64-shift))-1) {
		return errors.New("want auto, or a size in bytes, optionally with KiB, MiB, GiB or TiB (e.g. 512MiB)")
	}
	*h = headroomFlag{set: true, bytes: b << shift}
	return nil
}

// headroom is the headroom the flag asks for on this machine.
func (h headroomFlag) headroom() uint64 {
	if !h.set {
		return gcheadroom.Auto(autoHeadroomBound)
	}
	return h.bytes
}

// keepGCHeadroom starts the collector's headroom policy (internal/gcheadroom)
// unless the environment sets GOGC (the operator's own pacing) or the
// headroom is 0, and returns what stops it (nil when not started). GOGC
// is the process's: a second server in the same process (tests) runs
// without a policy of its own.
func keepGCHeadroom(h headroomFlag, log *slog.Logger) func() {
	if os.Getenv("GOGC") != "" {
		log.Info("gc headroom: off, GOGC is set in the environment", "GOGC", os.Getenv("GOGC"))
		return nil
	}
	bytes := h.headroom()
	if bytes == 0 {
		return nil
	}
	stop, err := gcheadroom.Keep(bytes, 100, func(percent int, live uint64) {
		log.Debug("gc headroom: GOGC set", "gogc", percent, "live_mib", live>>20)
	})
	if err != nil {
		log.Debug("gc headroom: not started", "err", err)
		return nil
	}
	log.Info("gc headroom", "mib", fmt.Sprintf("%.0f", float64(bytes)/(1<<20)))
	return stop
}
