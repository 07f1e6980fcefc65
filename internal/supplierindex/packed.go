package supplierindex

import (
	"encoding/binary"
	"math"
	"runtime"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/procurekit/procure/supplier"
)

// A record's parts beyond its summary (the default contact and address,
// bank account, e-mails and settings, the contacts and the remittance
// addresses with their orders) are kept packed in one string, parts, and
// made into values again when a request reads them.
//
// Why: decoded, those parts are some forty heap objects a supplier, each
// with pointers, and each of its texts wherever the decoder put it. The
// collector marks every one of them at every collection (half of the
// marking of a 100,000-supplier store was the contacts' and addresses'
// lists alone), a supplier read at random waits for a cache miss per
// object (httpapi/internal/supplierjson's touch), and the objects' headers
// and pointers cost more memory than their texts. Packed, they are one
// object the collector never scans, read front to back from a few
// neighbouring cache lines. A read pays for making the values it returns
// (Supplier: one allocation for the detail's parts; a page of contacts or
// addresses: one or two), which BenchmarkUnpack measures against decoding
// JSON; bench/README.md (session 15) has the figures.
//
// The format, a string that only this file writes and reads (it is never
// stored outside the process, so it has no version):
//
//	header:    contactsAt u32, addrsAt u32 (offsets of the two lists)
//	detail:    flags byte, then each part the flags name, in this order:
//	           the default contact (a contact, or the index of the equal
//	           one in the list), the default address (likewise), the bank
//	           account, the e-mails, the settings
//	contacts:  k u32, k offsets u32, the k contacts in name order
//	addresses: k u32, k offsets u32, when k > 1 the three other orders
//	           (companyName descending, modifiedDate ascending and
//	           descending) as 3k u32 indexes, the k addresses in
//	           companyName order
//
// Inside a part: a uuid is its 16 bytes; a required string its length
// (uvarint) and bytes; a Text 0 for no value, else its length + 1 and
// bytes; a time its Unix seconds (varint) and nanoseconds (uvarint),
// read back in UTC (the index holds records in normal form); an optional
// part a byte (0 absent, 1 present) before it; a slice 0 for nil, else
// its length + 1 before its items. A contact and an address start with
// their modifiedDate, which sorting and filtering read alone. The strings
// a read returns are substrings of parts: nothing is copied.
//
// The encoding is a function of the values alone (every list already in
// its stored order), so two records hold the same parts exactly when
// their parts strings are equal (sameRecord).

// Flags of the detail section.
const (
	hasDefaultContact = 1 << iota // a default contact follows
	defaultContactIdx             // ... as the index of an equal contact of the list
	hasDefaultAddr                // a default address follows
	defaultAddrIdx                // ... as the index of an equal address of the list
	hasBank
	hasEmails
	hasSettings
)

// packer appends a record's parts.
type packer struct{ b []byte }

// packers keeps the packers' buffers from one record to the next: the
// parts are copied out of them into a string of their size.
var packers = sync.Pool{New: func() any { return &packer{b: make([]byte, 0, 1024)} }}

func (p *packer) u32(v uint32)     { p.b = binary.LittleEndian.AppendUint32(p.b, v) }
func (p *packer) uvarint(v uint64) { p.b = binary.AppendUvarint(p.b, v) }
func (p *packer) id(v uuid.UUID)   { p.b = append(p.b, v[:]...) }
func (p *packer) flag(ok bool) {
	if ok {
		p.b = append(p.b, 1)
	} else {
		p.b = append(p.b, 0)
	}
}

func (p *packer) str(s string) {
	p.uvarint(uint64(len(s)))
	p.b = append(p.b, s...)
}

func (p *packer) text(t supplier.Text) {
	if t.IsZero() {
		p.uvarint(0)
		return
	}
	s := t.String()
	p.uvarint(uint64(len(s)) + 1)
	p.b = append(p.b, s...)
}

func (p *packer) time(t time.Time) {
	p.b = binary.AppendVarint(p.b, t.Unix())
	p.uvarint(uint64(t.Nanosecond()))
}

// setAt writes v at offset at (a placeholder u32 appended before).
func (p *packer) setAt(at int, v int) {
	binary.LittleEndian.PutUint32(p.b[at:], uint32(v))
}

