package auth_test

import (
	"net/netip"
	"testing"

	"github.com/procurekit/procure/auth"
)

func prefixes(ss ...string) []netip.Prefix {
	out := make([]netip.Prefix, len(ss))
	for i, s := range ss {
		out[i] = netip.MustParsePrefix(s)
	}
	return out
}

func TestClientIP(t *testing.T) {
	proxies := prefixes("10.0.0.0/8", "2001:db8:ffff::/48")
	tests := []struct {
		name    string
		remote  string
		xff     []string
		trusted []netip.Prefix
		want    string // "" means the zero Addr (unknown)
	}{
		{"peer, no header", "203.0.113.9:51000", nil, nil, "203.0.113.9"},
		// docs: users.md: with no trusted proxies, X-Forwarded-For is ignored.
		{"spoofed header without trusted proxies", "203.0.113.9:51000", []string{"198.51.100.1"}, nil, "203.0.113.9"},
		{"spoofed header from an untrusted peer", "203.0.113.9:51000", []string{"198.51.100.1"}, proxies, "203.0.113.9"},
		// docs: users.md: behind a trusted proxy, the right-most entry that is not a trusted proxy.
		{"one trusted proxy", "10.0.0.5:443", []string{"198.51.100.1"}, proxies, "198.51.100.1"},
		{"client-supplied entries left of the real one are ignored", "10.0.0.5:443", []string{"1.2.3.4, 198.51.100.1"}, proxies, "198.51.100.1"},
		{"chain of trusted proxies", "10.0.0.5:443", []string{"198.51.100.1, 10.9.9.9, 10.8.8.8"}, proxies, "198.51.100.1"},
		{"several header lines read as one list", "10.0.0.5:443", []string{"1.2.3.4, 198.51.100.1", "10.9.9.9"}, proxies, "198.51.100.1"},
		{"spaces and empty entries", "10.0.0.5:443", []string{" 198.51.100.1 ,, ", " "}, proxies, "198.51.100.1"},
		{"every entry trusted: left-most", "10.0.0.5:443", []string{"10.1.1.1, 10.2.2.2"}, proxies, "10.1.1.1"},
		{"trusted peer without header", "10.0.0.5:443", nil, proxies, "10.0.0.5"},
		{"entry with port", "10.0.0.5:443", []string{"198.51.100.1:5555"}, proxies, "198.51.100.1"},
		{"IPv6 entry with port", "10.0.0.5:443", []string{"[2001:db8:1::7]:5555"}, proxies, "2001:db8:1::7"},
		{"bracketed IPv6 entry", "10.0.0.5:443", []string{"[2001:db8:1::7]"}, proxies, "2001:db8:1::7"},
		{"IPv6 peer and proxy", "[2001:db8:ffff::1]:443", []string{"2001:db8:1::7"}, proxies, "2001:db8:1::7"},
		// Fail closed: a malformed entry met before the client makes it unknown.
		{"malformed right-most entry", "10.0.0.5:443", []string{"198.51.100.1, unknown"}, proxies, ""},
		{"malformed entry behind a trusted hop", "10.0.0.5:443", []string{"garbage, 10.2.2.2"}, proxies, ""},
		{"malformed entry left of the client is never read", "10.0.0.5:443", []string{"garbage, 198.51.100.1"}, proxies, "198.51.100.1"},
		// Unmapping IPv4-mapped IPv6 addresses.
		{"mapped peer", "[::ffff:203.0.113.9]:443", nil, nil, "203.0.113.9"},
		{"mapped trusted peer", "[::ffff:10.0.0.5]:443", []string{"::ffff:198.51.100.1"}, proxies, "198.51.100.1"},
		{"zone dropped", "[fe80::1%eth0]:443", nil, nil, "fe80::1"},
		{"bare peer address", "203.0.113.9", nil, nil, "203.0.113.9"},
		{"unreadable peer", "@", nil, nil, ""},
		{"empty peer", "", []string{"198.51.100.1"}, proxies, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := auth.ClientIP(tt.remote, tt.xff, tt.trusted)
			var want netip.Addr
			if tt.want != "" {
				want = netip.MustParseAddr(tt.want)
			}
			if got != want {
				t.Errorf("ClientIP(%q, %q) = %v, want %v", tt.remote, tt.xff, got, want)
			}
		})
	}
}

func TestAddrAllowed(t *testing.T) {
	list := prefixes("203.0.113.7/32", "198.51.100.0/24", "2001:db8::/32", "::ffff:192.0.2.0/120")
	tests := []struct {
		addr string
		want bool
	}{
		{"203.0.113.7", true},
		{"203.0.113.8", false},
		{"198.51.100.255", true},
		{"198.51.101.0", false},
		{"2001:db8:abcd::1", true},
		{"2001:db9::1", false},
		{"::ffff:203.0.113.7", true}, // mapped address matches an IPv4 prefix
		{"192.0.2.44", true},         // IPv4 address matches a mapped prefix
		{"192.0.3.1", false},
	}
	for _, tt := range tests {
		if got := auth.AddrAllowed(netip.MustParseAddr(tt.addr), list); got != tt.want {
			t.Errorf("AddrAllowed(%s) = %v, want %v", tt.addr, got, tt.want)
		}
	}
	if auth.AddrAllowed(netip.Addr{}, prefixes("0.0.0.0/0", "::/0")) {
		t.Error("the zero Addr (unknown client) is allowed")
	}
}
