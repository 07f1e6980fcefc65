package supplier

import (
	"slices"

	"github.com/procurekit/procure/internal/textkey"
)

// MatchTerms appends to dst the match keys (internal/textkey.Match) of the
// texts a list query searches (docs: filters.md "Query"): the summary's
// name, legalBusinessName and supplierId, and each of keywords; sorted,
// without duplicates, and without a text whose key is empty. Both stores
// index these terms, so that a query finds the same suppliers on each.
func MatchTerms(dst []string, s *Summary, keywords []string) []string {
	add := func(t string) {
		if m := textkey.Match(t); m != "" {
			dst = append(dst, m)
		}
	}
	add(s.Name.String())
	add(s.LegalBusinessName.String())
	add(s.SupplierID.String())
	for _, k := range keywords {
		add(k)
	}
	slices.Sort(dst)
	return slices.Compact(dst)
}
