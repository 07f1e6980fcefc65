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

// One reader of allowlist entries for data files, the admin API, the
// stores and the connector's -allow.
func TestParsePrefix(t *testing.T) {
	for _, tt := range []struct {
		in, want string // want "" means refused
	}{
		{"203.0.113.7", "203.0.113.7/32"},
		{"203.0.113.7/24", "203.0.113.0/24"}, // masked to its network
		{"2001:db8::1", "2001:db8::1/128"},
		{"2001:DB8::/32", "2001:db8::/32"},
		{"::ffff:192.0.2.1", "::ffff:192.0.2.1/128"}, // AddrAllowed compares it as IPv4
		{" 10.1.2.3/8\t", "10.0.0.0/8"},
		{"0.0.0.0/0", "0.0.0.0/0"},
		// An allowlist names networks, the same on every interface.
		{"fe80::1%eth0", ""},
		{"fe80::1%eth0/64", ""},
		{"fe80::1%25eth0", ""},
		{"", ""},
		{" ", ""},
		{"10.0.0.0/33", ""},
		{"10.0.0.1/", ""},
		{"1.2.3", ""},
		{"203.0.113.7:80", ""},
		{"[2001:db8::1]", ""},
		{"not-an-ip", ""},
	} {
		got, err := auth.ParsePrefix(tt.in)
		switch {
		case tt.want == "" && err == nil:
			t.Errorf("ParsePrefix(%q) = %v; want an error", tt.in, got)
		case tt.want != "" && (err != nil || got != netip.MustParsePrefix(tt.want)):
			t.Errorf("ParsePrefix(%q) = %v, %v; want %s", tt.in, got, err, tt.want)
		}
	}
}

// One reader of Authorization: Bearer for every credential that travels
// in it.
func TestBearerToken(t *testing.T) {
	for _, tt := range []struct {
		header, want string // want "" means no token
	}{
		{"Bearer abc", "abc"},
		{"bearer abc", "abc"},
		{"BEARER abc", "abc"},
		{"  Bearer   abc  ", "abc"},
		{"Bearer a b", "a b"},
		{"Bearer", ""},
		{"Bearer ", ""},
		{"Bearer    ", ""},
		{"", ""},
		{"Basic YWxhZGRpbjpvcGVuc2VzYW1l", ""},
		{"abc", ""},
		{"Bearer\tabc", ""},
	} {
		got, ok := auth.BearerToken(tt.header)
		if got != tt.want || ok != (tt.want != "") {
			t.Errorf("BearerToken(%q) = %q, %v; want %q", tt.header, got, ok, tt.want)
		}
	}
}

// hashStore is a map-backed auth.KeyHashStore: the accounts of
// fixtureAccounts found by any of their keys, deactivated ones included.
type hashStore struct {
	keyStore
	err error
}

func (s hashStore) ServiceAccountByKeyHash(_ context.Context, h auth.Hash) (auth.ServiceAccount, error) {
	if s.err != nil {
		return auth.ServiceAccount{}, s.err
	}
	var found []auth.ServiceAccount
	for _, a := range s.keyStore {
		for _, k := range a.Keys {
			if k.Hash == h {
				found = append(found, a)
			}
		}
	}
	if len(found) != 1 {
		return auth.ServiceAccount{}, fmt.Errorf("key %s: %w", h.String()[:8], auth.ErrUnknown)
	}
	return found[0], nil
}

// KeyBearer: the key alone names the account; the same rules as
// ServiceKey's (deactivated keys, allowlists), one error for every
// failure, and no key in any error.
func TestKeyBearerAuthenticate(t *testing.T) {
	accounts := fixtureAccounts()
	delete(accounts, "sa-locked") // it shares keyActive with sa-open
	accounts["sa-locked"] = auth.ServiceAccount{ID: "sa-locked", Community: "c2",
		Keys: []auth.Key{{Hash: auth.HashSecret("fixture-key-locked"), Active: true}}, AllowedIPs: prefixes("203.0.113.7/32")}
	a := &auth.KeyBearer{Accounts: hashStore{keyStore: accounts}}
	far := netip.MustParseAddr("198.51.100.1")
	for _, tt := range []struct {
		name, header  string
		client        netip.Addr
		wantCommunity string // "" means ErrUnauthenticated
		wantReason    string
	}{
		{"active key", "Bearer " + keyActive, far, "c1", ""},
		{"second active key", "bearer " + keyRotated, far, "c1", ""},
		{"deactivated key", "Bearer " + keyOld, far, "", "deactivated"},
		{"unknown key", "Bearer fixture-key-wrong", far, "", "belongs to no service account"},
		{"no header", "", far, "", "no Authorization"},
		{"another scheme", "Basic " + keyActive, far, "", "no Authorization"},
		{"allowlisted address", "Bearer fixture-key-locked", netip.MustParseAddr("203.0.113.7"), "c2", ""},
		{"address outside the allowlist", "Bearer fixture-key-locked", far, "", "outside its allowlist"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p, err := a.Authenticate(context.Background(), tt.header, tt.client)
			if tt.wantCommunity != "" {
				if err != nil || p.Community != tt.wantCommunity || !strings.HasPrefix(p.Subject, "service-account:") {
					t.Fatalf("Authenticate = %+v, %v; want community %s", p, err, tt.wantCommunity)
				}
				return
			}
			if !errors.Is(err, auth.ErrUnauthenticated) || !strings.Contains(err.Error(), tt.wantReason) {
				t.Fatalf("Authenticate = %+v, %v; want ErrUnauthenticated saying %q", p, err, tt.wantReason)
			}
			for _, k := range []string{keyActive, keyOld, keyRotated, "fixture-key-wrong", "fixture-key-locked"} {
				if strings.Contains(err.Error(), k) {
					t.Errorf("error %q holds a key", err)
				}
			}
		})
	}
	// A store failure is a 500, not a 401.
	failing := &auth.KeyBearer{Accounts: hashStore{err: errDown}}
	if _, err := failing.Authenticate(context.Background(), "Bearer "+keyActive, far); !errors.Is(err, errDown) || errors.Is(err, auth.ErrUnauthenticated) {
		t.Errorf("store failure: %v; want the store's error", err)
	}
}
