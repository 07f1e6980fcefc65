package auth_test

import (
	"context"
	"net/netip"
	"testing"

	"github.com/procurekit/procure/auth"
)

// mapTokens is the cheapest TokenStore there is, so that the benchmark
// measures the authenticator: header parsing, hashing, the checks.
type mapTokens map[auth.Hash]auth.Token

func (m mapTokens) TokenByHash(_ context.Context, h auth.Hash) (auth.Token, error) {
	t, ok := m[h]
	if !ok {
		return auth.Token{}, auth.ErrUnknown
	}
	return t, nil
}

// BenchmarkBearerAuthenticate is the work every supplier request does
// before its handler: a good token, and an unknown one (the 401 path).
func BenchmarkBearerAuthenticate(b *testing.B) {
	tokens := mapTokens{}
	for i, secret := range []string{goodToken, revokedToken, expiredToken} {
		h := auth.HashSecret(secret)
		tokens[h] = auth.Token{Hash: h, Community: "acme-nz", Scopes: []string{auth.ScopeSuppliersRead}, Revoked: i == 1}
	}
	bearer := auth.Bearer{Tokens: tokens}
	ctx := context.Background()
	for _, tc := range []struct {
		name, header string
		ok           bool
	}{
		{"valid", "Bearer " + goodToken, true},
		{"unknown", "Bearer demo-unknown-token", false},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				p, err := bearer.Authenticate(ctx, tc.header)
				if (err == nil) != tc.ok || (tc.ok && p.Community != "acme-nz") {
					b.Fatalf("Authenticate = %+v, %v", p, err)
				}
			}
		})
	}
}

// BenchmarkServiceKeyAuthenticate is the work every user-API request does
// before its handler: finding the client address (ClientIP) and checking
// the key against every key of the account, for an account without an
// allowlist, one with an allowlist, and one behind two trusted proxies
// with an X-Forwarded-For chain.
func BenchmarkServiceKeyAuthenticate(b *testing.B) {
	accounts := fixtureAccounts()
	proxies := prefixes("10.0.0.0/8", "192.168.1.10/32")
	ctx := context.Background()
	for _, tc := range []struct {
		name, account, remote string
		xff                   []string
		trusted               []netip.Prefix
	}{
		{"open", "sa-open", "198.51.100.20:41000", nil, nil},
		{"allowlist", "sa-locked", "203.0.113.7:41000", nil, nil},
		{"allowlist-proxied", "sa-locked", "10.1.2.3:41000", []string{"198.51.100.9, 203.0.113.7", "192.168.1.10"}, proxies},
	} {
		b.Run(tc.name, func(b *testing.B) {
			sk := auth.ServiceKey{Accounts: accounts, TrustedProxies: tc.trusted}
			b.ReportAllocs()
			for b.Loop() {
				client := sk.ClientIP(tc.remote, tc.xff)
				p, err := sk.Authenticate(ctx, tc.account, keyActive, client)
				if err != nil || p.Community == "" {
					b.Fatalf("Authenticate from %v = %+v, %v", client, p, err)
				}
			}
		})
	}
}

// BenchmarkHashSecret hashes a key of NewAPIKey's length.
func BenchmarkHashSecret(b *testing.B) {
	key, _ := auth.NewAPIKey()
	b.ReportAllocs()
	for b.Loop() {
		auth.HashSecret(key)
	}
}
