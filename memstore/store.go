// Package memstore is the in-memory backend: every store interface of the
// library (supplier.Store, user.Store, auth.TokenStore, auth.KeyStore and a
// budget table per community) over data loaded from a data file. It is for
// tests, demos and single-node deployments whose data fits in memory.
// Everything is safe for concurrent use.
//
// # Live suppliers
//
// Suppliers change at runtime through supplier.Writer while lists keep
// the costs of an immutable index. Each community holds:
//
//   - a base: an immutable supplierSet, the indexes a data file load
//     builds (every order as a permutation and its inverse, wavelet
//     matrices over the ranks for modifiedSince and the query's terms);
//   - an overlay of the changes since the base was built: a bit per base
//     supplier that a write replaced or deleted ("dead"), with a bit per
//     rank and a Fenwick tree per 64 ranks for each order counting the
//     dead by rank, and the records written since ("delta"), each placed
//     by binary search among the base's ranks in every order, kept in six
//     ordered block lists and a term index, and the filter views
//     (below). Writes mutate the overlay in place under the community's
//     lock, held for microseconds; the binary searches run before it.
//
// A list merges the base's matches, without the dead, with the delta's
// by rank: a delta item goes before the base rank it was placed at.
// Without filters the page's first item is found by binary search over
// the delta items (the merged position of delta item j is j plus the
// base ranks below it less the dead there, counted with a bit per rank
// and a small tree). modifiedSince alone sorted by modifiedDate is a
// range of that unfiltered list. Any other filter is served through a
// filter view once asked for twice (supplier_view.go): the overlay's
// matches of that filter (query, modifiedSince, or both sorted by
// modifiedDate) in that order, kept sorted by every write; a page is then
// one walk of the base's wavelet matrix in which a subtree of ranks counts
// its live base matches plus the view's delta items placed in it, so the
// walk skips to a deep page as the base's own does, and a first page
// merges from the first match. Costs, for an overlay of d changes:
//
//   - a default or sorted page, however deep: O(log n log d + page);
//   - totals of a filtered list: O(log n + log d) for query or
//     modifiedSince alone (the overlay's query matches are counted like
//     the base's, matching terms less matching pairs);
//   - a filtered page through a view, however deep: the base's walk with
//     two binary searches in the view per level, O(log n log d + page
//     log n);
//   - the first request of a filter (no view yet) and query with
//     modifiedSince sorted by name or createdDate: the base walk plus the
//     overlay's m matches found per request (from the term index, the
//     modifiedDate order, or a scan), O(m) to O(m log m);
//   - a write: six binary searches on the base's compact key tables, a
//     few block moves in the overlay's lists, and per view a match test
//     and at most two block moves. At most maxViews (16) filters have a
//     view per community, the least recently used making way; a view
//     holds 16 bytes per match.
//
// When the overlay reaches compactAt(n) changes (n/8), a goroutine
// rebuilds the base from the live records (the records are shared, not
// copied), on one core so reads keep the others, then replays the writes
// made meanwhile into a fresh overlay and swaps both in under the lock.
//
// Why this design rather than the alternatives: a fully dynamic index
// (balanced trees per order) would make writes cheap but lose the
// wavelet matrices, which serve any filter in any order at O(log n) per
// item; rebuilding per write costs seconds at 1,000,000 suppliers; an
// overlay that reads scan is cheap to write but makes every read O(d).
// Indexing the overlay the same way as the base, by rank, keeps
// unfiltered reads within a few binary searches of an unchanged
// community while a write costs six binary searches on compact key
// tables and a few block moves.
//
// Why views for filtered lists: the overlay's first matches of a prefix
// query in an order are a two-dimensional question (a prefix range of
// terms, the smallest ranks in the order) that no small dynamic index
// answers in O(log d): a term index per order splits a prefix range into
// one run per distinct term, thousands for a two-letter query (every
// written name is a term of its own), and a dead-supplier index per
// order still leaves modifiedSince's dates as a second dimension. A view
// answers exactly the filters in use, pays the old per-request cost once,
// and costs a write little. A filter asked for once (a type-ahead's
// intermediate prefixes) never builds one.
//
// Figures at 1,000,000 suppliers (BenchmarkSupplierWrite and
// BenchmarkListWriteRatio, on 2 cores shared with other work; CPU times
// are the benchmark thread's, wall times include preemption by the
// machine's other load; three runs each, interleaved with the code before
// the views, which measured on the same machine beside it):
//
//   - a write (PutSupplier replacing a supplier, validation included,
//     20,000 of them): CPU p50 30-32 us, p99 70-85 us (before: p50 53-65
//     us, p99 119-137 us); with the views of the ratio benchmark's four
//     viewed filters kept up to date (-writeviews): p50 35-52 us, p99
//     83-111 us;
//   - memory: 1,529 heap bytes per supplier loaded, 1,579 after 20,000
//     writes (an overlay of 38,000 changes), 1,581 with those views;
//   - list pages while up to 1,000 writes/s run (as many as the machine
//     allowed: 400-920) over an overlay of 60,000-64,000 changes, against
//     the unchanged community, CPU per page, median of three runs (the
//     code before the views in brackets): default 1.09x (1.07x), page
//     1,000 1.35x (1.43x), sorted by createdDate desc 1.13x (1.06x),
//     modifiedSince 2.8 to 3.3 us 1.17x (1.45x), modifiedSince by
//     modifiedDate 1.2 to 1.5 us 1.30x (1.85x), modifiedSince page 100
//     2.8 to 3.7 us 1.31x (26x), query=ma 2.8 to 3.1 us 1.07x (16x),
//     query=tot 2.4 to 2.6 us 1.06x (7.4x), query=s page 100 2.3 to 3.5
//     us 1.55x (before: over 10 minutes for its 22,000 pages). A single
//     run varies by up to 0.4x with the machine's load.
//
// query=s page 100 is the one list at the edge of 1.5x: every supplier
// matches "s" (its supplierId), so the view holds every delta item and
// every dead one, and each level of the walk down to page 100 searches
// both (about a third of its time, the wavelet's rank operations another
// third, as in the base's own walk).
package memstore

import (
	"fmt"

	"github.com/procurekit/procure/datafile"
)

// Store holds the data of any number of communities.
type Store struct {
	communities communities // communities.go
	suppliers   suppliers   // suppliers.go
	tokens      tokens      // tokens.go
	users       users       // users.go
	accounts    accounts    // accounts.go
	budgets     budgets     // budgets.go
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

// AddCommunity adds the data of one community of a data file: its
// suppliers (copied: later changes to c do not reach the store), tokens,
// users and auto-roles, service accounts and budget table.
//
// It is atomic: every part is built and checked, against itself and
// against what the store holds, before any is published, so an error
// leaves nothing of c in the store. Readers are blocked only while the
// finished parts are put in place.
func (s *Store) AddCommunity(c *datafile.Community) error {
	// A community loaded already fails before the costly build.
	s.suppliers.mu.RLock()
	err := s.suppliers.check(c.ID)
	s.suppliers.mu.RUnlock()
	if err != nil {
		return err
	}
	set, err := buildSupplierSet(c.Suppliers)
	if err != nil {
		return err
	}
	return s.add(c, set)
}

// add builds every part of c but its suppliers, set, and publishes them
// all or nothing.
func (s *Store) add(c *datafile.Community, set *supplierSet) error {
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
	s.suppliers.publish(c.ID, set)
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
