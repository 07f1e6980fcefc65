package supplierjson

import (
	"errors"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/procurekit/procure/httpapi/internal/httpx"
	"github.com/procurekit/procure/internal/jsontext"
	"github.com/procurekit/procure/paging"
	"github.com/procurekit/procure/supplier"
)

// The 200 responses of the supplier API are encoded by hand, appending to a
// pooled buffer: the lists are the hot path of the API, and encoding/json
// spends most of a list request in reflection and in re-validating what
// time.Time and uuid.UUID marshal. The output is byte for byte what
// encoding/json.Marshal gives for the same value (field order, omitempty,
// string escaping including HTML characters and invalid UTF-8, RFC 3339
// times), plus the trailing newline httpx.WriteJSON adds; a test compares the
// two on randomly filled values of every type, so a field added to a
// supplier type without being added here fails the build's tests.
//
// Why it exists (BenchmarkEncodeSummaryPage and, with GOEXPERIMENT=jsonv2,
// BenchmarkEncodeSummaryPageJSONv2; figures in bench/README.md): a page of
// summaries costs several times less here, and allocates nothing, than
// with encoding/json or encoding/json/v2 (the engine of
// github.com/go-json-experiment/json) set to the same bytes. A summary or
// detail encoded before and unchanged is copied from Memo instead
// (encmemo.go), which compares them with supplier.Summary.Equal and
// supplier.Detail.Equal; what the memo has not seen (a client paging or
// reading at random: the suppliers package's BenchmarkRandomAccess) is
// encoded here, and so is kept appendUTC, the hand RFC 3339 writer.

// encBuf is a pooled output buffer.
type encBuf struct{ b []byte }

var encPool = sync.Pool{New: func() any { return &encBuf{b: make([]byte, 0, 16<<10)} }}

// maxPooled is the largest buffer put back in the pool, so that one huge
// response does not pin its memory.
const maxPooled = 1 << 20

var (
	// errTimeRange is what time.Time.MarshalJSON refuses: a year outside
	// [0, 9999] has no RFC 3339 form.
	errTimeRange = errors.New("time: year outside of range [0,9999]")
	errZoneRange = errors.New("time: timezone hour outside of range [0,23]")
)

// writeEncoded sends b, the encoding of a 200 response built in buf, or
// returns err (a date that RFC 3339 cannot carry) having written nothing,
// so that the caller answers with the error instead. It puts buf back in
// the pool. The encoders are called directly by the write functions below,
// not through a function value, so that the value being encoded does not
// escape to the heap.
func writeEncoded(w http.ResponseWriter, buf *encBuf, b []byte, err error) error {
	if err == nil {
		b = append(b, '\n')
		h := w.Header()
		h["Content-Type"] = httpx.HdrJSON
		h["Content-Length"] = httpx.ContentLength(len(b))
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(b) // the client has gone; nothing to do
	}
	if cap(b) <= maxPooled {
		buf.b = b
		encPool.Put(buf)
	}
	return err
}

// WriteSummaryPage writes p, its summaries from m when m holds them (nil:
// encode them all).
func WriteSummaryPage(w http.ResponseWriter, p *paging.Page[supplier.Summary], m *Memo[supplier.Summary]) error {
	buf := encPool.Get().(*encBuf)
	item := appendSummary
	if m != nil {
		item = func(b []byte, s *supplier.Summary) ([]byte, error) { return appendSummaryMemo(m, b, s) }
	}
	b, err := appendPage(buf.b[:0], p, item)
	return writeEncoded(w, buf, b, err)
}

// WriteDetail writes d, from m when m holds it (nil: encode it).
func WriteDetail(w http.ResponseWriter, d *supplier.Detail, m *Memo[supplier.Detail]) error {
	buf := encPool.Get().(*encBuf)
	var b []byte
	var err error
	if m != nil {
		b, err = appendDetailMemo(m, buf.b[:0], d)
	} else {
		b, err = appendDetail(buf.b[:0], d)
	}
	return writeEncoded(w, buf, b, err)
}

// WriteContact writes c.
func WriteContact(w http.ResponseWriter, c *supplier.Contact) error {
	buf := encPool.Get().(*encBuf)
	b, err := appendContact(buf.b[:0], c)
	return writeEncoded(w, buf, b, err)
}

