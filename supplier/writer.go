package supplier

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/procurekit/procure"
)

// Writer is the write side of the supplier store, scoped by community
// (docs: live-data.md). memstore and pgstore implement it; the admin API and
// the data-file import are its callers.
//
// Every method:
//   - validates its input exactly as the data file is validated (same rules,
//     same JSON field paths) before touching the store, returning a
//     *procure.ValidationError and writing nothing when a rule is broken;
//   - returns an error matching procure.ErrUnknownCommunity when the
//     community does not exist, and one matching ErrNotFound when a named
//     supplier, contact or address does not exist in that community (a
//     supplier of another community is not found: tenancy);
//   - is atomic: it is wholly visible or not at all, and once it returns,
//     the next read on the same node sees it (other nodes of a shared
//     database: within one second);
//   - stamps dates itself. Dates in the input are ignored: modifiedDate
//     becomes the commit time in UTC at microsecond precision, strictly
//     greater than every modifiedDate already visible in the community (so
//     a client polling modifiedSince with the largest modifiedDate it has
//     seen, inclusive, never misses a change, even with concurrent writers
//     on several nodes); createdDate is set by the first write and kept.
//     A write whose content equals what is stored changes nothing and
//     stamps nothing. The stamp follows NextStamp: a write that would
//     need one past LastStamp is refused with an error matching
//     ErrStampExhausted and changes nothing (deletes included, since
//     they stamp their supplier or the change feed);
//   - keeps every text value as written: "" stays "" (docs: "Values
//     round-trip exactly").
type Writer interface {
	// PutSupplier creates the supplier r.ID or replaces its detail and
	// keywords, and returns it as Supplier then returns it. The
	// supplier's contacts and remittance addresses are kept: they are
	// written with PutContact and PutRemittanceAddress, so r.Contacts and
	// r.RemittanceAddresses must be empty (a validation error names them
	// otherwise). A default contact or address inside the detail is part
	// of the detail.
	PutSupplier(ctx context.Context, community string, r Record) (Detail, error)

	// DeleteSupplier removes the supplier with its contacts and remittance
	// addresses: every read of them is not found afterwards.
	DeleteSupplier(ctx context.Context, community string, id uuid.UUID) error

	// PutContact creates or replaces the contact c.ID of the supplier and
	// returns it as stored. A change also stamps the supplier's
	// modifiedDate.
	PutContact(ctx context.Context, community string, supplierID uuid.UUID, c Contact) (Contact, error)

	// DeleteContact removes a contact of the supplier and stamps the
	// supplier's modifiedDate.
	DeleteContact(ctx context.Context, community string, supplierID, id uuid.UUID) error

	// PutRemittanceAddress creates or replaces the address a.ID of the
	// supplier and returns it as stored. A change also stamps the
	// supplier's modifiedDate.
	PutRemittanceAddress(ctx context.Context, community string, supplierID uuid.UUID, a RemittanceAddress) (RemittanceAddress, error)

	// DeleteRemittanceAddress removes a remittance address of the supplier
	// and stamps the supplier's modifiedDate.
	DeleteRemittanceAddress(ctx context.Context, community string, supplierID, id uuid.UUID) error
}

// LastStamp is the last modifiedDate a store can give: the last microsecond
// of year 9999 in UTC (check.MaxInstant at the stores' precision). A date
// past it has no RFC 3339 form, so it could be stored but never read back.
var LastStamp = time.Date(9999, time.December, 31, 23, 59, 59, 999_999_000, time.UTC)

// ErrStampExhausted is matched by the error of a write to a community that
// already holds a modifiedDate of LastStamp: every stamp must be greater
// than that one, and none is left. The write changes nothing. It matches
// procure.ErrConflict too (the admin API answers 409), since the write
// conflicts with the state of the community, not with a rule of its input.
var ErrStampExhausted = fmt.Errorf("no modifiedDate is left for a write: the community holds one at %s, the last representable microsecond, "+
	"and a write must stamp a later one: %w", LastStamp.Format(time.RFC3339Nano), procure.ErrConflict)

// NextStamp is the stamping rule of every Writer (docs: live-data.md
// "Stamping"): the modifiedDate of a write made at now in a community whose
// largest modifiedDate so far is last (the zero time when it has none) is
// now in UTC at microsecond precision, or the microsecond after last when
// that is not later. It returns an error matching ErrStampExhausted, and
// no stamp, when the result would pass LastStamp.
func NextStamp(now, last time.Time) (time.Time, error) {
	t := NormalizeTime(now)
	if !t.After(last) {
		t = NormalizeTime(last).Add(time.Microsecond)
	}
	if t.After(LastStamp) {
		return time.Time{}, ErrStampExhausted
	}
	return t, nil
}

