package supplierjson

import (
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/procurekit/procure/httpapi/internal/httpx"
	"github.com/procurekit/procure/internal/jsontext"
)

// appendTime's UTC fast path must write what time.Time.MarshalJSON writes
// (docs: filters.md: RFC 3339 in UTC with a Z), for every instant of
// years 0 to 9999 and every precision of the fraction.
func TestAppendTimeUTCMatchesMarshalJSON(t *testing.T) {
	cases := []time.Time{
		time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(0, 2, 29, 23, 59, 59, 999999999, time.UTC),
		time.Date(0, 3, 1, 0, 0, 0, 1, time.UTC),
		time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(1600, 2, 29, 12, 0, 0, 0, time.UTC),
		time.Date(1900, 2, 28, 12, 0, 0, 0, time.UTC),
		time.Date(1900, 3, 1, 12, 0, 0, 0, time.UTC),
		time.Date(1969, 12, 31, 23, 59, 59, 0, time.UTC),
		time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2000, 2, 29, 0, 0, 0, 100000000, time.UTC),
		time.Date(2026, 5, 1, 9, 30, 0, 123456000, time.UTC),
		time.Date(2026, 12, 31, 23, 59, 59, 10, time.UTC),
		time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC),
		{}, // the zero time: 0001-01-01T00:00:00Z
	}
	rng := rand.New(rand.NewPCG(1, 2))
	lo, hi := time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC).Unix(), time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	for range 200000 {
		ns := rng.IntN(1e9)
		switch rng.IntN(4) { // whole seconds, milli-, microseconds, any
		case 0:
			ns = 0
		case 1:
			ns -= ns % 1e6
		case 2:
			ns -= ns % 1e3
		}
		cases = append(cases, time.Unix(lo+rng.Int64N(hi-lo), int64(ns)).UTC())
	}
	for _, tm := range cases {
		want, err := tm.MarshalJSON()
		if err != nil {
			t.Fatalf("%v: %v", tm, err)
		}
		got, err := appendTime([]byte("x"), tm)
		if err != nil || string(got) != "x"+string(want) {
			t.Fatalf("appendTime(%d s, %d ns) = %s, %v; want x%s", tm.Unix(), tm.Nanosecond(), got, err, want)
		}
	}
}

// Outside the years RFC 3339 can write, the fast path declines and
// appendTime reports the error MarshalJSON reports.
func TestAppendTimeUTCOutOfRange(t *testing.T) {
	for _, tm := range []time.Time{
		time.Date(-1, 12, 31, 23, 59, 59, 999999999, time.UTC),
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
	} {
		if _, err := tm.MarshalJSON(); err == nil {
			t.Fatalf("%v: MarshalJSON gave no error; the test is wrong", tm)
		}
		if b, err := appendTime(nil, tm); err == nil {
			t.Errorf("appendTime(%v) = %s, want an error", tm, b)
		}
	}
}

func BenchmarkAppendTime(b *testing.B) {
	for _, tc := range []struct {
		name string
		t    time.Time
	}{
		{"utc", time.Date(2026, 5, 1, 9, 30, 0, 123456000, time.UTC)},
		{"offset", time.Date(2026, 5, 1, 9, 30, 0, 123456000, time.FixedZone("", 12*3600))},
	} {
		b.Run(tc.name, func(b *testing.B) {
			buf := make([]byte, 0, 64)
			b.ReportAllocs()
			for b.Loop() {
				buf, _ = appendTime(buf[:0], tc.t)
			}
		})
	}
}

func BenchmarkAppendString(b *testing.B) {
	for _, tc := range []struct{ name, s string }{
		{"name", "Tasman Office Supplies Pty Ltd"},
		{"email", "accounts.receivable@tasman-office.example.com"},
		{"escapes", `Smith & Sons <"quoted">`},
		{"unicode", "Ōtaki Organics Café Müller"},
	} {
		b.Run(tc.name, func(b *testing.B) {
			buf := make([]byte, 0, 128)
			b.ReportAllocs()
			for b.Loop() {
				buf = jsontext.AppendString(buf[:0], tc.s)
			}
		})
	}
}

// httpx.ContentLength gives the decimal length whatever the cache holds: the
// first call, a repeat, and lengths that share a slot in turn.
func TestContentLength(t *testing.T) {
	for _, n := range []int{0, 1, 99, 4096, 0, 8192, 4096, 11234, 11234, 11234 + 4096, 1 << 20} {
		got := httpx.ContentLength(n)
		if len(got) != 1 || got[0] != strconv.Itoa(n) {
			t.Fatalf("httpx.ContentLength(%d) = %q", n, got)
		}
	}
}