// WriteAddress writes a.
func WriteAddress(w http.ResponseWriter, a *supplier.RemittanceAddress) error {
	buf := encPool.Get().(*encBuf)
	b, err := appendRemittanceAddress(buf.b[:0], a)
	return writeEncoded(w, buf, b, err)
}

// WriteContactPage writes p.
func WriteContactPage(w http.ResponseWriter, p *paging.Page[supplier.Contact]) error {
	buf := encPool.Get().(*encBuf)
	b, err := appendContactPage(buf.b[:0], p)
	return writeEncoded(w, buf, b, err)
}

// WriteAddressPage writes p.
func WriteAddressPage(w http.ResponseWriter, p *paging.Page[supplier.RemittanceAddress]) error {
	buf := encPool.Get().(*encBuf)
	b, err := appendAddressPage(buf.b[:0], p)
	return writeEncoded(w, buf, b, err)
}

func appendSummaryPage(b []byte, p *paging.Page[supplier.Summary]) ([]byte, error) {
	return appendPage(b, p, appendSummary)
}

func appendContactPage(b []byte, p *paging.Page[supplier.Contact]) ([]byte, error) {
	return appendPage(b, p, appendContact)
}

func appendAddressPage(b []byte, p *paging.Page[supplier.RemittanceAddress]) ([]byte, error) {
	return appendPage(b, p, appendRemittanceAddress)
}

// appendPage appends the page wrapper. Content is always an array: a store
// that returns a nil slice still gives "content":[] (docs: paging.md "Page object": content is
// required), where encoding/json would write null.
func appendPage[T any](b []byte, p *paging.Page[T], item func([]byte, *T) ([]byte, error)) ([]byte, error) {
	var err error
	b = append(b, `{"content":[`...)
	for i := range p.Content {
		if i > 0 {
			b = append(b, ',')
		}
		if b, err = item(b, &p.Content[i]); err != nil {
			return b, err
		}
	}
	b = append(b, `],"page":{"size":`...)
	b = strconv.AppendInt(b, int64(p.Page.Size), 10)
	b = append(b, `,"number":`...)
	b = strconv.AppendInt(b, int64(p.Page.Number), 10)
	b = append(b, `,"totalElements":`...)
	b = strconv.AppendInt(b, int64(p.Page.TotalElements), 10)
	b = append(b, `,"totalPages":`...)
	b = strconv.AppendInt(b, int64(p.Page.TotalPages), 10)
	return append(b, "}}"...), nil
}

// appendSummaryFields appends the members of s without the braces.
func appendSummaryFields(b []byte, s *supplier.Summary) ([]byte, error) {
	var err error
	b = append(b, `"id":`...)
	b = appendUUID(b, s.ID)
	b = optText(b, `,"communitySupplierId":`, s.CommunitySupplierID)
	b = optText(b, `,"supplierId":`, s.SupplierID)
	b = optText(b, `,"name":`, s.Name)
	b = append(b, `,"profileType":`...)
	b = jsontext.AppendString(b, string(s.ProfileType))
	b = optText(b, `,"legalBusinessName":`, s.LegalBusinessName)
	b = optText(b, `,"firstName":`, s.FirstName)
	b = optText(b, `,"lastName":`, s.LastName)
	b = jsontext.AppendNonEmpty(b, `,"taxIdentificationType":`, string(s.TaxIdentificationType))
	b = optText(b, `,"taxIdentificationNumber":`, s.TaxIdentificationNumber)
	b = jsontext.AppendNonEmpty(b, `,"tinVerificationStatus":`, string(s.TinVerificationStatus))
	if s.TinLastVerifiedDate != nil {
		b = append(b, `,"tinLastVerifiedDate":`...)
		if b, err = appendTime(b, *s.TinLastVerifiedDate); err != nil {
			return b, err
		}
	}
	b = jsontext.AppendNonEmpty(b, `,"connectionState":`, string(s.ConnectionState))
	b = optText(b, `,"businessNumber":`, s.BusinessNumber)
	b = optText(b, `,"defaultEmailAddress":`, s.DefaultEmailAddress)
	b = append(b, `,"modifiedDate":`...)
	if b, err = appendTime(b, s.ModifiedDate); err != nil {
		return b, err
	}
	b = append(b, `,"createdDate":`...)
	return appendTime(b, s.CreatedDate)
}

func appendSummary(b []byte, s *supplier.Summary) ([]byte, error) {
	b = append(b, '{')
	b, err := appendSummaryFields(b, s)
	return append(b, '}'), err
}

