package pgstore

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestPrefixEnd(t *testing.T) {
	tests := []struct {
		name, p, want string
		ok            bool
	}{
		{"ascii", "abc", "abd", true},
		{"last ascii", "a\x7f", "a\u0080", true},
		{"two-byte", "ø", "ù", true},
		{"before surrogates", "a\ud7ff", "a\ue000", true},
		{"max rune carried", "a\U0010FFFF", "b", true},
		{"only max runes", "\U0010FFFF\U0010FFFF", "", false},
		{"empty", "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := prefixEnd(tt.p)
			if got != tt.want || ok != tt.ok {
				t.Fatalf("prefixEnd(%q) = %q, %v; want %q, %v", tt.p, got, ok, tt.want, tt.ok)
			}
		})
	}
}

// Every string in [p, prefixEnd(p)) in byte order starts with p, and every
// string that starts with p is in it.
func TestPrefixEndRange(t *testing.T) {
	prefixes := []string{"a", "ab", "z\x7f", "ø", "日本", "a\ud7ff"}
	samples := []string{"", "a", "a\x00", "ab", "abc", "ac", "b", "z\x7f", "z\x7f\x7f", "z\u0080", "ø", "øx", "ù", "日本", "日本語", "日末",
		"a\ud7ff", "a\ud7ffz", "a\ue000", "\U0010FFFF", "a\U0010FFFF"}
	for _, p := range prefixes {
		end, ok := prefixEnd(p)
		if !ok {
			t.Fatalf("prefixEnd(%q): no end", p)
		}
		for _, s := range samples {
			if !utf8.ValidString(s) {
				t.Fatalf("sample %q is not UTF-8", s)
			}
			inRange := s >= p && s < end
			if inRange != strings.HasPrefix(s, p) {
				t.Errorf("p=%q end=%q s=%q: in range %v, has prefix %v", p, end, s, inRange, strings.HasPrefix(s, p))
			}
		}
	}
}
