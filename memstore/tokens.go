package memstore

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/procurekit/procure/auth"
	"github.com/procurekit/procure/datafile"
)

// tokens holds the bearer tokens of every community by the hash of the
// token; the plain text is never kept.
type tokens struct {
	mu     sync.RWMutex
	byHash map[auth.Hash]auth.Token
	byID   map[string]auth.Hash
}

func (x *tokens) init() {
	x.byHash = make(map[auth.Hash]auth.Token)
	x.byID = make(map[string]auth.Hash)
}

// newTokens are a community's tokens, built and checked on their own.
type newTokens struct {
	byHash map[auth.Hash]auth.Token
	order  []auth.Hash // in file order, for errors
}

// build hashes and checks the community's tokens without touching x. A
// token already loaded, for this community or another, is refused by
// check: one secret must not open two communities. Errors name the entry,
// never the secret.
func (x *tokens) build(c *datafile.Community) (newTokens, error) {
	add := newTokens{byHash: make(map[auth.Hash]auth.Token, len(c.Tokens))}
	loadedAt := nowMicros()
	for i, t := range c.Tokens {
		if t.Token == "" {
			return newTokens{}, fmt.Errorf("tokens[%d].token: is required", i)
		}
		h := auth.HashSecret(t.Token)
		if _, dup := add.byHash[h]; dup {
			return newTokens{}, fmt.Errorf("tokens[%d].token: the same token appears twice", i)
		}
		tok := auth.Token{
			ID:        auth.TokenID(h),
			CreatedAt: loadedAt,
			Hash:      h,
			Community: c.ID,
			Scopes:    slices.Clip(slices.Clone(t.Scopes)),
			Revoked:   t.Revoked,
		}
		if t.Expires != nil {
			tok.Expires = *t.Expires
		}
		add.byHash[h] = tok
		add.order = append(add.order, h)
	}
	return add, nil
}

// check reports a token of add that is already loaded; x.mu is held.
func (x *tokens) check(add newTokens) error {
	for i, h := range add.order {
		if _, dup := x.byHash[h]; dup {
			return fmt.Errorf("tokens[%d].token: the token is already loaded", i)
		}
		if _, dup := x.byID[add.byHash[h].ID]; dup {
			return fmt.Errorf("tokens[%d]: a token with the same id is already loaded", i)
		}
	}
	return nil
}

// publish adds the tokens; x.mu is held and check passed.
func (x *tokens) publish(add newTokens) {
	for h, tok := range add.byHash {
		x.byHash[h] = tok
		x.byID[tok.ID] = h
	}
}

// TokenByHash returns the bearer token whose hash is h, or an error
// matching auth.ErrUnknown (auth.TokenStore). Revoked and expired tokens
// are returned as they are: auth.Bearer rejects them. The Scopes slice is
// shared with the store and must not be modified; it is clipped, so
// appending to it copies.
func (s *Store) TokenByHash(ctx context.Context, h auth.Hash) (auth.Token, error) {
	if err := ctx.Err(); err != nil {
		return auth.Token{}, err
	}
	s.tokens.mu.RLock()
	t, ok := s.tokens.byHash[h]
	s.tokens.mu.RUnlock()
	if !ok {
		return auth.Token{}, auth.ErrUnknown
	}
	return t, nil
}
