package supplier

import (
	"bytes"
	"encoding/json"
	"reflect"
	"unicode/utf8"

	"github.com/procurekit/procure/internal/jsontext"
)

// Text is an optional text field: no value (the zero Text), or a string,
// the empty string included. The two are different values (docs:
// values.md "Round trip"): a field written as "" is kept and returned as
// "", a field with no value is left out of JSON. Text carries that itself,
// so a field of type Text keeps it through every decoder, store, copy,
// comparison and encoder with nothing else to tell.
//
// In JSON (with the tag option omitzero) no value is an absent member, ""
// and any other string a JSON string; null decodes to no value, as for any
// optional field. Text compares with == exactly as Equal does, and costs
// what a string costs.
type Text struct {
	// v holds the value as is, unless the value is empty or begins with
	// a NUL byte: then v holds it behind one NUL byte. The empty v is no
	// value. (NUL starts no storable text: check.Storable.)
	v string
}

// NewText returns the Text of s, which may be "": a value, not none.
func NewText(s string) Text {
	switch {
	case s == "":
		return Text{"\x00"}
	case s[0] == 0:
		return Text{"\x00" + s}
	}
	return Text{s}
}

// String returns the value of t: "" for no value as for the empty string.
func (t Text) String() string {
	if t.v != "" && t.v[0] == 0 {
		return t.v[1:]
	}
	return t.v
}

// IsZero reports whether t has no value (the omitzero option of
// encoding/json calls it).
func (t Text) IsZero() bool { return t.v == "" }

// Equal reports whether t and u are the same: both no value, or both the
// same string.
func (t Text) Equal(u Text) bool { return t == u }

// MarshalJSON writes t as a JSON string, escaped as encoding/json escapes
// a string. No value is written as "" too: the omitzero option leaves it
// out.
func (t Text) MarshalJSON() ([]byte, error) {
	return jsontext.AppendString(nil, t.String()), nil
}

// UnmarshalJSON reads a JSON string into t; null leaves t as it is, as it
// does a string (a value a decoder has not set is no value).
func (t *Text) UnmarshalJSON(b []byte) error {
	switch {
	case string(b) == "null":
		return nil
	case len(b) < 2 || b[0] != '"':
		return &json.UnmarshalTypeError{Value: jsontext.Kind(b), Type: reflect.TypeFor[string]()}
	}
	if s := b[1 : len(b)-1]; bytes.IndexByte(s, '\\') < 0 && utf8.Valid(s) {
		// encoding/json has checked the syntax: a string without
		// escapes is its bytes.
		*t = NewText(string(s))
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	*t = NewText(s)
	return nil
}
