package paging_test

import (
	"testing"

	"github.com/procurekit/procure/paging"
)

// The direction is compared case-insensitively in ASCII only
// (docs: paging.md: "direction case-insensitive"); look-alike
// letters that Unicode case folding would match are a 400, not "asc".
func TestParseSortDirectionFolding(t *testing.T) {
	allowed := []string{"name"}
	for _, tc := range []struct {
		v        string
		wantDesc bool
		wantOK   bool
	}{
		{"name,asc", false, true},
		{"name,ASC", false, true},
		{"name,Desc", true, true},
		{"name,dEsC", true, true},
		{"name,a\u017fc", false, false},  // long s folds to s in strings.EqualFold
		{"name,de\u017fc", false, false}, // likewise
		{"name,ascending", false, false},
		{"name,", false, false},
	} {
		s, rule := paging.ParseSort(tc.v, allowed)
		if (rule == "") != tc.wantOK || (tc.wantOK && s.Desc != tc.wantDesc) {
			t.Errorf("ParseSort(%q) = %+v, %q; want desc %v, ok %v", tc.v, s, rule, tc.wantDesc, tc.wantOK)
		}
	}
}
