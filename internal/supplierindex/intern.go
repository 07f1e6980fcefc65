package supplierindex

import (
	"slices"

	"github.com/procurekit/procure/supplier"
)

// interner makes the records of a load share one copy of the strings that
// repeat across suppliers (cities, countries, regions, postcodes, bank
// names, payment terms, buyer group and tag names, phone prefixes), so a
// million suppliers do not hold a million copies of "Australia". (Enum
// values need none: decoding gives the supplier package's constants.)
// Strings unique to a supplier are left alone: looking them up would cost
// time and, while loading, memory.
type interner struct {
	strs    map[string]string
	regions map[supplier.Region]*supplier.Region
	terms   map[termKey]*supplier.PaymentTerm
}

// termKey is a payment term by value (Days by its value, not its address).
type termKey struct {
	term    supplier.PaymentTerm
	hasDays bool
	days    int
}

// maxInterned bounds the interner's tables: past it, new values are kept
// as they are (still correct, just not shared).
const maxInterned = 1 << 18

func newInterner() *interner {
	return &interner{
		strs:    make(map[string]string),
		regions: make(map[supplier.Region]*supplier.Region),
		terms:   make(map[termKey]*supplier.PaymentTerm),
	}
}

// str replaces *p by the shared copy of its value.
func (in *interner) str(p *string) {
	if *p == "" {
		return
	}
	if v, ok := in.strs[*p]; ok {
		*p = v
		return
	}
	if len(in.strs) < maxInterned {
		in.strs[*p] = *p
	}
}

// text is str for an optional text.
func (in *interner) text(p *supplier.Text) {
	if s := p.String(); s != "" {
		in.str(&s)
		*p = supplier.NewText(s)
	}
}

// record interns the repeated values of r, in place.
func (in *interner) record(r *supplier.Record) {
	d := &r.Detail
	if c := d.DefaultContact; c != nil {
		in.contact(c)
	}
	if a := d.DefaultRemittanceAddress; a != nil {
		in.remittance(a, d.Name)
	}
	if b := d.BankAccount; b != nil {
		in.str(&b.Country)
		in.text(&b.BankName)
		if b.AccountName == d.Name {
			b.AccountName = d.Name
		}
		if b.Address != nil {
			in.address(b.Address)
		}
	}
	if e := d.Emails; e != nil {
		// A supplier's addresses often repeat one another: keep one copy.
		fields := [...]*supplier.Text{&e.DefaultEmailAddress, &e.RemittanceEmailAddress, &e.OrdersEmailAddress,
			&e.InvoicingEmailAddress, &e.RfqsEmailAddress, &e.BidRequestsEmailAddress,
			&e.IntegrationEmailAddress, &e.CustomerCommentsEmailAddress}
		for i, f := range fields {
			if f.IsZero() {
				continue
			}
			if *f == d.DefaultEmailAddress {
				*f = d.DefaultEmailAddress
				continue
			}
			for _, g := range fields[:i] {
				if *g == *f {
					*f = *g
					break
				}
			}
		}
	}
	if s := d.Settings; s != nil {
		if p := s.PaymentTerm; p != nil {
			s.PaymentTerm = in.term(p)
		}
		for i := range s.BuyerGroups {
			in.str(&s.BuyerGroups[i].Name)
		}
		for i := range s.Tags {
			in.str(&s.Tags[i].Name)
		}
		s.BuyerGroups = slices.Clip(s.BuyerGroups)
		s.Tags = slices.Clip(s.Tags)
	}
	for i := range r.Keywords {
		in.str(&r.Keywords[i])
	}
	for i := range r.Contacts {
		in.contact(&r.Contacts[i])
	}
	for i := range r.RemittanceAddresses {
		in.remittance(&r.RemittanceAddresses[i], d.Name)
	}
}

func (in *interner) contact(c *supplier.Contact) {
	if p := c.Phone; p != nil {
		in.text(&p.Prefix)
	}
}

func (in *interner) remittance(a *supplier.RemittanceAddress, name supplier.Text) {
	in.text(&a.Code)
	if a.CompanyName == name {
		a.CompanyName = name
	}
	in.address(&a.Address)
}

func (in *interner) address(a *supplier.Address) {
	in.str(&a.City)
	in.str(&a.Country)
	in.text(&a.Postcode)
	if r := a.Region; r != nil {
		if v, ok := in.regions[*r]; ok {
			a.Region = v
		} else if len(in.regions) < maxInterned {
			in.text(&r.Name)
			in.text(&r.Code)
			in.regions[*r] = r
		}
	}
}

// term returns the shared copy of a payment term.
func (in *interner) term(p *supplier.PaymentTerm) *supplier.PaymentTerm {
	k := termKey{term: *p}
	k.term.Days = nil
	if p.Days != nil {
		k.hasDays, k.days = true, *p.Days
	}
	if v, ok := in.terms[k]; ok {
		return v
	}
	if len(in.terms) < maxInterned {
		in.str(&p.Code)
		in.text(&p.Description)
		in.terms[k] = p
	}
	return p
}
