package auth

import (
	"errors"
	"net/netip"
	"strconv"
	"strings"

	"github.com/procurekit/procure"
)

// ClientIP returns the address of the client that sent a request, by the
// rule of docs: users.md "Authentication":
//
//   - The client is the TCP peer (remoteAddr, as http.Request.RemoteAddr
//     gives it: "host:port"; a bare address is accepted too).
//   - Only when the peer is within trusted (the reverse proxies in front
//     of the service) does X-Forwarded-For count: the client is then the
//     right-most entry that is not a trusted proxy. forwardedFor holds the
//     header's values in the order received (http.Header.Values); several
//     header lines read as one comma-separated list. Entries are bare
//     addresses or, as some proxies write them, "addr:port" and
//     "[v6addr]:port".
//   - With no trusted proxies, X-Forwarded-For is ignored, so a caller
//     cannot claim an address by sending the header itself.
//   - When every entry is a trusted proxy, the client is the left-most
//     entry (the request came from the proxies themselves); when the peer
//     is trusted and there is no entry, it is the peer.
//
// It fails closed: when the walk from the right meets an entry that is not
// an address (say "unknown", or garbage a client prepended and a proxy
// passed on) before it finds the client, or the peer address cannot be
// read, the result is the zero netip.Addr, which no allowlist contains
// (AddrAllowed). An account without an allowlist does not look at the
// address, so such a request can still authenticate there.
//
// IPv4-mapped IPv6 addresses (::ffff:192.0.2.1) are unmapped and zones
// dropped, so that an IPv4 allowlist matches a peer on a dual-stack
// socket.
func ClientIP(remoteAddr string, forwardedFor []string, trusted []netip.Prefix) netip.Addr {
	peer, ok := parseHostAddr(remoteAddr)
	if !ok {
		return netip.Addr{}
	}
	if !AddrAllowed(peer, trusted) {
		return peer
	}
	client := peer
	for i := len(forwardedFor) - 1; i >= 0; i-- {
		list := forwardedFor[i]
		for list != "" {
			var entry string
			if j := strings.LastIndexByte(list, ','); j >= 0 {
				entry, list = list[j+1:], list[:j]
			} else {
				entry, list = list, ""
			}
			entry = strings.TrimSpace(entry)
			if entry == "" {
				continue // "a, , b" or a trailing comma: no hop
			}
			a, ok := parseHostAddr(entry)
			if !ok {
				return netip.Addr{}
			}
			if !AddrAllowed(a, trusted) {
				return a
			}
			client = a
		}
	}
	return client
}

// parseHostAddr reads "addr", "addr:port", "[addr]" or "[addr]:port",
// unmapping IPv4-mapped addresses and dropping any zone.
func parseHostAddr(s string) (netip.Addr, bool) {
	a, err := netip.ParseAddr(s)
	if err != nil {
		ap, perr := netip.ParseAddrPort(s)
		switch {
		case perr == nil:
			a = ap.Addr()
		case len(s) > 2 && s[0] == '[' && s[len(s)-1] == ']':
			if a, err = netip.ParseAddr(s[1 : len(s)-1]); err != nil {
				return netip.Addr{}, false
			}
		default:
			return netip.Addr{}, false
		}
	}
	return a.Unmap().WithZone(""), true
}

// AddrAllowed reports whether addr lies within one of the prefixes. The
// zero Addr lies within none. An IPv4-mapped IPv6 address, or prefix of at
// least 96 bits in the ::ffff:0:0/96 range, is compared as IPv4.
func AddrAllowed(addr netip.Addr, prefixes []netip.Prefix) bool {
	if !addr.IsValid() {
		return false
	}
	addr = addr.Unmap().WithZone("")
	for _, p := range prefixes {
		if unmapPrefix(p).Contains(addr) {
			return true
		}
	}
	return false
}

// unmapPrefix turns ::ffff:a.b.c.d/n (n >= 96) into a.b.c.d/(n-96).
func unmapPrefix(p netip.Prefix) netip.Prefix {
	a := p.Addr()
	if a.Is4In6() && p.Bits() >= 96 {
		return netip.PrefixFrom(a.Unmap(), p.Bits()-96).Masked()
	}
	return p
}

// ParsePrefix reads one allowlist entry: a CIDR ("203.0.113.0/24",
// "2001:db8::/32", masked to its network), or a single address standing
// for a /32 (IPv4) or /128 (IPv6) prefix; white space around it is
// ignored. An IPv6 zone ("fe80::1%eth0") is refused: an allowlist names
// networks, the same for every interface, and ClientIP drops the zone of
// the client address. An IPv4-mapped IPv6 entry (::ffff:192.0.2.1) is
// accepted; AddrAllowed compares it as IPv4.
//
// It is the one reader of allowlist entries: data files, the admin API
// and both stores call it, so that an entry means the same wherever it is
// written.
func ParsePrefix(s string) (netip.Prefix, error) {
	s = strings.TrimSpace(s)
	if strings.Contains(s, "/") {
		p, err := netip.ParsePrefix(s) // refuses a zone
		if err != nil {
			return netip.Prefix{}, err
		}
		return p.Masked(), nil
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Prefix{}, err
	}
	if a.Zone() != "" {
		return netip.Prefix{}, errors.New("an allowlist entry has no zone")
	}
	return netip.PrefixFrom(a, a.BitLen()), nil
}

// ParseAllowlist reads a comma-separated allowlist such as
// "203.0.113.7, 10.0.0.0/8" (white space around entries is ignored; empty
// entries are not allowed). field names the setting in errors: a bad
// entry is a *procure.ValidationError (Source data) whose field is
// field[i], i counted from 0. An empty s is an empty allowlist.
//
// FormatAllowlist writes the result back in a form ParseAllowlist reads
// to the same prefixes.
func ParseAllowlist(field, s string) ([]netip.Prefix, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	parts := strings.Split(s, ",")
	out := make([]netip.Prefix, 0, len(parts))
	for i, part := range parts {
		part = strings.TrimSpace(part)
		at := field + "[" + strconv.Itoa(i) + "]"
		if part == "" {
			return nil, procure.Invalid(procure.SourceData, at, "is empty: separate entries with single commas")
		}
		p, err := ParsePrefix(part)
		if err != nil {
			return nil, procure.Invalid(procure.SourceData, at, "must be an IP address or CIDR such as 203.0.113.0/24 (got "+strconv.Quote(part)+")")
		}
		out = append(out, p)
	}
	return out, nil
}

// FormatAllowlist writes prefixes as ParseAllowlist reads them.
func FormatAllowlist(prefixes []netip.Prefix) string {
	var b strings.Builder
	for i, p := range prefixes {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(p.String())
	}
	return b.String()
}
