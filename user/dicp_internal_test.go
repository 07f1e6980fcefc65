package user

import (
	"testing"
	"unicode"
)

// defaultIgnorable derives Default_Ignorable_Code_Point from the unicode
// package's tables; DerivedCoreProperties.txt of the same Unicode version
// counts the property's code points, which the derivation must meet.
func TestDefaultIgnorableCount(t *testing.T) {
	want := map[string]int{"15.0.0": 4174}[unicode.Version]
	if want == 0 {
		t.Skipf("no count recorded for Unicode %s: add the one DerivedCoreProperties.txt gives", unicode.Version)
	}
	n := 0
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if defaultIgnorable(r) {
			n++
		}
	}
	if n != want {
		t.Errorf("%d default-ignorable code points in Unicode %s; DerivedCoreProperties.txt counts %d", n, unicode.Version, want)
	}
	// Every bidirectional control is default-ignorable too; hiddenRune
	// checks both so that the rule does not rest on that.
	for _, r := range []rune{0x061C, 0x200E, 0x200F, 0x202A, 0x202E, 0x2066, 0x2069} {
		if !unicode.Is(unicode.Bidi_Control, r) {
			t.Errorf("%U is not Bidi_Control", r)
		}
		if _, _, ok := hiddenRune("a" + string(r)); !ok {
			t.Errorf("hiddenRune misses %U", r)
		}
	}
}
