package auth_test

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/procurekit/procure"
	"github.com/procurekit/procure/auth"
)

// countingStore counts lookups, to show what is refused before the store.
type countingStore struct {
	keyStore
	calls atomic.Int64
}

func (c *countingStore) ServiceAccount(ctx context.Context, id string) (auth.ServiceAccount, error) {
	c.calls.Add(1)
	return c.keyStore.ServiceAccount(ctx, id)
}

// A caller who swaps Service-Account-ID and Service-API-Key sends the key
// as the account id: the error (which the HTTP layer logs) must not hold it.
func TestServiceKeySwappedHeadersKeepKeyOutOfError(t *testing.T) {
	a := &auth.ServiceKey{Accounts: fixtureAccounts()}
	for _, key := range []string{keyActive, "procure_sk_" + strings.Repeat("A", 49)} {
		_, err := a.Authenticate(context.Background(), key, "sa-open", netip.Addr{})
		if !errors.Is(err, auth.ErrUnauthenticated) {
			t.Fatalf("Authenticate(swapped) = %v; want ErrUnauthenticated", err)
		}
		if strings.Contains(err.Error(), key) {
			t.Errorf("error %q holds the key sent as the account id", err)
		}
		if !strings.Contains(err.Error(), auth.AccountIDFingerprint(key)) {
			t.Errorf("error %q does not carry the id's fingerprint %q", err, auth.AccountIDFingerprint(key))
		}
	}
	// A store failure names only the fingerprint too.
	f := &auth.ServiceKey{Accounts: failingStore{}}
	_, err := f.Authenticate(context.Background(), keyActive, "sa-open", netip.Addr{})
	if !errors.Is(err, errDown) || strings.Contains(err.Error(), keyActive) {
		t.Errorf("store failure = %v; want errDown without the id", err)
	}
}

func TestAccountIDFingerprint(t *testing.T) {
	a, b := auth.AccountIDFingerprint("sa-open"), auth.AccountIDFingerprint("sa-open")
	if a != b || a == auth.AccountIDFingerprint("sa-other") || !strings.HasPrefix(a, "id sha256:") || len(a) != len("id sha256:")+12 {
		t.Errorf("fingerprints %q %q", a, b)
	}
}

// docs: limits.md: a value PostgreSQL cannot hold (NUL, invalid
// UTF-8) is a 401 as on memstore, never a store error; the header is
// refused before any lookup.
func TestServiceKeyRefusesUnstorableAccountID(t *testing.T) {
	long := strings.Repeat("a", auth.MaxAccountIDLength)
	tests := []struct {
		name      string
		id        string
		wantStore bool // the store is asked
	}{
		{"NUL", "sa-open\x00", false},
		{"only NUL", "\x00", false},
		{"invalid UTF-8", "sa-\xffopen", false},
		{"control character", "sa-\x01open", false},
		{"DEL", "sa-\x7fopen", false},
		{"at the length limit", long, true},
		{"one byte past the limit", long + "a", false},
		{"non-ASCII id", "sa-ünïcode", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &countingStore{keyStore: fixtureAccounts()}
			a := &auth.ServiceKey{Accounts: s}
			_, err := a.Authenticate(context.Background(), tt.id, keyActive, netip.Addr{})
			if !errors.Is(err, auth.ErrUnauthenticated) {
				t.Fatalf("Authenticate = %v; want ErrUnauthenticated", err)
			}
			if got := s.calls.Load() > 0; got != tt.wantStore {
				t.Errorf("store asked = %v; want %v", got, tt.wantStore)
			}
			if strings.ContainsRune(err.Error(), 0) || strings.Contains(err.Error(), "\xff") {
				t.Errorf("error %q repeats the raw header", err)
			}
		})
	}
}

func TestParseAllowlist(t *testing.T) {
	tests := []struct {
		in        string
		want      string // FormatAllowlist of the result
		wantField string // "" means accepted
	}{
		{"", "", ""},
		{"  ", "", ""},
		{"203.0.113.7", "203.0.113.7/32", ""},
		{"203.0.113.7, 10.1.2.3/8", "203.0.113.7/32,10.0.0.0/8", ""},
		{"2001:db8::1,2001:db8::/32", "2001:db8::1/128,2001:db8::/32", ""},
		{"10.0.0.0/8,", "", "allow[1]"},
		{",10.0.0.0/8", "", "allow[0]"},
		{"10.0.0.0/33", "", "allow[0]"},
		{"10.0.0.1,example.com", "", "allow[1]"},
		{"fe80::1%eth0", "", "allow[0]"},
		{"10.0.0.0/8/8", "", "allow[0]"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := auth.ParseAllowlist("allow", tt.in)
			if tt.wantField != "" {
				var ve *procure.ValidationError
				if !errors.As(err, &ve) || !errors.Is(err, procure.ErrInvalid) || ve.Fields[0].Field != tt.wantField {
					t.Fatalf("ParseAllowlist(%q) = %v, %v; want a ValidationError on %s", tt.in, got, err, tt.wantField)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseAllowlist(%q): %v", tt.in, err)
			}
			if s := auth.FormatAllowlist(got); s != tt.want {
				t.Errorf("ParseAllowlist(%q) = %s; want %s", tt.in, s, tt.want)
			}
		})
	}
}
