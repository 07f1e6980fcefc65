package memstore

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/procurekit/procure/supplier"
)

var _ supplier.Writer = (*Store)(nil)

// stamp returns the modifiedDate of a write (supplier.NextStamp): now, in
// UTC at microsecond precision, but strictly after every modifiedDate the
// community has held (one microsecond after the last when the clock has
// not moved, or went back). When none is left (supplier.ErrStampExhausted)
// it returns the error and keeps the last stamp: the caller must then
// change nothing. c.wmu is held.
func (c *comSuppliers) stamp(clock func() time.Time) (time.Time, error) {
	prev := c.ix.MaxModified()
	if c.last.After(prev) {
		prev = c.last
	}
	if clock == nil {
		clock = time.Now
	}
	t, err := supplier.NextStamp(clock(), prev)
	if err != nil {
		return time.Time{}, err
	}
	c.last = t
	return t, nil
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
	defer s.timeWrite("PutSupplier", s.writeStart())
	if err := ctx.Err(); err != nil {
		return supplier.Detail{}, err
	}
	if err := r.ValidateWrite(); err != nil {
		return supplier.Detail{}, err
	}
	// A deep copy in normal form; the contacts and addresses are kept.
	in := supplier.Record{Detail: r.Detail.Clone(), Keywords: slices.Clip(slices.Clone(r.Keywords))}
	in.Normalize()
	c, err := s.begin(ctx, community)
	if err != nil {
		return supplier.Detail{}, err
	}
	defer c.wmu.Unlock()
	old, exists := c.ix.Record(r.ID)
	if exists && old.Detail.EqualContent(&in.Detail) && slices.Equal(old.Keywords, in.Keywords) {
		return old.Detail, nil
	}
	now, err := c.stamp(s.suppliers.clock)
	if err != nil {
		return supplier.Detail{}, err
	}
	d := &in.Detail
	var oldD *supplier.Detail
	if exists {
		oldD = &old.Detail
		in.Contacts, in.RemittanceAddresses = old.Contacts, old.RemittanceAddresses
	}
	d.StampWrite(oldD, now)
	// An unchanged default contact or address keeps sharing the stored
	// one's memory.
	if exists {
		if oc := old.DefaultContact; oc != nil && d.DefaultContact != nil && d.DefaultContact.Equal(oc) {
			d.DefaultContact = oc
		}
		if oa := old.DefaultRemittanceAddress; oa != nil && d.DefaultRemittanceAddress != nil && d.DefaultRemittanceAddress.Equal(oa) {
			d.DefaultRemittanceAddress = oa
		}
	}
	c.ix.Apply([]supplier.Record{in}, nil)
	return in.Detail, nil
}

// DeleteSupplier implements supplier.Writer.
func (s *Store) DeleteSupplier(ctx context.Context, community string, id uuid.UUID) error {
	defer s.timeWrite("DeleteSupplier", s.writeStart())
	c, err := s.begin(ctx, community)
	if err != nil {
		return err
	}
	defer c.wmu.Unlock()
	if _, ok := c.ix.Record(id); !ok {
		return notFound(id)
	}
	// A delete stamps nothing the API shows, but pgstore's stamps the
	// change feed of its caches: both refuse it alike when no stamp is
	// left.
	if _, err := c.stamp(s.suppliers.clock); err != nil {
		return err
	}
	c.ix.Apply(nil, []uuid.UUID{id})
	return nil
}

// PutContact implements supplier.Writer.
func (s *Store) PutContact(ctx context.Context, community string, supplierID uuid.UUID, in supplier.Contact) (supplier.Contact, error) {
	defer s.timeWrite("PutContact", s.writeStart())
	if err := ctx.Err(); err != nil {
		return supplier.Contact{}, err
	}
	if err := supplier.ValidateContact(&in); err != nil {
		return supplier.Contact{}, err
	}
	in = in.Clone()
	return putChild(s, ctx, community, supplierID, in, contactsOf)
}

// DeleteContact implements supplier.Writer.
func (s *Store) DeleteContact(ctx context.Context, community string, supplierID, id uuid.UUID) error {
	defer s.timeWrite("DeleteContact", s.writeStart())
	return deleteChild(s, ctx, community, supplierID, id, contactsOf)
}

// PutRemittanceAddress implements supplier.Writer.
func (s *Store) PutRemittanceAddress(ctx context.Context, community string, supplierID uuid.UUID, in supplier.RemittanceAddress) (supplier.RemittanceAddress, error) {
	defer s.timeWrite("PutRemittanceAddress", s.writeStart())
	if err := ctx.Err(); err != nil {
		return supplier.RemittanceAddress{}, err
	}
	if err := supplier.ValidateRemittanceAddress(&in); err != nil {
		return supplier.RemittanceAddress{}, err
	}
	in = in.Clone()
	return putChild(s, ctx, community, supplierID, in, addressesOf)
}

// DeleteRemittanceAddress implements supplier.Writer.
func (s *Store) DeleteRemittanceAddress(ctx context.Context, community string, supplierID, id uuid.UUID) error {
	defer s.timeWrite("DeleteRemittanceAddress", s.writeStart())
	return deleteChild(s, ctx, community, supplierID, id, addressesOf)
}

// children describes one list a supplier owns (its contacts or its
// remittance addresses) to putChild and deleteChild.
type children[T any] struct {
	kind  string                          // for errors
	of    func(*supplier.Record) []T      // the stored list
	with  func(r *supplier.Record, l []T) // sets the list of r to l
	id    func(*T) uuid.UUID
	same  func(a, b *T) bool               // equal but for dates (EqualContent)
	stamp func(v, old *T, stamp time.Time) // StampWrite
}

var (
	contactsOf = children[supplier.Contact]{
		kind:  "contact",
		of:    func(r *supplier.Record) []supplier.Contact { return r.Contacts },
		with:  func(r *supplier.Record, l []supplier.Contact) { r.Contacts = l },
		id:    func(c *supplier.Contact) uuid.UUID { return c.ID },
		same:  (*supplier.Contact).EqualContent,
		stamp: (*supplier.Contact).StampWrite,
	}
	addressesOf = children[supplier.RemittanceAddress]{
		kind:  "remittance address",
		of:    func(r *supplier.Record) []supplier.RemittanceAddress { return r.RemittanceAddresses },
		with:  func(r *supplier.Record, l []supplier.RemittanceAddress) { r.RemittanceAddresses = l },
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
	old, ok := c.ix.Record(supplierID)
	if !ok {
		return zero, notFound(supplierID)
	}
	list := k.of(&old)
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
	old.ModifiedDate = now
	k.with(&old, list)
	c.ix.Apply([]supplier.Record{old}, nil)
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
	old, ok := c.ix.Record(supplierID)
	if !ok {
		return notFound(supplierID)
	}
	list := k.of(&old)
	i := slices.IndexFunc(list, func(x T) bool { return k.id(&x) == id })
	if i < 0 {
		return fmt.Errorf("%w: %s %s of supplier %s", supplier.ErrNotFound, k.kind, id, supplierID)
	}
	now, err := c.stamp(s.suppliers.clock)
	if err != nil {
		return err
	}
	old.ModifiedDate = now
	k.with(&old, slices.Delete(slices.Clone(list), i, i+1))
	c.ix.Apply([]supplier.Record{old}, nil)
	return nil
}
