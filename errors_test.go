package procure_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/procurekit/procure"
)

func TestValidationError(t *testing.T) {
	v := &procure.ValidationError{Source: procure.SourceBody}
	if v.Err() != nil {
		t.Fatal("an empty ValidationError must be no error")
	}
	v.Add("username", "is required").Add("roles[1].code", "must be at most 255 characters")
	err := fmt.Errorf("create user: %w", v.Err())
	if !errors.Is(err, procure.ErrInvalid) {
		t.Error("a wrapped ValidationError must match ErrInvalid")
	}
	want := "username: is required; roles[1].code: must be at most 255 characters"
	if v.Error() != want {
		t.Errorf("Error() = %q, want %q", v.Error(), want)
	}
	p := v.Prefix("users[3]")
	wantP := "users[3].username: is required; users[3].roles[1].code: must be at most 255 characters"
	if p.Error() != wantP {
		t.Errorf("Prefix = %q, want %q", p.Error(), wantP)
	}
	idx := procure.Invalid(procure.SourceData, "[2]", "must be unique").Prefix("keywords")
	if idx.Error() != "keywords[2]: must be unique" {
		t.Errorf("index prefix = %q", idx.Error())
	}
	if v.Error() != want {
		t.Error("Prefix must not change the original")
	}
}

func ExampleValidationError() {
	err := procure.Invalid(procure.SourceQuery, "size", "must be from 1 to 100 (got 500)")
	fmt.Println(err, errors.Is(err, procure.ErrInvalid))
	// Output: size: must be from 1 to 100 (got 500) true
}

func TestValidationErrorOmitted(t *testing.T) {
	e := procure.Invalid(procure.SourceBody, "a", "is required")
	e.Omitted = 3
	if got := e.Error(); got != "a: is required; and 3 more" {
		t.Errorf("Error() = %q", got)
	}
	if p := e.Prefix("x"); p.Omitted != 3 || p.Error() != "x.a: is required; and 3 more" {
		t.Errorf("Prefix kept %d omitted: %q", p.Omitted, p.Error())
	}
}
