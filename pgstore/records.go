package pgstore

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/procurekit/procure"
	"github.com/procurekit/procure/supplier"
)

// foldKey is the case-insensitive key of a text: what both stores compare
// for ordering, the prefix query and usernames. It is computed here, not by
// the database, so that it does not depend on the database's locale.
func foldKey(s string) string { return strings.ToLower(s) }

// nullKey is the sort key of a text, or nil (NULL) when the text is empty,
// so that NULLS LAST puts empty values after all others.
func nullKey(s string) any {
	if s == "" {
		return nil
	}
	return foldKey(s)
}

// details holds the nested objects of a SupplierDetail, stored as one JSON
// column.
type details struct {
	DefaultContact           *supplier.Contact           `json:"defaultContact,omitempty"`
	DefaultRemittanceAddress *supplier.RemittanceAddress `json:"defaultRemittanceAddress,omitempty"`
	BankAccount              *supplier.BankAccount       `json:"bankAccount,omitempty"`
	Emails                   *supplier.Emails            `json:"emails,omitempty"`
	Settings                 *supplier.Settings          `json:"settings,omitempty"`
}

func detailsOf(d *supplier.Detail) details {
	return details{d.DefaultContact, d.DefaultRemittanceAddress, d.BankAccount, d.Emails, d.Settings}
}

func (d details) empty() bool {
	return d.DefaultContact == nil && d.DefaultRemittanceAddress == nil && d.BankAccount == nil && d.Emails == nil && d.Settings == nil
}

func (d details) restore(to *supplier.Detail) {
	to.DefaultContact, to.DefaultRemittanceAddress, to.BankAccount, to.Emails, to.Settings =
		d.DefaultContact, d.DefaultRemittanceAddress, d.BankAccount, d.Emails, d.Settings
}

// detailsJSON is the details column of d: NULL (nil) when it has none of
// the nested objects.
func detailsJSON(d *supplier.Detail) ([]byte, error) {
	det := detailsOf(d)
	if det.empty() {
		return nil, nil
	}
	return json.Marshal(det)
}

// textValue is an optional text column's value: NULL (nil) for no value,
// ” only for a field listed as an explicit empty string.
func textValue(s string, explicitEmpty bool) any {
	if s == "" && !explicitEmpty {
		return nil
	}
	return s
}

// summaryTextValues returns the optional text columns of s, in the order
// of summaryText.
func summaryTextValues(s *supplier.Summary) []any {
	out := make([]any, 0, 12)
	for _, f := range summaryText(s) {
		out = append(out, textValue(*f.ptr, isEmptyText(s, f.path)))
	}
	return out
}

// The explicit-empty-text lists (supplier.TextPaths) of the three kinds of
// value are kept in the empty_text columns.

func isEmptyText(s *supplier.Summary, path string) bool { return false }
func markEmpty(s *supplier.Summary, path string)        {}
func setEmptyText(s *supplier.Summary, paths []string)  {}
func summaryEmptyText(s *supplier.Summary) []string     { return nil }

// sameContent reports whether a and b hold the same content, dates aside:
// what decides that a write changes nothing. Both are encoded with their
// dates zeroed (the encoding is deterministic) and compared.
func sameContent[T any](a, b T, zeroDates func(*T)) bool {
	zeroDates(&a)
	zeroDates(&b)
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(ja, jb)
}

func zeroRecordDates(r *supplier.Record) {
	r.ModifiedDate, r.CreatedDate = time.Time{}, time.Time{}
	if c := r.DefaultContact; c != nil {
		cc := *c
		zeroContactDates(&cc)
		r.DefaultContact = &cc
	}
	if a := r.DefaultRemittanceAddress; a != nil {
		aa := *a
		zeroAddressDates(&aa)
		r.DefaultRemittanceAddress = &aa
	}
	if len(r.Keywords) == 0 {
		r.Keywords = nil
	}
}

func zeroContactDates(c *supplier.Contact) { c.ModifiedDate, c.CreatedDate = time.Time{}, time.Time{} }

