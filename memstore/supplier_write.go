package memstore

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/procurekit/procure/supplier"
)

var _ supplier.Writer = (*Store)(nil)

// comSuppliers is one community's suppliers: an immutable indexed base
// and the overlay of changes since it was built (supplier_overlay.go).
type comSuppliers struct {
	// mu guards ov, whose overlay writes mutate in place: readers hold it
	// shared for the length of one read, a write exclusively for the
	// length of its overlay update (microseconds).
	mu sync.RWMutex
	ov *overlay
	// compaction state, guarded by mu: whether a compaction runs, and
	// the suppliers written since it took its snapshot.
	compacting bool
	changed    []uuid.UUID
	// limit is the overlay size that starts a compaction (0: the default,
	// see compactAt); tests set it.
	limit int
	// compacted, when set, is called after each compaction (tests).
	compacted func()

	// wmu serialises the community's writes; what follows is guarded by it.
	wmu sync.Mutex
	// hw is the community's modifiedDate high-water mark in microseconds:
	// the largest modifiedDate of any supplier, contact or address it has
	// held (deleted ones included); hwSet says whether it was computed.
	hw    int64
	hwSet bool
}

func newComSuppliers(set *supplierSet) *comSuppliers {
	return &comSuppliers{ov: newOverlay(set)}
}

// emptyCom stands for a community without suppliers: it is only read.
var emptyCom = newComSuppliers(emptySet)

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
		c = newComSuppliers(emptySet)
		x.byCom[community] = c
	}
	return c
}

// current returns the current record of the supplier id, or nil.
func (c *comSuppliers) current(id uuid.UUID) *supplierRec {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.ov.find(id)
}

// stamp returns the modifiedDate of a write (supplier.NextStamp): now, in
// UTC at microsecond precision, but strictly after every modifiedDate the
// community has held (one microsecond after the last when the clock has
// not moved, or went back). When none is left (supplier.ErrStampExhausted)
// it returns the error and keeps the high-water mark: the caller must then
// change nothing. c.wmu is held.
func (c *comSuppliers) stamp(clock func() time.Time) (time.Time, error) {
	if !c.hwSet {
		c.mu.RLock()
		c.hw = c.ov.maxModified()
		c.mu.RUnlock()
		c.hwSet = true
	}
	if clock == nil {
		clock = time.Now
	}
	t, err := supplier.NextStamp(clock(), time.UnixMicro(c.hw))
	if err != nil {
		return time.Time{}, err
	}
	c.hw = t.UnixMicro()
	return t, nil
}

// maxModified is the largest modifiedDate of the suppliers, contacts and
// addresses, in microseconds (math.MinInt64 when there are none).
func (ov *overlay) maxModified() int64 {
	m := ov.base.maxMod
	for _, it := range ov.byID {
		m = max(m, recMaxModified(it.rec))
	}
	return m
}

func recMaxModified(rec *supplierRec) int64 {
	m := rec.detail.ModifiedDate.UnixMicro()
	if c := rec.detail.DefaultContact; c != nil {
		m = max(m, c.ModifiedDate.UnixMicro())
	}
	if a := rec.detail.DefaultRemittanceAddress; a != nil {
		m = max(m, a.ModifiedDate.UnixMicro())
	}
	for i := range rec.contacts {
		m = max(m, rec.contacts[i].ModifiedDate.UnixMicro())
	}
	for i := range rec.addrs {
		m = max(m, rec.addrs[i].ModifiedDate.UnixMicro())
	}
	return m
}

// replace makes rec the supplier id's current record, or removes the
// supplier when rec is nil. c.wmu is held. The costly part, placing rec
// among the base's ranks, is done before taking c.mu.
func (c *comSuppliers) replace(id uuid.UUID, rec *supplierRec) error {
	c.mu.RLock()
	base := c.ov.base
	c.mu.RUnlock()
	var it *deltaItem
	if rec != nil {
		it = newDeltaItem(base, rec)
	}
	c.mu.Lock()
	if rec != nil && c.ov.base != base {
		// A compaction swapped the base meanwhile.
		it = newDeltaItem(c.ov.base, rec)
	}
	if it != nil {
		c.ov.put(it)
	} else {
		c.ov.remove(id)
	}
	if c.compacting {
		c.changed = append(c.changed, id)
	}
	snap := c.startCompaction()
	c.mu.Unlock()
	if snap != nil {
		go c.compact(snap)
	}
	return nil
}

