package suppliertest

import (
	"strings"
	"sync"

	"golang.org/x/text/collate"
	"golang.org/x/text/language"
)

// collation compares names as docs: paging.md words the rule, with the
// collators themselves: the root locale ignoring case and accents
// (collate.Loose), then at full strength, then bytes. The reference sorts
// by internal/textkey's keys, which the stores use too; checking every
// pair of neighbours with the collators shows a mistake in the keys.
// Collators are not safe for concurrent use: one lock guards both.
var collation = struct {
	sync.Mutex
	loose, full *collate.Collator
}{loose: collate.New(language.Und, collate.Loose), full: collate.New(language.Und)}

// collationCompare compares two non-empty names by the rule.
func collationCompare(a, b string) int {
	collation.Lock()
	defer collation.Unlock()
	if c := collation.loose.CompareString(a, b); c != 0 {
		return c
	}
	if c := collation.full.CompareString(a, b); c != 0 {
		return c
	}
	return strings.Compare(a, b)
}