// StampWrite dates d, the detail of a supplier write that changes
// something, with stamp (from NextStamp), by the stamping rule of every
// Writer (docs: live-data.md "Stamping"); old is the stored detail, nil
// for a new supplier. The supplier's modifiedDate becomes stamp and its
// createdDate old's (stamp when new). Its default contact and address are
// stamped with it: each keeps the dates of old's when equal in content
// (EqualContent, ids included); a changed one takes stamp as its
// modifiedDate and keeps old's createdDate when it has old's id (stamp
// otherwise).
//
// d's default contact and address are dated in place: d must not share
// them with anything (Clone it first).
func (d *Detail) StampWrite(old *Detail, stamp time.Time) {
	d.ModifiedDate, d.CreatedDate = stamp, stamp
	var oldC *Contact
	var oldA *RemittanceAddress
	if old != nil {
		d.CreatedDate = old.CreatedDate
		oldC, oldA = old.DefaultContact, old.DefaultRemittanceAddress
	}
	if c := d.DefaultContact; c != nil {
		switch {
		case oldC != nil && c.EqualContent(oldC):
			c.ModifiedDate, c.CreatedDate = oldC.ModifiedDate, oldC.CreatedDate
		case oldC != nil && oldC.ID == c.ID:
			c.StampWrite(oldC, stamp)
		default:
			c.StampWrite(nil, stamp)
		}
	}
	if a := d.DefaultRemittanceAddress; a != nil {
		switch {
		case oldA != nil && a.EqualContent(oldA):
			a.ModifiedDate, a.CreatedDate = oldA.ModifiedDate, oldA.CreatedDate
		case oldA != nil && oldA.ID == a.ID:
			a.StampWrite(oldA, stamp)
		default:
			a.StampWrite(nil, stamp)
		}
	}
}

// StampWrite dates c, a write of a contact that changes something, with
// stamp (docs: live-data.md "Stamping"): its modifiedDate becomes stamp,
// and its createdDate that of old, the stored contact it replaces (stamp
// when old is nil: a new contact). The write stamps the supplier too.
func (c *Contact) StampWrite(old *Contact, stamp time.Time) {
	c.ModifiedDate, c.CreatedDate = stamp, stamp
	if old != nil {
		c.CreatedDate = old.CreatedDate
	}
}

// StampWrite is Contact.StampWrite for a remittance address.
func (a *RemittanceAddress) StampWrite(old *RemittanceAddress, stamp time.Time) {
	a.ModifiedDate, a.CreatedDate = stamp, stamp
	if old != nil {
		a.CreatedDate = old.CreatedDate
	}
}

// ValidateContact checks a contact written on its own (PutContact) by the
// rules a contact of a data file follows, with field names relative to the
// contact ("name", "phone.number"). It returns nil or a
// *procure.ValidationError with Source procure.SourceBody.
func ValidateContact(c *Contact) error {
	cc := *c
	placeholderDates(&cc.ModifiedDate, &cc.CreatedDate)
	return validatePart(&cc, cc.ID)
}

// ValidateRemittanceAddress checks an address written on its own
// (PutRemittanceAddress) like ValidateContact does a contact.
func ValidateRemittanceAddress(a *RemittanceAddress) error {
	aa := *a
	placeholderDates(&aa.ModifiedDate, &aa.CreatedDate)
	return validatePart(&aa, aa.ID)
}

// ValidateWrite checks a supplier written on its own (PutSupplier): the
// rules of a data file's supplier, except that dates may be absent (the
// store stamps them), and contacts and remittance addresses must be empty.
// Field names are the data file's JSON paths within the supplier.
func (r *Record) ValidateWrite() error {
	rr := *r
	rr.Contacts, rr.RemittanceAddresses = nil, nil
	placeholderDates(&rr.ModifiedDate, &rr.CreatedDate)
	if c := rr.DefaultContact; c != nil {
		cc := *c
		placeholderDates(&cc.ModifiedDate, &cc.CreatedDate)
		rr.DefaultContact = &cc
	}
	if a := rr.DefaultRemittanceAddress; a != nil {
		aa := *a
		placeholderDates(&aa.ModifiedDate, &aa.CreatedDate)
		rr.DefaultRemittanceAddress = &aa
	}
	err := rr.Validate()
	if len(r.Contacts) == 0 && len(r.RemittanceAddresses) == 0 {
		return err
	}
	verr := &procure.ValidationError{Source: procure.SourceData}
	if err != nil {
		if !errors.As(err, &verr) {
			return err
		}
	}
	if len(r.Contacts) > 0 {
		verr.Add("contacts", "must be absent: contacts are written one by one")
	}
	if len(r.RemittanceAddresses) > 0 {
		verr.Add("remittanceAddresses", "must be absent: remittance addresses are written one by one")
	}
	return verr
}

// placeholderDates fills zero dates, which a write may omit, so that the
// "required" rules of stored records pass; the store stamps the real ones.
func placeholderDates(ts ...*time.Time) {
	for _, t := range ts {
		if t.IsZero() {
			*t = time.Unix(0, 0).UTC()
		}
	}
}

func validatePart(v any, id uuid.UUID) error {
	verr := &procure.ValidationError{Source: procure.SourceBody}
	if err := checker.Struct(procure.SourceBody, v); err != nil {
		var ve *procure.ValidationError
		if !errors.As(err, &ve) {
			return err
		}
		verr.Fields = append(verr.Fields, ve.Fields...)
	}
	if id == uuid.Nil {
		verr.Add("id", "is required (a non-nil UUID)")
	}
	checkStorable(verr, v)
	return verr.Err()
}
