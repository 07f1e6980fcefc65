// Package textkey computes, once per value, the keys by which names are
// sorted and matched as people read them (docs: paging.md, filters.md).
//
//	k := textkey.Sort(nil, "Ōtaki Organics") // compare keys with bytes.Compare
//	m := textkey.Match("Ōtaki Organics")     // "otaki organics"
//	strings.HasPrefix(m, textkey.Match("OTA")) // true
//
// A sort key orders by the Unicode Collation Algorithm with the root
// locale, ignoring case and accents first, then by the same collation at
// full strength, then by the text's bytes: so bytes.Compare of two keys is
// a total order, and two keys are equal only for equal texts. The empty text
// has no key (nil): callers sort it after all others in both directions.
//
// A match key is the text decomposed (NFD), with its combining marks
// (Unicode category Mn) removed, then case-folded (full folding, so "ß"
// matches "ss"); a query matches a value when the value's match key starts
// with the query's.
//
// Both are computed in Go so that every store, and PostgreSQL whatever its
// collation, gives one order and one set of matches. The functions are safe
// for concurrent use: a collate.Collator is not, so each call borrows one
// from a pool.
//
// # Why one key
//
// The collation key at full strength starts with the primary weights,
// which are the whole key of the loose (case- and accent-blind) collation,
// and its encoding is prefix-free; so comparing it by bytes already orders
// loose first, then full. Runs of common secondary and tertiary weights
// are folded into single bytes, keeping the order (compact.go), which
// nearly halves a Latin name's key. A 0 byte and the text's bytes follow,
// to break the remaining ties (texts such as NFC and NFD spellings of one
// name, or ones differing only by ignorable characters).
// TestSortKeyOrder checks the keys against the collators themselves over a
// corpus made to collide at every level.
package textkey

import (
	"bytes"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/cases"
	"golang.org/x/text/collate"
	"golang.org/x/text/language"
	"golang.org/x/text/runes"
	"golang.org/x/text/transform"
	"golang.org/x/text/unicode/norm"
)

// collator is one pooled collator with its key buffer: each holds several
// kilobytes of scratch space, so they are reused rather than made per call.
type collator struct {
	c   *collate.Collator
	buf collate.Buffer
}

var collators = sync.Pool{New: func() any {
	return &collator{c: collate.New(language.Und)}
}}

// Sort appends the sort key of s to dst and returns the extended slice. It
// returns dst unchanged when s is empty: the empty text has no key, and
// sorts last (docs: paging.md).
func Sort(dst []byte, s string) []byte {
	if s == "" {
		return dst
	}
	c := collators.Get().(*collator)
	dst = compact(dst, c.c.KeyFromString(&c.buf, s))
	c.buf.Reset()
	collators.Put(c)
	return append(dst, s...)
}

// SortKey returns the sort key of s in a new slice, or nil when s is empty.
func SortKey(s string) []byte {
	if s == "" {
		return nil
	}
	return Sort(make([]byte, 0, sortKeySize(s)), s)
}

// sortKeySize guesses the length of a key for Latin text, so that SortKey
// allocates once: two bytes of primary and of secondary weight and one of
// tertiary per character, the separators, and the text itself.
func sortKeySize(s string) int { return 6*len(s) + 5 }

// Compare compares a and b by their sort keys: -1, 0 or +1 as a sorts
// before, with or after b. An empty text sorts after every other one here
// (in ascending order; a descending list must still put it last).
func Compare(a, b string) int {
	switch {
	case a == b:
		return 0
	case a == "":
		return 1
	case b == "":
		return -1
	}
	c := collators.Get().(*collator)
	// Comparing the collator's keys gives the order of the compacted
	// ones (compact keeps it) without compacting.
	ka := c.c.KeyFromString(&c.buf, a)
	kb := c.c.KeyFromString(&c.buf, b)
	r := bytes.Compare(ka, kb)
	c.buf.Reset()
	collators.Put(c)
	if r != 0 {
		return r
	}
	return strings.Compare(a, b)
}

// matcher removes combining marks after NFD and then case-folds. A
// transform.Chain keeps state, so each call takes its own from a pool.
var matchers = sync.Pool{New: func() any {
	return transform.Chain(norm.NFD, runes.Remove(runes.In(unicode.Mn)), cases.Fold())
}}

// Match returns the match key of s: s in NFD with its combining marks
// removed, then case-folded. A query q matches a value v when
// strings.HasPrefix(Match(v), Match(q)). Invalid UTF-8 comes out as
// U+FFFD, so the key is always valid UTF-8 (PostgreSQL text needs that).
func Match(s string) string {
	if ascii, upper := asciiInfo(s); ascii {
		if !upper {
			return s
		}
		var b strings.Builder
		b.Grow(len(s))
		for i := 0; i < len(s); i++ {
			c := s[i]
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			b.WriteByte(c)
		}
		return b.String()
	}
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	t := matchers.Get().(transform.Transformer)
	out, _, err := transform.String(t, s)
	matchers.Put(t)
	if err != nil {
		// The transformers here fail only on a text too long for
		// their buffers to make progress, which valid UTF-8 cannot
		// be; keep the text rather than lose the value.
		return strings.ToLower(s)
	}
	return out
}

// asciiInfo reports whether s is ASCII, and if so whether it has upper-case
// letters (which the match key lowers; ASCII is its own NFD and folds to
// lower case).
func asciiInfo(s string) (ascii, upper bool) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf {
			return false, false
		}
		if 'A' <= c && c <= 'Z' {
			upper = true
		}
	}
	return true, upper
}
