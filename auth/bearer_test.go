package auth_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/procurekit/procure/auth"
)

// fakeTokens is a TokenStore over a map, recording the hashes it is asked
// for; err, when set, is returned for every lookup.
type fakeTokens struct {
	byHash map[auth.Hash]auth.Token
	asked  []auth.Hash
	err    error
	// loose, when set, is returned for every lookup: a store that
	// matched the wrong record.
	loose *auth.Token
}

func (f *fakeTokens) TokenByHash(_ context.Context, h auth.Hash) (auth.Token, error) {
	f.asked = append(f.asked, h)
	switch {
	case f.err != nil:
		return auth.Token{}, f.err
	case f.loose != nil:
		return *f.loose, nil
	}
	t, ok := f.byHash[h]
	if !ok {
		return auth.Token{}, fmt.Errorf("token %s: %w", h.String()[:8], auth.ErrUnknown)
	}
	return t, nil
}

var now = time.Date(2026, 5, 1, 9, 30, 0, 0, time.UTC)

// Demo tokens: not secrets.
const (
	goodToken    = "demo-good-token"
	revokedToken = "demo-revoked-token"
	expiredToken = "demo-expired-token"
	edgeToken    = "demo-expires-in-1ns"
)

func newFake() *fakeTokens {
	tok := func(secret, community string, scopes []string, expires time.Time, revoked bool) auth.Token {
		return auth.Token{Hash: auth.HashSecret(secret), Community: community, Scopes: scopes, Expires: expires, Revoked: revoked}
	}
	f := &fakeTokens{byHash: map[auth.Hash]auth.Token{}}
	for _, t := range []auth.Token{
		tok(goodToken, "acme-nz", []string{auth.ScopeSuppliersRead, "users:write"}, time.Time{}, false),
		tok(revokedToken, "acme-nz", []string{auth.ScopeSuppliersRead}, time.Time{}, true),
		tok(expiredToken, "acme-nz", []string{auth.ScopeSuppliersRead}, now, false),
		tok(edgeToken, "acme-au", nil, now.Add(time.Nanosecond), false),
	} {
		f.byHash[t.Hash] = t
	}
	return f
}

func TestBearerAccepts(t *testing.T) {
	tests := []struct {
		name   string
		header string
		want   auth.Principal
	}{
		{"canonical", "Bearer " + goodToken, principal(goodToken, "acme-nz", auth.ScopeSuppliersRead, "users:write")},
		{"lower-case scheme", "bearer " + goodToken, principal(goodToken, "acme-nz", auth.ScopeSuppliersRead, "users:write")},
		{"upper-case scheme", "BEARER " + goodToken, principal(goodToken, "acme-nz", auth.ScopeSuppliersRead, "users:write")},
		{"mixed-case scheme", "bEaReR " + goodToken, principal(goodToken, "acme-nz", auth.ScopeSuppliersRead, "users:write")},
		{"surrounding spaces", "  Bearer   " + goodToken + "  ", principal(goodToken, "acme-nz", auth.ScopeSuppliersRead, "users:write")},
		{"expires a nanosecond from now", "Bearer " + edgeToken, principal(edgeToken, "acme-au")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake()
			b := &auth.Bearer{Tokens: f, Now: func() time.Time { return now }}
			got, err := b.Authenticate(context.Background(), tt.header)
			if err != nil {
				t.Fatalf("Authenticate: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("principal (-want +got):\n%s", diff)
			}
			if strings.Contains(got.Subject, strings.TrimSpace(strings.Fields(tt.header)[1])) {
				t.Errorf("Subject %q shows the token", got.Subject)
			}
			// The store is asked for the SHA-256 of the token, never
			// the token.
			token := strings.Fields(tt.header)[1]
			if len(f.asked) != 1 || f.asked[0] != auth.Hash(sha256.Sum256([]byte(token))) {
				t.Errorf("store asked for %v, want the SHA-256 of the token", f.asked)
			}
		})
	}
}

// principal is what Bearer returns for a token: the community and scopes,
// and a subject naming the hash, never the token.
func principal(token, community string, scopes ...string) auth.Principal {
	return auth.Principal{Community: community, Scopes: scopes, Subject: "token:" + auth.HashSecret(token).String()[:12]}
}

