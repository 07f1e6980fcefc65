package auth_test

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"testing"

	"github.com/procurekit/procure/auth"
)

// keyStore is a map-backed auth.KeyStore for tests.
type keyStore map[string]auth.ServiceAccount

func (k keyStore) ServiceAccount(_ context.Context, id string) (auth.ServiceAccount, error) {
	a, ok := k[id]
	if !ok {
		return auth.ServiceAccount{}, fmt.Errorf("account %q: %w", id, auth.ErrUnknown)
	}
	return a, nil
}

// failingStore fails every lookup, as a database that is down would.
type failingStore struct{}

var errDown = errors.New("database is down")

func (failingStore) ServiceAccount(context.Context, string) (auth.ServiceAccount, error) {
	return auth.ServiceAccount{}, errDown
}

// looseStore matches ids case-insensitively, as a careless SQL collation might.
type looseStore struct{ keyStore }

func (l looseStore) ServiceAccount(ctx context.Context, id string) (auth.ServiceAccount, error) {
	return l.keyStore.ServiceAccount(ctx, strings.ToLower(id))
}

// Test fixtures only, not real secrets.
const (
	keyActive  = "fixture-key-active"
	keyOld     = "fixture-key-old"
	keyRotated = "fixture-key-rotated"
)

func fixtureAccounts() keyStore {
	return keyStore{
		"sa-open": {ID: "sa-open", Community: "c1", Keys: []auth.Key{
			{Hash: auth.HashSecret(keyOld), Active: false},
			{Hash: auth.HashSecret(keyActive), Active: true},
			{Hash: auth.HashSecret(keyRotated), Active: true},
		}},
		"sa-locked": {ID: "sa-locked", Community: "c2", Keys: []auth.Key{{Hash: auth.HashSecret(keyActive), Active: true}},
			AllowedIPs: prefixes("203.0.113.7/32", "2001:db8::/32")},
		"sa-nokeys": {ID: "sa-nokeys", Community: "c3"},
	}
}

func TestServiceKeyAuthenticate(t *testing.T) {
	a := &auth.ServiceKey{Accounts: fixtureAccounts()}
	far := netip.MustParseAddr("198.51.100.1")
	tests := []struct {
		name          string
		account, key  string
		client        netip.Addr
		wantCommunity string // "" means ErrUnauthenticated
		wantReason    string // part of the error text (for the log)
	}{
		{"active key", "sa-open", keyActive, far, "c1", ""},
		// docs: users.md: several active keys at once (rotation).
		{"second active key", "sa-open", keyRotated, far, "c1", ""},
		{"deactivated key", "sa-open", keyOld, far, "", "deactivated"},
		{"wrong key", "sa-open", "fixture-key-wrong", far, "", "matches none"},
		{"key of the same account in another case", "sa-open", strings.ToUpper(keyActive), far, "", "matches none"},
		{"unknown account", "sa-nobody", keyActive, far, "", "unknown service account"},
		{"account without keys", "sa-nokeys", keyActive, far, "", "matches none"},
		// docs: users.md "Authentication": both headers are required.
		{"missing key", "sa-open", "", far, "", "both required"},
		{"missing account", "", keyActive, far, "", "both required"},
		// docs: users.md "Authentication" rule 1: an allowlist rejects other addresses even with the right key.
		{"allowlisted address", "sa-locked", keyActive, netip.MustParseAddr("203.0.113.7"), "c2", ""},
		{"allowlisted IPv6 range", "sa-locked", keyActive, netip.MustParseAddr("2001:db8:5::1"), "c2", ""},
		{"allowlisted address, mapped", "sa-locked", keyActive, netip.MustParseAddr("::ffff:203.0.113.7"), "c2", ""},
		{"address outside the allowlist", "sa-locked", keyActive, far, "", "outside its allowlist"},
		{"unknown client address", "sa-locked", keyActive, netip.Addr{}, "", "outside its allowlist"},
		{"unknown client address, no allowlist", "sa-open", keyActive, netip.Addr{}, "c1", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := a.Authenticate(context.Background(), tt.account, tt.key, tt.client)
			if tt.wantCommunity != "" {
				if err != nil {
					t.Fatalf("Authenticate: %v", err)
				}
				if p.Community != tt.wantCommunity || p.Subject != "service-account:"+tt.account || len(p.Scopes) != 0 {
					t.Errorf("principal = %+v", p)
				}
				return
			}
			// docs: users.md: every failure is one and the same error.
			if !errors.Is(err, auth.ErrUnauthenticated) {
				t.Fatalf("Authenticate = %+v, %v; want ErrUnauthenticated", p, err)
			}
			if !strings.Contains(err.Error(), tt.wantReason) {
				t.Errorf("error %q does not say %q", err, tt.wantReason)
			}
			// No secret in an error.
			for _, k := range []string{keyActive, keyOld, keyRotated, strings.ToUpper(keyActive), "fixture-key-wrong"} {
				if strings.Contains(err.Error(), k) {
					t.Errorf("error %q holds a key", err)
				}
			}
			if p.Community != "" || p.Subject != "" {
				t.Errorf("failed authentication returned principal %+v", p)
			}
		})
	}
}

