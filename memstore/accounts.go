package memstore

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"sync"

	"github.com/procurekit/procure/auth"
	"github.com/procurekit/procure/datafile"
)

var _ auth.KeyStore = (*Store)(nil)

// accounts keeps the service accounts of the user API by their public id.
// Only the SHA-256 hash of each key is kept (auth.HashSecret); the plain
// text of a data file is dropped on load.
type accounts struct {
	mu   sync.RWMutex
	byID map[string]auth.ServiceAccount
	// keyOwner maps the hash of every key to its account's id.
	keyOwner map[auth.Hash]string
}

func (x *accounts) init() {
	x.byID = map[string]auth.ServiceAccount{}
	x.keyOwner = map[auth.Hash]string{}
}

// put stores a (replacing the account with its id) and indexes its keys;
// x.mu is held.
func (x *accounts) put(a auth.ServiceAccount) {
	if old, ok := x.byID[a.ID]; ok {
		for _, k := range old.Keys {
			delete(x.keyOwner, k.Hash)
		}
	}
	x.byID[a.ID] = a
	for _, k := range a.Keys {
		x.keyOwner[k.Hash] = a.ID
	}
}

// build checks and hashes the community's service accounts without
// touching x. Ids are unique across the store (check); allowedIPs entries
// are CIDRs or single addresses (auth.ParsePrefix). Errors never quote
// a key.
func (x *accounts) build(c *datafile.Community) ([]auth.ServiceAccount, error) {
	add := make([]auth.ServiceAccount, 0, len(c.ServiceAccounts))
	loadedAt := nowMicros()
	for i, sa := range c.ServiceAccounts {
		at := fmt.Sprintf("serviceAccounts[%d]", i)
		if sa.ID == "" {
			return nil, fmt.Errorf("%s.id: is required", at)
		}
		a := auth.ServiceAccount{ID: sa.ID, Community: c.ID}
		for ki, k := range sa.Keys {
			if k.Key == "" {
				return nil, fmt.Errorf("%s.keys[%d].key: is required", at, ki)
			}
			h := auth.HashSecret(k.Key)
			a.Keys = append(a.Keys, auth.Key{ID: auth.KeyID(h), Hash: h, Active: k.Active, CreatedAt: loadedAt})
		}
		for ii, s := range sa.AllowedIPs {
			p, err := auth.ParsePrefix(s)
			if err != nil {
				return nil, fmt.Errorf("%s.allowedIPs[%d]: must be an IP address or CIDR (got %q)", at, ii, s)
			}
			a.AllowedIPs = append(a.AllowedIPs, p)
		}
		add = append(add, a)
	}
	return add, nil
}

// check reports an id that repeats in add or is taken; x.mu is held.
func (x *accounts) check(add []auth.ServiceAccount) error {
	seen := make(map[string]bool, len(add))
	for i, a := range add {
		if seen[a.ID] || x.byID[a.ID].ID != "" {
			return fmt.Errorf("serviceAccounts[%d].id: duplicate service account id %q", i, a.ID)
		}
		for ki, k := range a.Keys {
			if _, dup := x.keyOwner[k.Hash]; dup {
				return fmt.Errorf("serviceAccounts[%d].keys[%d].key: the key is already loaded", i, ki)
			}
		}
		seen[a.ID] = true
	}
	return nil
}

// publish adds the accounts; x.mu is held and check passed.
func (x *accounts) publish(add []auth.ServiceAccount) {
	for _, a := range add {
		x.put(a)
	}
}

// ServiceAccount implements auth.KeyStore. The result shares nothing with
// the store.
func (s *Store) ServiceAccount(_ context.Context, id string) (auth.ServiceAccount, error) {
	x := &s.accounts
	x.mu.RLock()
	a, ok := x.byID[id]
	x.mu.RUnlock()
	if !ok {
		return auth.ServiceAccount{}, fmt.Errorf("service account %q: %w", id, auth.ErrUnknown)
	}
	return cloneAccount(a), nil
}

// AddServiceAccount adds a whole service account with its keys, or
// replaces the one with the same id: a shortcut for tests and demos (the
// auth.KeyWriter methods are the checked way to write accounts). a.ID and
// a.Community are required; the community need not be registered.
func (s *Store) AddServiceAccount(a auth.ServiceAccount) error {
	if a.ID == "" || a.Community == "" {
		return fmt.Errorf("memstore: a service account needs an id and a community")
	}
	x := &s.accounts
	x.mu.Lock()
	defer x.mu.Unlock()
	x.put(cloneAccount(a))
	return nil
}

func cloneAccount(a auth.ServiceAccount) auth.ServiceAccount {
	a.Keys = slices.Clone(a.Keys)
	a.AllowedIPs = slices.Clone[[]netip.Prefix](a.AllowedIPs)
	return a
}

var _ auth.KeyHashStore = (*Store)(nil)

// ServiceAccountByKeyHash implements auth.KeyHashStore: keys are indexed
// by hash, and a key belongs to one account (check refuses a second).
func (s *Store) ServiceAccountByKeyHash(_ context.Context, h auth.Hash) (auth.ServiceAccount, error) {
	x := &s.accounts
	x.mu.RLock()
	defer x.mu.RUnlock()
	a, ok := x.byID[x.keyOwner[h]]
	if !ok {
		return auth.ServiceAccount{}, fmt.Errorf("service account by key: %w", auth.ErrUnknown)
	}
	return cloneAccount(a), nil
}
