// Package authtest is the conformance suite of the stores' write side for
// what is not a supplier or a user: communities (procure.CommunityStore),
// bearer tokens (auth.TokenWriter with auth.TokenStore), service accounts
// and their keys (auth.KeyWriter with auth.KeyStore), lastUsedAt
// (auth.UsageRecorder) and budgets (budget.Writer). Every backend runs it,
// so that behaviour differences between stores show up as test failures.
//
// A backend's test is a few lines:
//
//	func TestCredentialStore(t *testing.T) {
//		authtest.Run(t, authtest.Config{
//			New: func(t *testing.T) authtest.Store { return memstore.New() },
//		})
//	}
//
// Besides the contracts written on those interfaces, the suite pins these
// decisions (docs: live-data.md, admin.md, limits.md):
//   - a credential is refused on the node that revoked or deactivated it
//     as soon as that write returns; on another node it is authenticated
//     after the write that issued it, and refused after the write that
//     revoked or deactivated it, at once - stronger than the one-second
//     bound, which is what stores without a cache give - or within
//     Config.PeerLag for a store that caches credentials;
//   - input a store cannot hold (NUL, invalid UTF-8, an invalid prefix, a
//     figure of more than budget.MaxAmountLength digits) is a
//     *procure.ValidationError naming the field on a write, and "not found"
//     (or an unknown community) on a lookup: never another error;
//   - lastUsedAt is kept to the minute, moves only forward, and (with
//     Config.UsageWrites) costs at most one write per credential and
//     minute however many requests use it;
//   - listings are copies, sorted as the interfaces say, and scoped to one
//     community.
package authtest

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/shopspring/decimal"

	"github.com/procurekit/procure"
	"github.com/procurekit/procure/auth"
	"github.com/procurekit/procure/budget"
)

// Store is what the suite writes and reads: the write interfaces, the
// lookups authentication uses, and the budget table account code
// validation reads (memstore and pgstore both have BudgetLoader).
type Store interface {
	procure.CommunityStore
	auth.TokenStore
	auth.TokenWriter
	auth.KeyStore
	auth.KeyWriter
	auth.UsageRecorder
	budget.Writer
	BudgetLoader(community string) budget.TableLoader
}

// Config tells Run how to make the stores under test.
type Config struct {
	// New returns an empty store: no communities. Required.
	New func(t *testing.T) Store
	// Peer returns another node over the same data as s: for pgstore, a
	// second Store (its own pool) on the same database. Nil means s is its
	// own peer (a store held in one process).
	Peer func(t *testing.T, s Store) Store
	// PeerLag is how long a write on one node may take to be seen by the
	// peer: 0 (the default) means at its next call; at most one second
	// (docs: live-data.md: revoked tokens and deactivated keys follow the
	// one-second bound), for a store that caches credentials.
	PeerLag time.Duration
	// UsageWrites, when not nil, returns how many times so far the
	// store has written a lastUsedAt to its backing storage; the suite
	// then checks that a burst of uses in one minute costs one write.
	UsageWrites func(t *testing.T, s Store) int
}

// Run runs the suite. Each subtest gets a new store from cfg.New.
func Run(t *testing.T, cfg Config) {
	if cfg.New == nil {
		t.Fatal("authtest: Config.New is required")
	}
	h := &harness{cfg: cfg}
	t.Run("Communities", h.testCommunities)
	t.Run("Tokens", h.testTokens)
	t.Run("TokenTenancy", h.testTokenTenancy)
	t.Run("TokensAcrossNodes", h.testTokensAcrossNodes)
	t.Run("ServiceAccounts", h.testServiceAccounts)
	t.Run("Keys", h.testKeys)
	t.Run("KeysAcrossNodes", h.testKeysAcrossNodes)
	t.Run("LastUsedAt", h.testLastUsedAt)
	t.Run("UsageWrites", h.testUsageWrites)
	t.Run("Budgets", h.testBudgets)
	t.Run("UnstorableInput", h.testUnstorable)
	t.Run("ConcurrentWrites", h.testConcurrent)
}

type harness struct{ cfg Config }

// The communities every subtest starts with.
const (
	C1 = "authtest-c1"
	C2 = "authtest-c2"
)

// open returns a new store holding C1 and C2, and its peer.
func (h *harness) open(t *testing.T) (s, peer Store) {
	t.Helper()
	s = h.cfg.New(t)
	if s == nil {
		t.Fatal("authtest: New returned a nil store")
	}
	for _, c := range []procure.Community{{ID: C1, Name: "One", Region: "AU"}, {ID: C2, Name: "Two", Region: "NZ"}} {
		if _, err := s.PutCommunity(context.Background(), c); err != nil {
			t.Fatalf("PutCommunity(%s): %v", c.ID, err)
		}
	}
	peer = s
	if h.cfg.Peer != nil {
		peer = h.cfg.Peer(t, s)
	}
	return s, peer
}

// wantField fails unless err is a *procure.ValidationError whose first
// field is field (and that matches procure.ErrInvalid).
func wantField(t *testing.T, what string, err error, field string) {
	t.Helper()
	var v *procure.ValidationError
	if !errors.As(err, &v) || len(v.Fields) == 0 || !errors.Is(err, procure.ErrInvalid) {
		t.Errorf("%s: %v, want a validation error on %s", what, err, field)
		return
	}
	if v.Fields[0].Field != field {
		t.Errorf("%s: validation error on %q (%v), want on %q", what, v.Fields[0].Field, err, field)
	}
}

func wantIs(t *testing.T, what string, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Errorf("%s: %v, want an error matching %q", what, err, target)
	}
}

// Instants in tokens compare as instants, whatever their location.
var equateTimes = cmp.Comparer(func(a, b time.Time) bool { return a.Equal(b) })

// authFields compares tokens on what authentication reads.
var authFields = cmpopts.IgnoreFields(auth.Token{}, "ID", "Name", "CreatedAt", "LastUsedAt")

// ignoreLastUsed leaves out what authenticating changes (LastUsedAt has
// tests of its own).
var ignoreLastUsed = cmpopts.IgnoreFields(auth.Key{}, "LastUsedAt")

// addToken issues a new bearer token in community and returns the secret
// and the token as stored.
func addToken(t *testing.T, s Store, community string, tok auth.Token) (string, auth.Token) {
	t.Helper()
	secret, hash := auth.NewBearerToken()
	tok.Hash, tok.Community = hash, community
	if tok.Scopes == nil {
		tok.Scopes = []string{auth.ScopeSuppliersRead}
	}
	got, err := s.AddToken(context.Background(), tok)
	if err != nil {
		t.Fatalf("AddToken: %v", err)
	}
	return secret, got
}

