package datafile_test

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/iotest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/procurekit/procure"
	"github.com/procurekit/procure/datafile"
	"github.com/procurekit/procure/supplier"
	"github.com/procurekit/procure/user"
)

// genReader produces head, then n copies of the element elem separated by
// commas, then tail, without ever holding more than one copy: the input of
// a large file that is not in memory itself.
type genReader struct {
	head, elem, tail string
	n, done          int
	pending          []byte
}

func (g *genReader) Read(p []byte) (int, error) {
	for len(g.pending) == 0 {
		switch {
		case g.head != "":
			g.pending, g.head = []byte(g.head), ""
		case g.done < g.n:
			e := g.elem
			if g.done > 0 {
				e = "," + e
			}
			g.pending = []byte(strings.ReplaceAll(e, "#", strconv.Itoa(g.done)))
			g.done++
		case g.tail != "":
			g.pending, g.tail = []byte(g.tail), ""
		default:
			return 0, io.EOF
		}
	}
	n := copy(p, g.pending)
	g.pending = g.pending[n:]
	return n, nil
}

// heapPeak runs f and returns how far the live heap rose above where it
// stood before, sampled every millisecond (and after a collection at the
// start, so that earlier garbage does not count).
func heapPeak(f func()) uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapAlloc
	var peak atomic.Uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapAlloc > peak.Load() {
				peak.Store(ms.HeapAlloc)
			}
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	f()
	close(stop)
	wg.Wait()
	if p := peak.Load(); p > base {
		return p - base
	}
	return 0
}

// discard is a UserHandler that keeps nothing but counts: communities,
// suppliers and users handed over.
type discard struct{ n [3]int }

func (d *discard) Community(int, *datafile.Community, int) error { d.n[0]++; return nil }
func (d *discard) Supplier(int, int, *supplier.Record) error     { d.n[1]++; return nil }
func (d *discard) User(int, int, *user.User) error               { d.n[2]++; return nil }

// The value of a key a data file does not have is skipped without being
// held, wherever the key is, and a community's users go to a UserHandler
// one by one: memory does not grow with the largest JSON value (issue 19).
// The unknown values here are 100 MB, the users array 20 MB; Stream's read
// buffer stays at its usual size.
func TestStreamMemoryBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("streams 100 MB per case")
	}
	const limit = 2 << 20
	elem := `{"a": [1, 2.5e3, -0, true, false, null, "x\"\\\u00e9y"], "b": {"c": "` + strings.Repeat("z", 900) + `"}}`
	n := 100 << 20 / len(elem)
	community := `{"id": "c", "region": "NZ"`
	tests := []struct {
		name string
		in   *genReader
		want [3]int // communities, suppliers, users handed over
	}{
		{"unknown top-level key", &genReader{head: `{"extra": [`, elem: elem, tail: `], "communities": [` + community + `}]}`, n: n}, [3]int{1, 0, 0}},
		{"unknown community key", &genReader{head: `{"communities": [` + community + `, "extra": [`, elem: elem, tail: `]}]}`, n: n}, [3]int{1, 0, 0}},
		{"one large string", &genReader{head: `{"communities": [` + community + `, "extra": "`, elem: strings.Repeat("w", 1000), tail: `"}]}`, n: n}, [3]int{1, 0, 0}},
		{"users", &genReader{head: `{"communities": [` + community + `, "users": [`,
			elem: `{"id": "u#", "username": "user#", "roles": [` + roles(40) + `]}`,
			tail: `]}]}`, n: 20000}, [3]int{1, 0, 20000}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var h discard
			var err error
			var peak int
			rose := heapPeak(func() { peak, err = datafile.StreamPeak(tt.in, &h) })
			if err != nil {
				t.Fatal(err)
			}
			if h.n != tt.want {
				t.Errorf("handed over %v (communities, suppliers, users); want %v", h.n, tt.want)
			}
			// The heap's rise includes garbage not yet collected: it is
			// shown, not held to a bound (the buffer is, exactly).
			t.Logf("largest read buffer %d KiB; heap rose by %.1f MB", peak>>10, float64(rose)/(1<<20))
			if peak > limit {
				t.Errorf("Stream held a read buffer of %d MB reading a large value; want at most %d MB", peak>>20, limit>>20)
			}
			if rose > 64<<20 {
				t.Errorf("the heap rose by %d MB reading a large value", rose>>20)
			}
		})
	}
}

