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
	for range 5000 {
		n := r.IntN(12)
		var b []byte
		for range n {
			if r.IntN(10) == 0 {
				b = append(b, byte(0x80+r.IntN(0x40))) // a stray continuation byte
				continue
			}
			b = append(b, string(alphabet[r.IntN(len(alphabet))])...)
		}
		cases = append(cases, string(b))
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

func BenchmarkAppendString(b *testing.B) {
	buf := make([]byte, 0, 256)
	b.ReportAllocs()
	for b.Loop() {
		buf = jsontext.AppendString(buf[:0], "Acme Office Supplies Pty Ltd <sales@acme.example>")
	}
}
