package jsontext_test

import (
	"encoding/json"
	"math/rand/v2"
	"testing"

	"github.com/procurekit/procure/internal/jsontext"
)

// AppendString writes what encoding/json writes, byte for byte.
func TestAppendStringMatchesEncodingJSON(t *testing.T) {
	cases := []string{
		"", "plain", `quote " backslash \`, "\b\f\n\r\t\x00\x1f\x7f", "<a href='x'>&amp;</a>",
		"Ōtaki Organics", "北京 Trading", "line\u2028sep\u2029para", "bad \xff utf8 \xc3", "emoji 😀",
	}
	r := rand.New(rand.NewPCG(1, 2))
	alphabet := []rune{'a', '"', '\\', '<', '>', '&', '\n', 0x01, 0x7f, 'é', '😀', '\u2028', 0xfffd}
	// Strings up to 40 runes, some mostly plain, so that every special
	// byte lands at every position of the eight-byte words AppendString
	// tests at once, and clean words sit before and after it.
	for i := range 20000 {
		n := r.IntN(41)
		special := 2 + r.IntN(10) // one rune in special is from the alphabet
		if i%2 == 0 {
			special = 1
		}
		var b []byte
		for range n {
			switch {
			case r.IntN(special) != 0:
				b = append(b, byte('A'+r.IntN(58))) // plain: A-Z [ \ ] ^ _ ` a-z
			case r.IntN(10) == 0:
				b = append(b, byte(0x80+r.IntN(0x40))) // a stray continuation byte
			default:
				b = append(b, string(alphabet[r.IntN(len(alphabet))])...)
			}
		}
		cases = append(cases, string(b))
	}
	for c := range 256 { // each byte alone, between plain words
		cases = append(cases, "abcdefghij"+string(rune(c))+"klmnopqrstu", "abcdefgh"+string([]byte{byte(c)})+"ijklmnop")
	}
	for _, s := range cases {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := jsontext.AppendString([]byte("x"), s); string(got) != "x"+string(want) {
			t.Fatalf("AppendString(%q) = %s, want %s", s, got[1:], want)
		}
	}
}

// Strings as the supplier list holds them: plain, one with a character
// to escape, and one with non-ASCII letters.
func BenchmarkAppendString(b *testing.B) {
	for _, tc := range []struct{ name, s string }{
		{"plain", "Acme Office Supplies Pty Ltd, 12 Harbour Street West"},
		{"escaped", "Acme Office Supplies Pty Ltd <sales@acme.example>"},
		{"utf8", "Ōtaki Organics & Māori Trading Company Limited"},
	} {
		b.Run(tc.name, func(b *testing.B) {
			buf := make([]byte, 0, 256)
			b.ReportAllocs()
			b.SetBytes(int64(len(tc.s)))
			for b.Loop() {
				buf = jsontext.AppendString(buf[:0], tc.s)
			}
		})
	}
}

// AppendNonEmpty leaves an empty string out and writes any other, escaped,
// after its key.
func TestAppendNonEmpty(t *testing.T) {
	for _, tt := range []struct{ s, want string }{
		{"", "{"},
		{"a", `{,"k":"a"`},
		{"<\"\n>", `{,"k":"\u003c\"\n\u003e"`},
	} {
		if got := string(jsontext.AppendNonEmpty([]byte("{"), `,"k":`, tt.s)); got != tt.want {
			t.Errorf("AppendNonEmpty(%q) = %s; want %s", tt.s, got, tt.want)
		}
	}
}
