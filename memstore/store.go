// Package memstore is the in-memory backend: every store interface of the
// library (supplier.Store and supplier.Writer, user.Store, auth.TokenStore,
// auth.KeyStore, procure.CommunityStore and a budget table per community)
// over data loaded from a data file.
//
//	store, err := memstore.LoadFile("data.json") // or LoadReader(r); New() for an empty store
//	httpapi.MountSuppliers(mux, httpapi.SupplierOptions{Store: store, Tokens: store})
//
// LoadFile streams the file (it is never in memory as a whole, and the
// decoded records become the store's), validating every entry; errors
// name the entry and its line. Writes (PutSupplier, CreateUser, an
// ImportStream of another file) change the data while it is served, and
// stamp their dates as every store does (docs: live-data.md). Everything
// is safe for concurrent use.
//
// It is for tests, demos and single-node deployments whose data fits in
// memory, and its supplier reads are also the production read engine
// behind the PostgreSQL store: each community's suppliers live in a
// supplier index (internal/supplierindex, where its design and costs are
// described), the same index pgstore's per-node cache keeps
// (pgstore.WithSupplierCache). Its figures (load time, memory per
// supplier, reads while writing) are in bench/README.md.
package memstore

import (
	"github.com/procurekit/procure/datafile"
	"github.com/procurekit/procure/internal/supplierindex"
)

// Store holds the data of any number of communities.
type Store struct {
	communities communities // communities.go
	suppliers   suppliers   // suppliers.go
	tokens      tokens      // tokens.go
	users       users       // users.go
	accounts    accounts    // accounts.go
	budgets     budgets     // budgets.go
	metrics     metrics     // metrics.go
}

// New returns an empty store.
func New() *Store {
	s := &Store{}
	s.communities.init()
	s.suppliers.init()
	s.tokens.init()
	s.users.init()
	s.accounts.init()
	s.budgets.init()
	return s
}

// add builds every part of c but its suppliers, ix, and publishes them
// all or nothing: atomic, every part is built and checked, against itself
// and against what the store holds, before any is published, so an error
// leaves nothing of c in the store. Readers are blocked only while the
// finished parts are put in place.
func (s *Store) add(c *datafile.Community, ix *supplierindex.Index) error {
	tok, err := s.tokens.build(c)
	if err != nil {
		return err
	}
	us, err := s.users.build(c)
	if err != nil {
		return err
	}
	acc, err := s.accounts.build(c)
	if err != nil {
		return err
	}
	bt, err := s.budgets.build(c)
	if err != nil {
		return err
	}
	defer s.lockAll()()
	for _, check := range []func() error{
		func() error { return s.suppliers.check(c.ID) },
		func() error { return s.tokens.check(tok) },
		func() error { return s.users.check(us) },
		func() error { return s.accounts.check(acc) },
	} {
		if err := check(); err != nil {
			return err
		}
	}
	s.communities.publish(fromFile(c))
	s.suppliers.publish(c.ID, ix)
	s.tokens.publish(tok)
	s.users.publish(us)
	s.accounts.publish(acc)
	s.budgets.publish(c.ID, bt)
	return nil
}

// lockAll takes every part's write lock, always in this order (the one
// order every holder of several follows), and returns what releases them:
// a load or an import checks for conflicts and publishes under all of
// them, so that no other load or write slips in between.
func (s *Store) lockAll() (unlock func()) {
	s.communities.mu.Lock()
	s.suppliers.mu.Lock()
	s.tokens.mu.Lock()
	s.users.mu.Lock()
	s.accounts.mu.Lock()
	s.budgets.mu.Lock()
	return func() {
		s.budgets.mu.Unlock()
		s.accounts.mu.Unlock()
		s.users.mu.Unlock()
		s.tokens.mu.Unlock()
		s.suppliers.mu.Unlock()
		s.communities.mu.Unlock()
	}
}
