package datafile

import (
	"encoding/json"
	"strconv"
	"time"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"

	"github.com/google/uuid"

	"github.com/procurekit/procure/supplier"
)

// decodeRecord decodes one supplier object into r as json.Unmarshal would,
// without its reflection and double scan. It handles the shape data files
// hold: the record's own keys, spelled exactly; strings without escapes;
// integers for days. On anything else (an escape, an unknown or repeated
// key, a syntax error, a value of the wrong type) it answers false, and the
// caller decodes the bytes again with json.Unmarshal into a fresh record,
// which stays the definition of the result and words the error. A test
// holds the two to the same result on generated and mutated records.
//
// Why it exists: encoding/json's reflection and double scan are most of
// the cost of reading a large file, and the 1,000,000-supplier startup has
// a target that it would miss with them (BenchmarkDecodeSupplier, beside
// it, and the startup figures in bench/README.md). encoding/json/v2
// (BenchmarkDecodeSupplierJSONv2, GOEXPERIMENT=jsonv2) is the candidate to
// replace it once it is part of Go without an experiment flag.
// TestDecodeRecordKnowsEveryField fails when a supplier type gains a field
// this decoder does not know (the field would send every record to the
// slow path).
func decodeRecord(raw []byte, r *supplier.Record, m *memo) bool {
	return decodeWhole(raw, r, m, (*fastDecoder).record)
}

// decodeWhole fills *v from raw with fill, one of the fast decoder's
// object methods, and reports whether raw was that object and nothing
// more.
func decodeWhole[T any](raw []byte, v *T, m *memo, fill func(*fastDecoder, *T) bool) bool {
	d := fastDecoder{b: raw, m: m}
	if !fill(&d, v) {
		return false
	}
	d.ws()
	return d.i == len(d.b)
}

// decodeWith decodes raw into *v, which it overwrites, with fill on the
// fast path (decodeWhole), else with json.Unmarshal into a fresh value.
func decodeWith[T any](raw []byte, v *T, m *memo, fill func(*fastDecoder, *T) bool) error {
	var zero T
	*v = zero
	if decodeWhole(raw, v, m, fill) {
		return nil
	}
	*v = zero
	return json.Unmarshal(raw, v)
}

type fastDecoder struct {
	b []byte
	i int
	m *memo
	// scratch holds the last string str decoded from escapes.
	scratch []byte
}

// memo is what one decoding goroutine keeps from record to record: one
// copy of each value that repeats across suppliers (cities, countries,
// bank names, tags, keywords, ...), and a block that the other strings
// are allocated from, many at a time, instead of one allocation each.
// It is not safe for concurrent use.
type memo struct {
	shared map[string]string
	block  []byte
}

func newMemo() *memo { return &memo{shared: make(map[string]string)} }

// The bounds of a memo: past maxShared values, new values are not
// remembered; blocks are blockSize bytes, and a string longer than
// blockSize/8 gets its own allocation.
const (
	maxShared = 1 << 16
	blockSize = 32 << 10
)

// own returns s as a string in the memo's current block. The block's
// bytes are never written again once handed out, so the string is as
// immutable as any other.
func (m *memo) own(s []byte) string {
	if len(s) == 0 {
		return ""
	}
	if m == nil || len(s) > blockSize/8 {
		return string(s)
	}
	if len(s) > cap(m.block)-len(m.block) {
		m.block = make([]byte, 0, blockSize)
	}
	off := len(m.block)
	m.block = append(m.block, s...)
	return unsafe.String(&m.block[off], len(s))
}

// share returns the memo's copy of s, a value that repeats.
func (m *memo) share(s []byte) string {
	if m == nil {
		return string(s)
	}
	if v, ok := m.shared[string(s)]; ok {
		return v
	}
	v := string(s)
	if len(m.shared) < maxShared {
		m.shared[v] = v
	}
	return v
}

