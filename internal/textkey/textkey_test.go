package textkey_test

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode"

	"golang.org/x/text/cases"
	"golang.org/x/text/collate"
	"golang.org/x/text/language"
	"golang.org/x/text/runes"
	"golang.org/x/text/transform"
	"golang.org/x/text/unicode/norm"

	"github.com/procurekit/procure/internal/textkey"
)

func TestSortOrder(t *testing.T) {
	tests := []struct {
		name string
		want []string // in ascending order
	}{
		{"accents are ignored first", []string{"Oak", "Ōtaki Organics", "Oz", "Zenith Scientific"}},
		{"a macron after the plain letter when otherwise equal", []string{"Otaki", "Ōtaki"}},
		{"case is ignored first", []string{"apple", "Banana", "cherry"}},
		{"lower case before upper case when otherwise equal", []string{"apple", "Apple", "APPLE"}},
		{"case before accents is not a thing: accents weigh more", []string{"muller", "Muller", "Müller"}},
		{"letters decide before accents", []string{"Mueller", "Müller", "Mullet"}},
		{"a prefix first", []string{"ota", "Ōtaki"}},
		{"spaces and punctuation count", []string{"A B", "A-B", "AB"}},
		{"digits before letters", []string{"3M", "ABB"}},
		{"NFD before NFC: equal at full strength, then bytes", []string{"O\u0304taki", "\u014Ctaki"}},
		{"an ignorable character breaks ties by bytes", []string{"ab", "a\u200Bb"}},
		{"Greek and Cyrillic after Latin", []string{"Zeta", "Ζήτα", "Жук"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := slices.Clone(tt.want)
			rand.Shuffle(len(got), func(i, j int) { got[i], got[j] = got[j], got[i] })
			slices.SortFunc(got, func(a, b string) int { return bytes.Compare(textkey.SortKey(a), textkey.SortKey(b)) })
			if !slices.Equal(got, tt.want) {
				t.Errorf("sorted by key: %q, want %q", got, tt.want)
			}
			slices.SortFunc(got, func(a, b string) int { return -textkey.Compare(a, b) })
			slices.Reverse(got)
			if !slices.Equal(got, tt.want) {
				t.Errorf("sorted by Compare: %q, want %q", got, tt.want)
			}
		})
	}
}

func TestEmpty(t *testing.T) {
	if k := textkey.SortKey(""); k != nil {
		t.Errorf("SortKey(\"\") = %v, want nil", k)
	}
	dst := []byte("x")
	if got := textkey.Sort(dst, ""); string(got) != "x" {
		t.Errorf("Sort(dst, \"\") = %q, want dst unchanged", got)
	}
	for _, s := range []string{"a", "\u200B", " ", "Zenith"} {
		if textkey.Compare("", s) != 1 || textkey.Compare(s, "") != -1 {
			t.Errorf("Compare: %q does not sort before the empty text", s)
		}
	}
	if textkey.Compare("", "") != 0 {
		t.Error(`Compare("", "") != 0`)
	}
	if m := textkey.Match(""); m != "" {
		t.Errorf("Match(\"\") = %q", m)
	}
}

func TestSortAppends(t *testing.T) {
	k := textkey.Sort([]byte("prefix"), "Ōtaki")
	if !bytes.HasPrefix(k, []byte("prefix")) || !bytes.Equal(k[len("prefix"):], textkey.SortKey("Ōtaki")) {
		t.Errorf("Sort(dst, s) = %q, want dst followed by SortKey(s)", k)
	}
}

