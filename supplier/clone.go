package supplier

import "slices"

// Copies, the one definition every store uses: a store keeps and returns
// values that share no memory with its callers' (strings aside, which
// are immutable). The copy's enum values are the package's constants, so
// that the many values a store keeps share one copy of each instead of
// holding the one their decoding allocated.

// Clone returns a deep copy of s.
func (s *Summary) Clone() Summary {
	c := *s
	c.cloneInPlace()
	return c
}

func (s *Summary) cloneInPlace() {
	s.ProfileType = intern(s.ProfileType)
	s.TaxIdentificationType = intern(s.TaxIdentificationType)
	s.TinVerificationStatus = intern(s.TinVerificationStatus)
	s.ConnectionState = intern(s.ConnectionState)
	s.TinLastVerifiedDate = clonePtr(s.TinLastVerifiedDate)
}

// Clone returns a deep copy of d.
func (d *Detail) Clone() Detail {
	c := *d
	c.Summary.cloneInPlace()
	if d.DefaultContact != nil {
		cc := d.DefaultContact.Clone()
		c.DefaultContact = &cc
	}
	if d.DefaultRemittanceAddress != nil {
		aa := d.DefaultRemittanceAddress.Clone()
		c.DefaultRemittanceAddress = &aa
	}
	if b := d.BankAccount; b != nil {
		bb := *b
		if b.Address != nil {
			addr := b.Address.clone()
			bb.Address = &addr
		}
		bb.BankAccountType = intern(bb.BankAccountType)
		bb.DepositFormat = intern(bb.DepositFormat)
		c.BankAccount = &bb
	}
	c.Emails = clonePtr(d.Emails)
	if s := d.Settings; s != nil {
		ss := *s
		if p := s.PaymentTerm; p != nil {
			pp := *p
			pp.Days = clonePtr(p.Days)
			pp.TermType = intern(pp.TermType)
			ss.PaymentTerm = &pp
		}
		ss.BuyerGroups = cloneSlice(s.BuyerGroups)
		ss.Tags = cloneSlice(s.Tags)
		c.Settings = &ss
	}
	return c
}

// Clone returns a deep copy of r.
func (r *Record) Clone() Record {
	c := Record{Detail: r.Detail.Clone(), Keywords: cloneSlice(r.Keywords)}
	if r.Contacts != nil {
		c.Contacts = make([]Contact, len(r.Contacts))
		for i := range r.Contacts {
			c.Contacts[i] = r.Contacts[i].Clone()
		}
	}
	if r.RemittanceAddresses != nil {
		c.RemittanceAddresses = make([]RemittanceAddress, len(r.RemittanceAddresses))
		for i := range r.RemittanceAddresses {
			c.RemittanceAddresses[i] = r.RemittanceAddresses[i].Clone()
		}
	}
	return c
}

// Clone returns a deep copy of c.
func (c *Contact) Clone() Contact {
	cc := *c
	cc.Phone = clonePtr(c.Phone)
	cc.ManagedBy = intern(c.ManagedBy)
	return cc
}

// Clone returns a deep copy of a.
func (a *RemittanceAddress) Clone() RemittanceAddress {
	aa := *a
	aa.Address = a.Address.clone()
	aa.ManagedBy = intern(a.ManagedBy)
	return aa
}

func (a *Address) clone() Address {
	c := *a
	c.Region = clonePtr(a.Region)
	return c
}

// clonePtr returns a pointer to a copy of *p, or nil.
func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	c := *p
	return &c
}

// cloneSlice returns a copy of s with no spare capacity (nil for nil).
func cloneSlice[T any](s []T) []T {
	return slices.Clip(slices.Clone(s))
}

// intern returns the package's constant equal to v, or v.
func intern[T interface {
	~string
	Allowed() []string
}](v T) T {
	for _, a := range v.Allowed() {
		if string(v) == a {
			return T(a)
		}
	}
	return v
}
