// Package memstore is the in-memory backend: every store interface of the
// library (supplier.Store, user.Store, auth.TokenStore, auth.KeyStore and a
// budget table per community) over data loaded from a data file. It is for
// tests, demos and single-node deployments whose data fits in memory.
// Everything is safe for concurrent use.
package memstore

import (
	"fmt"

	"github.com/procurekit/procure/datafile"
)

// Store holds the data of any number of communities.
type Store struct {
	suppliers suppliers // suppliers.go
	tokens    tokens    // tokens.go
	users     users     // users.go
	accounts  accounts  // accounts.go
	budgets   budgets   // budgets.go
}

// New returns an empty store.
func New() *Store {
	s := &Store{}
	s.suppliers.init()
	s.tokens.init()
	s.users.init()
	s.accounts.init()
	s.budgets.init()
	return s
}

// Load returns a store holding the data of f, which datafile.Parse has
// validated. Secrets are hashed; the plain text is not kept.
func Load(f *datafile.File) (*Store, error) {
	s := New()
	for i := range f.Communities {
		if err := s.AddCommunity(&f.Communities[i]); err != nil {
			return nil, fmt.Errorf("communities[%d]: %w", i, err)
		}
	}
	return s, nil
}

// AddCommunity adds the data of one community of a data file.
func (s *Store) AddCommunity(c *datafile.Community) error {
	if err := s.suppliers.load(c); err != nil {
		return err
	}
	if err := s.tokens.load(c); err != nil {
		return err
	}
	if err := s.users.load(c); err != nil {
		return err
	}
	if err := s.accounts.load(c); err != nil {
		return err
	}
	return s.budgets.load(c)
}