func (p *packer) contact(c *supplier.Contact) {
	p.time(c.ModifiedDate)
	p.time(c.CreatedDate)
	p.id(c.ID)
	p.str(c.Name)
	p.text(c.Email)
	p.str(string(c.ManagedBy))
	p.flag(c.Phone != nil)
	if ph := c.Phone; ph != nil {
		p.text(ph.Prefix)
		p.text(ph.Number)
		p.text(ph.Extension)
	}
}

func (p *packer) remittance(a *supplier.RemittanceAddress) {
	p.time(a.ModifiedDate)
	p.time(a.CreatedDate)
	p.id(a.ID)
	p.text(a.Code)
	p.text(a.CompanyName)
	p.address(&a.Address)
	p.str(string(a.ManagedBy))
}

func (p *packer) address(a *supplier.Address) {
	p.str(a.Line1)
	p.text(a.Line2)
	p.text(a.Line3)
	p.str(a.City)
	p.flag(a.Region != nil)
	if r := a.Region; r != nil {
		p.text(r.Name)
		p.text(r.Code)
	}
	p.text(a.Postcode)
	p.str(a.Country)
}

func (p *packer) bank(b *supplier.BankAccount) {
	p.id(b.ID)
	p.str(b.Country)
	p.text(b.BankName)
	p.text(b.AccountName)
	p.flag(b.Address != nil)
	if b.Address != nil {
		p.address(b.Address)
	}
	p.text(b.AccountNumber)
	p.text(b.RoutingNumber)
	p.text(b.LocalAccountNumber)
	p.str(string(b.BankAccountType))
	p.str(string(b.DepositFormat))
}

func (p *packer) emails(e *supplier.Emails) {
	for _, t := range [...]supplier.Text{e.DefaultEmailAddress, e.RemittanceEmailAddress, e.OrdersEmailAddress,
		e.InvoicingEmailAddress, e.RfqsEmailAddress, e.BidRequestsEmailAddress,
		e.IntegrationEmailAddress, e.CustomerCommentsEmailAddress} {
		p.text(t)
	}
}

func (p *packer) settings(s *supplier.Settings) {
	p.flag(s.PaymentTerm != nil)
	if t := s.PaymentTerm; t != nil {
		p.id(t.ID)
		p.str(t.Code)
		p.flag(t.Active)
		p.flag(t.Days != nil)
		if t.Days != nil {
			p.b = binary.AppendVarint(p.b, int64(*t.Days))
		}
		p.str(string(t.TermType))
		p.text(t.Description)
	}
	p.count(s.BuyerGroups == nil, len(s.BuyerGroups))
	for _, g := range s.BuyerGroups {
		p.id(g.ID)
		p.str(g.Name)
	}
	p.count(s.Tags == nil, len(s.Tags))
	for _, g := range s.Tags {
		p.id(g.ID)
		p.str(g.Name)
	}
}

// count writes a slice's length, 0 for a nil slice.
func (p *packer) count(isNil bool, n int) {
	if isNil {
		p.uvarint(0)
		return
	}
	p.uvarint(uint64(n) + 1)
}

// packParts packs d's parts beyond its summary, the contacts (in name
// order) and the addresses (in companyName order) with the addresses'
// other orders (addrIdx: three permutations of k one after the other, nil
// when k < 2).
func packParts(d *supplier.Detail, contacts []supplier.Contact, addrs []supplier.RemittanceAddress, addrIdx []int32, in *interner) string {
	p := packers.Get().(*packer)
	defer func() {
		if cap(p.b) <= 64<<10 { // a rare large supplier's buffer is not kept
			packers.Put(p)
		}
	}()
	p.b = p.b[:0]
	p.u32(0)
	p.u32(0)
	var flags byte
	cIdx, aIdx := -1, -1
	if c := d.DefaultContact; c != nil {
		flags |= hasDefaultContact
		for i := range contacts {
			if c.Equal(&contacts[i]) {
				flags |= defaultContactIdx
				cIdx = i
				break
			}
		}
	}
	if a := d.DefaultRemittanceAddress; a != nil {
		flags |= hasDefaultAddr
		for i := range addrs {
			if a.Equal(&addrs[i]) {
				flags |= defaultAddrIdx
				aIdx = i
				break
			}
		}
	}
	if d.BankAccount != nil {
		flags |= hasBank
	}
	if d.Emails != nil {
		flags |= hasEmails
	}
	if d.Settings != nil {
		flags |= hasSettings
	}
	p.b = append(p.b, flags)
	if flags&hasDefaultContact != 0 {
		if cIdx >= 0 {
			p.uvarint(uint64(cIdx))
		} else {
			p.contact(d.DefaultContact)
		}
	}
	if flags&hasDefaultAddr != 0 {
		if aIdx >= 0 {
			p.uvarint(uint64(aIdx))
		} else {
			p.remittance(d.DefaultRemittanceAddress)
		}
	}
	if d.BankAccount != nil {
		p.bank(d.BankAccount)
	}
	if d.Emails != nil {
		p.emails(d.Emails)
	}
	if d.Settings != nil {
		p.settings(d.Settings)
	}

	p.setAt(0, len(p.b))
	p.u32(uint32(len(contacts)))
	table := len(p.b)
	for range contacts {
		p.u32(0)
	}
	for i := range contacts {
		p.setAt(table+4*i, len(p.b))
		p.contact(&contacts[i])
	}

	p.setAt(4, len(p.b))
	p.u32(uint32(len(addrs)))
	table = len(p.b)
	for range addrs {
		p.u32(0)
	}
	for _, j := range addrIdx {
		p.u32(uint32(j))
	}
	for i := range addrs {
		p.setAt(table+4*i, len(p.b))
		p.remittance(&addrs[i])
	}
	if len(p.b) > math.MaxUint32 {
		panic("supplierindex: a supplier's parts exceed 4 GiB") // validated records stay far below
	}
	if in != nil {
		return in.own(p.b) // a load's record: from its blocks
	}
	return string(p.b)
}