// TestStreamMemoryHuge is TestStreamMemoryBounded's unknown array at 1 GB,
// run only when PROCURE_DATAFILE_HUGE is set (it takes a while).
func TestStreamMemoryHuge(t *testing.T) {
	if os.Getenv("PROCURE_DATAFILE_HUGE") == "" {
		t.Skip("set PROCURE_DATAFILE_HUGE=1 to stream a 1 GB unknown array")
	}
	elem := `{"b": {"c": "` + strings.Repeat("z", 1000) + `"}}`
	in := &genReader{head: `{"extra": [`, elem: elem, tail: `], "communities": [{"id": "c", "region": "NZ"}]}`, n: 1 << 30 / len(elem)}
	var err error
	var peak int
	start := time.Now()
	rose := heapPeak(func() { peak, err = datafile.StreamPeak(in, &discard{}) })
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("1 GB unknown array: largest read buffer %d KiB, heap rose by %.1f MB, VmHWM %s, %v",
		peak>>10, float64(rose)/(1<<20), vmHWM(), time.Since(start))
	if peak > 2<<20 {
		t.Errorf("Stream held a read buffer of %d MB", peak>>20)
	}
}

// vmHWM is the process's peak resident memory as Linux reports it, or
// "unknown".
func vmHWM() string {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return "unknown"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

// roles is n role objects with distinct codes, as JSON array elements.
func roles(n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(`{"code": "ROLE-` + strconv.Itoa(i) + `"}`)
	}
	return b.String()
}

// An entry larger than its bound is the file's fault, named with its
// line, and found before the entry is read whole.
func TestStreamEntryBound(t *testing.T) {
	big := strings.Repeat("x", datafile.MaxEntryBytes)
	tests := []struct{ name, data, want string }{
		{"user", `{"communities": [{"id": "c", "region": "NZ", "users": [{"id": "u1", "username": "a"},` + "\n" +
			`{"id": "u2", "username": "b", "displayName": "` + big + `"}]}]}`,
			"line 2:1: communities[0].users[1]: the entry is larger than 1048576 bytes"},
		{"token", `{"communities": [{"id": "c", "region": "NZ", "tokens": [{"token": "` + big + `"}]}]}`,
			"line 1:57: communities[0].tokens[0]: the entry is larger than 1048576 bytes"},
		{"community name", `{"communities": [{"id": "c", "region": "NZ", "name": "` + big + `"}]}`,
			"line 1:54: communities[0].name: the entry is larger than 1048576 bytes"},
		{"supplier", `{"communities": [{"id": "c", "region": "NZ", "suppliers": [{"keywords": ["` +
			strings.Repeat(big[:1000]+`", "`, datafile.MaxSupplierBytes/1000) + `"]}]}]}`,
			"line 1:60: communities[0].suppliers[0]: the entry is larger than 16777216 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := datafile.Stream(strings.NewReader(tt.data), &discard{})
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) || !errors.Is(err, procure.ErrInvalid) {
				t.Fatalf("Stream error = %.200v; want one starting %q that matches procure.ErrInvalid", err, tt.want)
			}
		})
	}
}

