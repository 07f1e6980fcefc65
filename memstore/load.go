package memstore

import (
	"fmt"
	"io"
	"slices"

	"github.com/procurekit/procure/datafile"
	"github.com/procurekit/procure/supplier"
)

// LoadFile returns a store holding the data file at path, read with
// datafile.StreamFile: the file is never in memory as a whole, and the
// decoded suppliers become the store's records without being copied. It
// accepts exactly the files datafile.ReadFile accepts and then Load
// loads, and errors name the file and the entry. This is the way to load a
// large file; Load is for a File already in hand.
func LoadFile(path string) (*Store, error) {
	s := New()
	if err := datafile.StreamFile(path, s.Loader()); err != nil {
		return nil, err
	}
	return s, nil
}

// LoadReader is LoadFile on a data file read from r.
func LoadReader(r io.Reader) (*Store, error) {
	s := New()
	if err := datafile.Stream(r, s.Loader()); err != nil {
		return nil, err
	}
	return s, nil
}

// Loader returns a datafile.Handler that adds each community of a
// datafile.Stream to s as its object ends (all or nothing, as
// AddCommunity), taking over the decoded suppliers instead of copying
// them. It serves one stream; LoadFile and LoadReader are the common
// uses. Wrap it to watch a load (a progress count, say): a wrapper must
// pass every call on, in order. Communities added before an error in a
// later one stay in s.
func (s *Store) Loader() datafile.Handler {
	return &streamLoader{s: s, in: newInterner()}
}

// streamLoader is the datafile.Handler of LoadFile: it turns each supplier
// into its stored form as it arrives, and adds a community (AddCommunity's
// all-or-nothing publication) when its object ends.
type streamLoader struct {
	s  *Store
	in *interner
	// The suppliers of the community being read.
	ci   int
	recs recStore
}

func (l *streamLoader) Supplier(ci, si int, rec *supplier.Record) error {
	if l.recs.n == 0 {
		l.ci = ci
	} else if ci != l.ci {
		// datafile.Stream ends a community before the next begins.
		return fmt.Errorf("communities[%d].suppliers[%d]: community %d is not finished", ci, si, l.ci)
	}
	l.recs.add(newSupplierRec(rec, l.in))
	return nil
}

func (l *streamLoader) Community(ci int, c *datafile.Community, n int) error {
	recs := l.recs
	l.recs = recStore{}
	if recs.n != n || (n > 0 && l.ci != ci) {
		return fmt.Errorf("communities[%d]: %d suppliers announced, %d received", ci, n, recs.n)
	}
	if err := l.add(c, recs); err != nil {
		return fmt.Errorf("communities[%d]: %w", ci, err)
	}
	return nil
}

func (l *streamLoader) add(c *datafile.Community, recs recStore) error {
	x := &l.s.suppliers
	x.mu.RLock()
	err := x.check(c.ID)
	x.mu.RUnlock()
	if err != nil {
		return err
	}
	set, err := indexSuppliers(recs)
	if err != nil {
		return err
	}
	return l.s.add(c, set)
}

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
		in.str(&b.BankName)
		if b.AccountName == d.Name {
			b.AccountName = d.Name
		}
		if b.Address != nil {
			in.address(b.Address)
		}
	}
	if e := d.Emails; e != nil {
		// A supplier's addresses often repeat one another: keep one copy.
		fields := [...]*string{&e.DefaultEmailAddress, &e.RemittanceEmailAddress, &e.OrdersEmailAddress,
			&e.InvoicingEmailAddress, &e.RfqsEmailAddress, &e.BidRequestsEmailAddress,
			&e.IntegrationEmailAddress, &e.CustomerCommentsEmailAddress}
		for i, f := range fields {
			if *f == "" {
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
		in.str(&p.Prefix)
	}
}

func (in *interner) remittance(a *supplier.RemittanceAddress, name string) {
	in.str(&a.Code)
	if a.CompanyName == name {
		a.CompanyName = name
	}
	in.address(&a.Address)
}

func (in *interner) address(a *supplier.Address) {
	in.str(&a.City)
	in.str(&a.Country)
	in.str(&a.Postcode)
	if r := a.Region; r != nil {
		if v, ok := in.regions[*r]; ok {
			a.Region = v
		} else if len(in.regions) < maxInterned {
			in.str(&r.Name)
			in.str(&r.Code)
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
		in.str(&p.Description)
		in.terms[k] = p
	}
	return p
}