// unpacker reads parts from offset i.
type unpacker struct {
	s string
	i int
}

func u32At(s string, at int) int {
	_ = s[at+3]
	return int(uint32(s[at]) | uint32(s[at+1])<<8 | uint32(s[at+2])<<16 | uint32(s[at+3])<<24)
}

func (u *unpacker) byte() byte {
	b := u.s[u.i]
	u.i++
	return b
}

func (u *unpacker) uvarint() uint64 {
	var v uint64
	for shift := 0; ; shift += 7 {
		b := u.s[u.i]
		u.i++
		if b < 0x80 {
			return v | uint64(b)<<shift
		}
		v |= uint64(b&0x7f) << shift
	}
}

func (u *unpacker) varint() int64 {
	v := u.uvarint()
	x := int64(v >> 1)
	if v&1 != 0 {
		x = ^x
	}
	return x
}

func (u *unpacker) id() (v uuid.UUID) {
	copy(v[:], u.s[u.i:u.i+16])
	u.i += 16
	return v
}

func (u *unpacker) str() string {
	n := int(u.uvarint())
	s := u.s[u.i : u.i+n]
	u.i += n
	return s
}

func (u *unpacker) text() supplier.Text {
	n := int(u.uvarint())
	if n == 0 {
		return supplier.Text{}
	}
	s := u.s[u.i : u.i+n-1]
	u.i += n - 1
	return supplier.NewText(s)
}

func (u *unpacker) time() time.Time {
	sec := u.varint()
	return time.Unix(sec, int64(u.uvarint())).UTC()
}

// contact reads a contact into c, its phone (if any) into ph.
func (u *unpacker) contact(c *supplier.Contact, ph *supplier.Phone) {
	c.ModifiedDate = u.time()
	c.CreatedDate = u.time()
	c.ID = u.id()
	c.Name = u.str()
	c.Email = u.text()
	c.ManagedBy = supplier.TenantType(u.str())
	c.Phone = nil
	if u.byte() != 0 {
		ph.Prefix, ph.Number, ph.Extension = u.text(), u.text(), u.text()
		c.Phone = ph
	}
}

// remittance reads an address into a, its region (if any) into rg.
func (u *unpacker) remittance(a *supplier.RemittanceAddress, rg *supplier.Region) {
	a.ModifiedDate = u.time()
	a.CreatedDate = u.time()
	a.ID = u.id()
	a.Code = u.text()
	a.CompanyName = u.text()
	u.address(&a.Address, rg)
	a.ManagedBy = supplier.TenantType(u.str())
}

func (u *unpacker) address(a *supplier.Address, rg *supplier.Region) {
	a.Line1 = u.str()
	a.Line2 = u.text()
	a.Line3 = u.text()
	a.City = u.str()
	a.Region = nil
	if u.byte() != 0 {
		rg.Name, rg.Code = u.text(), u.text()
		a.Region = rg
	}
	a.Postcode = u.text()
	a.Country = u.str()
}

