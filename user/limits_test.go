package user_test

import (
	"errors"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/procurekit/procure"
	"github.com/procurekit/procure/user"
)

// Tests of docs: limits.md (issue 11) on the user rules.

func TestValidateUnstorableText(t *testing.T) {
	// NUL and invalid UTF-8 cannot be stored by PostgreSQL: every store
	// refuses them alike, naming the field.
	u := user.User{
		ID: "u\x00", Username: "bad\xff", FirstName: "ok", Email: "",
		Roles:      user.Codes("R\x00"),
		Attributes: []user.Attribute{{Name: "n", Value: "\xc0\xae"}},
	}
	err := u.Validate()
	var ve *procure.ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("Validate = %v; want a *procure.ValidationError", err)
	}
	rule := "must be UTF-8 text without NUL characters"
	want := []procure.FieldError{{Field: "id", Rule: rule}, {Field: "username", Rule: rule}, {Field: "roles[0].code", Rule: rule}, {Field: "attributes[0].value", Rule: rule}}
	var got []procure.FieldError
	for _, f := range ve.Fields {
		if f.Rule == rule {
			got = append(got, f)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("fields (-want +got):\n%s\nall: %v", diff, ve.Fields)
	}
	for s, ok := range map[string]bool{"": true, "jdoe": true, "ü": true, "a\x00": false, "\xff": false, "\xed\xa0\x80": false} {
		if user.Storable(s) != ok {
			t.Errorf("Storable(%q) = %v", s, !ok)
		}
	}
}

func TestValidateListLimits(t *testing.T) {
	codes := func(n int) []user.Code {
		cs := make([]user.Code, n)
		for i := range cs {
			cs[i].Code = "C" + strconv.Itoa(i)
		}
		return cs
	}
	at := user.User{ID: "u", Username: "a", Roles: codes(user.MaxListEntries), ApproverGroups: codes(user.MaxListEntries)}
	if err := at.Validate(); err != nil {
		t.Fatalf("%d entries: %v", user.MaxListEntries, err)
	}
	past := user.User{ID: "u", Username: "", Roles: codes(user.MaxListEntries + 1), BuyerGroups: codes(user.MaxListEntries + 1)}
	var ve *procure.ValidationError
	if !errors.As(past.Validate(), &ve) {
		t.Fatal("lists over the limit accepted")
	}
	// A list over the limit is reported alone: no entry-by-entry check.
	want := []procure.FieldError{
		{Field: "roles", Rule: "at most 1000 entries (got 1001)"},
		{Field: "buyerGroups", Rule: "at most 1000 entries (got 1001)"},
	}
	if diff := cmp.Diff(want, ve.Fields); diff != "" {
		t.Errorf("fields (-want +got):\n%s", diff)
	}
}
