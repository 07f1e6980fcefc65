package user_test

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

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
	// the rune's NFC form: the Kelvin sign is "K" in NFC) and every member
	// of the orbit with the same NFC form's orbit folds alike.
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if unicode.SimpleFold(r) == r || !utf8.ValidRune(r) {
			continue
		}
		nfc := norm.NFC.String(string(r))
		k := user.UsernameKey(string(r))
		if !strings.EqualFold(k, nfc) {
			t.Fatalf("UsernameKey(%U) = %q, not EqualFold to its NFC form %q", r, k, nfc)
		}
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			if strings.EqualFold(norm.NFC.String(string(f)), nfc) && user.UsernameKey(string(f)) != k {
				t.Fatalf("%U and %U are one orbit but fold to %q and %q", r, f, k, user.UsernameKey(string(f)))
			}
		}
	}
}

// Canonically equivalent usernames are one username: "é" precomposed or
// as "e" and a combining acute accent, in any case.
func TestUsernameKeyNFC(t *testing.T) {
	same := [][2]string{
		{"jos\u00e9", "jose\u0301"},
		{"JOS\u00c9", "jose\u0301"},
		{"\u212a", "k"},                    // the Kelvin sign is K in NFC
		{"a\u0323\u0307", "a\u0307\u0323"}, // combining marks in canonical order
		{"\u1e9b\u0323", "\u017f\u0323\u0307"},
	}
	for _, s := range same {
		if a, b := user.UsernameKey(s[0]), user.UsernameKey(s[1]); a != b {
			t.Errorf("UsernameKey(%+q) = %+q, UsernameKey(%+q) = %+q; want one key", s[0], a, s[1], b)
		}
	}
	if a, b := user.UsernameKey("jos\u00e9"), user.UsernameKey("jose"); a == b {
		t.Errorf("UsernameKey(jos\u00e9) = UsernameKey(jose) = %q: an accent is not ignored", a)
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
		na, nb := norm.NFC.String(a), norm.NFC.String(b)
		if (ka == kb) != strings.EqualFold(na, nb) {
			t.Fatalf("%q, %q: keys %q, %q; EqualFold of their NFC forms %v", a, b, ka, kb, strings.EqualFold(na, nb))
		}
		if k := user.UsernameKey(norm.NFD.String(a)); k != ka {
			t.Fatalf("the key of %q is %q, of its NFD form %q", a, ka, k)
		}
	})
}
