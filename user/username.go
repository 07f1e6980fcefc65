package user

import (
	"fmt"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
	"golang.org/x/text/unicode/rangetable"

	"github.com/procurekit/procure"
)

// Usernames are what people type and read to tell users apart, so a
// username may not hold characters that are invisible or that reorder
// what is shown (docs: users.md "Usernames"): "jsmith" followed by a zero
// width space, or preceded by a right-to-left mark, would look exactly
// like "jsmith" and be another user. And a username is kept in Unicode
// normalisation form NFC, so that one written with a precomposed "é" and
// one with "e" and a combining accent are one username.

// ruleUsernameVisible is the rule a username with a default-ignorable or
// bidirectional control code point breaks.
const ruleUsernameVisible = "must not contain invisible (default-ignorable) or bidirectional control characters"

// ignorableCandidates are the code points the Unicode property
// Default_Ignorable_Code_Point (DerivedCoreProperties.txt) is derived
// from: Other_Default_Ignorable_Code_Point, the format characters (Cf)
// and the variation selectors. defaultIgnorable takes away the
// exceptions the derivation names.
var ignorableCandidates = rangetable.Merge(unicode.Other_Default_Ignorable_Code_Point, unicode.Cf, unicode.Variation_Selector)

// defaultIgnorable reports whether r has the Unicode property
// Default_Ignorable_Code_Point, derived as DerivedCoreProperties.txt
// does from the tables of the Unicode version the unicode package holds:
// the candidates less White_Space, the interlinear annotation characters
// (U+FFF9..U+FFFB), the Egyptian hieroglyph format controls
// (U+13430..U+1343F) and Prepended_Concatenation_Mark, which are meant
// to be seen.
func defaultIgnorable(r rune) bool {
	switch {
	case !unicode.Is(ignorableCandidates, r),
		unicode.Is(unicode.White_Space, r),
		0xFFF9 <= r && r <= 0xFFFB,
		0x13430 <= r && r <= 0x1343F,
		unicode.Is(unicode.Prepended_Concatenation_Mark, r):
		return false
	}
	return true
}

// hiddenRune returns the first rune of s that is default-ignorable or a
// bidirectional control (Bidi_Control: U+061C, U+200E, U+200F,
// U+202A..U+202E, U+2066..U+2069), and its position in characters from
// 1; ok is false when there is none. ASCII holds none, so a plain
// username costs one pass over its bytes.
func hiddenRune(s string) (r rune, at int, ok bool) {
	i := 0
	for i < len(s) && s[i] < utf8.RuneSelf {
		i++
	}
	if i == len(s) {
		return 0, 0, false
	}
	at = i
	for _, r := range s[i:] {
		at++
		if defaultIgnorable(r) || unicode.Is(unicode.Bidi_Control, r) {
			return r, at, true
		}
	}
	return 0, 0, false
}

// CheckUsername reports whether username keeps the character rule of
// usernames: no default-ignorable code point and no bidirectional
// control (docs: users.md "Usernames"). It returns nil or a
// *procure.ValidationError (Source data) for the field username naming
// the rule and the first such character. Validate applies it; a store
// uses it to find usernames stored before the rule.
func CheckUsername(username string) error {
	if rule := checkUsername(username); rule != "" {
		return procure.Invalid(procure.SourceData, "username", rule)
	}
	return nil
}

// checkUsername returns the broken rule of a username's characters, or
// "" when it keeps it.
func checkUsername(s string) string {
	r, at, ok := hiddenRune(s)
	if !ok {
		return ""
	}
	return fmt.Sprintf("%s (U+%04X at character %d)", ruleUsernameVisible, r, at)
}

// normalizeUsername is a username as it is stored and looked up: trimmed
// of surrounding white space, in NFC. Plain ASCII is already NFC.
func normalizeUsername(s string) string {
	s = trim(s)
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return norm.NFC.String(s)
		}
	}
	return s
}
