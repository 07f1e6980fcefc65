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
// column, with the explicit-empty-text lists of the default contact and
// address (which JSON skips).
type details struct {
	DefaultContact           *supplier.Contact           `json:"defaultContact,omitempty"`
	DefaultRemittanceAddress *supplier.RemittanceAddress `json:"defaultRemittanceAddress,omitempty"`
	BankAccount              *supplier.BankAccount       `json:"bankAccount,omitempty"`
	Emails                   *supplier.Emails            `json:"emails,omitempty"`
	Settings                 *supplier.Settings          `json:"settings,omitempty"`
	ContactEmptyText         []string                    `json:"defaultContactEmptyText,omitempty"`
	AddressEmptyText         []string                    `json:"defaultRemittanceAddressEmptyText,omitempty"`
}

func detailsOf(d *supplier.Detail) details {
	det := details{DefaultContact: d.DefaultContact, DefaultRemittanceAddress: d.DefaultRemittanceAddress,
		BankAccount: d.BankAccount, Emails: d.Emails, Settings: d.Settings}
	if c := d.DefaultContact; c != nil {
		det.ContactEmptyText = c.EmptyText
	}
	if a := d.DefaultRemittanceAddress; a != nil {
		det.AddressEmptyText = a.EmptyText
	}
	return det
}

func (d details) empty() bool {
	return d.DefaultContact == nil && d.DefaultRemittanceAddress == nil && d.BankAccount == nil && d.Emails == nil && d.Settings == nil
}

func (d details) restore(to *supplier.Detail) {
	to.DefaultContact, to.DefaultRemittanceAddress, to.BankAccount, to.Emails, to.Settings =
		d.DefaultContact, d.DefaultRemittanceAddress, d.BankAccount, d.Emails, d.Settings
	if c := to.DefaultContact; c != nil && len(d.ContactEmptyText) > 0 {
		c.EmptyText = d.ContactEmptyText
	}
	if a := to.DefaultRemittanceAddress; a != nil && len(d.AddressEmptyText) > 0 {
		a.EmptyText = d.AddressEmptyText
	}
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

// The explicit-empty-text lists (supplier.TextPaths) are kept in the
// empty_text columns (NULL when empty); a supplier's optional text columns
// also hold '' exactly for the listed fields, so that a list, which reads
// only the columns, restores the summary's part of the list.

func isEmptyText(s *supplier.Summary, path string) bool { return s.EmptyText.Has(path) }
func markEmpty(s *supplier.Summary, path string)        { s.EmptyText.Add(path) }

// setEmptyText sets the full list read from the empty_text column.
func setEmptyText(s *supplier.Summary, paths []string) {
	if len(paths) > 0 {
		s.EmptyText = paths
	}
}

func summaryEmptyText(s *supplier.Summary) []string { return nilIfEmpty(s.EmptyText) }

func nilIfEmpty(p supplier.TextPaths) []string {
	if len(p) == 0 {
		return nil
	}
	return p
}

// sameContent reports whether a and b hold the same content, dates aside:
// what decides that a write changes nothing. Both are encoded with their
// dates zeroed (the encoding is deterministic) and compared, and so are
// their explicit-empty-text lists, which JSON skips.
func sameContent[T any](a, b T, zeroDates func(*T)) bool {
	zeroDates(&a)
	zeroDates(&b)
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(ja, jb) && slices.EqualFunc(emptyTexts(&a), emptyTexts(&b), slices.Equal)
}

// emptyTexts returns the explicit-empty-text lists that v holds.
func emptyTexts(v any) [][]string {
	switch v := v.(type) {
	case *supplier.Record:
		out := [][]string{v.EmptyText, nil, nil}
		if c := v.DefaultContact; c != nil {
			out[1] = c.EmptyText
		}
		if a := v.DefaultRemittanceAddress; a != nil {
			out[2] = a.EmptyText
		}
		return out
	case *supplier.Contact:
		return [][]string{v.EmptyText}
	case *supplier.RemittanceAddress:
		return [][]string{v.EmptyText}
	}
	return nil
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

func setContactEmptyText(c *supplier.Contact, paths []string) {
	if len(paths) > 0 {
		c.EmptyText = paths
	}
}

func setAddressEmptyText(a *supplier.RemittanceAddress, paths []string) {
	if len(paths) > 0 {
		a.EmptyText = paths
	}
}

func contactEmptyText(c *supplier.Contact) []string           { return nilIfEmpty(c.EmptyText) }
func addressEmptyText(a *supplier.RemittanceAddress) []string { return nilIfEmpty(a.EmptyText) }

// cloneJSON returns a deep copy of v through its JSON encoding, so that
// what a write returns shares no memory with the caller's input.
func cloneJSON[T any](v T) (T, error) {
	var out T
	b, err := json.Marshal(v)
	if err != nil {
		return out, err
	}
	err = json.Unmarshal(b, &out)
	return out, err
}

func cloneContact(c supplier.Contact) (supplier.Contact, error) {
	out, err := cloneJSON(c)
	out.EmptyText = c.EmptyText.Clone()
	return out, err
}

func cloneAddress(a supplier.RemittanceAddress) (supplier.RemittanceAddress, error) {
	out, err := cloneJSON(a)
	out.EmptyText = a.EmptyText.Clone()
	return out, err
}

// cloneDetail returns a deep copy of d.
func cloneDetail(d supplier.Detail) (supplier.Detail, error) {
	out := d
	out.EmptyText = d.EmptyText.Clone()
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
