package user_test

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/procurekit/procure/user"
)

// AppendJSON must write exactly what encoding/json writes, for every
// field: users are filled at random by reflection (so a field added to
// User is filled too, and the test fails until the encoder writes it),
// with empty strings, nil and empty lists mixed in for omitempty, and
// texts drawn to need every kind of escape.
func TestAppendJSONIsEncodingJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for i := range 5000 {
		var u user.User
		fillUser(rng, reflect.ValueOf(&u).Elem())
		want, err := json.Marshal(&u)
		if err != nil {
			t.Fatal(err)
		}
		if got := u.AppendJSON(nil); !bytes.Equal(got, want) {
			t.Fatalf("case %d: AppendJSON differs from encoding/json\nencoding/json: %s\nAppendJSON:    %s", i, want, got)
		}
	}
	// It appends: what b held stays in front.
	u := user.User{ID: "u1", Username: "a@example.com", Enabled: true}
	if got, want := string(u.AppendJSON([]byte("x"))), `x{"id":"u1","username":"a@example.com","enabled":true}`; got != want {
		t.Errorf("AppendJSON after a prefix = %s; want %s", got, want)
	}
}

// textParts are the pieces random texts are made of: plain words, each
// character encoding/json escapes, multi-byte runes, U+2028 and U+2029
// (escaped for JavaScript), and invalid UTF-8 (written as \ufffd).
var textParts = []string{"a", "Zoë", "user@example.com", " ", "\"", "\\", "/", "<", ">", "&", "\n", "\r", "\t",
	"\x00", "\x01", "\x1f", "\x7f", "\u2028", "\u2029", "日本", "\xff", "\xc3", "\xed\xa0\x80", "🌿"}

func randomText(rng *rand.Rand) string {
	if rng.IntN(4) == 0 {
		return ""
	}
	var s string
	for range rng.IntN(6) + 1 {
		s += textParts[rng.IntN(len(textParts))]
	}
	return s
}

// fillUser sets every field of v (a User, a Code, an Attribute) at
// random.
func fillUser(rng *rand.Rand, v reflect.Value) {
	switch v.Kind() {
	case reflect.String:
		v.SetString(randomText(rng))
	case reflect.Bool:
		v.SetBool(rng.IntN(2) == 0)
	case reflect.Int64:
		v.SetInt(rng.Int64())
	case reflect.Slice:
		switch rng.IntN(3) {
		case 0: // nil
		case 1:
			v.Set(reflect.MakeSlice(v.Type(), 0, 0))
		default:
			n := rng.IntN(3) + 1
			s := reflect.MakeSlice(v.Type(), n, n)
			for i := range n {
				fillUser(rng, s.Index(i))
			}
			v.Set(s)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			fillUser(rng, v.Field(i))
		}
	default:
		panic("fillUser: a field of kind " + v.Kind().String() + ": teach the test (and AppendJSON) about it")
	}
}

// BenchmarkUserJSON encodes a typical user (BenchUserBody's fields) with
// encoding/json and with AppendJSON.
func BenchmarkUserJSON(b *testing.B) {
	u := user.User{ID: "8f5c2a8e-6f7b-4d3e-9a41-2b7c1d0e9f31", Username: "user0000500@example.com",
		ExternalID: "EMP-000500", FirstName: "Aroha", LastName: "Ngata", DisplayName: "Aroha Ngata",
		Email: "user0000500@example.com", Phone: "+64 9 555 0500", Enabled: true,
		OrganisationUnits: user.Codes("OU-FIN"), Roles: user.Codes("REQUESTER", "APPROVER"),
		BuyerGroups: user.Codes("BG-ALL"), Attributes: []user.Attribute{{Name: "costCentre", Value: "CC-100"}},
		ApproverGroups: user.Codes("AG-1")}
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		for b.Loop() {
			buf.Reset()
			if err := enc.Encode(&u); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("AppendJSON", func(b *testing.B) {
		b.ReportAllocs()
		buf := make([]byte, 0, 1024)
		for b.Loop() {
			buf = u.AppendJSON(buf[:0])
		}
	})
}