func appendDetail(b []byte, d *supplier.Detail) ([]byte, error) {
	touch(d)
	b = append(b, '{')
	b, err := appendSummaryFields(b, &d.Summary)
	if err != nil {
		return b, err
	}
	if d.DefaultContact != nil {
		b = append(b, `,"defaultContact":`...)
		if b, err = appendContact(b, d.DefaultContact); err != nil {
			return b, err
		}
	}
	if d.DefaultRemittanceAddress != nil {
		b = append(b, `,"defaultRemittanceAddress":`...)
		if b, err = appendRemittanceAddress(b, d.DefaultRemittanceAddress); err != nil {
			return b, err
		}
	}
	if d.BankAccount != nil {
		b = append(b, `,"bankAccount":`...)
		b = appendBankAccount(b, d.BankAccount)
	}
	if d.Emails != nil {
		b = append(b, `,"emails":`...)
		b = appendEmails(b, d.Emails)
	}
	if d.Settings != nil {
		b = append(b, `,"settings":`...)
		b = appendSettings(b, d.Settings)
	}
	return append(b, '}'), nil
}

func appendContact(b []byte, c *supplier.Contact) ([]byte, error) {
	var err error
	b = append(b, `{"id":`...)
	b = appendUUID(b, c.ID)
	b = append(b, `,"name":`...)
	b = jsontext.AppendString(b, c.Name)
	if p := c.Phone; p != nil {
		b = append(b, `,"phone":{`...)
		b = optMembers(b, member{`"prefix":`, p.Prefix}, member{`"number":`, p.Number}, member{`"extension":`, p.Extension})
		b = append(b, '}')
	}
	b = optText(b, `,"email":`, c.Email)
	b = jsontext.AppendNonEmpty(b, `,"managedBy":`, string(c.ManagedBy))
	b = append(b, `,"modifiedDate":`...)
	if b, err = appendTime(b, c.ModifiedDate); err != nil {
		return b, err
	}
	b = append(b, `,"createdDate":`...)
	if b, err = appendTime(b, c.CreatedDate); err != nil {
		return b, err
	}
	return append(b, '}'), nil
}

func appendRemittanceAddress(b []byte, a *supplier.RemittanceAddress) ([]byte, error) {
	var err error
	b = append(b, `{"id":`...)
	b = appendUUID(b, a.ID)
	b = optText(b, `,"code":`, a.Code)
	b = optText(b, `,"companyName":`, a.CompanyName)
	b = append(b, `,"address":`...)
	b = appendAddress(b, &a.Address)
	b = jsontext.AppendNonEmpty(b, `,"managedBy":`, string(a.ManagedBy))
	b = append(b, `,"modifiedDate":`...)
	if b, err = appendTime(b, a.ModifiedDate); err != nil {
		return b, err
	}
	b = append(b, `,"createdDate":`...)
	if b, err = appendTime(b, a.CreatedDate); err != nil {
		return b, err
	}
	return append(b, '}'), nil
}

func appendAddress(b []byte, a *supplier.Address) []byte {
	b = append(b, `{"line1":`...)
	b = jsontext.AppendString(b, a.Line1)
	b = optText(b, `,"line2":`, a.Line2)
	b = optText(b, `,"line3":`, a.Line3)
	b = append(b, `,"city":`...)
	b = jsontext.AppendString(b, a.City)
	if r := a.Region; r != nil {
		b = append(b, `,"region":{`...)
		b = optMembers(b, member{`"name":`, r.Name}, member{`"code":`, r.Code})
		b = append(b, '}')
	}
	b = optText(b, `,"postcode":`, a.Postcode)
	b = append(b, `,"country":`...)
	b = jsontext.AppendString(b, a.Country)
	return append(b, '}')
}

func appendBankAccount(b []byte, a *supplier.BankAccount) []byte {
	b = append(b, `{"id":`...)
	b = appendUUID(b, a.ID)
	b = append(b, `,"country":`...)
	b = jsontext.AppendString(b, a.Country)
	b = optText(b, `,"bankName":`, a.BankName)
	b = optText(b, `,"accountName":`, a.AccountName)
	if a.Address != nil {
		b = append(b, `,"address":`...)
		b = appendAddress(b, a.Address)
	}
	b = optText(b, `,"accountNumber":`, a.AccountNumber)
	b = optText(b, `,"routingNumber":`, a.RoutingNumber)
	b = optText(b, `,"localAccountNumber":`, a.LocalAccountNumber)
	b = jsontext.AppendNonEmpty(b, `,"bankAccountType":`, string(a.BankAccountType))
	b = jsontext.AppendNonEmpty(b, `,"depositFormat":`, string(a.DepositFormat))
	return append(b, '}')
}

