package supplier

import (
	"slices"
	"time"
)

// Equality, the one definition every store and handler uses: a store to
// tell a write that changes nothing (docs: live-data.md "No-op writes"),
// the supplier API to reuse the JSON of a value it encoded before.
//
// Equal values encode to the same JSON: every field is compared, times as
// the same instant in the same location (what their RFC 3339 text shows).
// EqualContent leaves out the dates a write stamps. Two nil pointers are
// equal (go-cmp calls Equal on them).
//
// Each type is compared with == on copies whose times, pointers and
// slices are cleared, then those one by one: a field of a comparable type
// added to a type (a Text, an enum, a bool) is compared with no change
// here; a time, pointer or slice is added to the clearing and comparing
// (TestEqualSeesEveryField finds the ones that are not).

// Equal reports whether s and o hold the same values.
func (s *Summary) Equal(o *Summary) bool {
	if s == nil || o == nil {
		return s == o
	}
	return s.equalContent(o) && sameTime(s.ModifiedDate, o.ModifiedDate) && sameTime(s.CreatedDate, o.CreatedDate)
}

// equalContent is Equal but for the summary's modifiedDate and
// createdDate.
func (s *Summary) equalContent(o *Summary) bool {
	x, y := *s, *o
	x.TinLastVerifiedDate, y.TinLastVerifiedDate = nil, nil
	x.ModifiedDate, x.CreatedDate, y.ModifiedDate, y.CreatedDate = time.Time{}, time.Time{}, time.Time{}, time.Time{}
	return x == y && equalPtr(s.TinLastVerifiedDate, o.TinLastVerifiedDate, sameTimePtr)
}

// Equal reports whether d and o hold the same values, through their
// pointers.
func (d *Detail) Equal(o *Detail) bool {
	if d == nil || o == nil {
		return d == o
	}
	return d.Summary.Equal(&o.Summary) &&
		equalPtr(d.DefaultContact, o.DefaultContact, (*Contact).Equal) &&
		equalPtr(d.DefaultRemittanceAddress, o.DefaultRemittanceAddress, (*RemittanceAddress).Equal) &&
		d.equalRest(o)
}

// EqualContent reports whether d and o are equal but for the dates a write
// stamps (docs: live-data.md "Stamping"): the modifiedDate and createdDate
// of the supplier and of its default contact and address.
func (d *Detail) EqualContent(o *Detail) bool {
	if d == nil || o == nil {
		return d == o
	}
	return d.Summary.equalContent(&o.Summary) &&
		equalPtr(d.DefaultContact, o.DefaultContact, (*Contact).EqualContent) &&
		equalPtr(d.DefaultRemittanceAddress, o.DefaultRemittanceAddress, (*RemittanceAddress).EqualContent) &&
		d.equalRest(o)
}

// equalRest compares the parts of a detail that hold no stamped date.
func (d *Detail) equalRest(o *Detail) bool {
	return equalPtr(d.BankAccount, o.BankAccount, (*BankAccount).equal) &&
		equalPtr(d.Emails, o.Emails, equalValue) &&
		equalPtr(d.Settings, o.Settings, (*Settings).equal)
}

// Equal reports whether c and o hold the same values.
func (c *Contact) Equal(o *Contact) bool {
	if c == nil || o == nil {
		return c == o
	}
	return c.EqualContent(o) && sameTime(c.ModifiedDate, o.ModifiedDate) && sameTime(c.CreatedDate, o.CreatedDate)
}

// EqualContent reports whether c and o are equal but for their
// modifiedDate and createdDate, which a write stamps.
func (c *Contact) EqualContent(o *Contact) bool {
	if c == nil || o == nil {
		return c == o
	}
	x, y := *c, *o
	x.Phone, y.Phone = nil, nil
	x.ModifiedDate, x.CreatedDate, y.ModifiedDate, y.CreatedDate = time.Time{}, time.Time{}, time.Time{}, time.Time{}
	return x == y && equalPtr(c.Phone, o.Phone, equalValue)
}

// Equal reports whether a and o hold the same values.
func (a *RemittanceAddress) Equal(o *RemittanceAddress) bool {
	if a == nil || o == nil {
		return a == o
	}
	return a.EqualContent(o) && sameTime(a.ModifiedDate, o.ModifiedDate) && sameTime(a.CreatedDate, o.CreatedDate)
}

// EqualContent reports whether a and o are equal but for their
// modifiedDate and createdDate, which a write stamps.
func (a *RemittanceAddress) EqualContent(o *RemittanceAddress) bool {
	if a == nil || o == nil {
		return a == o
	}
	x, y := *a, *o
	x.Address, y.Address = Address{}, Address{}
	x.ModifiedDate, x.CreatedDate, y.ModifiedDate, y.CreatedDate = time.Time{}, time.Time{}, time.Time{}, time.Time{}
	return x == y && a.Address.equal(&o.Address)
}

func (a *Address) equal(o *Address) bool {
	x, y := *a, *o
	x.Region, y.Region = nil, nil
	return x == y && equalPtr(a.Region, o.Region, equalValue)
}

func (b *BankAccount) equal(o *BankAccount) bool {
	x, y := *b, *o
	x.Address, y.Address = nil, nil
	return x == y && equalPtr(b.Address, o.Address, (*Address).equal)
}

func (s *Settings) equal(o *Settings) bool {
	return equalPtr(s.PaymentTerm, o.PaymentTerm, (*PaymentTerm).equal) &&
		slices.Equal(s.BuyerGroups, o.BuyerGroups) && slices.Equal(s.Tags, o.Tags)
}

func (p *PaymentTerm) equal(o *PaymentTerm) bool {
	x, y := *p, *o
	x.Days, y.Days = nil, nil
	return x == y && equalPtr(p.Days, o.Days, equalValue)
}

// equalPtr compares two pointers by what they point to.
func equalPtr[T any](a, b *T, equal func(a, b *T) bool) bool {
	return a == b || a != nil && b != nil && equal(a, b)
}

// equalValue compares values of a type whose fields are all comparable
// with ==, and equal exactly when == says so.
func equalValue[T comparable](a, b *T) bool { return *a == *b }

// sameTime reports whether a and b are the same instant in the same
// location.
func sameTime(a, b time.Time) bool { return a.Equal(b) && a.Location() == b.Location() }

func sameTimePtr(a, b *time.Time) bool { return sameTime(*a, *b) }