// The skip of an unknown key's value accepts exactly what json.Valid
// accepts: every one-byte change of a value with every kind of token, read
// one byte at a time.
func TestStreamSkipAgreesWithValid(t *testing.T) {
	seeds := []string{
		`{"a": [1, -2.5e+3, 0.1E-2, true, false, null, "x\"\\\/\b\f\n\r\t\u00e9y", {}, [], {"k": {"l": []}}]}`,
		`"plain"`, `-0`, `[[[]]]`, `{"":""}`,
	}
	alphabet := []byte(` "\[]{},:-+.0159eEtfnulrsaxz` + "\x00\x1f\xff")
	checked := 0
	for _, seed := range seeds {
		for i := 0; i <= len(seed); i++ {
			for _, c := range alphabet {
				variants := []string{seed[:i] + string(c) + seed[i:]}
				if i < len(seed) {
					variants = append(variants, seed[:i]+string(c)+seed[i+1:], seed[:i]+seed[i+1:])
				}
				for _, v := range variants {
					checked++
					data := `{"communities": [{"id": "c", "region": "NZ", "extra": ` + v + `}]}`
					err := datafile.Stream(iotest.OneByteReader(strings.NewReader(data)), &discard{})
					valid := json.Valid([]byte(v))
					if valid != (err == nil) {
						t.Fatalf("value %q: json.Valid %v, Stream error %v", v, valid, err)
					}
				}
			}
		}
	}
	deep := strings.Repeat("[", 10001) + strings.Repeat("]", 10001)
	if err := datafile.Stream(strings.NewReader(`{"x": `+deep+`, "communities": [{"id": "c", "region": "NZ"}]}`), &discard{}); err == nil {
		t.Error("a value nested 10,001 deep was accepted; json.Valid refuses it")
	}
	t.Logf("%d values checked", checked)
}

// userCollector is a UserHandler that rebuilds the file.
type userCollector struct {
	tb    testing.TB
	f     datafile.File
	users []user.User
	recs  []supplier.Record
}

func (c *userCollector) Supplier(_, _ int, rec *supplier.Record) error {
	c.recs = append(c.recs, *rec)
	return nil
}

func (c *userCollector) User(ci, ui int, u *user.User) error {
	if ci != len(c.f.Communities) || ui != len(c.users) {
		c.tb.Errorf("User(%d, %d) after %d communities and %d users", ci, ui, len(c.f.Communities), len(c.users))
	}
	c.users = append(c.users, *u)
	return nil
}

func (c *userCollector) Community(_ int, com *datafile.Community, _ int) error {
	if com.Users != nil {
		c.tb.Errorf("Community %s has %d users; a UserHandler's has none", com.ID, len(com.Users))
	}
	com.Users, com.Suppliers, c.users, c.recs = c.users, c.recs, nil, nil
	c.f.Communities = append(c.f.Communities, *com)
	return nil
}

// A UserHandler receives each community's users, validated and normalised,
// one by one and in order, exactly as Parse returns them in the File;
// a bad user stops the stream with Parse's error.
func TestStreamUserHandler(t *testing.T) {
	file := `{"communities": [
	  {"users": [{"id": "u1", "username": "  Ann  ", "roles": [{"code": "R"}]}, {"id": "u2", "username": "bob", "email": "bob@example.com"}],
	   "id": "c1", "region": "NZ"},
	  {"id": "c2", "region": "AU", "users": null},
	  {"id": "c3", "region": "US", "users": [{"id": "u3", "username": "cat", "enabled": false}]}]}`
	want, err := datafile.Parse(strings.NewReader(file))
	if err != nil {
		t.Fatal(err)
	}
	c := &userCollector{tb: t}
	if err := datafile.Stream(iotest.OneByteReader(strings.NewReader(file)), c); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, &c.f, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("UserHandler's file differs from Parse's (-Parse +Stream):\n%s", diff)
	}
	if want.Communities[0].Users[0].Username != "Ann" {
		t.Errorf("username %q; want it trimmed", want.Communities[0].Users[0].Username)
	}

	bad := strings.Replace(file, `"bob@example.com"`, `"not mail"`, 1)
	_, perr := datafile.Parse(strings.NewReader(bad))
	serr := datafile.Stream(strings.NewReader(bad), &userCollector{tb: t})
	if perr == nil || serr == nil || perr.Error() != serr.Error() || !strings.HasPrefix(serr.Error(), "communities[0].users[1].email") {
		t.Errorf("a bad user: Parse %v, Stream %v; want the same error naming communities[0].users[1].email", perr, serr)
	}
}