// bearer authenticates secret on s.
func bearer(s Store, secret string) (auth.Principal, error) {
	b := auth.Bearer{Tokens: s}
	return b.Authenticate(context.Background(), "Bearer "+secret)
}

// serviceKey authenticates account and key on s from client.
func serviceKey(s Store, account, key string, client string) (auth.Principal, error) {
	a := auth.ServiceKey{Accounts: s}
	return a.Authenticate(context.Background(), account, key, netip.MustParseAddr(client))
}

func (h *harness) testCommunities(t *testing.T) {
	ctx := context.Background()
	s := h.cfg.New(t)
	if _, err := s.Community(ctx, "acme"); !errors.Is(err, procure.ErrUnknownCommunity) {
		t.Fatalf("Community of an empty store: %v, want ErrUnknownCommunity", err)
	}
	if all, err := s.Communities(ctx); err != nil || all == nil || len(all) != 0 {
		t.Fatalf("Communities of an empty store = %#v, %v; want an empty slice", all, err)
	}
	got, err := s.PutCommunity(ctx, procure.Community{ID: "acme", Name: "Acme", Region: "NZ", AutoRoles: []string{"EMPLOYEE", " BUYER "}})
	if err != nil {
		t.Fatal(err)
	}
	want := procure.Community{ID: "acme", Name: "Acme", Region: "NZ", AutoRoles: []string{"EMPLOYEE", "BUYER"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("PutCommunity (-want +got), auto-roles trimmed:\n%s", diff)
	}
	if got, err := s.Community(ctx, "acme"); err != nil || !cmp.Equal(want, got) {
		t.Errorf("Community = %+v, %v; want %+v", got, err, want)
	}

	// Replacing keeps what the community owns.
	secret, _ := addToken(t, s, "acme", auth.Token{Name: "kept"})
	if err := s.PutBudget(ctx, "acme", "6100", decimal.RequireFromString("10")); err != nil {
		t.Fatal(err)
	}
	got, err = s.PutCommunity(ctx, procure.Community{ID: "acme", Name: "Acme Ltd", Region: "AU", AutoRoles: []string{"A", " A"}})
	if err != nil {
		t.Fatal(err)
	}
	want = procure.Community{ID: "acme", Name: "Acme Ltd", Region: "AU", AutoRoles: []string{"A"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("PutCommunity replacing (-want +got), roles the same once trimmed kept once:\n%s", diff)
	}
	got, err = s.PutCommunity(ctx, procure.Community{ID: "acme", Name: "Acme Ltd", Region: "AU"})
	if err != nil || got.AutoRoles == nil || len(got.AutoRoles) != 0 {
		t.Errorf("PutCommunity without auto-roles = %+v, %v; want AutoRoles empty, not nil", got, err)
	}
	if got, err := s.Community(ctx, "acme"); err != nil || got.AutoRoles == nil || len(got.AutoRoles) != 0 || got.Name != "Acme Ltd" {
		t.Errorf("Community after replacing = %+v, %v; want Acme Ltd without auto-roles (empty, not nil)", got, err)
	}
	if p, err := bearer(s, secret); err != nil || p.Community != "acme" {
		t.Errorf("a token of a replaced community: %+v, %v; want it still authenticates", p, err)
	}
	if tbl, err := s.BudgetLoader("acme")(ctx); err != nil || tbl.Len() != 1 {
		t.Errorf("budgets of a replaced community: %v, %v; want the one budget kept", tbl, err)
	}

	// Communities lists them all by id in byte order ("Zed" before "acme"),
	// each as Community reads it.
	for _, c := range []procure.Community{
		{ID: "zz-last", Name: "Last", Region: "US", AutoRoles: []string{"BUYER"}},
		{ID: "Zed", Region: "DEMO"},
		{ID: "acme-au", Name: "Acme AU", Region: "AU", AutoRoles: []string{"EMPLOYEE", "APPROVER"}},
	} {
		if _, err := s.PutCommunity(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	all, err := s.Communities(ctx)
	if err != nil {
		t.Fatal(err)
	}
	wantAll := []procure.Community{
		{ID: "Zed", Region: "DEMO", AutoRoles: []string{}},
		{ID: "acme", Name: "Acme Ltd", Region: "AU", AutoRoles: []string{}},
		{ID: "acme-au", Name: "Acme AU", Region: "AU", AutoRoles: []string{"EMPLOYEE", "APPROVER"}},
		{ID: "zz-last", Name: "Last", Region: "US", AutoRoles: []string{"BUYER"}},
	}
	if diff := cmp.Diff(wantAll, all); diff != "" {
		t.Errorf("Communities (-want +got):\n%s", diff)
	}
	// A copy: changing it changes nothing stored.
	all[2].AutoRoles[0], all[2].Name = "CHANGED", "Changed"
	if c, err := s.Community(ctx, "acme-au"); err != nil || c.Name != "Acme AU" || c.AutoRoles[0] != "EMPLOYEE" {
		t.Errorf("Community after changing Communities' answer = %+v, %v; want it unchanged", c, err)
	}

	bad := []struct {
		name  string
		c     procure.Community
		field string
	}{
		{"no id", procure.Community{Region: "AU"}, "id"},
		{"slash in id", procure.Community{ID: "a/b", Region: "AU"}, "id"},
		{"NUL in id", procure.Community{ID: "a\x00b", Region: "AU"}, "id"},
		{"invalid UTF-8 in id", procure.Community{ID: "a\xffb", Region: "AU"}, "id"},
		{"NUL in name", procure.Community{ID: "x", Name: "a\x00", Region: "AU"}, "name"},
		{"invalid UTF-8 in name", procure.Community{ID: "x", Name: "\xc3\x28", Region: "AU"}, "name"},
		{"unknown region", procure.Community{ID: "x", Region: "EU"}, "region"},
		{"blank role", procure.Community{ID: "x", Region: "AU", AutoRoles: []string{" "}}, "autoRoles[0]"},
		{"NUL in role", procure.Community{ID: "x", Region: "AU", AutoRoles: []string{"A", "B\x00"}}, "autoRoles[1]"},
		{"repeated role", procure.Community{ID: "x", Region: "AU", AutoRoles: []string{"A", "A"}}, "autoRoles[1]"},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			_, err := s.PutCommunity(ctx, tt.c)
			wantField(t, "PutCommunity", err, tt.field)
			if _, err := s.Community(ctx, tt.c.ID); !errors.Is(err, procure.ErrUnknownCommunity) {
				t.Errorf("Community(%q) after a refused write: %v, want ErrUnknownCommunity", tt.c.ID, err)
			}
		})
	}
}

func (h *harness) testTokens(t *testing.T) {
	ctx := context.Background()
	s, _ := h.open(t)
	expires := time.Date(2099, 1, 2, 3, 4, 5, 123456789, time.FixedZone("NZDT", 13*3600))

	if _, err := s.AddToken(ctx, auth.Token{Hash: auth.HashSecret("x"), Community: "nowhere"}); !errors.Is(err, procure.ErrUnknownCommunity) {
		t.Errorf("AddToken under an unknown community: %v, want ErrUnknownCommunity", err)
	}
	if _, err := s.Tokens(ctx, "nowhere"); !errors.Is(err, procure.ErrUnknownCommunity) {
		t.Errorf("Tokens of an unknown community: %v, want ErrUnknownCommunity", err)
	}
	if err := s.RevokeToken(ctx, "nowhere", "x"); !errors.Is(err, procure.ErrUnknownCommunity) {
		t.Errorf("RevokeToken under an unknown community: %v, want ErrUnknownCommunity", err)
	}
	if ts, err := s.Tokens(ctx, C1); err != nil || ts == nil || len(ts) != 0 {
		t.Errorf("Tokens of a community without any = %v, %v; want empty, not nil", ts, err)
	}

	// An id is derived from the hash when none is given; dates are the
	// store's.
	before := time.Now().Add(-time.Minute)
	s1, t1 := addToken(t, s, C1, auth.Token{
		Name: "ci", Scopes: []string{auth.ScopeSuppliersRead, "x:y"}, Expires: expires,
		CreatedAt: time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC), LastUsedAt: time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC),
	})
	if t1.ID != auth.TokenID(auth.HashSecret(s1)) {
		t.Errorf("ID = %q, want TokenID of the hash", t1.ID)
	}
	if t1.CreatedAt.Before(before) || !t1.LastUsedAt.IsZero() {
		t.Errorf("CreatedAt %v, LastUsedAt %v: want now and zero (the store's, not the caller's)", t1.CreatedAt, t1.LastUsedAt)
	}
	if !t1.Expires.Equal(expires.Truncate(time.Microsecond)) {
		t.Errorf("Expires = %v, want %v (microseconds)", t1.Expires, expires.Truncate(time.Microsecond))
	}
	_, t2 := addToken(t, s, C1, auth.Token{ID: "token-two", Name: "Zoë's laptop"})
	if t2.ID != "token-two" {
		t.Errorf("ID = %q, want the given token-two", t2.ID)
	}

	// The stored token, by hash (what authentication needs: a store may
	// leave the rest to Tokens) and in the list.
	got, err := s.TokenByHash(ctx, t1.Hash)
	if err != nil {
		t.Fatal(err)
	}
	opts := cmp.Options{equateTimes, cmpopts.EquateEmpty()}
	if diff := cmp.Diff(t1, got, opts, authFields); diff != "" {
		t.Errorf("TokenByHash (-AddToken's +got):\n%s", diff)
	}
	list, err := s.Tokens(ctx, C1)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]auth.Token{t1, t2}, list, opts); diff != "" {
		t.Errorf("Tokens (-want +got):\n%s", diff)
	}
	if !slices.IsSortedFunc(list, func(a, b auth.Token) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	}) {
		t.Errorf("Tokens not in CreatedAt, ID order: %v", list)
	}
	// The list is a copy.
	list[0].Scopes[0] = "changed"
	if again, _ := s.Tokens(ctx, C1); again[0].Scopes[0] == "changed" {
		t.Error("changing a listed token's scopes changed the store")
	}

	// Conflicts: the same secret, the same id.
	if _, err := s.AddToken(ctx, auth.Token{Hash: t1.Hash, Community: C1}); !errors.Is(err, procure.ErrConflict) {
		t.Errorf("AddToken with a hash in use: %v, want ErrConflict", err)
	}
	if _, err := s.AddToken(ctx, auth.Token{Hash: t1.Hash, Community: C2, ID: "other"}); !errors.Is(err, procure.ErrConflict) {
		t.Errorf("AddToken with a hash in use by another community: %v, want ErrConflict", err)
	}
	if _, err := s.AddToken(ctx, auth.Token{ID: "token-two", Hash: auth.HashSecret("fresh"), Community: C2}); !errors.Is(err, procure.ErrConflict) {
		t.Errorf("AddToken with an id in use (by another community): %v, want ErrConflict", err)
	}
	if list, _ := s.Tokens(ctx, C2); len(list) != 0 {
		t.Errorf("a refused token was stored: %v", list)
	}

	// Revoking: the token authenticates nothing from then on.
	if _, err := bearer(s, s1); err != nil {
		t.Fatalf("a new token: %v", err)
	}
	if err := s.RevokeToken(ctx, C1, t1.ID); err != nil {
		t.Fatal(err)
	}
	wantIs(t, "a revoked token", func() error { _, err := bearer(s, s1); return err }(), auth.ErrUnauthenticated)
	if err := s.RevokeToken(ctx, C1, t1.ID); err != nil {
		t.Errorf("revoking a revoked token: %v, want success", err)
	}
	if got, _ := s.TokenByHash(ctx, t1.Hash); !got.Revoked {
		t.Error("TokenByHash of a revoked token: Revoked is false")
	}
	if err := s.RevokeToken(ctx, C1, "no-such-token"); !errors.Is(err, auth.ErrNotFound) {
		t.Errorf("revoking an unknown id: %v, want auth.ErrNotFound", err)
	}
	if _, err := s.TokenByHash(ctx, auth.HashSecret("never issued")); !errors.Is(err, auth.ErrUnknown) {
		t.Errorf("TokenByHash of an unknown hash: %v, want auth.ErrUnknown", err)
	}

	// An expired token is stored as such and refused.
	past := time.Now().Add(-time.Hour)
	s3, _ := addToken(t, s, C1, auth.Token{Expires: past})
	wantIs(t, "an expired token", func() error { _, err := bearer(s, s3); return err }(), auth.ErrUnauthenticated)

	bad := []struct {
		name  string
		tok   auth.Token
		field string
	}{
		{"NUL in name", auth.Token{Name: "a\x00"}, "name"},
		{"invalid UTF-8 in name", auth.Token{Name: "\xff"}, "name"},
		{"long name", auth.Token{Name: strings.Repeat("n", 256)}, "name"},
		{"NUL in scope", auth.Token{Scopes: []string{auth.ScopeSuppliersRead, "a\x00"}}, "scopes[1]"},
		{"empty scope", auth.Token{Scopes: []string{""}}, "scopes[0]"},
		{"space in scope", auth.Token{Scopes: []string{"a b"}}, "scopes[0]"},
		{"NUL in id", auth.Token{ID: "a\x00"}, "id"},
		{"slash in id", auth.Token{ID: "a/b"}, "id"},
		{"invalid UTF-8 in id", auth.Token{ID: "\xff"}, "id"},
		{"expires in year 10000", auth.Token{Expires: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}, "expires"},
		{"expires in year 10000 in UTC", auth.Token{Expires: time.Date(9999, 12, 31, 23, 30, 0, 0, time.FixedZone("", -3600))}, "expires"},
		{"expires in year 0 in UTC", auth.Token{Expires: time.Date(1, 1, 1, 0, 30, 0, 0, time.FixedZone("", 3600))}, "expires"},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			tok := tt.tok
			tok.Hash, tok.Community = auth.HashSecret("bad "+tt.name), C2
			_, err := s.AddToken(ctx, tok)
			wantField(t, "AddToken", err, tt.field)
		})
	}
	if list, _ := s.Tokens(ctx, C2); len(list) != 0 {
		t.Errorf("refused tokens were stored: %v", list)
	}
}

