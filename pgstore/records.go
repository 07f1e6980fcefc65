package pgstore

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/procurekit/procure/internal/textkey"
	"github.com/procurekit/procure/supplier"
)

// nullKey is the sort key of a text (internal/textkey: what both stores
// compare, computed here so that the order does not depend on the
// database's collation), or nil (NULL) when the text is empty, so that
// NULLS LAST puts empty values after all others in both directions.
func nullKey(s string) any {
	if s == "" {
		return nil
	}
	return textkey.SortKey(s)
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

// terms returns the search terms of a supplier in byte order: the match
// keys (internal/textkey) of its name, legal business name, supplierId and
// keywords that are not empty, without duplicates and without a term that is a prefix of
// another (the longer term matches every prefix query the shorter one
// does). lcps[i] is the length of the common prefix of terms i-1 and i.
func terms(r *supplier.Record, dst []string, lcps []int32) ([]string, []int32) {
	dst = dst[:0]
	add := func(s string) {
		if m := textkey.Match(s); m != "" {
			dst = append(dst, m)
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
