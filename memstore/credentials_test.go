package memstore_test

import (
	"context"
	"net/netip"
	"testing"
	"time"

	"github.com/procurekit/procure"
	"github.com/procurekit/procure/auth"
	"github.com/procurekit/procure/memstore"
)

// TestLastUsedAt: authenticating records lastUsedAt to the minute, once a
// minute: later calls in the same minute change nothing, a later minute
// moves it, an earlier instant never moves it back.
func TestLastUsedAt(t *testing.T) {
	ctx := context.Background()
	s := memstore.New()
	if _, err := s.PutCommunity(ctx, procure.Community{ID: "acme", Region: "AU"}); err != nil {
		t.Fatal(err)
	}
	token, th := auth.NewBearerToken()
	tok, err := s.AddToken(ctx, auth.Token{Hash: th, Community: "acme", Scopes: []string{auth.ScopeSuppliersRead}})
	if err != nil {
		t.Fatal(err)
	}
	if !tok.LastUsedAt.IsZero() {
		t.Fatalf("a new token has LastUsedAt %v", tok.LastUsedAt)
	}
	base := time.Date(2026, 11, 23, 10, 15, 0, 0, time.UTC)
	clock := base.Add(7 * time.Second)
	b := auth.Bearer{Tokens: s, Now: func() time.Time { return clock }}
	lastUsed := func() time.Time {
		t.Helper()
		ts, err := s.Tokens(ctx, "acme")
		if err != nil || len(ts) != 1 {
			t.Fatalf("Tokens = %v, %v", ts, err)
		}
		return ts[0].LastUsedAt
	}
	steps := []struct {
		at   time.Time
		want time.Time
	}{
		{base.Add(7 * time.Second), base},
		{base.Add(59 * time.Second), base},
		{base.Add(61 * time.Second), base.Add(time.Minute)},
		{base.Add(10 * time.Second), base.Add(time.Minute)}, // never back
		{base.Add(5 * time.Minute), base.Add(5 * time.Minute)},
	}
	for i, st := range steps {
		clock = st.at
		if _, err := b.Authenticate(ctx, "Bearer "+token); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if got := lastUsed(); !got.Equal(st.want) {
			t.Errorf("step %d (at %s): lastUsedAt %s, want %s", i, st.at.Format(time.TimeOnly), got, st.want)
		}
	}

	// Keys, through the service-key authenticator.
	if _, err := s.PutServiceAccount(ctx, "acme", "hr", nil); err != nil {
		t.Fatal(err)
	}
	key, kh := auth.NewAPIKey()
	k, err := s.AddKey(ctx, "acme", "hr", auth.Key{Hash: kh, Active: true})
	if err != nil {
		t.Fatal(err)
	}
	sk := auth.ServiceKey{Accounts: s}
	if _, err := sk.Authenticate(ctx, "hr", key, netip.MustParseAddr("192.0.2.1")); err != nil {
		t.Fatal(err)
	}
	accs, err := s.ServiceAccounts(ctx, "acme")
	if err != nil || len(accs) != 1 || len(accs[0].Keys) != 1 {
		t.Fatalf("ServiceAccounts = %+v, %v", accs, err)
	}
	got := accs[0].Keys[0]
	if got.ID != k.ID || got.LastUsedAt.IsZero() || got.LastUsedAt.Second() != 0 || got.LastUsedAt.Nanosecond() != 0 {
		t.Errorf("key after use: %+v, want LastUsedAt set to a whole minute", got)
	}
}