func TestServiceKeyStoreFailure(t *testing.T) {
	a := &auth.ServiceKey{Accounts: failingStore{}}
	_, err := a.Authenticate(context.Background(), "sa-open", keyActive, netip.Addr{})
	// A store failure is a 500, not a 401.
	if !errors.Is(err, errDown) || errors.Is(err, auth.ErrUnauthenticated) {
		t.Fatalf("Authenticate = %v; want the store error, not ErrUnauthenticated", err)
	}
}

func TestServiceKeyLooseStore(t *testing.T) {
	a := &auth.ServiceKey{Accounts: looseStore{fixtureAccounts()}}
	if _, err := a.Authenticate(context.Background(), "SA-OPEN", keyActive, netip.Addr{}); !errors.Is(err, auth.ErrUnauthenticated) {
		t.Fatalf("Authenticate with an id the store matched loosely = %v; want ErrUnauthenticated", err)
	}
}

func TestServiceKeyClientIP(t *testing.T) {
	a := &auth.ServiceKey{TrustedProxies: prefixes("10.0.0.0/8")}
	if got := a.ClientIP("10.0.0.1:80", []string{"203.0.113.7"}); got != netip.MustParseAddr("203.0.113.7") {
		t.Errorf("ClientIP behind a trusted proxy = %v", got)
	}
	none := &auth.ServiceKey{}
	if got := none.ClientIP("10.0.0.1:80", []string{"203.0.113.7"}); got != netip.MustParseAddr("10.0.0.1") {
		t.Errorf("ClientIP without trusted proxies = %v, want the peer", got)
	}
}

func TestNewAPIKey(t *testing.T) {
	seen := map[string]bool{}
	for range 200 {
		key, hash := auth.NewAPIKey()
		if seen[key] {
			t.Fatalf("NewAPIKey repeated a key")
		}
		seen[key] = true
		if !strings.HasPrefix(key, auth.APIKeyPrefix) || len(key) != len(auth.APIKeyPrefix)+49 {
			t.Fatalf("key %q has the wrong shape", key)
		}
		if hash != auth.HashSecret(key) {
			t.Fatal("hash is not HashSecret(key)")
		}
		if !auth.IsAPIKeyFormat(key) {
			t.Fatalf("IsAPIKeyFormat(%q) = false", key)
		}
	}
	key, _ := auth.NewAPIKey()
	body := strings.TrimPrefix(key, auth.APIKeyPrefix)
	flip := func(s string, i int) string {
		b := []byte(s)
		if b[i] == 'a' {
			b[i] = 'b'
		} else {
			b[i] = 'a'
		}
		return string(b)
	}
	for _, bad := range []string{
		"", auth.APIKeyPrefix, key[:len(key)-1], key + "0",
		auth.APIKeyPrefix + flip(body, 3),           // a typo in the random part
		auth.APIKeyPrefix + flip(body, len(body)-1), // a typo in the checksum
		"other_sk_" + body,
		auth.APIKeyPrefix + body[:10] + "-" + body[11:],
	} {
		if auth.IsAPIKeyFormat(bad) {
			t.Errorf("IsAPIKeyFormat(%q) = true", bad)
		}
	}
}

func ExampleNewAPIKey() {
	key, hash := auth.NewAPIKey()
	// Deliver key to the customer's administrator; keep only hash.
	account := auth.ServiceAccount{ID: "sa-demo", Community: "demo", Keys: []auth.Key{{Hash: hash, Active: true}}}
	a := auth.ServiceKey{Accounts: keyStore{account.ID: account}}
	p, err := a.Authenticate(context.Background(), "sa-demo", key, netip.MustParseAddr("192.0.2.10"))
	fmt.Println(p.Community, err, strings.HasPrefix(key, "procure_sk_"), len(key))
	// Output: demo <nil> true 60
}