// A community sees and revokes only its own tokens.
func (h *harness) testTokenTenancy(t *testing.T) {
	ctx := context.Background()
	s, _ := h.open(t)
	s1, t1 := addToken(t, s, C1, auth.Token{})
	_, t2 := addToken(t, s, C2, auth.Token{})
	if err := s.RevokeToken(ctx, C2, t1.ID); !errors.Is(err, auth.ErrNotFound) {
		t.Errorf("revoking another community's token: %v, want auth.ErrNotFound", err)
	}
	if p, err := bearer(s, s1); err != nil || p.Community != C1 {
		t.Errorf("a token another community tried to revoke: %+v, %v; want it still authenticates for %s", p, err, C1)
	}
	for c, want := range map[string]auth.Token{C1: t1, C2: t2} {
		list, err := s.Tokens(ctx, c)
		if err != nil || len(list) != 1 || list[0].ID != want.ID {
			t.Errorf("Tokens(%s) = %v, %v; want only %s", c, list, err, want.ID)
		}
	}
}

// A token issued on one node authenticates on the other, and is refused
// there once revoked.
func (h *harness) testTokensAcrossNodes(t *testing.T) {
	ctx := context.Background()
	s, peer := h.open(t)
	secret, tok := addToken(t, s, C1, auth.Token{})
	h.acrossNodes(t, "a token issued on one node, on the other", func() error {
		p, err := bearer(peer, secret)
		if err == nil && (p.Community != C1 || !p.HasScope(auth.ScopeSuppliersRead)) {
			return fmt.Errorf("principal %+v", p)
		}
		return err
	})
	// The node that revokes refuses the token at once; the other within
	// PeerLag.
	if err := s.RevokeToken(ctx, C1, tok.ID); err != nil {
		t.Fatal(err)
	}
	wantIs(t, "a token revoked on this node", func() error { _, err := bearer(s, secret); return err }(), auth.ErrUnauthenticated)
	h.acrossNodes(t, "a token revoked on the other node", func() error { return refused(bearer(peer, secret)) })
	// And the other way round.
	secret2, tok2 := addToken(t, peer, C2, auth.Token{})
	h.acrossNodes(t, "a token issued on the peer", func() error { _, err := bearer(s, secret2); return err })
	if err := peer.RevokeToken(ctx, C2, tok2.ID); err != nil {
		t.Fatal(err)
	}
	h.acrossNodes(t, "a token revoked on the peer", func() error { return refused(bearer(s, secret2)) })
}