// begin starts a write to a supplier of community: it checks the context
// and the community, and returns the community's suppliers with their
// write lock held (the caller unlocks c.wmu).
func (s *Store) begin(ctx context.Context, community string) (*comSuppliers, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := s.needCommunity(community); err != nil {
		return nil, err
	}
	c := s.suppliers.writable(community)
	c.wmu.Lock()
	return c, nil
}

// PutSupplier implements supplier.Writer: it creates or replaces the
// supplier r.ID, keeping its contacts and remittance addresses, and dates
// it by supplier.Detail.StampWrite.
func (s *Store) PutSupplier(ctx context.Context, community string, r supplier.Record) (supplier.Detail, error) {
	if err := ctx.Err(); err != nil {
		return supplier.Detail{}, err
	}
	if err := r.ValidateWrite(); err != nil {
		return supplier.Detail{}, err
	}
	in := newSupplierRec(&r, nil) // a deep copy, dates normalised
	in.contacts, in.addrs, in.addrIdx = nil, nil, nil
	in.detail.CleanEmptyText()
	c, err := s.begin(ctx, community)
	if err != nil {
		return supplier.Detail{}, err
	}
	defer c.wmu.Unlock()
	old := c.current(r.ID)
	if old != nil && old.detail.EqualContent(&in.detail) && slices.Equal(old.keywords, in.keywords) {
		return old.detail, nil
	}
	now, err := c.stamp(s.suppliers.clock)
	if err != nil {
		return supplier.Detail{}, err
	}
	d := &in.detail
	var oldD *supplier.Detail
	if old != nil {
		oldD = &old.detail
		in.contacts, in.addrs, in.addrIdx = old.contacts, old.addrs, old.addrIdx
	}
	d.StampWrite(oldD, now)
	// An unchanged default contact or address keeps sharing the stored
	// one's memory.
	if old != nil {
		if oc := old.detail.DefaultContact; oc != nil && d.DefaultContact != nil && d.DefaultContact.Equal(oc) {
			d.DefaultContact = oc
		}
		if oa := old.detail.DefaultRemittanceAddress; oa != nil && d.DefaultRemittanceAddress != nil && d.DefaultRemittanceAddress.Equal(oa) {
			d.DefaultRemittanceAddress = oa
		}
	}
	if err := c.replace(r.ID, &in); err != nil {
		return supplier.Detail{}, err
	}
	return in.detail, nil
}

// DeleteSupplier implements supplier.Writer.
func (s *Store) DeleteSupplier(ctx context.Context, community string, id uuid.UUID) error {
	c, err := s.begin(ctx, community)
	if err != nil {
		return err
	}
	defer c.wmu.Unlock()
	if c.current(id) == nil {
		return notFound(id)
	}
	// A delete stamps nothing the API shows, but pgstore's stamps the
	// change feed of its caches: both refuse it alike when no stamp is
	// left.
	if _, err := c.stamp(s.suppliers.clock); err != nil {
		return err
	}
	return c.replace(id, nil)
}

// PutContact implements supplier.Writer.
func (s *Store) PutContact(ctx context.Context, community string, supplierID uuid.UUID, in supplier.Contact) (supplier.Contact, error) {
	if err := ctx.Err(); err != nil {
		return supplier.Contact{}, err
	}
	if err := supplier.ValidateContact(&in); err != nil {
		return supplier.Contact{}, err
	}
	in = in.Clone()
	in.CleanEmptyText()
	return putChild(s, ctx, community, supplierID, in, contactsOf)
}

// DeleteContact implements supplier.Writer.
func (s *Store) DeleteContact(ctx context.Context, community string, supplierID, id uuid.UUID) error {
	return deleteChild(s, ctx, community, supplierID, id, contactsOf)
}

// PutRemittanceAddress implements supplier.Writer.
func (s *Store) PutRemittanceAddress(ctx context.Context, community string, supplierID uuid.UUID, in supplier.RemittanceAddress) (supplier.RemittanceAddress, error) {
	if err := ctx.Err(); err != nil {
		return supplier.RemittanceAddress{}, err
	}
	if err := supplier.ValidateRemittanceAddress(&in); err != nil {
		return supplier.RemittanceAddress{}, err
	}
	in = in.Clone()
	in.CleanEmptyText()
	return putChild(s, ctx, community, supplierID, in, addressesOf)
}