func appendEmails(b []byte, e *supplier.Emails) []byte {
	b = append(b, '{')
	b = optMembers(b,
		member{`"defaultEmailAddress":`, e.DefaultEmailAddress},
		member{`"remittanceEmailAddress":`, e.RemittanceEmailAddress},
		member{`"ordersEmailAddress":`, e.OrdersEmailAddress},
		member{`"invoicingEmailAddress":`, e.InvoicingEmailAddress},
		member{`"rfqsEmailAddress":`, e.RfqsEmailAddress},
		member{`"bidRequestsEmailAddress":`, e.BidRequestsEmailAddress},
		member{`"integrationEmailAddress":`, e.IntegrationEmailAddress},
		member{`"customerCommentsEmailAddress":`, e.CustomerCommentsEmailAddress},
	)
	return append(b, '}')
}

func appendSettings(b []byte, s *supplier.Settings) []byte {
	b = append(b, '{')
	sep := false
	if t := s.PaymentTerm; t != nil {
		b = append(b, `"paymentTerm":{"id":`...)
		b = appendUUID(b, t.ID)
		b = append(b, `,"code":`...)
		b = jsontext.AppendString(b, t.Code)
		b = append(b, `,"active":`...)
		b = strconv.AppendBool(b, t.Active)
		if t.Days != nil {
			b = append(b, `,"days":`...)
			b = strconv.AppendInt(b, int64(*t.Days), 10)
		}
		b = append(b, `,"termType":`...)
		b = jsontext.AppendString(b, string(t.TermType))
		b = optText(b, `,"description":`, t.Description)
		b = append(b, '}')
		sep = true
	}
	if len(s.BuyerGroups) > 0 {
		if sep {
			b = append(b, ',')
		}
		b = append(b, `"buyerGroups":[`...)
		for i := range s.BuyerGroups {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendIDName(b, s.BuyerGroups[i].ID, s.BuyerGroups[i].Name)
		}
		b = append(b, ']')
		sep = true
	}
	if len(s.Tags) > 0 {
		if sep {
			b = append(b, ',')
		}
		b = append(b, `"tags":[`...)
		for i := range s.Tags {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendIDName(b, s.Tags[i].ID, s.Tags[i].Name)
		}
		b = append(b, ']')
	}
	return append(b, '}')
}

func appendIDName(b []byte, id uuid.UUID, name string) []byte {
	b = append(b, `{"id":`...)
	b = appendUUID(b, id)
	b = append(b, `,"name":`...)
	b = jsontext.AppendString(b, name)
	return append(b, '}')
}

// optText appends key and v unless v has no value (omitzero). key is
// `,"name":`.
func optText(b []byte, key string, v supplier.Text) []byte {
	if v.IsZero() {
		return b
	}
	b = append(b, key...)
	return jsontext.AppendString(b, v.String())
}

// member is a member of an object whose members are all optional texts:
// its key (`"name":`, no comma) and value.
type member struct {
	key string
	v   supplier.Text
}

// optMembers appends the members that have a value, comma-separated.
func optMembers(b []byte, ms ...member) []byte {
	sep := false
	for _, m := range ms {
		if m.v.IsZero() {
			continue
		}
		if sep {
			b = append(b, ',')
		}
		b = append(b, m.key...)
		b = jsontext.AppendString(b, m.v.String())
		sep = true
	}
	return b
}

const hexDigits = "0123456789abcdef"

// appendUUID appends id in its canonical quoted form, as uuid.UUID's
// MarshalText gives it.
func appendUUID(b []byte, id uuid.UUID) []byte {
	var s [38]byte
	s[0], s[37] = '"', '"'
	j := 1
	for i, c := range id {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			s[j] = '-'
			j++
		}
		s[j], s[j+1] = hexDigits[c>>4], hexDigits[c&0x0f]
		j += 2
	}
	return append(b, s[:]...)
}