func (d *fastDecoder) ws() {
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

// peek skips white space and returns the next byte (0 at the end).
func (d *fastDecoder) peek() byte {
	d.ws()
	if d.i < len(d.b) {
		return d.b[d.i]
	}
	return 0
}

// literal consumes the literal word, if it comes next.
func (d *fastDecoder) literal(word string) bool {
	if d.peek() != word[0] || len(d.b)-d.i < len(word) || string(d.b[d.i:d.i+len(word)]) != word {
		return false
	}
	d.i += len(word)
	return true
}

// str reads a string value as its bytes (valid UTF-8): the input's own
// when the string has no escape, else the decoder's scratch buffer, which
// the next str overwrites (every caller copies or parses the bytes at
// once). Escapes are decoded as encoding/json decodes them; data files
// have them wherever a text holds '&', '<' or '>' (encoding/json writes
// those as \u0026, \u003c and \u003e), 16% of a generated file's
// suppliers. A lone surrogate (which encoding/json turns into U+FFFD),
// invalid UTF-8 or a control character answers false.
func (d *fastDecoder) str() ([]byte, bool) {
	return d.scan(true)
}

// key reads an object's key: a string without escapes (a key with one
// goes to encoding/json, which also matches keys without regard to case).
func (d *fastDecoder) key() ([]byte, bool) {
	return d.scan(false)
}

func (d *fastDecoder) scan(escapes bool) ([]byte, bool) {
	if d.peek() != '"' {
		return nil, false
	}
	start := d.i + 1
	ascii := true
	for j := start; j < len(d.b); j++ {
		c := d.b[j]
		switch {
		case c == '"':
			s := d.b[start:j]
			if !ascii && !utf8.Valid(s) {
				return nil, false
			}
			d.i = j + 1
			return s, true
		case c == '\\':
			if !escapes {
				return nil, false
			}
			return d.unescape(start, j)
		case c < 0x20:
			return nil, false
		case c >= 0x80:
			ascii = false
		}
	}
	return nil, false
}

// unescape decodes the string that begins at start and has its first
// escape at j into d.scratch.
func (d *fastDecoder) unescape(start, j int) ([]byte, bool) {
	out := append(d.scratch[:0], d.b[start:j]...)
	for j < len(d.b) {
		c := d.b[j]
		switch {
		case c == '"':
			if !utf8.Valid(out) {
				return nil, false
			}
			d.scratch = out
			d.i = j + 1
			return out, true
		case c < 0x20:
			return nil, false
		case c != '\\':
			out = append(out, c)
			j++
			continue
		}
		if j+1 >= len(d.b) {
			return nil, false
		}
		switch e := d.b[j+1]; e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, ok := hex4(d.b[j+2:])
			if !ok {
				return nil, false
			}
			if utf16.IsSurrogate(r) {
				// Only a high surrogate followed by a low one is a rune.
				if len(d.b) < j+12 || d.b[j+6] != '\\' || d.b[j+7] != 'u' {
					return nil, false
				}
				r2, ok := hex4(d.b[j+8:])
				if !ok {
					return nil, false
				}
				if r = utf16.DecodeRune(r, r2); r == utf8.RuneError {
					return nil, false
				}
				j += 6
			}
			out = utf8.AppendRune(out, r)
			j += 4
		default:
			return nil, false
		}
		j += 2
	}
	return nil, false
}

// hex4 decodes the four hexadecimal digits b begins with.
func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// object reads an object, calling field at each key's value; field answers
// false for a key it does not take or a value it cannot decode.
func (d *fastDecoder) object(field func(key []byte) bool) bool {
	if d.peek() != '{' {
		return false
	}
	d.i++
	if d.peek() == '}' {
		d.i++
		return true
	}
	for {
		key, ok := d.key()
		if !ok || d.peek() != ':' {
			return false
		}
		d.i++
		if !field(key) {
			return false
		}
		switch d.peek() {
		case ',':
			d.i++
		case '}':
			d.i++
			return true
		default:
			return false
		}
	}
}

// array reads an array (not null), calling elem at each element.
func (d *fastDecoder) array(elem func() bool) bool {
	if d.peek() != '[' {
		return false
	}
	d.i++
	if d.peek() == ']' {
		d.i++
		return true
	}
	for {
		if !elem() {
			return false
		}
		switch d.peek() {
		case ',':
			d.i++
		case ']':
			d.i++
			return true
		default:
			return false
		}
	}
}

// text decodes a string field; null leaves it as it is (encoding/json).
func (d *fastDecoder) text(p *string) bool {
	if d.literal("null") {
		return true
	}
	s, ok := d.str()
	if ok {
		*p = d.m.own(s)
	}
	return ok
}