// acrossNodes checks a change made on one node from the other: check must
// return nil at once, or within Config.PeerLag when the store has one.
func (h *harness) acrossNodes(t *testing.T, what string, check func() error) {
	t.Helper()
	deadline := time.Now().Add(h.cfg.PeerLag)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			if h.cfg.PeerLag > 0 {
				t.Errorf("%s: still %v after %s", what, err, h.cfg.PeerLag)
			} else {
				t.Errorf("%s: %v", what, err)
			}
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// refused turns an authentication that must fail into a check: nil when
// err matches auth.ErrUnauthenticated.
func refused(p auth.Principal, err error) error {
	if errors.Is(err, auth.ErrUnauthenticated) {
		return nil
	}
	return fmt.Errorf("authenticated as %+v (err %v), want an error matching %q", p, err, auth.ErrUnauthenticated)
}

func (h *harness) testServiceAccounts(t *testing.T) {
	ctx := context.Background()
	s, _ := h.open(t)
	if _, err := s.PutServiceAccount(ctx, "nowhere", "hr", nil); !errors.Is(err, procure.ErrUnknownCommunity) {
		t.Errorf("PutServiceAccount under an unknown community: %v, want ErrUnknownCommunity", err)
	}
	if _, err := s.ServiceAccounts(ctx, "nowhere"); !errors.Is(err, procure.ErrUnknownCommunity) {
		t.Errorf("ServiceAccounts of an unknown community: %v, want ErrUnknownCommunity", err)
	}
	if list, err := s.ServiceAccounts(ctx, C1); err != nil || list == nil || len(list) != 0 {
		t.Errorf("ServiceAccounts of a community without any = %v, %v; want empty, not nil", list, err)
	}
	// Prefixes are stored masked.
	a, err := s.PutServiceAccount(ctx, C1, "hr", []netip.Prefix{netip.MustParsePrefix("10.1.2.3/8"), netip.MustParsePrefix("2001:db8::1/128")})
	if err != nil {
		t.Fatal(err)
	}
	want := auth.ServiceAccount{ID: "hr", Community: C1, AllowedIPs: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("2001:db8::1/128")}}
	opts := cmp.Options{equateTimes, cmpopts.EquateEmpty(), cmp.Comparer(func(a, b netip.Prefix) bool { return a == b })}
	if diff := cmp.Diff(want, a, opts); diff != "" {
		t.Errorf("PutServiceAccount (-want +got):\n%s", diff)
	}
	key, kh := auth.NewAPIKey()
	k, err := s.AddKey(ctx, C1, "hr", auth.Key{Hash: kh, Active: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := serviceKey(s, "hr", key, "10.9.9.9"); err != nil {
		t.Errorf("a key from inside the allowlist: %v", err)
	}
	wantIs(t, "a key from outside the allowlist", func() error { _, err := serviceKey(s, "hr", key, "192.0.2.1"); return err }(), auth.ErrUnauthenticated)

	// Replacing the allowlist keeps the keys; an empty one lets any
	// address in.
	a, err = s.PutServiceAccount(ctx, C1, "hr", nil)
	if err != nil {
		t.Fatal(err)
	}
	want = auth.ServiceAccount{ID: "hr", Community: C1, Keys: []auth.Key{k}}
	// (The key has authenticated since: its LastUsedAt moved.)
	if diff := cmp.Diff(want, a, opts, ignoreLastUsed); diff != "" {
		t.Errorf("PutServiceAccount replacing the allowlist (-want +got):\n%s", diff)
	}
	if _, err := serviceKey(s, "hr", key, "192.0.2.1"); err != nil {
		t.Errorf("a key with no allowlist: %v", err)
	}

	// An account id belongs to one community for ever.
	if _, err := s.PutServiceAccount(ctx, C2, "hr", nil); !errors.Is(err, procure.ErrConflict) {
		t.Errorf("PutServiceAccount of another community's id: %v, want ErrConflict", err)
	}
	if got, err := s.ServiceAccount(ctx, "hr"); err != nil || got.Community != C1 {
		t.Errorf("the account after another community tried to take it: %+v, %v", got, err)
	}
	if list, _ := s.ServiceAccounts(ctx, C2); len(list) != 0 {
		t.Errorf("ServiceAccounts(%s) = %v, want none", C2, list)
	}

	// Listed by id in byte order.
	for _, id := range []string{"b", "a", "B", "a-1"} {
		if _, err := s.PutServiceAccount(ctx, C1, id, nil); err != nil {
			t.Fatal(err)
		}
	}
	list, err := s.ServiceAccounts(ctx, C1)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, a := range list {
		ids = append(ids, a.ID)
		if a.Community != C1 {
			t.Errorf("account %s listed with community %q", a.ID, a.Community)
		}
	}
	if diff := cmp.Diff([]string{"B", "a", "a-1", "b", "hr"}, ids); diff != "" {
		t.Errorf("ServiceAccounts ids (-want +got):\n%s", diff)
	}

	bad := []struct {
		name  string
		id    string
		ips   []netip.Prefix
		field string
	}{
		{"no id", "", nil, "id"},
		{"NUL in id", "a\x00", nil, "id"},
		{"invalid UTF-8 in id", "\xff", nil, "id"},
		{"space in id", "a b", nil, "id"},
		{"invalid prefix", "ok", []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), {}}, "allowedIPs[1]"},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			_, err := s.PutServiceAccount(ctx, C2, tt.id, tt.ips)
			wantField(t, "PutServiceAccount", err, tt.field)
		})
	}
	if list, _ := s.ServiceAccounts(ctx, C2); len(list) != 0 {
		t.Errorf("refused accounts were stored: %v", list)
	}
}

