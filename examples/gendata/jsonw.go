package main

import (
	"strconv"
	"time"

	"github.com/procurekit/procure/internal/jsontext"
)

// enc appends hand-assembled JSON to a byte slice. It is deliberately tiny:
// the generator writes one record at a time into a reused buffer and hands
// it to a bufio.Writer, so memory stays flat however many records there are.
//
// Rules: inside an object, write a field with one of the f* methods (or
// key followed by a value method); inside an array, call elem before each
// value. comma tracks whether the next field or element needs a comma.
type enc struct {
	b     []byte
	comma bool
}

func (e *enc) reset() { e.b = e.b[:0]; e.comma = false }

// elem separates array elements.
func (e *enc) elem() {
	if e.comma {
		e.b = append(e.b, ',')
	}
	e.comma = true
}

// key writes `"k":` (k is a plain ASCII field name).
func (e *enc) key(k string) {
	e.elem()
	e.b = append(e.b, '"')
	e.b = append(e.b, k...)
	e.b = append(e.b, '"', ':')
	e.comma = false
}

func (e *enc) openObj()  { e.b = append(e.b, '{'); e.comma = false }
func (e *enc) closeObj() { e.b = append(e.b, '}'); e.comma = true }
func (e *enc) openArr()  { e.b = append(e.b, '['); e.comma = false }
func (e *enc) closeArr() { e.b = append(e.b, ']'); e.comma = true }

func (e *enc) str(s string)                { e.b = jsontext.AppendString(e.b, s); e.comma = true }
func (e *enc) null()                       { e.b = append(e.b, "null"...); e.comma = true }
func (e *enc) int(n int)                   { e.b = strconv.AppendInt(e.b, int64(n), 10); e.comma = true }
func (e *enc) bool(v bool)                 { e.b = strconv.AppendBool(e.b, v); e.comma = true }
func (e *enc) raw(s string)                { e.b = append(e.b, s...); e.comma = true }
func (e *enc) uuid(id [16]byte)            { e.b = appendUUID(e.b, id); e.comma = true }
func (e *enc) time(t stamp)                { e.b = t.append(e.b); e.comma = true }
func (e *enc) fStr(k, s string)            { e.key(k); e.str(s) }
func (e *enc) fNull(k string)              { e.key(k); e.null() }
func (e *enc) fInt(k string, n int)        { e.key(k); e.int(n) }
func (e *enc) fBool(k string, v bool)      { e.key(k); e.bool(v) }
func (e *enc) fUUID(k string, id [16]byte) { e.key(k); e.uuid(id) }
func (e *enc) fTime(k string, t stamp)     { e.key(k); e.time(t) }

// fOpt writes an optional "string or null" field in one of the three
// shapes a real export shows: present, explicit null, or absent.
func (e *enc) fOpt(k string, s string, shape presence) {
	switch shape {
	case present:
		e.fStr(k, s)
	case explicitNull:
		e.fNull(k)
	}
}

// presence is how an optional field appears in the file.
type presence uint8

const (
	present presence = iota
	explicitNull
	absent
)

const hexDigits = "0123456789abcdef"

// appendUUID appends id in its canonical quoted form.
func appendUUID(b []byte, id [16]byte) []byte {
	b = append(b, '"')
	for i, x := range id {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			b = append(b, '-')
		}
		b = append(b, hexDigits[x>>4], hexDigits[x&0xf])
	}
	return append(b, '"')
}

// stamp is a date-time as the file writes it: an instant, and the zone it
// is written in. Most are UTC (loc nil); a few carry the offset of the
// community's region, as an export from a local system would, which
// readers must normalise to UTC.
type stamp struct {
	t   time.Time
	loc *time.Location
}

func (s stamp) append(b []byte) []byte {
	t := s.t.UTC()
	if s.loc != nil {
		t = s.t.In(s.loc)
	}
	b = append(b, '"')
	b = t.AppendFormat(b, time.RFC3339Nano)
	return append(b, '"')
}