// common is text for a field whose values repeat across suppliers.
func (d *fastDecoder) common(p *string) bool {
	if d.literal("null") {
		return true
	}
	s, ok := d.str()
	if ok {
		*p = d.m.share(s)
	}
	return ok
}

// opt decodes an optional text field: null leaves it as it is, as
// supplier.Text's UnmarshalJSON does; "" is the empty string.
func (d *fastDecoder) opt(p *supplier.Text) bool {
	if d.literal("null") {
		return true
	}
	s, ok := d.str()
	if ok {
		*p = supplier.NewText(d.m.own(s))
	}
	return ok
}

// optCommon is opt for a field whose values repeat across suppliers.
func (d *fastDecoder) optCommon(p *supplier.Text) bool {
	if d.literal("null") {
		return true
	}
	s, ok := d.str()
	if ok {
		*p = supplier.NewText(d.m.share(s))
	}
	return ok
}

func (d *fastDecoder) boolean(p *bool) bool {
	switch {
	case d.literal("true"):
		*p = true
	case d.literal("false"):
		*p = false
	default:
		return d.literal("null")
	}
	return true
}

// date decodes a date-time with time.Time's own UnmarshalJSON.
func (d *fastDecoder) date(p *time.Time) bool {
	if d.literal("null") {
		return true
	}
	start := d.i
	if _, ok := d.str(); !ok {
		return false
	}
	return p.UnmarshalJSON(d.b[start:d.i]) == nil
}

func (d *fastDecoder) datePtr(p **time.Time) bool {
	if d.literal("null") {
		*p = nil
		return true
	}
	if *p != nil {
		return false // a repeated key: leave merging to encoding/json
	}
	t := new(time.Time)
	if !d.date(t) {
		return false
	}
	*p = t
	return true
}

// id decodes a UUID with its own UnmarshalText, as encoding/json does.
func (d *fastDecoder) id(p *uuid.UUID) bool {
	s, ok := d.str()
	return ok && p.UnmarshalText(s) == nil
}

// enum decodes a value of an enum: one of its values, shared with the
// package's constants, or null for none.
func enum[T ~string](d *fastDecoder, p *T, allowed []string) bool {
	if d.literal("null") {
		*p = ""
		return true
	}
	s, ok := d.str()
	if !ok {
		return false
	}
	for _, a := range allowed {
		if string(s) == a {
			*p = T(a)
			return true
		}
	}
	return false
}

// ptr decodes a nullable object into a new T with fill.
func ptr[T any](d *fastDecoder, p **T, fill func(*T) bool) bool {
	if d.literal("null") {
		*p = nil
		return true
	}
	if *p != nil {
		return false // a repeated key: leave merging to encoding/json
	}
	v := new(T)
	if !fill(v) {
		return false
	}
	*p = v
	return true
}

// list decodes a nullable array of T with fill; [] is an empty, non-nil
// slice, as encoding/json makes it.
func list[T any](d *fastDecoder, p *[]T, fill func(*T) bool) bool {
	if d.literal("null") {
		*p = nil
		return true
	}
	if *p != nil {
		return false // a repeated key
	}
	out := []T{}
	ok := d.array(func() bool {
		var v T
		if !fill(&v) {
			return false
		}
		out = append(out, v)
		return true
	})
	if !ok {
		return false
	}
	*p = out
	return true
}

// record decodes a supplier object into r.
func (d *fastDecoder) record(r *supplier.Record) bool { return d.object(d.recordField(r)) }

func (d *fastDecoder) recordField(r *supplier.Record) func(key []byte) bool {
	return func(key []byte) bool {
		if d.summaryField(&r.Summary, key) {
			return true
		}
		switch string(key) {
		case "defaultContact":
			return ptr(d, &r.DefaultContact, d.contact)
		case "defaultRemittanceAddress":
			return ptr(d, &r.DefaultRemittanceAddress, d.remittance)
		case "bankAccount":
			return ptr(d, &r.BankAccount, d.bankAccount)
		case "emails":
			return ptr(d, &r.Emails, d.emails)
		case "settings":
			return ptr(d, &r.Settings, d.settings)
		case "keywords":
			return list(d, &r.Keywords, d.common)
		case "contacts":
			return list(d, &r.Contacts, d.contact)
		case "remittanceAddresses":
			return list(d, &r.RemittanceAddresses, d.remittance)
		}
		return false
	}
}

