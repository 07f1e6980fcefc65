package user

import (
	"unicode"
	"unicode/utf8"
)

// foldRune maps r to the one member of its simple case folding orbit
// (unicode.SimpleFold) that stands for the whole orbit, so that two runes
// are equal under strings.EqualFold exactly when their folds are equal.
//
// The member is chosen from the orbit alone (from its smallest rune), so
// it is the same whichever member r is: the lower case of the upper case
// when that stays in the orbit (it does for every letter with case: "K",
// "k" and the Kelvin sign "K" fold to "k"; "Σ", "σ" and "ς" to "σ"), and
// the smallest member otherwise. A rune without case is its own fold.
// Unlike strings.ToLower this never merges two orbits: "İ" (U+0130), which
// EqualFold tells apart from "i", keeps its own fold.
func foldRune(r rune) rune {
	if r < utf8.RuneSelf {
		if 'A' <= r && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return r
	}
	next := unicode.SimpleFold(r)
	if next == r {
		return r
	}
	least := r
	for f := next; f != r; f = unicode.SimpleFold(f) {
		least = min(least, f)
	}
	c := unicode.ToLower(unicode.ToUpper(least))
	for f := unicode.SimpleFold(least); ; f = unicode.SimpleFold(f) {
		if f == c {
			return c
		}
		if f == least {
			return least
		}
	}
}

// foldString is s with every rune folded (foldRune). Bytes that are not
// valid UTF-8 are kept as they are. It returns s itself when nothing
// changes, which for the usual lower-case ASCII username costs no
// allocation.
func foldString(s string) string {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf || ('A' <= c && c <= 'Z') {
			return foldFrom(s, i)
		}
	}
	return s
}

func foldFrom(s string, i int) string {
	b := make([]byte, 0, len(s))
	b = append(b, s[:i]...)
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[i])
		} else {
			b = utf8.AppendRune(b, foldRune(r))
		}
		i += size
	}
	return string(b)
}
