package pgstore

import (
	"encoding/json"
	"reflect"
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
// column (an empty string kept as "": supplier.Text).
type details struct {
	DefaultContact           *supplier.Contact           `json:"defaultContact,omitempty"`
	DefaultRemittanceAddress *supplier.RemittanceAddress `json:"defaultRemittanceAddress,omitempty"`
	BankAccount              *supplier.BankAccount       `json:"bankAccount,omitempty"`
	Emails                   *supplier.Emails            `json:"emails,omitempty"`
	Settings                 *supplier.Settings          `json:"settings,omitempty"`
}

func detailsOf(d *supplier.Detail) details {
	return details{DefaultContact: d.DefaultContact, DefaultRemittanceAddress: d.DefaultRemittanceAddress,
		BankAccount: d.BankAccount, Emails: d.Emails, Settings: d.Settings}
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

// summaryTextValues returns the text columns of s, in the order of
// summaryTexts: NULL (nil) for no value or an empty string (enum), the
// empty text for "" (supplier.Text).
func summaryTextValues(s *supplier.Summary) []any {
	out := make([]any, len(summaryTexts))
	v := reflect.ValueOf(s).Elem()
	for i, t := range summaryTexts {
		f := v.FieldByIndex(t.index)
		if t.text {
			if p := f.Addr().Interface().(*supplier.Text); !p.IsZero() {
				out[i] = p.String()
			}
		} else if f.String() != "" {
			out[i] = f.String()
		}
	}
	return out
}

// terms returns the search terms of a supplier in byte order: its match
// terms (supplier.MatchTerms) without a term that is a prefix of another
// (the longer term matches every prefix query the shorter one does). lcps[i] is the length of the common prefix of terms i-1 and i.
func terms(r *supplier.Record, dst []string, lcps []int32) ([]string, []int32) {
	dst = supplier.MatchTerms(dst[:0], &r.Summary, r.Keywords)
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