func (h *harness) testKeys(t *testing.T) {
	ctx := context.Background()
	s, _ := h.open(t)
	if _, err := s.PutServiceAccount(ctx, C1, "hr", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutServiceAccount(ctx, C2, "fin", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddKey(ctx, "nowhere", "hr", auth.Key{Hash: auth.HashSecret("k")}); !errors.Is(err, procure.ErrUnknownCommunity) {
		t.Errorf("AddKey under an unknown community: %v, want ErrUnknownCommunity", err)
	}
	if _, err := s.AddKey(ctx, C1, "nobody", auth.Key{Hash: auth.HashSecret("k")}); !errors.Is(err, auth.ErrNotFound) {
		t.Errorf("AddKey to an unknown account: %v, want auth.ErrNotFound", err)
	}
	if _, err := s.AddKey(ctx, C2, "hr", auth.Key{Hash: auth.HashSecret("k")}); !errors.Is(err, auth.ErrNotFound) {
		t.Errorf("AddKey to another community's account: %v, want auth.ErrNotFound", err)
	}

	before := time.Now().Add(-time.Minute)
	oldKey, oldHash := auth.NewAPIKey()
	k1, err := s.AddKey(ctx, C1, "hr", auth.Key{Hash: oldHash, Active: true, CreatedAt: time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC), LastUsedAt: time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	if k1.ID != auth.KeyID(oldHash) || k1.CreatedAt.Before(before) || !k1.LastUsedAt.IsZero() || !k1.Active || k1.Hash != oldHash {
		t.Errorf("AddKey = %+v; want the derived id, CreatedAt now, LastUsedAt zero, active", k1)
	}
	newKey, newHash := auth.NewAPIKey()
	k2, err := s.AddKey(ctx, C1, "hr", auth.Key{ID: "key-2", Hash: newHash, Active: true})
	if err != nil {
		t.Fatal(err)
	}
	if k2.ID != "key-2" {
		t.Errorf("AddKey ID = %q, want the given key-2", k2.ID)
	}
	// Both keys work at once (rotation).
	for _, key := range []string{oldKey, newKey} {
		if p, err := serviceKey(s, "hr", key, "192.0.2.1"); err != nil || p.Community != C1 {
			t.Errorf("a key of a rotating account: %+v, %v", p, err)
		}
	}
	got, err := s.ServiceAccount(ctx, "hr")
	if err != nil || len(got.Keys) != 2 {
		t.Fatalf("ServiceAccount = %+v, %v; want two keys", got, err)
	}

	// Conflicts: the same secret (in any account), the same id in the
	// account.
	if _, err := s.AddKey(ctx, C1, "hr", auth.Key{Hash: oldHash}); !errors.Is(err, procure.ErrConflict) {
		t.Errorf("AddKey with a hash in use: %v, want ErrConflict", err)
	}
	if _, err := s.AddKey(ctx, C2, "fin", auth.Key{Hash: oldHash, ID: "other"}); !errors.Is(err, procure.ErrConflict) {
		t.Errorf("AddKey with a hash in use by another account: %v, want ErrConflict", err)
	}
	if _, err := s.AddKey(ctx, C1, "hr", auth.Key{ID: "key-2", Hash: auth.HashSecret("fresh")}); !errors.Is(err, procure.ErrConflict) {
		t.Errorf("AddKey with a key id in use in the account: %v, want ErrConflict", err)
	}
	wantField(t, "AddKey with NUL in the id", func() error {
		_, err := s.AddKey(ctx, C1, "hr", auth.Key{ID: "a\x00", Hash: auth.HashSecret("nul")})
		return err
	}(), "id")

	// Deactivating: the old key is refused, the new one still works.
	d, err := s.SetKeyActive(ctx, C1, "hr", k1.ID, false)
	if err != nil {
		t.Fatal(err)
	}
	wantKey := k1
	wantKey.Active = false
	if diff := cmp.Diff(wantKey, d, equateTimes, ignoreLastUsed); diff != "" {
		t.Errorf("SetKeyActive (-want +got):\n%s", diff)
	}
	wantIs(t, "a deactivated key", func() error { _, err := serviceKey(s, "hr", oldKey, "192.0.2.1"); return err }(), auth.ErrUnauthenticated)
	if _, err := serviceKey(s, "hr", newKey, "192.0.2.1"); err != nil {
		t.Errorf("the other key after deactivating one: %v", err)
	}
	if _, err := s.SetKeyActive(ctx, C1, "hr", k1.ID, true); err != nil {
		t.Fatal(err)
	}
	if _, err := serviceKey(s, "hr", oldKey, "192.0.2.1"); err != nil {
		t.Errorf("a reactivated key: %v", err)
	}
	for _, tt := range []struct{ name, community, account, key string }{
		{"unknown key", C1, "hr", "no-such-key"},
		{"unknown account", C1, "nobody", k1.ID},
		{"another community's account", C2, "hr", k1.ID},
		{"another account's key", C2, "fin", k1.ID},
	} {
		if _, err := s.SetKeyActive(ctx, tt.community, tt.account, tt.key, false); !errors.Is(err, auth.ErrNotFound) {
			t.Errorf("SetKeyActive, %s: %v, want auth.ErrNotFound", tt.name, err)
		}
	}
	if _, err := s.SetKeyActive(ctx, "nowhere", "hr", k1.ID, false); !errors.Is(err, procure.ErrUnknownCommunity) {
		t.Errorf("SetKeyActive under an unknown community: %v, want ErrUnknownCommunity", err)
	}
	if _, err := serviceKey(s, "hr", oldKey, "192.0.2.1"); err != nil {
		t.Errorf("a key after refused deactivations: %v", err)
	}

	// Listed by CreatedAt, then ID.
	k3, err := s.AddKey(ctx, C1, "hr", auth.Key{ID: "key-0", Hash: auth.HashSecret("third")})
	if err != nil {
		t.Fatal(err)
	}
	list, err := s.ServiceAccounts(ctx, C1)
	if err != nil || len(list) != 1 {
		t.Fatalf("ServiceAccounts = %v, %v", list, err)
	}
	want := []auth.Key{k1, k2, k3}
	slices.SortStableFunc(want, func(a, b auth.Key) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	if diff := cmp.Diff(want, list[0].Keys, equateTimes, ignoreLastUsed); diff != "" {
		t.Errorf("listed keys (-want +got):\n%s", diff)
	}
}

// A key added on one node authenticates on the other, and is refused
// there once deactivated; an allowlist changed on one node applies on the
// other.
func (h *harness) testKeysAcrossNodes(t *testing.T) {
	ctx := context.Background()
	s, peer := h.open(t)
	if _, err := s.PutServiceAccount(ctx, C1, "hr", nil); err != nil {
		t.Fatal(err)
	}
	key, hash := auth.NewAPIKey()
	k, err := s.AddKey(ctx, C1, "hr", auth.Key{Hash: hash, Active: true})
	if err != nil {
		t.Fatal(err)
	}
	h.acrossNodes(t, "a key added on one node, on the other", func() error {
		p, err := serviceKey(peer, "hr", key, "192.0.2.1")
		if err == nil && p.Community != C1 {
			return fmt.Errorf("principal %+v", p)
		}
		return err
	})
	if _, err := s.PutServiceAccount(ctx, C1, "hr", []netip.Prefix{netip.MustParsePrefix("198.51.100.0/24")}); err != nil {
		t.Fatal(err)
	}
	h.acrossNodes(t, "a caller outside an allowlist set on the other node", func() error { return refused(serviceKey(peer, "hr", key, "192.0.2.1")) })
	h.acrossNodes(t, "a caller inside an allowlist set on the other node", func() error { _, err := serviceKey(peer, "hr", key, "198.51.100.7"); return err })
	if _, err := peer.SetKeyActive(ctx, C1, "hr", k.ID, false); err != nil {
		t.Fatal(err)
	}
	wantIs(t, "a key deactivated on this node", func() error { _, err := serviceKey(peer, "hr", key, "198.51.100.7"); return err }(), auth.ErrUnauthenticated)
	h.acrossNodes(t, "a key deactivated on the other node", func() error { return refused(serviceKey(s, "hr", key, "198.51.100.7")) })
}

// lastUsedAt: to the minute, only forward, for tokens and keys, through
// the recorder directly.
func (h *harness) testLastUsedAt(t *testing.T) {
	ctx := context.Background()
	s, _ := h.open(t)
	_, tok := addToken(t, s, C1, auth.Token{})
	if _, err := s.PutServiceAccount(ctx, C1, "hr", nil); err != nil {
		t.Fatal(err)
	}
	_, kh := auth.NewAPIKey()
	if _, err := s.AddKey(ctx, C1, "hr", auth.Key{Hash: kh, Active: true}); err != nil {
		t.Fatal(err)
	}
	tokenLastUsed := func() time.Time {
		t.Helper()
		list, err := s.Tokens(ctx, C1)
		if err != nil || len(list) != 1 {
			t.Fatalf("Tokens = %v, %v", list, err)
		}
		return list[0].LastUsedAt
	}
	keyLastUsed := func() time.Time {
		t.Helper()
		list, err := s.ServiceAccounts(ctx, C1)
		if err != nil || len(list) != 1 || len(list[0].Keys) != 1 {
			t.Fatalf("ServiceAccounts = %v, %v", list, err)
		}
		return list[0].Keys[0].LastUsedAt
	}
	if !tokenLastUsed().IsZero() || !keyLastUsed().IsZero() {
		t.Fatal("a new credential has a lastUsedAt")
	}
	// Recent minutes, so that no store's sweep of old minutes interferes.
	base := time.Now().UTC().Truncate(time.Minute).Add(-10 * time.Minute)
	zone := time.FixedZone("X", -5*3600)
	steps := []struct {
		at   time.Time
		want time.Time
	}{
		{base.Add(7 * time.Second), base},
		{base.Add(59*time.Second + 999*time.Millisecond), base},
		{base.Add(61 * time.Second).In(zone), base.Add(time.Minute)},
		{base.Add(10 * time.Second), base.Add(time.Minute)}, // never back
		{base.Add(5 * time.Minute), base.Add(5 * time.Minute)},
	}
	for i, st := range steps {
		s.TokenUsed(ctx, tok.Hash, st.at)
		s.KeyUsed(ctx, kh, st.at)
		if got := tokenLastUsed(); !got.Equal(st.want) {
			t.Errorf("step %d: token lastUsedAt %v, want %v", i, got, st.want)
		}
		if got := keyLastUsed(); !got.Equal(st.want) {
			t.Errorf("step %d: key lastUsedAt %v, want %v", i, got, st.want)
		}
	}
	// Unknown credentials are ignored.
	s.TokenUsed(ctx, auth.HashSecret("unknown"), base)
	s.KeyUsed(ctx, auth.HashSecret("unknown"), base)

	// Authentication records it, on whichever node serves the request.
	secret, tok2 := addToken(t, s, C2, auth.Token{})
	if _, err := bearer(s, secret); err != nil {
		t.Fatal(err)
	}
	list, err := s.Tokens(ctx, C2)
	if err != nil || len(list) != 1 || list[0].ID != tok2.ID {
		t.Fatalf("Tokens(%s) = %v, %v", C2, list, err)
	}
	if got, now := list[0].LastUsedAt, time.Now().UTC().Truncate(time.Minute); got.Before(now.Add(-time.Minute)) || got.After(now) || got.Second() != 0 {
		t.Errorf("lastUsedAt after authenticating = %v; want this minute", got)
	}
}

// A burst of uses in one minute costs one write per credential; the next
// minute one more.
func (h *harness) testUsageWrites(t *testing.T) {
	if h.cfg.UsageWrites == nil {
		t.Skip("authtest: the store does not count its lastUsedAt writes (Config.UsageWrites)")
	}
	ctx := context.Background()
	s, _ := h.open(t)
	secret, tok := addToken(t, s, C1, auth.Token{})
	if _, err := s.PutServiceAccount(ctx, C1, "hr", nil); err != nil {
		t.Fatal(err)
	}
	key, kh := auth.NewAPIKey()
	if _, err := s.AddKey(ctx, C1, "hr", auth.Key{Hash: kh, Active: true}); err != nil {
		t.Fatal(err)
	}
	minute := time.Now().UTC().Truncate(time.Minute).Add(-30 * time.Minute)
	start := h.cfg.UsageWrites(t, s)
	for i := range 200 {
		s.TokenUsed(ctx, tok.Hash, minute.Add(time.Duration(i)*250*time.Millisecond))
		s.KeyUsed(ctx, kh, minute.Add(time.Duration(i)*250*time.Millisecond))
	}
	if n := h.cfg.UsageWrites(t, s) - start; n != 2 {
		t.Errorf("200 uses of a token and a key within one minute: %d writes, want 2", n)
	}
	s.TokenUsed(ctx, tok.Hash, minute.Add(time.Minute))
	s.TokenUsed(ctx, tok.Hash, minute.Add(time.Minute+time.Second))
	if n := h.cfg.UsageWrites(t, s) - start; n != 3 {
		t.Errorf("after two uses in the next minute: %d writes, want 3", n)
	}
	// Through the authenticators: a burst of requests, at most one write
	// each (none when the minute is recorded already).
	start = h.cfg.UsageWrites(t, s)
	for range 50 {
		if _, err := bearer(s, secret); err != nil {
			t.Fatal(err)
		}
		if _, err := serviceKey(s, "hr", key, "192.0.2.1"); err != nil {
			t.Fatal(err)
		}
	}
	if n := h.cfg.UsageWrites(t, s) - start; n > 4 {
		t.Errorf("50 authentications of a token and a key: %d writes, want at most 2 (4 if the minute turned)", n)
	}
}

func (h *harness) testBudgets(t *testing.T) {
	ctx := context.Background()
	s, peer := h.open(t)
	d := decimal.RequireFromString
	if err := s.PutBudget(ctx, "nowhere", "6100", d("1")); !errors.Is(err, procure.ErrUnknownCommunity) {
		t.Errorf("PutBudget under an unknown community: %v, want ErrUnknownCommunity", err)
	}
	if err := s.DeleteBudget(ctx, "nowhere", "6100"); !errors.Is(err, procure.ErrUnknownCommunity) {
		t.Errorf("DeleteBudget under an unknown community: %v, want ErrUnknownCommunity", err)
	}
	table := func(st Store, c string) *budget.Table {
		t.Helper()
		tbl, err := st.BudgetLoader(c)(ctx)
		if err != nil {
			t.Fatalf("BudgetLoader(%s): %v", c, err)
		}
		return tbl
	}
	if err := s.PutBudget(ctx, C1, " 6100-200 ", d("125.50")); err != nil {
		t.Fatal(err)
	}
	if err := s.PutBudget(ctx, C1, "7000", d("-3")); err != nil {
		t.Fatal(err)
	}
	if err := s.PutBudget(ctx, C1, "Ärzte-1", d("0.0000000001")); err != nil {
		t.Fatal(err)
	}
	// The node that wrote sees its writes at once; the other within
	// PeerLag (acrossNodes).
	written := func(st Store) func() error {
		return func() error {
			tbl := table(st, C1)
			if b, ok := tbl.Budget("6100-200"); !ok || !b.Equal(d("125.5")) {
				return fmt.Errorf("budget of 6100-200 = %v %v, want 125.50 (account trimmed)", b, ok)
			}
			if b, ok := tbl.Budget("Ärzte-1"); !ok || !b.Equal(d("0.0000000001")) {
				return fmt.Errorf("budget of Ärzte-1 = %v %v, want 0.0000000001 exactly", b, ok)
			}
			if tbl.Len() != 3 {
				return fmt.Errorf("table of %d accounts, want 3", tbl.Len())
			}
			if tbl := table(st, C2); tbl.Len() != 0 {
				return fmt.Errorf("%s's table has %d accounts, want none (tenancy)", C2, tbl.Len())
			}
			return nil
		}
	}
	if err := written(s)(); err != nil {
		t.Errorf("on the node that wrote: %v", err)
	}
	h.acrossNodes(t, "the budgets written, on the peer", written(peer))
	if err := s.PutBudget(ctx, C1, "6100-200", d("99")); err != nil {
		t.Fatal(err)
	}
	h.acrossNodes(t, "budget after replacing, on the peer", func() error {
		if b, _ := table(peer, C1).Budget("6100-200"); !b.Equal(d("99")) {
			return fmt.Errorf("%v, want 99", b)
		}
		return nil
	})
	if err := s.DeleteBudget(ctx, C2, "7000"); !errors.Is(err, budget.ErrNotFound) {
		t.Errorf("deleting another community's budget: %v, want budget.ErrNotFound", err)
	}
	if err := peer.DeleteBudget(ctx, C1, " 7000 "); err != nil {
		t.Fatal(err)
	}
	h.acrossNodes(t, "a budget deleted on the peer, on this node", func() error {
		if _, ok := table(s, C1).Budget("7000"); ok {
			return errors.New("still in the table")
		}
		return nil
	})
	if err := s.DeleteBudget(ctx, C1, "7000"); !errors.Is(err, budget.ErrNotFound) {
		t.Errorf("deleting an absent budget: %v, want budget.ErrNotFound", err)
	}

	bad := []struct {
		name    string
		account string
		amount  decimal.Decimal
		field   string
	}{
		{"blank account", "  ", d("1"), "account"},
		{"NUL in account", "61\x0000", d("1"), "account"},
		{"invalid UTF-8 in account", "61\xff", d("1"), "account"},
		{"long account", strings.Repeat("9", 256), d("1"), "account"},
		{"51 digits", "6100", d(strings.Repeat("9", 51)), "budget"},
		{"huge exponent", "6100", decimal.New(1, 100000), "budget"},
		{"tiny exponent", "6100", decimal.New(1, -100000), "budget"},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			wantField(t, "PutBudget", s.PutBudget(ctx, C2, tt.account, tt.amount), tt.field)
		})
	}
	if tbl := table(s, C2); tbl.Len() != 0 {
		t.Errorf("refused budgets were stored: %d accounts", tbl.Len())
	}
	// 50 digits is the most, either side of the point.
	for _, amount := range []string{strings.Repeat("9", 50), "-0." + strings.Repeat("0", 48) + "1"} {
		if err := s.PutBudget(ctx, C2, "max", d(amount)); err != nil {
			t.Errorf("PutBudget(%s): %v", amount, err)
		} else if b, _ := table(s, C2).Budget("max"); !b.Equal(d(amount)) {
			t.Errorf("budget %s read back as %s", amount, b)
		}
	}
}

// Lookups by input a store cannot hold find nothing; they never fail
// otherwise.
func (h *harness) testUnstorable(t *testing.T) {
	ctx := context.Background()
	s, _ := h.open(t)
	if _, err := s.PutServiceAccount(ctx, C1, "hr", nil); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"a\x00b", "\xff\xfe", "\x00"} {
		q := fmt.Sprintf("%q", bad)
		wantIs(t, "Community("+q+")", func() error { _, err := s.Community(ctx, bad); return err }(), procure.ErrUnknownCommunity)
		wantIs(t, "Tokens("+q+")", func() error { _, err := s.Tokens(ctx, bad); return err }(), procure.ErrUnknownCommunity)
		wantIs(t, "ServiceAccounts("+q+")", func() error { _, err := s.ServiceAccounts(ctx, bad); return err }(), procure.ErrUnknownCommunity)
		wantIs(t, "AddToken under "+q, func() error {
			_, err := s.AddToken(ctx, auth.Token{Hash: auth.HashSecret("t"), Community: bad})
			return err
		}(), procure.ErrUnknownCommunity)
		wantIs(t, "PutBudget under "+q, s.PutBudget(ctx, bad, "6100", decimal.NewFromInt(1)), procure.ErrUnknownCommunity)
		wantIs(t, "RevokeToken("+q+")", s.RevokeToken(ctx, C1, bad), auth.ErrNotFound)
		wantIs(t, "AddKey to account "+q, func() error {
			_, err := s.AddKey(ctx, C1, bad, auth.Key{Hash: auth.HashSecret("k")})
			return err
		}(), auth.ErrNotFound)
		wantIs(t, "SetKeyActive(account "+q+")", func() error { _, err := s.SetKeyActive(ctx, C1, bad, "k", false); return err }(), auth.ErrNotFound)
		wantIs(t, "SetKeyActive(key "+q+")", func() error { _, err := s.SetKeyActive(ctx, C1, "hr", bad, false); return err }(), auth.ErrNotFound)
		wantIs(t, "DeleteBudget("+q+")", s.DeleteBudget(ctx, C1, bad), budget.ErrNotFound)
		wantIs(t, "ServiceAccount("+q+")", func() error { _, err := s.ServiceAccount(ctx, bad); return err }(), auth.ErrUnknown)
	}
}

// Concurrent writes on both nodes: of many AddTokens of one id, one wins
// and the others conflict; keys added at once to one account are all
// kept.
func (h *harness) testConcurrent(t *testing.T) {
	ctx := context.Background()
	s, peer := h.open(t)
	if _, err := s.PutServiceAccount(ctx, C1, "hr", nil); err != nil {
		t.Fatal(err)
	}
	const n = 16
	var wg sync.WaitGroup
	tokenErrs := make([]error, n)
	keyErrs := make([]error, n)
	for i := range n {
		st := s
		if i%2 == 1 {
			st = peer
		}
		wg.Go(func() {
			_, hash := auth.NewBearerToken()
			_, tokenErrs[i] = st.AddToken(ctx, auth.Token{ID: "contested", Hash: hash, Community: C1})
		})
		wg.Go(func() {
			_, hash := auth.NewAPIKey()
			_, keyErrs[i] = st.AddKey(ctx, C1, "hr", auth.Key{Hash: hash, Active: true})
		})
	}
	wg.Wait()
	won := 0
	for i, err := range tokenErrs {
		switch {
		case err == nil:
			won++
		case !errors.Is(err, procure.ErrConflict):
			t.Errorf("AddToken %d: %v, want success or ErrConflict", i, err)
		}
	}
	if won != 1 {
		t.Errorf("%d of %d concurrent AddTokens of one id succeeded, want 1", won, n)
	}
	for i, err := range keyErrs {
		if err != nil {
			t.Errorf("AddKey %d: %v", i, err)
		}
	}
	// Half the keys were added on the peer: this node sees them within
	// PeerLag (a node reading a streaming replica, up to the one-second
	// bound later).
	h.acrossNodes(t, fmt.Sprintf("after %d concurrent AddKeys, the account's keys", n), func() error {
		a, err := s.ServiceAccount(ctx, "hr")
		if err == nil && len(a.Keys) != n {
			err = fmt.Errorf("%d keys, want %d", len(a.Keys), n)
		}
		return err
	})
}
