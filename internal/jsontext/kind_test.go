package jsontext_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/procurekit/procure/internal/jsontext"
)

// Kind names each JSON type as encoding/json's UnmarshalTypeError does.
func TestKindIsEncodingJSONs(t *testing.T) {
	for _, v := range []string{`"s"`, `{}`, `[1]`, `true`, `false`, `12.5`, `-1`} {
		var ch chan int // no JSON value fits: every value's type is named
		err := json.Unmarshal([]byte(v), &ch)
		var te *json.UnmarshalTypeError
		if !errors.As(err, &te) {
			t.Fatalf("%s: %v", v, err)
		}
		if got := jsontext.Kind([]byte(v)); got != te.Value {
			t.Errorf("Kind(%s) = %q, encoding/json says %q", v, got, te.Value)
		}
	}
	if got := jsontext.Kind([]byte("null")); got != "null" {
		t.Errorf("Kind(null) = %q", got)
	}
	if got := jsontext.Kind(nil); got != "value" {
		t.Errorf("Kind(nil) = %q", got)
	}
}