func zeroAddressDates(a *supplier.RemittanceAddress) {
	a.ModifiedDate, a.CreatedDate = time.Time{}, time.Time{}
}

// checkText returns a validation error naming every string of v (by JSON
// path under prefix) that PostgreSQL text cannot hold: invalid UTF-8 or a
// NUL character. Such input is the caller's mistake (400), never a 500.
func checkText(src procure.Source, prefix string, v any) error {
	verr := &procure.ValidationError{Source: src}
	walkStrings(reflect.ValueOf(v), prefix, func(path, s string) {
		if !utf8.ValidString(s) || strings.IndexByte(s, 0) >= 0 {
			verr.Add(path, "must be valid UTF-8 without NUL characters")
		}
	})
	return verr.Err()
}

func walkStrings(v reflect.Value, path string, visit func(path, s string)) {
	join := func(name string) string {
		if path == "" {
			return name
		}
		return path + "." + name
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			walkStrings(v.Elem(), path, visit)
		}
	case reflect.String:
		visit(path, v.String())
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return // bytes, such as a UUID
		}
		for i := range v.Len() {
			walkStrings(v.Index(i), path+"["+strconv.Itoa(i)+"]", visit)
		}
	case reflect.Struct:
		t := v.Type()
		if t == reflect.TypeFor[time.Time]() {
			return
		}
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" {
				continue
			}
			if f.Anonymous && name == "" {
				walkStrings(v.Field(i), path, visit)
				continue
			}
			if name == "" {
				name = f.Name
			}
			walkStrings(v.Field(i), join(name), visit)
		}
	}
}

// terms returns the search terms of a supplier in byte order: the
// lower-cased name, legal business name, supplierId and keywords that are
// not empty, without duplicates and without a term that is a prefix of
// another (the longer term matches every prefix query the shorter one
// does). lcps[i] is the length of the common prefix of terms i-1 and i.
func terms(r *supplier.Record, dst []string, lcps []int32) ([]string, []int32) {
	dst = dst[:0]
	add := func(s string) {
		if s != "" {
			dst = append(dst, foldKey(s))
		}
	}
	add(r.Name)
	add(r.LegalBusinessName)
	add(r.SupplierID)
	for _, k := range r.Keywords {
		add(k)
	}
	slices.Sort(dst)
	kept := dst[:0]
	for i, t := range dst {
		if i+1 < len(dst) && strings.HasPrefix(dst[i+1], t) {
			continue // a duplicate, or a prefix of the next term
		}
		kept = append(kept, t)
	}
	lcps = lcps[:0]
	for i, t := range kept {
		n := 0
		if i > 0 {
			prev := kept[i-1]
			for n < len(prev) && n < len(t) && prev[n] == t[n] {
				n++
			}
		}
		lcps = append(lcps, int32(n))
	}
	return kept, lcps
}

func setContactEmptyText(c *supplier.Contact, paths []string)           {}
func setAddressEmptyText(a *supplier.RemittanceAddress, paths []string) {}
func contactEmptyText(c *supplier.Contact) []string                     { return nil }
func addressEmptyText(a *supplier.RemittanceAddress) []string           { return nil }

// cloneJSON returns a deep copy of v through its JSON encoding, so that
// what a write returns shares no memory with the caller's input. Fields
// that JSON skips (EmptyText) are the caller's to copy.
func cloneJSON[T any](v T) (T, error) {
	var out T
	b, err := json.Marshal(v)
	if err != nil {
		return out, err
	}
	err = json.Unmarshal(b, &out)
	return out, err
}

// cloneDetail returns a deep copy of d.
func cloneDetail(d supplier.Detail) (supplier.Detail, error) {
	out := d
	if d.TinLastVerifiedDate != nil {
		t := *d.TinLastVerifiedDate
		out.TinLastVerifiedDate = &t
	}
	det, err := cloneJSON(detailsOf(&d))
	if err != nil {
		return out, err
	}
	det.restore(&out)
	return out, nil
}
