package memstore

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/procurekit/procure/auth"
	"github.com/procurekit/procure/internal/supplierindex"
	"github.com/procurekit/procure/paging"
	"github.com/procurekit/procure/supplier"
)

// Compile-time checks: the store serves the supplier API and its tokens.
var (
	_ supplier.Store    = (*Store)(nil)
	_ supplier.Appender = (*Store)(nil)
	_ supplier.Viewer   = (*Store)(nil)
	_ auth.TokenStore   = (*Store)(nil)
)

// suppliers holds each community's suppliers (comSuppliers). Readers hold
// the read lock only to find their community; loading a community holds
// the write lock only for a map insert.
type suppliers struct {
	mu    sync.RWMutex
	byCom map[string]*comSuppliers
	// clock is the time source of stamps (nil: time.Now); tests set it.
	clock func() time.Time
}

// comSuppliers is one community's suppliers: their index, which serves
// the reads and takes the writes, and what serialises the writes.
type comSuppliers struct {
	ix *supplierindex.Index
	// wmu serialises the community's writes (a write reads the current
	// record, then applies the next); last is guarded by it.
	wmu sync.Mutex
	// last is the community's latest stamp: a write stamps above it and
	// above every date the index has held.
	last time.Time
}

func (x *suppliers) init() { x.byCom = make(map[string]*comSuppliers) }

// check reports a community whose suppliers are loaded; x.mu is held.
// Loading a community twice is an error (and leaves the first load in
// place): silently merging or replacing would hide a mistake in the data.
func (x *suppliers) check(community string) error {
	if _, dup := x.byCom[community]; dup {
		return fmt.Errorf("community %q: suppliers already loaded", community)
	}
	return nil
}

// publish makes ix the community's suppliers; x.mu is held and check
// passed.
func (x *suppliers) publish(community string, ix *supplierindex.Index) {
	x.byCom[community] = &comSuppliers{ix: ix}
}

// emptyCom stands for a community without suppliers: it is only read.
var emptyCom = &comSuppliers{ix: newIndex(nil)}

// newIndex is supplierindex.New for records that cannot fail it.
func newIndex(recs []supplier.Record) *supplierindex.Index {
	ix, err := supplierindex.New(recs)
	if err != nil {
		panic(err)
	}
	return ix
}

// get returns the community's suppliers; an unknown community has none.
func (x *suppliers) get(community string) *comSuppliers {
	x.mu.RLock()
	c := x.byCom[community]
	x.mu.RUnlock()
	if c == nil {
		return emptyCom
	}
	return c
}

// writable returns the community's suppliers for a write, creating them
// for a community that has none yet. The caller has checked that the
// community exists.
func (x *suppliers) writable(community string) *comSuppliers {
	x.mu.RLock()
	c := x.byCom[community]
	x.mu.RUnlock()
	if c != nil {
		return c
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if c = x.byCom[community]; c == nil {
		c = &comSuppliers{ix: newIndex(nil)}
		x.byCom[community] = c
	}
	return c
}

// ListSuppliers returns one page of the community's suppliers that match
// q (supplier.Store). A community the store does not know has no
// suppliers: the page is empty, not an error. The page's items are copied
// into one new slice; nothing else is allocated. Costs: see
// supplierindex.Index.List.
func (s *Store) ListSuppliers(ctx context.Context, community string, q supplier.ListQuery) (paging.Page[supplier.Summary], error) {
	if err := ctx.Err(); err != nil {
		return paging.Page[supplier.Summary]{}, err
	}
	return s.suppliers.get(community).ix.List(q, nil)
}

// AppendSuppliers is ListSuppliers writing the page's items into buf
// (supplier.Appender): when buf has room for the page, the result's
// Content is buf[:len], so a caller that reuses buf allocates nothing.
func (s *Store) AppendSuppliers(ctx context.Context, community string, q supplier.ListQuery, buf []supplier.Summary) (paging.Page[supplier.Summary], error) {
	if err := ctx.Err(); err != nil {
		return paging.Page[supplier.Summary]{}, err
	}
	return s.suppliers.get(community).ix.List(q, buf)
}

// Supplier returns one supplier in full (supplier.Store), made from the
// stored record for this call: the caller's, its strings shared with the
// store (immutable, as strings are).
func (s *Store) Supplier(ctx context.Context, community string, id uuid.UUID) (supplier.Detail, error) {
	if err := ctx.Err(); err != nil {
		return supplier.Detail{}, err
	}
	return s.suppliers.get(community).ix.Supplier(id)
}

// ViewSupplier lends view one supplier in full (supplier.Viewer): made
// in memory the store reuses once view returns.
func (s *Store) ViewSupplier(ctx context.Context, community string, id uuid.UUID, view func(*supplier.Detail) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return s.suppliers.get(community).ix.ViewSupplier(id, view)
}

// ListContacts returns one page of a supplier's contacts in name order
// (supplier.Store). The page is the caller's; its strings are shared
// with the store, immutable as all strings are.
func (s *Store) ListContacts(ctx context.Context, community string, supplierID uuid.UUID, p paging.Request) (paging.Page[supplier.Contact], error) {
	if err := ctx.Err(); err != nil {
		return paging.Page[supplier.Contact]{}, err
	}
	return s.suppliers.get(community).ix.Contacts(supplierID, p)
}

// ListRemittanceAddresses returns one page of a supplier's remittance
// addresses that match q (supplier.Store).
func (s *Store) ListRemittanceAddresses(ctx context.Context, community string, supplierID uuid.UUID, q supplier.AddressQuery) (paging.Page[supplier.RemittanceAddress], error) {
	if err := ctx.Err(); err != nil {
		return paging.Page[supplier.RemittanceAddress]{}, err
	}
	return s.suppliers.get(community).ix.RemittanceAddresses(supplierID, q)
}

func notFound(id uuid.UUID) error { return fmt.Errorf("%w: %s", supplier.ErrNotFound, id) }