func TestMatch(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"Ōtaki Organics", "otaki organics"},
		{"O\u0304taki", "otaki"}, // NFD input
		{"OTA", "ota"},
		{"ota", "ota"},
		{"Müller", "muller"},
		{"MÜ", "mu"},
		{"Straße", "strasse"},
		{"STRASSE", "strasse"},
		{"ẞ", "ss"},               // capital sharp s
		{"İstanbul", "istanbul"},  // dotted capital I: the dot is a mark
		{"ﬁne", "fine"},           // ligature folds to two letters
		{"\u212Aelvin", "kelvin"}, // Kelvin sign is K in NFD
		{"Ζήτα", "ζητα"},
		{"ΣΟΦΟΣ", "σοφοσ"}, // folding, not lower-casing: no final sigma
		{"Crème Brûlée", "creme brulee"},
		{"a\xffb", "a\uFFFDb"}, // invalid UTF-8 becomes U+FFFD
		{"ABC-123 x", "abc-123 x"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := textkey.Match(tt.in); got != tt.want {
			t.Errorf("Match(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestMatchPrefix(t *testing.T) {
	tests := []struct {
		value, query string
		want         bool
	}{
		{"Ōtaki Organics", "ota", true},
		{"Ōtaki Organics", "OTA", true},
		{"Ōtaki Organics", "ōta", true},
		{"Müller GmbH", "mu", true},
		{"Müller GmbH", "MÜ", true},
		{"Müller GmbH", "mue", false}, // no German transliteration
		{"Straße AG", "strass", true},
		{"Strasse AG", "straß", true},
		{"Zenith Scientific", "ota", false},
		{"Ōtaki Organics", "taki", false}, // starts with, not contains
	}
	for _, tt := range tests {
		if got := strings.HasPrefix(textkey.Match(tt.value), textkey.Match(tt.query)); got != tt.want {
			t.Errorf("%q starts with %q: %v, want %v", tt.value, tt.query, got, tt.want)
		}
	}
}

// corpus is a set of texts chosen to collide at each level: equal letters
// with other accents or case, NFC and NFD spellings, ignorable characters,
// prefixes, and a few scripts.
func corpus(r *rand.Rand, n int) []string {
	pieces := []string{"a", "A", "á", "a\u0301", "Á", "o", "O", "Ō", "O\u0304", "ö", "u", "ü", "U", "Ü",
		"ss", "ß", "SS", "ẞ", "e", "é", "È", "z", "Z", " ", "-", ".", "1", "2", "\u200B", "\u00AD",
		"ﬁ", "fi", "ı", "i", "İ", "I", "ζ", "Ζ", "ж", "Ж", "字", "한", "😀", "\u0301", "ǅ", "Ǆ", "ǆ", "ａ", "Ａ", "ｱ", "ア", "あ", "①", "ﾞ"}
	out := []string{"Ōtaki Organics", "Otaki", "otaki", "Zenith Scientific", "Müller", "Muller", "MULLER", "Mueller"}
	// Runs of common weights around the lengths where the compacted key
	// splits them, ending in a weight below, above or equal to the common
	// one, or nothing.
	for _, size := range []int{1, 2, 31, 32, 33, 63, 64, 65, 96, 128, 129} {
		for _, run := range []string{"a", "A"} {
			for _, end := range []string{"", "a", "A", "á", "b", "\u0301", "ｱ", "ａ", "-", "ẞ"} {
				out = append(out, strings.Repeat(run, size)+end)
				out = append(out, "á"+strings.Repeat(run, size)+end)
			}
		}
	}
	for len(out) < n {
		var b strings.Builder
		for range 1 + r.IntN(6) {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		out = append(out, b.String())
	}
	return out
}

// TestSortKeyOrder checks the keys against the rule they encode, on every
// pair of a corpus: the loose collation, then the collation at full
// strength (each by the collator's own comparison), then bytes.
func TestSortKeyOrder(t *testing.T) {
	loose := collate.New(language.Und, collate.Loose)
	full := collate.New(language.Und)
	rule := func(a, b string) int {
		if c := loose.CompareString(a, b); c != 0 {
			return c
		}
		if c := full.CompareString(a, b); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	}
	texts := corpus(rand.New(rand.NewPCG(1, 2)), 1000)
	keys := make([][]byte, len(texts))
	for i, s := range texts {
		keys[i] = textkey.SortKey(s)
	}
	for i, a := range texts {
		for j, b := range texts {
			want := rule(a, b)
			if got := bytes.Compare(keys[i], keys[j]); got != want {
				t.Fatalf("keys of %q and %q compare %d, the rule says %d", a, b, got, want)
			}
			if (a == b) != bytes.Equal(keys[i], keys[j]) {
				t.Fatalf("%q and %q: equal texts %v, equal keys %v", a, b, a == b, bytes.Equal(keys[i], keys[j]))
			}
			if (i+j)%4 != 0 {
				continue // Compare on a quarter of the pairs is enough
			}
			if got := textkey.Compare(a, b); got != want {
				t.Fatalf("Compare(%q, %q) = %d, the rule says %d", a, b, got, want)
			}
		}
	}
}

// TestMatchRule checks Match against the rule written as one transform
// chain (Match takes a shortcut for ASCII), and that a match key is its own
// match key, so a stored key can be matched against again.
func TestMatchRule(t *testing.T) {
	rule := func(s string) string {
		out, _, err := transform.String(transform.Chain(norm.NFD, runes.Remove(runes.In(unicode.Mn)), cases.Fold()), s)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	texts := corpus(rand.New(rand.NewPCG(3, 4)), 2000)
	for c := rune(0x20); c < 0x7F; c++ {
		texts = append(texts, "x"+string(c)+"Y")
	}
	for _, s := range texts {
		m := textkey.Match(s)
		if want := rule(s); m != want {
			t.Errorf("Match(%q) = %q, the rule says %q", s, m, want)
		}
		if again := textkey.Match(m); again != m {
			t.Errorf("Match(Match(%q)) = %q, want %q", s, again, m)
		}
	}
}

func TestConcurrent(t *testing.T) {
	texts := corpus(rand.New(rand.NewPCG(5, 6)), 200)
	want := make([][]byte, len(texts))
	for i, s := range texts {
		want[i] = textkey.SortKey(s)
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for n := range 50 {
				i := (g*7 + n*13) % len(texts)
				if got := textkey.SortKey(texts[i]); !bytes.Equal(got, want[i]) {
					t.Errorf("SortKey(%q) from goroutine %d differs", texts[i], g)
					return
				}
				textkey.Match(texts[i])
				textkey.Compare(texts[i], texts[(i+1)%len(texts)])
			}
		})
	}
	wg.Wait()
}

var sink []byte

var names = map[string]string{
	"ascii":    "Zenith Scientific Supplies Ltd",
	"accented": "Ōtaki Organics Müller & Söhne",
}

func BenchmarkSortKey(b *testing.B) {
	for name, s := range names {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				sink = textkey.SortKey(s)
			}
			b.ReportMetric(float64(len(textkey.SortKey(s))), "keybytes")
		})
	}
}