// appendTime appends t as time.Time's MarshalJSON does: quoted RFC 3339
// with nanoseconds as needed, and an error for a year outside [0, 9999].
func appendTime(b []byte, t time.Time) ([]byte, error) {
	if t.Location() == time.UTC {
		// Every time a store returns is UTC (docs: filters.md: times
		// in responses are UTC with a Z), so this is the path a request
		// takes; it writes the same bytes as AppendFormat(RFC3339Nano),
		// which spends most of its time interpreting the layout.
		if b, ok := appendUTC(b, t); ok {
			return b, nil
		}
	}
	if y := t.Year(); y < 0 || y > 9999 {
		return b, errTimeRange
	}
	if _, off := t.Zone(); off <= -24*3600 || off >= 24*3600 {
		// RFC 3339 offsets stop at 23:59; MarshalJSON refuses these too.
		return b, errZoneRange
	}
	b = append(b, '"')
	b = t.AppendFormat(b, time.RFC3339Nano)
	return append(b, '"'), nil
}

// twoDigits holds "00" to "99" in turn: put2's table.
const twoDigits = "00010203040506070809101112131415161718192021222324252627282930313233343536373839404142434445464748495051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899"

// put2 writes v (< 100) as two digits at s[0:2].
func put2(s []byte, v uint32) {
	s[0], s[1] = twoDigits[2*v], twoDigits[2*v+1]
}

// put3 writes v (< 1000) as three digits at s[0:3].
func put3(s []byte, v uint32) {
	s[0] = byte('0' + v/100)
	put2(s[1:], v%100)
}

// Unix seconds of 0000-01-01T00:00:00Z and of 10000-01-01T00:00:00Z: the
// range of years RFC 3339 can write.
const (
	minRFC3339Unix = -62167219200
	maxRFC3339Unix = 253402300800
)

// appendUTC appends t, a UTC time, quoted in RFC 3339 with the fraction of
// a second trimmed of trailing zeros, exactly as t.AppendFormat with
// time.RFC3339Nano writes it. It reports false, appending nothing, for a
// year outside [0, 9999].
func appendUTC(b []byte, t time.Time) ([]byte, bool) {
	sec := t.Unix()
	if sec < minRFC3339Unix || sec >= maxRFC3339Unix {
		return b, false
	}
	// Unsigned arithmetic throughout: divisions by constants then compile
	// to a multiply and a shift, without sign corrections.
	since := uint64(sec - minRFC3339Unix) // seconds since 0000-01-01
	days, rem := uint32(since/86400), uint32(since%86400)
	var y, m, d uint32
	if days < 31+29 {
		// January or February of year 0 (a leap year).
		y, m, d = 0, 1, days+1
		if d > 31 {
			m, d = 2, d-31
		}
	} else {
		// Days since 0000-03-01 (a year starting in March puts the leap
		// day last), then the civil date by 400-year eras (H. Hinnant's
		// days-to-civil algorithm).
		days -= 31 + 29
		era := days / 146097
		doe := days - era*146097                               // [0, 146096]
		yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365 // [0, 399]
		doy := doe - (365*yoe + yoe/4 - yoe/100)               // [0, 365], from March 1
		mp := (5*doy + 2) / 153                                // [0, 11], March = 0
		d = doy - (153*mp+2)/5 + 1                             // [1, 31]
		m = mp + 3                                             // [3, 14]
		y = era*400 + yoe
		if m > 12 {
			m -= 12
			y++
		}
	}
	hh, mm, ss := rem/3600, rem/60%60, rem%60
	var s [32]byte
	s[0] = '"'
	put2(s[1:], y/100)
	put2(s[3:], y%100)
	s[5] = '-'
	put2(s[6:], m)
	s[8] = '-'
	put2(s[9:], d)
	s[11] = 'T'
	put2(s[12:], hh)
	s[14] = ':'
	put2(s[15:], mm)
	s[17] = ':'
	put2(s[18:], ss)
	n := 20
	if ns := uint32(t.Nanosecond()); ns != 0 {
		// Three independent groups of three digits rather than nine
		// divisions each waiting for the last (BenchmarkAppendTime/utc;
		// bench/README.md).
		ms, rest := ns/1_000_000, ns%1_000_000
		us, nano := rest/1000, rest%1000
		s[20] = '.'
		put3(s[21:], ms)
		put3(s[24:], us)
		put3(s[27:], nano)
		n = 30
		switch {
		case rest == 0:
			n = 24
		case nano == 0:
			n = 27
		}
		for s[n-1] == '0' {
			n--
		}
	}
	s[n], s[n+1] = 'Z', '"'
	return append(b, s[:n+2]...), true
}
