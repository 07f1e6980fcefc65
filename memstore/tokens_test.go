package memstore_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/procurekit/procure/auth"
	"github.com/procurekit/procure/datafile"
	"github.com/procurekit/procure/memstore"
)

// Demo tokens of these tests: not secrets.
const (
	tokRead    = "demo-read-token"
	tokNoScope = "demo-noscope-token"
	tokExpired = "demo-expired-token"
	tokRevoked = "demo-revoked-token"
	tokOther   = "demo-other-community-token"
)

var expiry = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func tokenCommunities() []datafile.Community {
	return []datafile.Community{
		{ID: "north", Name: "North", Region: datafile.NZ, Tokens: []datafile.Token{
			{Token: tokRead, Scopes: []string{auth.ScopeSuppliersRead}},
			{Token: tokNoScope, Scopes: []string{}},
			{Token: tokExpired, Scopes: []string{auth.ScopeSuppliersRead}, Expires: &expiry},
			{Token: tokRevoked, Scopes: []string{auth.ScopeSuppliersRead}, Revoked: true},
		}},
		{ID: "south", Name: "South", Region: datafile.AU, Tokens: []datafile.Token{
			{Token: tokOther, Scopes: []string{auth.ScopeSuppliersRead, "other:scope"}},
		}},
	}
}

func newTokenStore(tb testing.TB) *memstore.Store {
	tb.Helper()
	s, err := memstore.LoadReader((&datafile.File{Communities: tokenCommunities()}).Reader())
	if err != nil {
		tb.Fatalf("Load: %v", err)
	}
	return s
}

func TestTokenByHash(t *testing.T) {
	s := newTokenStore(t)
	ctx := context.Background()
	tests := []struct {
		name  string
		token string
		want  auth.Token
	}{
		{"with the scope", tokRead, auth.Token{Community: "north", Scopes: []string{auth.ScopeSuppliersRead}}},
		{"without scopes", tokNoScope, auth.Token{Community: "north", Scopes: []string{}}},
		{"expiry carried over", tokExpired, auth.Token{Community: "north", Scopes: []string{auth.ScopeSuppliersRead}, Expires: expiry}},
		{"revocation carried over", tokRevoked, auth.Token{Community: "north", Scopes: []string{auth.ScopeSuppliersRead}, Revoked: true}},
		{"another community", tokOther, auth.Token{Community: "south", Scopes: []string{auth.ScopeSuppliersRead, "other:scope"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := auth.HashSecret(tt.token)
			got, err := s.TokenByHash(ctx, h)
			if err != nil {
				t.Fatalf("TokenByHash: %v", err)
			}
			tt.want.Hash = h
			tt.want.ID = auth.TokenID(h) // a file's token gets the id of its hash
			if got.CreatedAt.IsZero() {
				t.Error("CreatedAt of a loaded token is zero")
			}
			if diff := cmp.Diff(tt.want, got, cmpopts.IgnoreFields(auth.Token{}, "CreatedAt")); diff != "" {
				t.Errorf("token (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTokenByHashUnknown(t *testing.T) {
	s := newTokenStore(t)
	for _, secret := range []string{"", "no-such-token", strings.ToUpper(tokRead), tokRead + " "} {
		_, err := s.TokenByHash(context.Background(), auth.HashSecret(secret))
		if !errors.Is(err, auth.ErrUnknown) {
			t.Errorf("TokenByHash(hash of %q): err = %v, want one matching auth.ErrUnknown", secret, err)
		}
	}
}

func TestTokenScopesAreClipped(t *testing.T) {
	s := newTokenStore(t)
	ctx := context.Background()
	h := auth.HashSecret(tokOther)
	first, err := s.TokenByHash(ctx, h)
	if err != nil {
		t.Fatal(err)
	}
	_ = append(first.Scopes, "admin")
	again, err := s.TokenByHash(ctx, h)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{auth.ScopeSuppliersRead, "other:scope"}, again.Scopes); diff != "" {
		t.Errorf("scopes changed by appending to a result (-want +got):\n%s", diff)
	}
}

func TestTokenLoadCopiesScopes(t *testing.T) {
	coms := tokenCommunities()
	s, err := memstore.LoadReader((&datafile.File{Communities: coms}).Reader())
	if err != nil {
		t.Fatal(err)
	}
	coms[1].Tokens[0].Scopes[1] = "changed"
	got, err := s.TokenByHash(context.Background(), auth.HashSecret(tokOther))
	if err != nil {
		t.Fatal(err)
	}
	if got.Scopes[1] != "other:scope" {
		t.Errorf("scope changed with the caller's data: %q", got.Scopes[1])
	}
}

// TestTokenDuplicate: one secret must not open two communities. The error
// names the entry, never the secret, and nothing of the second community's
// tokens is added.
func TestTokenDuplicate(t *testing.T) {
	s := newTokenStore(t)
	err := add(t, s, &datafile.File{Communities: []datafile.Community{{ID: "east", Name: "East", Region: datafile.US, Tokens: []datafile.Token{
		{Token: "demo-east-token", Scopes: []string{auth.ScopeSuppliersRead}},
		{Token: tokRead, Scopes: []string{auth.ScopeSuppliersRead}},
	}}}})
	if err == nil {
		t.Fatal("adding a community with a token of another community: no error")
	}
	if !strings.Contains(err.Error(), "tokens[1]") || strings.Contains(err.Error(), tokRead) {
		t.Errorf("error %q: want it to name tokens[1] and not to show the token", err)
	}
	ctx := context.Background()
	if got, err := s.TokenByHash(ctx, auth.HashSecret(tokRead)); err != nil || got.Community != "north" {
		t.Errorf("the first community's token: %+v, %v; want it unchanged", got, err)
	}
	if _, err := s.TokenByHash(ctx, auth.HashSecret("demo-east-token")); !errors.Is(err, auth.ErrUnknown) {
		t.Errorf("a token of the rejected community was added: err = %v", err)
	}
}

// TestTokenSecretNotKept: the store holds hashes only, so no rendering of
// it shows a token.
func TestTokenSecretNotKept(t *testing.T) {
	s := newTokenStore(t)
	dump := fmt.Sprintf("%+v %#v", s, s)
	for _, secret := range []string{tokRead, tokNoScope, tokExpired, tokRevoked, tokOther} {
		if strings.Contains(dump, secret) {
			t.Errorf("the store's contents show the token %q", secret)
		}
	}
}

// TestBearerWithStore runs auth.Bearer over the store.
func TestBearerWithStore(t *testing.T) {
	s := newTokenStore(t)
	b := &auth.Bearer{Tokens: s, Now: func() time.Time { return expiry.Add(-time.Hour) }}
	ctx := context.Background()
	p, err := b.Authenticate(ctx, "Bearer "+tokRead)
	if err != nil {
		t.Fatalf("Authenticate: %v", err)
	}
	if p.Community != "north" || !p.HasScope(auth.ScopeSuppliersRead) {
		t.Errorf("principal %+v: want community north with %s", p, auth.ScopeSuppliersRead)
	}
	for _, header := range []string{"Bearer " + tokRevoked, "Bearer unknown", ""} {
		if _, err := b.Authenticate(ctx, header); !errors.Is(err, auth.ErrUnauthenticated) {
			t.Errorf("Authenticate(%q): err = %v, want auth.ErrUnauthenticated", header, err)
		}
	}
	b.Now = func() time.Time { return expiry }
	if _, err := b.Authenticate(ctx, "Bearer "+tokExpired); !errors.Is(err, auth.ErrUnauthenticated) {
		t.Errorf("expired token: err = %v, want auth.ErrUnauthenticated", err)
	}
}
