package auth_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/procurekit/procure"
	"github.com/procurekit/procure/auth"
)

// FuzzClientIP checks the X-Forwarded-For rule on arbitrary input: it
// never panics; the result is the zero Addr or an unmapped address without
// a zone; without trusted proxies it is the peer; and a result other than
// the peer is only ever taken from the header when the peer is a trusted
// proxy. The seed corpus is under testdata/fuzz/FuzzClientIP.
func FuzzClientIP(f *testing.F) {
	for _, s := range [][3]string{
		{"203.0.113.7:5555", "", ""},
		{"10.0.0.1:80", "198.51.100.2", "10.0.0.0/8"},
		{"10.0.0.1:80", "198.51.100.2, 10.0.0.5", "10.0.0.0/8"},
		{"10.0.0.1:80", "unknown, 198.51.100.2", "10.0.0.0/8"},
		{"[::ffff:10.0.0.1]:80", "[2001:db8::1]:443", "10.0.0.0/8,::ffff:10.0.0.0/104"},
		{"garbage", "1.2.3.4", "0.0.0.0/0"},
		{"10.0.0.1:80", ",,,", "10.0.0.0/8"},
		{"fe80::1%eth0", "fe80::2%eth1", "fe80::/10"},
	} {
		f.Add(s[0], s[1], s[2])
	}
	f.Fuzz(func(t *testing.T, remote, xff, trustedList string) {
		trusted, err := auth.ParseAllowlist("trusted", trustedList)
		if err != nil {
			trusted = nil
		}
		forwarded := strings.Split(xff, "\n") // several header lines
		got := auth.ClientIP(remote, forwarded, trusted)
		if got.IsValid() && (got.Is4In6() || got.Zone() != "") {
			t.Fatalf("ClientIP = %v: mapped or zoned", got)
		}
		peer := auth.ClientIP(remote, nil, nil)
		if len(trusted) == 0 && got != peer {
			t.Fatalf("ClientIP without trusted proxies = %v; want the peer %v", got, peer)
		}
		if got != peer && got.IsValid() {
			if !auth.AddrAllowed(peer, trusted) {
				t.Fatalf("ClientIP = %v from the header although the peer %v is not trusted", got, peer)
			}
		}
		if !got.IsValid() && auth.AddrAllowed(got, trusted) {
			t.Fatal("the zero Addr is allowed")
		}
	})
}

// FuzzParseAllowlist checks the allowlist reader: no panic; an accepted
// list round-trips through FormatAllowlist to the same prefixes, each
// masked; a rejected one is a ValidationError naming the entry
// ("allow[i]").
func FuzzParseAllowlist(f *testing.F) {
	for _, s := range []string{"", "203.0.113.7", "10.0.0.0/8, 2001:db8::/32", "10.0.0.1/33", "a,b", ",", "::ffff:1.2.3.4/120", "fe80::1%eth0", " 1.2.3.4 , 5.6.7.8/24 "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := auth.ParseAllowlist("allow", s)
		if err != nil {
			var ve *procure.ValidationError
			if !errors.As(err, &ve) || !errors.Is(err, procure.ErrInvalid) || len(ve.Fields) != 1 || !strings.HasPrefix(ve.Fields[0].Field, "allow[") {
				t.Fatalf("ParseAllowlist(%q) error %v is not a ValidationError naming an entry", s, err)
			}
			return
		}
		for _, p := range got {
			if !p.IsValid() || p != p.Masked() {
				t.Fatalf("ParseAllowlist(%q) gave %v, not a valid masked prefix", s, p)
			}
		}
		again, err := auth.ParseAllowlist("allow", auth.FormatAllowlist(got))
		if err != nil || !slices.Equal(again, got) {
			t.Fatalf("round trip of %q: %v, %v; want %v", s, again, err, got)
		}
		for _, p := range got {
			if !auth.AddrAllowed(p.Addr(), got) && !p.Addr().Is4In6() {
				t.Fatalf("the network address of %v is not allowed by its own list", p)
			}
		}
	})
}