// DeleteRemittanceAddress implements supplier.Writer.
func (s *Store) DeleteRemittanceAddress(ctx context.Context, community string, supplierID, id uuid.UUID) error {
	return deleteChild(s, ctx, community, supplierID, id, addressesOf)
}

// children describes one list a supplier owns (its contacts or its
// remittance addresses) to putChild and deleteChild.
type children[T any] struct {
	kind  string                                                   // for errors
	of    func(*supplierRec) []T                                   // the stored list
	with  func(rec *supplierRec, now time.Time, l []T) supplierRec // rec with l instead
	id    func(*T) uuid.UUID
	same  func(a, b *T) bool               // equal but for dates (EqualContent)
	stamp func(v, old *T, stamp time.Time) // StampWrite
}

var (
	contactsOf = children[supplier.Contact]{
		kind:  "contact",
		of:    func(r *supplierRec) []supplier.Contact { return r.contacts },
		with:  func(r *supplierRec, now time.Time, l []supplier.Contact) supplierRec { return r.with(now, l, r.addrs) },
		id:    func(c *supplier.Contact) uuid.UUID { return c.ID },
		same:  (*supplier.Contact).EqualContent,
		stamp: (*supplier.Contact).StampWrite,
	}
	addressesOf = children[supplier.RemittanceAddress]{
		kind: "remittance address",
		of:   func(r *supplierRec) []supplier.RemittanceAddress { return r.addrs },
		with: func(r *supplierRec, now time.Time, l []supplier.RemittanceAddress) supplierRec {
			return r.with(now, r.contacts, l)
		},
		id:    func(a *supplier.RemittanceAddress) uuid.UUID { return a.ID },
		same:  (*supplier.RemittanceAddress).EqualContent,
		stamp: (*supplier.RemittanceAddress).StampWrite,
	}
)

// putChild creates or replaces in, validated and copied, in the list k of
// the supplier: an equal one (dates aside) is returned as stored and
// stamps nothing; otherwise in and its supplier are stamped, and a
// replaced one keeps its createdDate.
func putChild[T any](s *Store, ctx context.Context, community string, supplierID uuid.UUID, in T, k children[T]) (T, error) {
	var zero T
	c, err := s.begin(ctx, community)
	if err != nil {
		return zero, err
	}
	defer c.wmu.Unlock()
	old := c.current(supplierID)
	if old == nil {
		return zero, notFound(supplierID)
	}
	list := k.of(old)
	i := slices.IndexFunc(list, func(x T) bool { return k.id(&x) == k.id(&in) })
	if i >= 0 && k.same(&list[i], &in) {
		return list[i], nil
	}
	now, err := c.stamp(s.suppliers.clock)
	if err != nil {
		return zero, err
	}
	list = slices.Clone(list)
	if i >= 0 {
		k.stamp(&in, &list[i], now)
		list[i] = in
	} else {
		k.stamp(&in, nil, now)
		list = append(list, in)
	}
	rec := k.with(old, now, list)
	if err := c.replace(supplierID, &rec); err != nil {
		return zero, err
	}
	return in, nil
}

// deleteChild removes the entry id from the list k of the supplier and
// stamps the supplier.
func deleteChild[T any](s *Store, ctx context.Context, community string, supplierID, id uuid.UUID, k children[T]) error {
	c, err := s.begin(ctx, community)
	if err != nil {
		return err
	}
	defer c.wmu.Unlock()
	old := c.current(supplierID)
	if old == nil {
		return notFound(supplierID)
	}
	list := k.of(old)
	i := slices.IndexFunc(list, func(x T) bool { return k.id(&x) == id })
	if i < 0 {
		return fmt.Errorf("%w: %s %s of supplier %s", supplier.ErrNotFound, k.kind, id, supplierID)
	}
	now, err := c.stamp(s.suppliers.clock)
	if err != nil {
		return err
	}
	rec := k.with(old, now, slices.Delete(slices.Clone(list), i, i+1))
	return c.replace(supplierID, &rec)
}

// with returns a copy of rec modified at now with other contacts and
// addresses (which it takes over), ordered as stored records are.
func (rec *supplierRec) with(now time.Time, contacts []supplier.Contact, addrs []supplier.RemittanceAddress) supplierRec {
	d := rec.detail
	d.ModifiedDate = now
	return finishRec(supplier.Record{Detail: d, Keywords: rec.keywords, Contacts: contacts, RemittanceAddresses: addrs})
}
