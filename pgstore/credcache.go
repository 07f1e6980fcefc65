package pgstore

import (
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/procurekit/procure/auth"
)

// WithCredentialCache has the store remember, for at most credTTL, what
// the database answered to the lookups that authenticate a request:
// TokenByHash (every request of the supplier API), ServiceAccount and
// ServiceAccountByKeyHash (the user API and SCIM), including "no such
// credential", and AutoRoles (every answer of the user API carries its
// community's auto-roles). Without it each request pays a round trip to
// the database before its real work; with pgstore's supplier cache on,
// that round trip was most of a supplier list's cost in the bench harness,
// and the auto-roles' round trip most of a user read's through PgBouncer.
//
// Freshness (docs: live-data.md): a credential write on this node (a token
// issued or revoked, an account or key put, a key deactivated or
// reactivated, a community put, an import) empties the cache when it
// commits, so the node that made it sees it at its next request; another
// node sees it once its entry, fetched before the write, is credTTL old -
// within the one-second bound for revoked tokens, deactivated keys and
// changed auto-roles. Entries are kept
// only for lookups that succeeded or found nothing; a failed lookup (the
// database is down) is not remembered.
func WithCredentialCache() Option { return func(o *options) { o.credCache = true } }

// credTTL is how long a cached lookup is served: half of the one-second
// bound, so that a lookup that took a while still answers well inside it.
const credTTL = 500 * time.Millisecond

// credCacheMax bounds each map: a flood of made-up tokens (each one an
// "unknown" entry) empties the map when it fills rather than growing it.
const credCacheMax = 10_000

// credCache is the cache of one Store; nil when the option is off (its
// methods then do nothing and lookups go to the database).
type credCache struct {
	mu sync.Mutex
	// gen counts this node's credential writes: a lookup that started
	// before a write must not store what it read after the write
	// emptied the cache.
	gen      uint64
	tokens   map[auth.Hash]credEntry[auth.Token]
	accounts map[string]credEntry[auth.ServiceAccount]
	byKey    map[auth.Hash]credEntry[auth.ServiceAccount]
	roles    map[string]credEntry[[]string] // AutoRoles, by community

	hits, misses atomic.Int64 // lookups answered from the maps, and not
}

type credEntry[T any] struct {
	v   T
	err error // nil or auth.ErrUnknown
	at  time.Time
}

func newCredCache() *credCache {
	return &credCache{
		tokens:   map[auth.Hash]credEntry[auth.Token]{},
		accounts: map[string]credEntry[auth.ServiceAccount]{},
		byKey:    map[auth.Hash]credEntry[auth.ServiceAccount]{},
		roles:    map[string]credEntry[[]string]{},
	}
}

// invalidate forgets every cached lookup; the credential writes call it
// after they commit (and before they return).
func (c *credCache) invalidate() {
	if c == nil {
		return
	}
	c.mu.Lock()
	c.gen++
	clear(c.tokens)
	clear(c.accounts)
	clear(c.byKey)
	clear(c.roles)
	c.mu.Unlock()
}

// cachedLookup answers from m when it holds a fresh entry for k, and
// otherwise calls load and remembers its answer (unless it failed, or a
// write on this node happened meanwhile). clone copies a value's slices,
// so that no caller shares them with the cache.
func cachedLookup[K comparable, T any](c *credCache, m map[K]credEntry[T], k K, clone func(T) T, load func() (T, error)) (T, error) {
	if c == nil {
		return load()
	}
	start := time.Now()
	c.mu.Lock()
	e, ok := m[k]
	gen := c.gen
	c.mu.Unlock()
	if ok && start.Sub(e.at) < credTTL {
		c.hits.Add(1)
		return clone(e.v), e.err
	}
	c.misses.Add(1)
	v, err := load()
	if err != nil && !errors.Is(err, auth.ErrUnknown) {
		return v, err
	}
	c.mu.Lock()
	if c.gen == gen {
		if len(m) >= credCacheMax {
			clear(m)
		}
		// The entry's age counts from before the lookup: what it read
		// may be that old.
		m[k] = credEntry[T]{v: clone(v), err: err, at: start}
	}
	c.mu.Unlock()
	return v, err
}

// The maps of a possibly nil cache (cachedLookup does not touch them
// then).
func (c *credCache) tokenMap() map[auth.Hash]credEntry[auth.Token] {
	if c == nil {
		return nil
	}
	return c.tokens
}

func (c *credCache) accountMap() map[string]credEntry[auth.ServiceAccount] {
	if c == nil {
		return nil
	}
	return c.accounts
}

func (c *credCache) byKeyMap() map[auth.Hash]credEntry[auth.ServiceAccount] {
	if c == nil {
		return nil
	}
	return c.byKey
}

func (c *credCache) rolesMap() map[string]credEntry[[]string] {
	if c == nil {
		return nil
	}
	return c.roles
}

func cloneToken(t auth.Token) auth.Token {
	t.Scopes = slices.Clone(t.Scopes)
	return t
}

func cloneAccount(a auth.ServiceAccount) auth.ServiceAccount {
	a.AllowedIPs = slices.Clone(a.AllowedIPs)
	a.Keys = slices.Clone(a.Keys)
	return a
}