// detailParts is room for all the parts of a detail, so that making them
// is a single allocation.
type detailParts struct {
	contact    supplier.Contact
	phone      supplier.Phone
	addr       supplier.RemittanceAddress
	region     supplier.Region
	bank       supplier.BankAccount
	bankAddr   supplier.Address
	bankRegion supplier.Region
	emails     supplier.Emails
	settings   supplier.Settings
	term       supplier.PaymentTerm
	days       int
	// Room a lent detail reuses (viewParts): the detail itself and the
	// settings' lists.
	detail supplier.Detail
	groups []supplier.BuyerGroup
	tags   []supplier.Tag
}

// detailOf sets *d to the supplier in full: sum and the parts, in memory
// of their own (one allocation when there are any, and one per list of the
// settings).
func detailOf(d *supplier.Detail, sum *supplier.Summary, parts string) {
	detailInto(d, sum, parts, nil)
}

// viewParts holds detailParts for details lent to a caller for the
// duration of a call (Index.ViewSupplier), reused after it.
var viewParts = sync.Pool{New: func() any { return new(detailParts) }}

// detailInto is detailOf with the parts in x, and the settings' lists in
// x's room for them; x nil: a new one when there are parts.
func detailInto(d *supplier.Detail, sum *supplier.Summary, parts string, x *detailParts) {
	touchRecord(sum, parts)
	*d = supplier.Detail{Summary: *sum}
	u := unpacker{s: parts, i: 8}
	flags := u.byte()
	if flags == 0 {
		return
	}
	if x == nil {
		x = new(detailParts)
	}
	if flags&hasDefaultContact != 0 {
		if flags&defaultContactIdx != 0 {
			contactAt(parts, int(u.uvarint()), &x.contact, &x.phone)
		} else {
			u.contact(&x.contact, &x.phone)
		}
		d.DefaultContact = &x.contact
	}
	if flags&hasDefaultAddr != 0 {
		if flags&defaultAddrIdx != 0 {
			addrAt(parts, int(u.uvarint()), &x.addr, &x.region)
		} else {
			u.remittance(&x.addr, &x.region)
		}
		d.DefaultRemittanceAddress = &x.addr
	}
	if flags&hasBank != 0 {
		b := &x.bank
		b.ID = u.id()
		b.Country = u.str()
		b.BankName = u.text()
		b.AccountName = u.text()
		if u.byte() != 0 {
			u.address(&x.bankAddr, &x.bankRegion)
			b.Address = &x.bankAddr
		}
		b.AccountNumber = u.text()
		b.RoutingNumber = u.text()
		b.LocalAccountNumber = u.text()
		b.BankAccountType = supplier.BankAccountType(u.str())
		b.DepositFormat = supplier.DepositFormat(u.str())
		d.BankAccount = b
	}
	if flags&hasEmails != 0 {
		e := &x.emails
		for _, t := range [...]*supplier.Text{&e.DefaultEmailAddress, &e.RemittanceEmailAddress, &e.OrdersEmailAddress,
			&e.InvoicingEmailAddress, &e.RfqsEmailAddress, &e.BidRequestsEmailAddress,
			&e.IntegrationEmailAddress, &e.CustomerCommentsEmailAddress} {
			*t = u.text()
		}
		d.Emails = e
	}
	if flags&hasSettings != 0 {
		s := &x.settings
		if u.byte() != 0 {
			t := &x.term
			t.ID = u.id()
			t.Code = u.str()
			t.Active = u.byte() != 0
			if u.byte() != 0 {
				x.days = int(u.varint())
				t.Days = &x.days
			}
			t.TermType = supplier.TermType(u.str())
			t.Description = u.text()
			s.PaymentTerm = t
		}
		if n := int(u.uvarint()); n > 0 {
			x.groups = room(x.groups, n-1)
			s.BuyerGroups = x.groups
			for i := range s.BuyerGroups {
				s.BuyerGroups[i] = supplier.BuyerGroup{ID: u.id(), Name: u.str()}
			}
		}
		if n := int(u.uvarint()); n > 0 {
			x.tags = room(x.tags, n-1)
			s.Tags = x.tags
			for i := range s.Tags {
				s.Tags[i] = supplier.Tag{ID: u.id(), Name: u.str()}
			}
		}
		d.Settings = s
	}
}

