package pgstore

import (
	"errors"
	"testing"
	"time"

	"github.com/procurekit/procure/auth"
)

// The credential cache without a database: what it remembers, for how
// long, and what a write on this node does to it.
func TestCredCache(t *testing.T) {
	h := auth.HashSecret("secret")
	tok := auth.Token{Hash: h, Community: "c1", Scopes: []string{auth.ScopeSuppliersRead}}
	down := errors.New("connection refused")

	type step struct {
		do        string // "lookup", "invalidate", "age" (backdate every entry past credTTL)
		answer    error  // what the database answers to a lookup (nil: tok)
		wantLoads int    // database lookups so far
		wantErr   error
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"a found token is remembered", []step{
			{do: "lookup", wantLoads: 1}, {do: "lookup", wantLoads: 1}, {do: "lookup", wantLoads: 1},
		}},
		{"an entry older than credTTL is looked up again", []step{
			{do: "lookup", wantLoads: 1}, {do: "age"}, {do: "lookup", wantLoads: 2}, {do: "lookup", wantLoads: 2},
		}},
		{"a write on this node forgets every entry", []step{
			{do: "lookup", wantLoads: 1}, {do: "invalidate"}, {do: "lookup", answer: auth.ErrUnknown, wantLoads: 2, wantErr: auth.ErrUnknown},
		}},
		{"an unknown token is remembered as unknown", []step{
			{do: "lookup", answer: auth.ErrUnknown, wantLoads: 1, wantErr: auth.ErrUnknown},
			{do: "lookup", wantLoads: 1, wantErr: auth.ErrUnknown},
		}},
		{"a failed lookup is not remembered", []step{
			{do: "lookup", answer: down, wantLoads: 1, wantErr: down},
			{do: "lookup", wantLoads: 2},
			{do: "lookup", wantLoads: 2},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCredCache()
			loads := 0
			for i, st := range tt.steps {
				switch st.do {
				case "invalidate":
					c.invalidate()
					continue
				case "age":
					for k, e := range c.tokens {
						e.at = e.at.Add(-credTTL)
						c.tokens[k] = e
					}
					continue
				}
				got, err := cachedLookup(c, c.tokenMap(), h, cloneToken, func() (auth.Token, error) {
					loads++
					if st.answer != nil {
						return auth.Token{}, st.answer
					}
					return tok, nil
				})
				if !errors.Is(err, st.wantErr) || (st.wantErr == nil && got.Community != "c1") {
					t.Fatalf("step %d: %+v, %v; want error %v", i, got, err, st.wantErr)
				}
				if loads != st.wantLoads {
					t.Fatalf("step %d: %d database lookups, want %d", i, loads, st.wantLoads)
				}
			}
		})
	}
}

// A lookup that read the database before a write on this node and
// returns after it does not put the old answer back.
func TestCredCacheLookupRacingAWrite(t *testing.T) {
	c := newCredCache()
	h := auth.HashSecret("secret")
	old := auth.Token{Hash: h, Community: "c1"}
	if _, err := cachedLookup(c, c.tokenMap(), h, cloneToken, func() (auth.Token, error) {
		c.invalidate() // the revoke commits while this lookup is in flight
		return old, nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(c.tokens) != 0 {
		t.Fatalf("the cache kept %d entries read before a write", len(c.tokens))
	}
}

// Callers cannot change what the cache holds, and a flood of made-up
// secrets does not grow it past credCacheMax.
func TestCredCacheCopiesAndBounds(t *testing.T) {
	c := newCredCache()
	h := auth.HashSecret("secret")
	load := func() (auth.Token, error) {
		return auth.Token{Hash: h, Community: "c1", Scopes: []string{auth.ScopeSuppliersRead}}, nil
	}
	got, _ := cachedLookup(c, c.tokenMap(), h, cloneToken, load)
	got.Scopes[0] = "admin"
	again, _ := cachedLookup(c, c.tokenMap(), h, cloneToken, load)
	if again.Scopes[0] != auth.ScopeSuppliersRead {
		t.Fatalf("a caller's change reached the cache: scopes %v", again.Scopes)
	}
	for i := range credCacheMax + 10 {
		k := auth.HashSecret(time.Duration(i).String())
		_, _ = cachedLookup(c, c.tokenMap(), k, cloneToken, func() (auth.Token, error) { return auth.Token{}, auth.ErrUnknown })
		if len(c.tokens) > credCacheMax {
			t.Fatalf("%d entries after %d lookups, want at most %d", len(c.tokens), i+1, credCacheMax)
		}
	}
}

// Without the option there is no cache: every lookup reads the database.
func TestCredCacheOff(t *testing.T) {
	var c *credCache
	n := 0
	for range 3 {
		_, _ = cachedLookup(c, c.tokenMap(), auth.Hash{}, cloneToken, func() (auth.Token, error) { n++; return auth.Token{}, nil })
	}
	c.invalidate()
	if n != 3 {
		t.Fatalf("%d database lookups without a cache, want 3", n)
	}
}