func BenchmarkSortAppend(b *testing.B) {
	buf := make([]byte, 0, 512)
	for name, s := range names {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				buf = textkey.Sort(buf[:0], s)
			}
		})
	}
}

var sinkString string

func BenchmarkMatch(b *testing.B) {
	for name, s := range names {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				sinkString = textkey.Match(s)
			}
		})
	}
}

var sinkInt int

func BenchmarkCompare(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		sinkInt = textkey.Compare(names["ascii"], names["accented"])
	}
}

// BenchmarkSortKeyParallel compares the pool Sort uses with one collator
// behind a mutex, the other way to share a collator that is not safe for
// concurrent use.
func BenchmarkSortKeyParallel(b *testing.B) {
	s := names["accented"]
	b.Run("pool", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			buf := make([]byte, 0, 512)
			for pb.Next() {
				buf = textkey.Sort(buf[:0], s)
			}
		})
	})
	b.Run("mutex", func(b *testing.B) {
		var mu sync.Mutex
		c := collate.New(language.Und)
		var cb collate.Buffer
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			buf := make([]byte, 0, 512)
			for pb.Next() {
				mu.Lock()
				buf = append(buf[:0], c.KeyFromString(&cb, s)...)
				cb.Reset()
				mu.Unlock()
				buf = append(append(buf, 0), s...)
			}
		})
	})
}