// room returns s with length n when it has room for n, a new slice
// otherwise: never nil (an empty list is stored apart from none).
func room[T any](s []T, n int) []T {
	if s == nil || cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// touchRecord loads a byte of each cache line of a record's parts, and
// the first byte of each text of its summary, before they are read. A
// supplier read at random finds none of them in the CPU's caches; these
// loads do not depend on one another, so the processor issues them
// together and their misses overlap, where the decoder, reading on from
// each length it reads, and then the encoder, reading the summary's
// texts, would wait for one miss after another (bench/README.md, session
// 15).
func touchRecord(sum *supplier.Summary, parts string) {
	var x byte
	for i := 0; i < len(parts); i += 64 {
		x += parts[i]
	}
	if len(parts) > 0 {
		x += parts[len(parts)-1] // the last line, when parts does not start one
	}
	forSummaryTexts(sum, func(t *supplier.Text) { x += t.String()[0] })
	runtime.KeepAlive(x)
}

// numContacts and numAddrs are the lengths of the two lists.
func numContacts(parts string) int { return u32At(parts, u32At(parts, 0)) }
func numAddrs(parts string) int    { return u32At(parts, u32At(parts, 4)) }

// contactOff and addrOff are the offsets in parts of the i-th contact and
// address (their lists' tables follow their lengths).
func contactOff(parts string, i int) int { return u32At(parts, u32At(parts, 0)+4+4*i) }
func addrOff(parts string, i int) int    { return u32At(parts, u32At(parts, 4)+4+4*i) }

// contactAt reads the i-th contact (name order) into c, its phone into ph.
func contactAt(parts string, i int, c *supplier.Contact, ph *supplier.Phone) {
	u := unpacker{s: parts, i: contactOff(parts, i)}
	u.contact(c, ph)
}

// addrAt reads the i-th address (companyName order) into a, its region
// into rg.
func addrAt(parts string, i int, a *supplier.RemittanceAddress, rg *supplier.Region) {
	u := unpacker{s: parts, i: addrOff(parts, i)}
	u.remittance(a, rg)
}

// addrModified is the modifiedDate of the i-th address (companyName
// order), in microseconds.
func addrModified(parts string, i int) int64 {
	u := unpacker{s: parts, i: addrOff(parts, i)}
	return u.time().UnixMicro()
}

// contactModified is the modifiedDate of the i-th contact, in
// microseconds.
func contactModified(parts string, i int) int64 {
	u := unpacker{s: parts, i: contactOff(parts, i)}
	return u.time().UnixMicro()
}

// addrOrderAt is the index (companyName order) of the i-th address in
// the given order.
func addrOrderAt(parts string, order, i int) int {
	at := u32At(parts, 4)
	k := u32At(parts, at)
	if order == addrByName || k < 2 {
		return i
	}
	return u32At(parts, at+4+4*k+4*((order-1)*k+i))
}

// contactsOf returns the contacts lo to hi (name order), in slices of
// their own.
func contactsOf(parts string, lo, hi int) []supplier.Contact {
	if hi <= lo {
		return nil
	}
	out := make([]supplier.Contact, hi-lo)
	phones := make([]supplier.Phone, hi-lo)
	for i := range out {
		contactAt(parts, lo+i, &out[i], &phones[i])
	}
	return out
}

// addrsOf returns the addresses of the indexes idx (companyName order),
// in slices of their own.
func addrsOf(parts string, idx []int) []supplier.RemittanceAddress {
	if len(idx) == 0 {
		return nil
	}
	out := make([]supplier.RemittanceAddress, len(idx))
	regions := make([]supplier.Region, len(idx))
	for i, j := range idx {
		addrAt(parts, j, &out[i], &regions[i])
	}
	return out
}

// partsMaxModified is the latest modifiedDate of the parts' contacts and
// addresses, the default ones included, in microseconds (math.MinInt64
// when there are none).
func partsMaxModified(parts string) int64 {
	m := int64(math.MinInt64)
	u := unpacker{s: parts, i: 8}
	flags := u.byte()
	if flags&hasDefaultContact != 0 {
		if flags&defaultContactIdx != 0 {
			u.uvarint() // one of the list's, read below
		} else {
			var c supplier.Contact
			var ph supplier.Phone
			u.contact(&c, &ph)
			m = max(m, c.ModifiedDate.UnixMicro())
		}
	}
	if flags&hasDefaultAddr != 0 && flags&defaultAddrIdx == 0 {
		m = max(m, u.time().UnixMicro()) // an address starts with its modifiedDate
	}
	for i := range numContacts(parts) {
		m = max(m, contactModified(parts, i))
	}
	for i := range numAddrs(parts) {
		m = max(m, addrModified(parts, i))
	}
	return m
}