// summaryField decodes key into s, if it is one of s's keys; false for
// another key or a value it cannot decode (the record is then decoded
// again by encoding/json, so either way is safe).
func (d *fastDecoder) summaryField(s *supplier.Summary, key []byte) bool {
	switch string(key) {
	case "id":
		return d.id(&s.ID)
	case "communitySupplierId":
		return d.opt(&s.CommunitySupplierID)
	case "supplierId":
		return d.opt(&s.SupplierID)
	case "name":
		return d.opt(&s.Name)
	case "profileType":
		return enum(d, &s.ProfileType, s.ProfileType.Allowed())
	case "legalBusinessName":
		return d.opt(&s.LegalBusinessName)
	case "firstName":
		return d.opt(&s.FirstName)
	case "lastName":
		return d.opt(&s.LastName)
	case "taxIdentificationType":
		return enum(d, &s.TaxIdentificationType, s.TaxIdentificationType.Allowed())
	case "taxIdentificationNumber":
		return d.opt(&s.TaxIdentificationNumber)
	case "tinVerificationStatus":
		return enum(d, &s.TinVerificationStatus, s.TinVerificationStatus.Allowed())
	case "tinLastVerifiedDate":
		return d.datePtr(&s.TinLastVerifiedDate)
	case "connectionState":
		return enum(d, &s.ConnectionState, s.ConnectionState.Allowed())
	case "businessNumber":
		return d.opt(&s.BusinessNumber)
	case "defaultEmailAddress":
		return d.opt(&s.DefaultEmailAddress)
	case "modifiedDate":
		return d.date(&s.ModifiedDate)
	case "createdDate":
		return d.date(&s.CreatedDate)
	}
	return false
}

func (d *fastDecoder) contact(c *supplier.Contact) bool {
	return d.object(func(key []byte) bool {
		switch string(key) {
		case "id":
			return d.id(&c.ID)
		case "name":
			return d.text(&c.Name)
		case "phone":
			return ptr(d, &c.Phone, d.phone)
		case "email":
			return d.opt(&c.Email)
		case "managedBy":
			return enum(d, &c.ManagedBy, c.ManagedBy.Allowed())
		case "modifiedDate":
			return d.date(&c.ModifiedDate)
		case "createdDate":
			return d.date(&c.CreatedDate)
		}
		return false
	})
}

func (d *fastDecoder) phone(p *supplier.Phone) bool {
	return d.object(func(key []byte) bool {
		switch string(key) {
		case "prefix":
			return d.optCommon(&p.Prefix)
		case "number":
			return d.opt(&p.Number)
		case "extension":
			return d.opt(&p.Extension)
		}
		return false
	})
}

func (d *fastDecoder) remittance(a *supplier.RemittanceAddress) bool {
	return d.object(func(key []byte) bool {
		switch string(key) {
		case "id":
			return d.id(&a.ID)
		case "code":
			return d.optCommon(&a.Code)
		case "companyName":
			return d.opt(&a.CompanyName)
		case "address":
			// encoding/json leaves a struct alone on null.
			return d.literal("null") || d.address(&a.Address)
		case "managedBy":
			return enum(d, &a.ManagedBy, a.ManagedBy.Allowed())
		case "modifiedDate":
			return d.date(&a.ModifiedDate)
		case "createdDate":
			return d.date(&a.CreatedDate)
		}
		return false
	})
}

func (d *fastDecoder) address(a *supplier.Address) bool {
	if *a != (supplier.Address{}) {
		return false // a repeated key: leave merging to encoding/json
	}
	return d.object(func(key []byte) bool {
		switch string(key) {
		case "line1":
			return d.text(&a.Line1)
		case "line2":
			return d.opt(&a.Line2)
		case "line3":
			return d.opt(&a.Line3)
		case "city":
			return d.common(&a.City)
		case "region":
			return ptr(d, &a.Region, d.region)
		case "postcode":
			return d.optCommon(&a.Postcode)
		case "country":
			return d.common(&a.Country)
		}
		return false
	})
}

func (d *fastDecoder) region(r *supplier.Region) bool {
	return d.object(func(key []byte) bool {
		switch string(key) {
		case "name":
			return d.optCommon(&r.Name)
		case "code":
			return d.optCommon(&r.Code)
		}
		return false
	})
}