// TestBearerRejects: docs: suppliers.md "Authentication": missing
// header, other scheme, empty, unknown, revoked or expired token are 401
// (auth.ErrUnauthenticated), whatever part failed.
func TestBearerRejects(t *testing.T) {
	tests := []struct {
		name   string
		header string
	}{
		{"missing header", ""},
		{"only spaces", "   "},
		{"scheme without token", "Bearer"},
		{"scheme and spaces", "Bearer    "},
		{"basic scheme", "Basic ZGVtbzpkZW1v"},
		{"token scheme", "Token " + goodToken},
		{"no space after scheme", "Bearer" + goodToken},
		{"token without scheme", goodToken},
		{"unknown token", "Bearer demo-unknown-token"},
		{"token in another case", "Bearer " + strings.ToUpper(goodToken)},
		{"token with a suffix", "Bearer " + goodToken + "x"},
		{"two tokens", "Bearer " + goodToken + " " + goodToken},
		{"revoked", "Bearer " + revokedToken},
		{"expired at this instant", "Bearer " + expiredToken},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := &auth.Bearer{Tokens: newFake(), Now: func() time.Time { return now }}
			p, err := b.Authenticate(context.Background(), tt.header)
			if !errors.Is(err, auth.ErrUnauthenticated) {
				t.Fatalf("Authenticate(%q) = %+v, %v; want auth.ErrUnauthenticated", tt.header, p, err)
			}
			if diff := cmp.Diff(auth.Principal{}, p); diff != "" {
				t.Errorf("principal on failure (-want +got):\n%s", diff)
			}
			for _, secret := range []string{goodToken, revokedToken, expiredToken} {
				if strings.Contains(err.Error(), secret) {
					t.Errorf("error %q shows a token", err)
				}
			}
		})
	}
}

// TestBearerStoreFailure: a failing store is not a bad credential: its
// error passes through (a 500), not ErrUnauthenticated (a 401).
func TestBearerStoreFailure(t *testing.T) {
	down := errors.New("token store unavailable")
	f := newFake()
	f.err = fmt.Errorf("query: %w", down)
	b := &auth.Bearer{Tokens: f, Now: func() time.Time { return now }}
	_, err := b.Authenticate(context.Background(), "Bearer "+goodToken)
	if !errors.Is(err, down) {
		t.Fatalf("err = %v, want the store's error", err)
	}
	if errors.Is(err, auth.ErrUnauthenticated) {
		t.Errorf("err = %v matches ErrUnauthenticated; a store failure must not look like a bad token", err)
	}
}

// TestBearerComparesHash: a store that returns a token for the wrong hash
// (say, matched by prefix) does not let a caller in.
func TestBearerComparesHash(t *testing.T) {
	f := newFake()
	other := f.byHash[auth.HashSecret(goodToken)]
	f.loose = &other
	b := &auth.Bearer{Tokens: f, Now: func() time.Time { return now }}
	if _, err := b.Authenticate(context.Background(), "Bearer demo-some-other-token"); !errors.Is(err, auth.ErrUnauthenticated) {
		t.Fatalf("err = %v, want auth.ErrUnauthenticated", err)
	}
}

// TestBearerDefaultClock: without Now, the wall clock decides expiry.
func TestBearerDefaultClock(t *testing.T) {
	f := &fakeTokens{byHash: map[auth.Hash]auth.Token{}}
	for secret, exp := range map[string]time.Time{
		"demo-past":   time.Now().Add(-time.Hour),
		"demo-future": time.Now().Add(time.Hour),
	} {
		f.byHash[auth.HashSecret(secret)] = auth.Token{Hash: auth.HashSecret(secret), Community: "c", Expires: exp}
	}
	b := &auth.Bearer{Tokens: f}
	if _, err := b.Authenticate(context.Background(), "Bearer demo-past"); !errors.Is(err, auth.ErrUnauthenticated) {
		t.Errorf("expired an hour ago: err = %v, want auth.ErrUnauthenticated", err)
	}
	if _, err := b.Authenticate(context.Background(), "Bearer demo-future"); err != nil {
		t.Errorf("expires in an hour: err = %v", err)
	}
}
