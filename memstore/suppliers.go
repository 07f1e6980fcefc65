package memstore

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/procurekit/procure/auth"
	"github.com/procurekit/procure/paging"
	"github.com/procurekit/procure/supplier"
)

// Compile-time checks: the store serves the supplier API and its tokens.
var (
	_ supplier.Store    = (*Store)(nil)
	_ supplier.Appender = (*Store)(nil)
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

// publish makes set the community's suppliers; x.mu is held and check
// passed.
func (x *suppliers) publish(community string, set *supplierSet) {
	x.byCom[community] = newComSuppliers(set)
}

// get returns the community's suppliers; an unknown community has none.
// The caller reads them under c.mu's read lock.
func (x *suppliers) get(community string) *comSuppliers {
	x.mu.RLock()
	c := x.byCom[community]
	x.mu.RUnlock()
	if c == nil {
		return emptyCom
	}
	return c
}

// ListSuppliers returns one page of the community's suppliers that match q
// (supplier.Store). A community the store does not know has no suppliers:
// the page is empty, not an error.
//
// Cost, for n suppliers in the community: every total count is O(log n).
// Without filters a page is index arithmetic, O(page size). With
// modifiedSince or query (or both, sorted by modifiedDate) a page is
// O(log n) per item (a wavelet matrix walk), or, when the matching terms
// are few, a sort of just those. Only query and modifiedSince together,
// sorted by name or createdDate, may cost more: then the cheaper of two
// exact plans is chosen (see listBoth). The page's items are copied into
// one new slice; nothing else is allocated (a query with upper-case
// letters adds its lower-cased copy).
func (s *Store) ListSuppliers(ctx context.Context, community string, q supplier.ListQuery) (paging.Page[supplier.Summary], error) {
	if err := ctx.Err(); err != nil {
		return paging.Page[supplier.Summary]{}, err
	}
	r, err := q.Page.Check(supplier.ListPaging)
	if err != nil {
		return paging.Page[supplier.Summary]{}, err
	}
	q.Page = r
	c := s.suppliers.get(community)
	c.mu.RLock()
	items, total := c.ov.list(q, nil)
	c.mu.RUnlock()
	return paging.NewPage(items, total, r), nil
}

// AppendSuppliers is ListSuppliers writing the page's items into buf
// (supplier.Appender): when buf has room for the page, the result's
// Content is buf[:len], so a caller that reuses buf allocates nothing.
func (s *Store) AppendSuppliers(ctx context.Context, community string, q supplier.ListQuery, buf []supplier.Summary) (paging.Page[supplier.Summary], error) {
	if err := ctx.Err(); err != nil {
		return paging.Page[supplier.Summary]{}, err
	}
	r, err := q.Page.Check(supplier.ListPaging)
	if err != nil {
		return paging.Page[supplier.Summary]{}, err
	}
	q.Page = r
	c := s.suppliers.get(community)
	c.mu.RLock()
	items, total := c.ov.list(q, buf)
	c.mu.RUnlock()
	return paging.NewPage(items, total, r), nil
}

// Supplier returns one supplier in full (supplier.Store). The pointers in
// the result are shared with the store and must not be written through.
func (s *Store) Supplier(ctx context.Context, community string, id uuid.UUID) (supplier.Detail, error) {
	if err := ctx.Err(); err != nil {
		return supplier.Detail{}, err
	}
	rec := s.suppliers.get(community).current(id)
	if rec == nil {
		return supplier.Detail{}, notFound(id)
	}
	return rec.detail, nil
}

// ListContacts returns one page of a supplier's contacts in name order
// (supplier.Store); O(1) beyond finding the supplier. The items share
// memory with the store: they are read-only, and the slice is clipped so
// that appending to it copies.
func (s *Store) ListContacts(ctx context.Context, community string, supplierID uuid.UUID, p paging.Request) (paging.Page[supplier.Contact], error) {
	if err := ctx.Err(); err != nil {
		return paging.Page[supplier.Contact]{}, err
	}
	r, err := p.Check(supplier.ContactPaging)
	if err != nil {
		return paging.Page[supplier.Contact]{}, err
	}
	rec := s.suppliers.get(community).current(supplierID)
	if rec == nil {
		return paging.Page[supplier.Contact]{}, notFound(supplierID)
	}
	lo, hi := paging.Window(len(rec.contacts), r)
	return paging.NewPage(rec.contacts[lo:hi:hi], len(rec.contacts), r), nil
}

// ListRemittanceAddresses returns one page of a supplier's remittance
// addresses that match q (supplier.Store). Sorted by modifiedDate it is
// O(log k + page size) for a supplier with k addresses; sorted by
// companyName with modifiedSince it walks the supplier's k addresses.
func (s *Store) ListRemittanceAddresses(ctx context.Context, community string, supplierID uuid.UUID, q supplier.AddressQuery) (paging.Page[supplier.RemittanceAddress], error) {
	if err := ctx.Err(); err != nil {
		return paging.Page[supplier.RemittanceAddress]{}, err
	}
	r, err := q.Page.Check(supplier.AddressPaging)
	if err != nil {
		return paging.Page[supplier.RemittanceAddress]{}, err
	}
	rec := s.suppliers.get(community).current(supplierID)
	if rec == nil {
		return paging.Page[supplier.RemittanceAddress]{}, notFound(supplierID)
	}
	items, total := rec.addresses(q.ModifiedSince, r)
	return paging.NewPage(items, total, r), nil
}

func notFound(id uuid.UUID) error { return fmt.Errorf("%w: %s", supplier.ErrNotFound, id) }

// addresses returns the page r of the record's addresses modified at or
// after since (zero: all).
func (rec *supplierRec) addresses(since time.Time, r paging.Request) ([]supplier.RemittanceAddress, int) {
	k := len(rec.addrs)
	desc := r.Sort.Desc
	byDate := r.Sort.Field == "modifiedDate"
	// at returns the index of the i-th address in the requested order.
	order := addrByName
	switch {
	case byDate && desc:
		order = addrByDateDesc
	case byDate:
		order = addrByDateAsc
	case desc:
		order = addrByNameDesc
	}
	at := func(i int) int { return rec.addrAt(order, i) }

	if since.IsZero() {
		lo, hi := paging.Window(k, r)
		if order == addrByName {
			return rec.addrs[lo:hi:hi], k
		}
		out := make([]supplier.RemittanceAddress, 0, hi-lo)
		for i := lo; i < hi; i++ {
			out = append(out, rec.addrs[at(i)])
		}
		return out, k
	}

	th := ceilMicros(since)
	// first is the number of addresses modified before since: in
	// ascending date order they come first.
	first := sort.Search(k, func(i int) bool {
		return rec.addrs[rec.addrAt(addrByDateAsc, i)].ModifiedDate.UnixMicro() >= th
	})
	total := k - first
	lo, hi := paging.Window(total, r)
	out := make([]supplier.RemittanceAddress, 0, hi-lo)
	switch {
	case byDate && !desc:
		for i := lo; i < hi; i++ {
			out = append(out, rec.addrs[at(first+i)])
		}
	case byDate && desc:
		// Newest first: the matches are the first total of the order.
		for i := lo; i < hi; i++ {
			out = append(out, rec.addrs[at(i)])
		}
	default:
		seen := 0
		for i := 0; i < k && seen < hi; i++ {
			a := &rec.addrs[at(i)]
			if a.ModifiedDate.UnixMicro() < th {
				continue
			}
			if seen >= lo {
				out = append(out, *a)
			}
			seen++
		}
	}
	return out, total
}