func (d *fastDecoder) bankAccount(b *supplier.BankAccount) bool {
	return d.object(func(key []byte) bool {
		switch string(key) {
		case "id":
			return d.id(&b.ID)
		case "country":
			return d.common(&b.Country)
		case "bankName":
			return d.optCommon(&b.BankName)
		case "accountName":
			return d.opt(&b.AccountName)
		case "address":
			return ptr(d, &b.Address, d.address)
		case "accountNumber":
			return d.opt(&b.AccountNumber)
		case "routingNumber":
			return d.opt(&b.RoutingNumber)
		case "localAccountNumber":
			return d.opt(&b.LocalAccountNumber)
		case "bankAccountType":
			return enum(d, &b.BankAccountType, b.BankAccountType.Allowed())
		case "depositFormat":
			return enum(d, &b.DepositFormat, b.DepositFormat.Allowed())
		}
		return false
	})
}

func (d *fastDecoder) emails(e *supplier.Emails) bool {
	return d.object(func(key []byte) bool {
		switch string(key) {
		case "defaultEmailAddress":
			return d.opt(&e.DefaultEmailAddress)
		case "remittanceEmailAddress":
			return d.opt(&e.RemittanceEmailAddress)
		case "ordersEmailAddress":
			return d.opt(&e.OrdersEmailAddress)
		case "invoicingEmailAddress":
			return d.opt(&e.InvoicingEmailAddress)
		case "rfqsEmailAddress":
			return d.opt(&e.RfqsEmailAddress)
		case "bidRequestsEmailAddress":
			return d.opt(&e.BidRequestsEmailAddress)
		case "integrationEmailAddress":
			return d.opt(&e.IntegrationEmailAddress)
		case "customerCommentsEmailAddress":
			return d.opt(&e.CustomerCommentsEmailAddress)
		}
		return false
	})
}

func (d *fastDecoder) settings(s *supplier.Settings) bool {
	return d.object(func(key []byte) bool {
		switch string(key) {
		case "paymentTerm":
			return ptr(d, &s.PaymentTerm, d.paymentTerm)
		case "buyerGroups":
			return list(d, &s.BuyerGroups, func(g *supplier.BuyerGroup) bool { return d.named(&g.ID, &g.Name) })
		case "tags":
			return list(d, &s.Tags, func(t *supplier.Tag) bool { return d.named(&t.ID, &t.Name) })
		}
		return false
	})
}

// named decodes a buyer group or a tag.
func (d *fastDecoder) named(id *uuid.UUID, name *string) bool {
	return d.object(func(key []byte) bool {
		switch string(key) {
		case "id":
			return d.id(id)
		case "name":
			return d.common(name)
		}
		return false
	})
}

func (d *fastDecoder) paymentTerm(p *supplier.PaymentTerm) bool {
	return d.object(func(key []byte) bool {
		switch string(key) {
		case "id":
			return d.id(&p.ID)
		case "code":
			return d.common(&p.Code)
		case "active":
			return d.boolean(&p.Active)
		case "days":
			return d.days(&p.Days)
		case "termType":
			return enum(d, &p.TermType, p.TermType.Allowed())
		case "description":
			return d.optCommon(&p.Description)
		}
		return false
	})
}

// days decodes a nullable integer written as digits.
func (d *fastDecoder) days(p **int) bool {
	if d.literal("null") {
		*p = nil
		return true
	}
	d.ws()
	start := d.i
	if d.i < len(d.b) && d.b[d.i] == '-' {
		d.i++
	}
	digits := d.i
	for d.i < len(d.b) && d.b[d.i] >= '0' && d.b[d.i] <= '9' {
		d.i++
	}
	if d.i == digits || d.b[digits] == '0' && d.i-digits > 1 {
		return false
	}
	if d.i < len(d.b) {
		switch d.b[d.i] {
		case '.', 'e', 'E':
			return false
		}
	}
	n, err := strconv.Atoi(string(d.b[start:d.i]))
	if err != nil || *p != nil {
		return false
	}
	*p = &n
	return true
}

// decodeSupplier decodes a raw supplier object into r, which it
// overwrites: the fast path, else encoding/json.
func decodeSupplier(raw []byte, r *supplier.Record, m *memo) error {
	return decodeWith(raw, r, m, (*fastDecoder).record)
}
