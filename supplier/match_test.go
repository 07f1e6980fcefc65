package supplier_test

import (
	"slices"
	"testing"

	"github.com/procurekit/procure/supplier"
)

// The searched texts are the name, legalBusinessName, supplierId and the
// keywords (docs: filters.md "Query"), as match keys: case and accents
// folded, sorted, each once, none empty; other fields are not searched.
func TestMatchTerms(t *testing.T) {
	for _, tc := range []struct {
		name     string
		s        supplier.Summary
		keywords []string
		want     []string
	}{
		{"nothing searchable", supplier.Summary{CommunitySupplierID: supplier.NewText("C-1")}, nil, nil},
		{"every searched field", supplier.Summary{
			Name: supplier.NewText("Ōtaki Organics"), LegalBusinessName: supplier.NewText("Otaki Organics Ltd"),
			SupplierID: supplier.NewText("S-100"), CommunitySupplierID: supplier.NewText("not searched"),
		}, []string{"Kiwifruit", "", "OTAKI ORGANICS"}, []string{"kiwifruit", "otaki organics", "otaki organics ltd", "s-100"}},
		{"an explicit empty name", supplier.Summary{Name: supplier.NewText("")}, []string{"b", "a", "b"}, []string{"a", "b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := supplier.MatchTerms([]string{"kept"}[:0], &tc.s, tc.keywords)
			if !slices.Equal(got, tc.want) {
				t.Errorf("MatchTerms = %q, want %q", got, tc.want)
			}
		})
	}
}
