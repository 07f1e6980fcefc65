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
}

func (x *tokens) init() { x.byHash = make(map[auth.Hash]auth.Token) }

// load adds the community's tokens. A token already loaded (for this
// community or another) is an error and nothing of c is added: one secret
// must not open two communities. Errors name the entry, never the secret.
func (x *tokens) load(c *datafile.Community) error {
	add := make(map[auth.Hash]auth.Token, len(c.Tokens))
	for i, t := range c.Tokens {
		if t.Token == "" {
			return fmt.Errorf("tokens[%d].token: is required", i)
		}
		h := auth.HashSecret(t.Token)
		if _, dup := add[h]; dup {
			return fmt.Errorf("tokens[%d].token: the same token appears twice", i)
		}
		tok := auth.Token{
			Hash:      h,
			Community: c.ID,
			Scopes:    slices.Clip(slices.Clone(t.Scopes)),
			Revoked:   t.Revoked,
		}
		if t.Expires != nil {
			tok.Expires = *t.Expires
		}
		add[h] = tok
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	for i, t := range c.Tokens {
		if _, dup := x.byHash[auth.HashSecret(t.Token)]; dup {
			return fmt.Errorf("tokens[%d].token: the token is already loaded", i)
		}
	}
	for h, tok := range add {
		x.byHash[h] = tok
	}
	return nil
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
