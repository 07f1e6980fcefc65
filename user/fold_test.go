package user_test

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/procurekit/procure/user"
)

// docs: users.md: usernames compare case-insensitively. The key is
// Unicode simple case folding: equal keys exactly when strings.EqualFold.

func TestUsernameKeyIsSimpleCaseFolding(t *testing.T) {
	same := [][]string{
		{"JDoe", "jdoe", "JDOE"},
		{"Kate", "kate", "\u212Aate"}, // Kelvin sign K
		{"Mass", "MASS", "ma\u017Fs"}, // long s ſ
		{"ΣΊΣΥΦΟΣ", "σίσυφος", "σίσυφοσ", "ςίςυφος"},
		{"θ", "Θ", "ϑ", "ϴ"},
		{"Ærøskøbing", "ÆRØSKØBING"},
		{"straße", "STRAßE", "STRAẞE"}, // ß and capital ẞ are one orbit under simple folding
		{"µ", "μ", "Μ"},                // micro sign and mu
	}
	for _, names := range same {
		for _, n := range names[1:] {
			if !strings.EqualFold(n, names[0]) {
				t.Fatalf("test data: %q and %q are not EqualFold", n, names[0])
			}
			if user.UsernameKey(n) != user.UsernameKey(names[0]) {
				t.Errorf("UsernameKey(%q) = %q != UsernameKey(%q) = %q", n, user.UsernameKey(n), names[0], user.UsernameKey(names[0]))
			}
		}
	}
	different := [][2]string{
		{"jdoe", "jdoe2"},
		{"İstanbul", "istanbul"}, // U+0130: not in i's orbit under simple folding
		{"ı", "i"},               // dotless i
		{"strasse", "straße"},    // full folding would merge them; simple folding does not
	}
	for _, d := range different {
		if strings.EqualFold(d[0], d[1]) {
			t.Fatalf("test data: %q and %q are EqualFold", d[0], d[1])
		}
		if user.UsernameKey(d[0]) == user.UsernameKey(d[1]) {
			t.Errorf("UsernameKey(%q) == UsernameKey(%q) = %q", d[0], d[1], user.UsernameKey(d[0]))
		}
	}
	if k := user.UsernameKey("JDoe"); k != "jdoe" {
		t.Errorf("UsernameKey(JDoe) = %q; want the lower case for ASCII", k)
	}
}

func TestUsernameKeyEveryRune(t *testing.T) {
	// For every rune with case: folding keeps the orbit (EqualFold with
	// the rune) and every member of the orbit folds alike.
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if unicode.SimpleFold(r) == r || !utf8.ValidRune(r) {
			continue
		}
		k := user.UsernameKey(string(r))
		if !strings.EqualFold(k, string(r)) {
			t.Fatalf("UsernameKey(%U) = %q, not EqualFold to it", r, k)
		}
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			if user.UsernameKey(string(f)) != k {
				t.Fatalf("%U and %U are one orbit but fold to %q and %q", r, f, k, user.UsernameKey(string(f)))
			}
		}
	}
}

func FuzzUsernameKey(f *testing.F) {
	for _, s := range []string{"JDoe", "Kate", "ΣΊΣΥΦΟΣ", "İ", "straße", "a\xffb", ""} {
		f.Add(s, strings.ToUpper(s))
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		if !utf8.ValidString(a) || !utf8.ValidString(b) {
			return // usernames are valid UTF-8 (Validate)
		}
		ka, kb := user.UsernameKey(a), user.UsernameKey(b)
		if (ka == kb) != strings.EqualFold(a, b) {
			t.Fatalf("%q, %q: keys %q, %q; EqualFold %v", a, b, ka, kb, strings.EqualFold(a, b))
		}
		if user.UsernameKey(ka) != ka {
			t.Fatalf("the key %q of %q is not its own key", ka, a)
		}
	})
}
