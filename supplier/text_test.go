package supplier_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/procurekit/procure/supplier"
)

// A Text is no value, or a string with "" a value of its own; the three
// compare as they should with == and Equal.
func TestText(t *testing.T) {
	tests := []struct {
		name string
		t    supplier.Text
		s    string
		zero bool
	}{
		{"no value", supplier.Text{}, "", true},
		{"the empty string", supplier.NewText(""), "", false},
		{"a string", supplier.NewText("Kōwhai"), "Kōwhai", false},
		{"a string starting with NUL", supplier.NewText("\x00x"), "\x00x", false},
		{"NUL alone", supplier.NewText("\x00"), "\x00", false},
	}
	for i, a := range tests {
		if got := a.t.String(); got != a.s {
			t.Errorf("%s: String() = %q, want %q", a.name, got, a.s)
		}
		if got := a.t.IsZero(); got != a.zero {
			t.Errorf("%s: IsZero() = %v, want %v", a.name, got, a.zero)
		}
		for j, b := range tests {
			if eq := a.t == b.t; eq != (i == j) || a.t.Equal(b.t) != eq {
				t.Errorf("%s against %s: == %v, Equal %v; want both %v", a.name, b.name, eq, a.t.Equal(b.t), i == j)
			}
		}
	}
}

// In JSON, with omitzero: no value is left out, "" is "", null and an
// absent member are no value (null leaves a value as it is, as for a
// string); strings are escaped as encoding/json escapes them.
func TestTextJSON(t *testing.T) {
	type doc struct {
		A supplier.Text `json:"a,omitzero"`
		B supplier.Text `json:"b,omitzero"`
		C supplier.Text `json:"c,omitzero"`
	}
	var d doc
	if err := json.Unmarshal([]byte(`{"a": "", "b": null}`), &d); err != nil {
		t.Fatal(err)
	}
	if d.A != supplier.NewText("") || !d.B.IsZero() || !d.C.IsZero() {
		t.Errorf("decoded %#v; want a the empty string, b and c no value", d)
	}
	out, err := json.Marshal(d)
	if err != nil || string(out) != `{"a":""}` {
		t.Errorf("Marshal = %s, %v; want {\"a\":\"\"}", out, err)
	}
	if err := json.Unmarshal([]byte(`{"a": "x", "a": null}`), &d); err != nil || d.A.String() != "x" {
		t.Errorf("null after a value: %q, %v; want the value kept, as for a string", d.A, err)
	}
	for _, s := range []string{"plain", "<tag> & \"quote\" \\ \n\t\x01", "\xff invalid", "\u2028 é 東", "\x00nul"} {
		want, _ := json.Marshal(s)
		got, err := json.Marshal(supplier.NewText(s))
		if err != nil || string(got) != string(want) {
			t.Errorf("Marshal(%q) = %s, %v; want %s as for a string", s, got, err, want)
		}
		var back supplier.Text
		var wantBack string
		_ = json.Unmarshal(want, &wantBack)
		if err := json.Unmarshal(want, &back); err != nil || back != supplier.NewText(wantBack) {
			t.Errorf("Unmarshal(%s) = %q, %v; want %q", want, back, err, wantBack)
		}
	}
	// Escaped and invalid text decodes as a string does.
	for _, raw := range []string{`"a\u0000b"`, `"\ud800"`, "\"\xff\"", `"é\n"`} {
		var s string
		var got supplier.Text
		if err := json.Unmarshal([]byte(raw), &s); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(raw), &got); err != nil || got.String() != s {
			t.Errorf("Unmarshal(%s) = %q, %v; want %q", raw, got, err, s)
		}
	}
	// Another JSON type is the error encoding/json gives for a string.
	for raw, kind := range map[string]string{`7`: "number", `{}`: "object", `[]`: "array", `true`: "bool"} {
		err := json.Unmarshal([]byte(`{"b": "x", "a": `+raw+`}`), &d)
		var typ *json.UnmarshalTypeError
		if !errors.As(err, &typ) || typ.Value != kind || typ.Type.Kind().String() != "string" || !strings.HasSuffix(typ.Field, "a") {
			t.Errorf("a %s: %#v; want an UnmarshalTypeError for field a, a string, got %s", kind, err, kind)
		}
	}
}
