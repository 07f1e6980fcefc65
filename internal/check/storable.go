package check

import (
	"strings"
	"unicode/utf8"
)

// StorableRule is the rule a text breaks that holds a NUL character or is
// not valid UTF-8: PostgreSQL cannot hold either, so every store refuses
// both alike, with a 400 naming the field (docs: values.md "Text").
const StorableRule = "must be valid UTF-8 without NUL characters"

// Storable reports whether s keeps StorableRule.
func Storable(s string) bool {
	return strings.IndexByte(s, 0) < 0 && utf8.ValidString(s)
}
