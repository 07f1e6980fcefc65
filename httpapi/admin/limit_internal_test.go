package admin

import (
	"net/http/httptest"
	"net/netip"
	"testing"
	"time"
)

// The limiter's allowance refills with time (one attempt per every), keys
// IPv6 clients by /64 and IPv4 clients by address, and remembers a bounded
// number of clients.
func TestFailLimiter(t *testing.T) {
	now := time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)
	l := newFailLimiter(Options{FailedAuthBurst: 3, FailedAuthEvery: 10 * time.Second}, func() time.Time { return now })
	key := netip.MustParsePrefix("192.0.2.1/32")
	for range 3 {
		if d := l.blocked(key); d != 0 {
			t.Fatalf("blocked %v before the burst is spent", d)
		}
		l.failed(key)
	}
	if d := l.blocked(key); d != 10*time.Second {
		t.Fatalf("after the burst: wait %v, want 10s", d)
	}
	now = now.Add(4 * time.Second)
	if d := l.blocked(key); d != 6*time.Second {
		t.Fatalf("4s later: wait %v, want 6s", d)
	}
	now = now.Add(6 * time.Second)
	if d := l.blocked(key); d != 0 {
		t.Fatalf("10s later: wait %v, want one attempt allowed", d)
	}
	l.failed(key)
	if d := l.blocked(key); d == 0 {
		t.Fatal("the refilled attempt was not spent by a failure")
	}

	for _, c := range []struct{ remote, want string }{
		{"192.0.2.1:5", "192.0.2.1/32"},
		{"[::ffff:192.0.2.1]:5", "192.0.2.1/32"},
		{"[2001:db8:1:2:3:4:5:6]:5", "2001:db8:1:2::/64"},
		{"[fe80::1%eth0]:5", "fe80::/64"},
		{"not an address", "invalid Prefix"},
	} {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = c.remote
		if got := clientKey(r).String(); got != c.want {
			t.Errorf("clientKey(%q) = %s, want %s", c.remote, got, c.want)
		}
	}

	// Past maxFailClients still-limited clients, new ones share one
	// allowance; clients whose allowance refilled are forgotten first.
	l = newFailLimiter(Options{FailedAuthBurst: 1, FailedAuthEvery: time.Minute}, func() time.Time { return now })
	addr := func(i int) netip.Prefix {
		return netip.PrefixFrom(netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)}), 32)
	}
	for i := range maxFailClients + 5 {
		l.failed(addr(i))
	}
	if n := len(l.clients); n != maxFailClients {
		t.Fatalf("%d clients remembered, want %d", n, maxFailClients)
	}
	if d := l.blocked(addr(maxFailClients + 100)); d == 0 {
		t.Error("a new client past the bound is not limited by the shared allowance the overflow spent")
	}
	now = now.Add(time.Minute)
	l.failed(addr(maxFailClients + 200))
	if n := len(l.clients); n != 1 {
		t.Errorf("%d clients remembered after every allowance refilled, want 1 (the new one)", n)
	}
}
