package suppliertest

import (
	"bytes"
	"sort"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/procurekit/procure/internal/textkey"
	"github.com/procurekit/procure/paging"
	"github.com/procurekit/procure/supplier"
)

// The reference implementation: a filter over the fixture and
// sort.SliceStable with the documented comparator (docs: paging.md
// and "Filters"). It is meant to be obviously correct, not fast.

// compareText compares string sort keys by their collation keys
// (internal/textkey: the root locale's collation ignoring case and accents,
// then at full strength, then bytes); empty values after all others
// whichever the direction.
func compareText(a, b string, desc bool) int {
	switch {
	case a == b:
		return 0
	case a == "":
		return 1
	case b == "":
		return -1
	}
	c := bytes.Compare(textkey.SortKey(a), textkey.SortKey(b))
	if desc {
		c = -c
	}
	return c
}

// compareTime compares date keys as instants.
func compareTime(a, b time.Time, desc bool) int {
	c := a.Compare(b)
	if desc {
		c = -c
	}
	return c
}

// compareID is the tie-break: id ascending in both directions.
func compareID(a, b uuid.UUID) int { return bytes.Compare(a[:], b[:]) }

func compareSummary(a, b *supplier.Summary, s paging.Sort) int {
	var c int
	switch s.Field {
	case "name", "":
		c = compareText(a.Name.String(), b.Name.String(), s.Desc)
	case "createdDate":
		c = compareTime(a.CreatedDate, b.CreatedDate, s.Desc)
	case "modifiedDate":
		c = compareTime(a.ModifiedDate, b.ModifiedDate, s.Desc)
	default:
		panic("suppliertest: unknown sort field " + s.Field)
	}
	if c != 0 {
		return c
	}
	return compareID(a.ID, b.ID)
}

// matches is docs: filters.md: query is a starts-with on name,
// legalBusinessName, any keyword or supplierId, both sides compared by
// their match keys (internal/textkey: NFD, combining marks removed,
// case-folded); modifiedSince is inclusive.
func matches(r *supplier.Record, q supplier.ListQuery) bool {
	if !q.ModifiedSince.IsZero() && r.ModifiedDate.Before(q.ModifiedSince) {
		return false
	}
	if q.Query == "" {
		return true
	}
	mq := textkey.Match(q.Query)
	has := func(s string) bool { return strings.HasPrefix(textkey.Match(s), mq) }
	if has(r.Name.String()) || has(r.LegalBusinessName.String()) || has(r.SupplierID.String()) {
		return true
	}
	for _, k := range r.Keywords {
		if has(k) {
			return true
		}
	}
	return false
}

// Reference returns the ids of every supplier of recs that matches q, in
// q's order (q.Page.Sort; paging is not applied), computed by brute force
// with the documented rules. Backends may use it for randomised tests of
// their own on larger data than the suite's fixture.
func Reference(recs []supplier.Record, q supplier.ListQuery) []uuid.UUID {
	return refSuppliers(recs, q)
}

// refSuppliers returns the ids of every supplier matching q, in q's order.
func refSuppliers(recs []supplier.Record, q supplier.ListQuery) []uuid.UUID {
	var list []*supplier.Summary
	for i := range recs {
		if matches(&recs[i], q) {
			list = append(list, &recs[i].Summary)
		}
	}
	sort.SliceStable(list, func(i, j int) bool { return compareSummary(list[i], list[j], q.Page.Sort) < 0 })
	ids := make([]uuid.UUID, len(list))
	for i, s := range list {
		ids[i] = s.ID
	}
	return ids
}

// refContacts returns a supplier's contacts in name order.
func refContacts(r *supplier.Record) []uuid.UUID {
	cs := append([]supplier.Contact(nil), r.Contacts...)
	sort.SliceStable(cs, func(i, j int) bool {
		if c := compareText(cs[i].Name, cs[j].Name, false); c != 0 {
			return c < 0
		}
		return compareID(cs[i].ID, cs[j].ID) < 0
	})
	ids := make([]uuid.UUID, len(cs))
	for i, c := range cs {
		ids[i] = c.ID
	}
	return ids
}

// refAddresses returns a supplier's remittance addresses matching q, in
// q's order (companyName or modifiedDate).
func refAddresses(r *supplier.Record, q supplier.AddressQuery) []uuid.UUID {
	var as []supplier.RemittanceAddress
	for _, a := range r.RemittanceAddresses {
		if q.ModifiedSince.IsZero() || !a.ModifiedDate.Before(q.ModifiedSince) {
			as = append(as, a)
		}
	}
	s := q.Page.Sort
	sort.SliceStable(as, func(i, j int) bool {
		var c int
		if s.Field == "modifiedDate" {
			c = compareTime(as[i].ModifiedDate, as[j].ModifiedDate, s.Desc)
		} else {
			c = compareText(as[i].CompanyName.String(), as[j].CompanyName.String(), s.Desc)
		}
		if c != 0 {
			return c < 0
		}
		return compareID(as[i].ID, as[j].ID) < 0
	})
	ids := make([]uuid.UUID, len(as))
	for i, a := range as {
		ids[i] = a.ID
	}
	return ids
}

// window cuts page r out of ids.
func window(ids []uuid.UUID, r paging.Request) []uuid.UUID {
	lo, hi := paging.Window(len(ids), r)
	return ids[lo:hi]
}
