package user_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/procurekit/procure"
	"github.com/procurekit/procure/user"
)

func TestNormalize(t *testing.T) {
	in := user.Input{
		ID:                new(" u-1 "),
		Username:          new("\t jdoe\n"),
		FirstName:         new("\u00a0Jane\u2003"), // no-break and em space are white space too
		Email:             new("  j@example.com "),
		Phone:             new("555"),
		OrganisationUnits: codes(" OU1", "OU2 "),
		Roles:             codes("  "),
		Attributes:        &[]user.Attribute{{Name: " costCentre ", Value: " CC1 "}},
	}
	orig := *in.Username
	origRole := (*in.OrganisationUnits)[0].Code
	got := in.Normalize()
	want := user.Input{
		ID:                new("u-1"),
		Username:          new("jdoe"),
		FirstName:         new("Jane"),
		Email:             new("j@example.com"),
		Phone:             new("555"),
		OrganisationUnits: codes("OU1", "OU2"),
		Roles:             codes(""),
		Attributes:        &[]user.Attribute{{Name: "costCentre", Value: "CC1"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Normalize (-want +got):\n%s", diff)
	}
	// Normalize works on a copy: the caller's values are untouched.
	if *in.Username != orig || (*in.OrganisationUnits)[0].Code != origRole {
		t.Errorf("Normalize changed its receiver: username %q, unit %q", *in.Username, (*in.OrganisationUnits)[0].Code)
	}

	u := user.User{ID: " u ", Username: " a ", Roles: user.Codes(" R "), Attributes: []user.Attribute{{Name: " n", Value: "v "}}}
	gotU := u.Normalize()
	wantU := user.User{ID: "u", Username: "a", Roles: user.Codes("R"), Attributes: []user.Attribute{{Name: "n", Value: "v"}}}
	if diff := cmp.Diff(wantU, gotU); diff != "" {
		t.Errorf("User.Normalize (-want +got):\n%s", diff)
	}
	if u.Roles[0].Code != " R " {
		t.Errorf("User.Normalize changed its receiver's roles: %q", u.Roles[0].Code)
	}
}

func TestValidate(t *testing.T) {
	long := strings.Repeat("x", 256)
	longChars := strings.Repeat("é", 255) // 510 bytes, 255 characters: allowed
	tests := []struct {
		name string
		op   user.Op
		in   user.Input
		want []procure.FieldError // nil: valid
	}{
		{name: "minimal create", op: user.OpCreate, in: user.Input{Username: new("jdoe")}},
		{name: "minimal update", op: user.OpUpdate, in: user.Input{ID: new("u-1"), Username: new("jdoe")}},
		{
			// docs: users.md: username required on create.
			name: "create without username", op: user.OpCreate, in: user.Input{FirstName: new("Jane")},
			want: []procure.FieldError{{Field: "username", Rule: "is required"}},
		},
		{
			name: "empty username", op: user.OpCreate, in: user.Input{Username: new("")},
			want: []procure.FieldError{{Field: "username", Rule: "is required"}},
		},
		{
			// docs: users.md: id and username required on update.
			name: "update without id or username", op: user.OpUpdate, in: user.Input{Email: new("j@example.com")},
			want: []procure.FieldError{
				{Field: "id", Rule: "is required to identify the user to update"},
				{Field: "username", Rule: "is required"},
			},
		},
		{
			name: "255 characters of two bytes each", op: user.OpCreate,
			in: user.Input{Username: &longChars, DisplayName: &longChars, Roles: codes(longChars)},
		},
		{
			// docs: users.md "The user object": every text field and code at most 255 characters.
			name: "256 characters", op: user.OpUpdate,
			in: user.Input{
				ID: &long, Username: &long, ExternalID: &long, FirstName: &long, LastName: &long,
				DisplayName: &long, Phone: &long, ApproverGroups: codes("ok", long),
			},
			want: []procure.FieldError{
				{Field: "id", Rule: "must be at most 255 characters"},
				{Field: "username", Rule: "must be at most 255 characters"},
				{Field: "externalId", Rule: "must be at most 255 characters"},
				{Field: "firstName", Rule: "must be at most 255 characters"},
				{Field: "lastName", Rule: "must be at most 255 characters"},
				{Field: "displayName", Rule: "must be at most 255 characters"},
				{Field: "phone", Rule: "must be at most 255 characters"},
				{Field: "approverGroups[1].code", Rule: "must be at most 255 characters"},
			},
		},
		{
			// docs: users.md: email, when present, must be valid.
			name: "invalid email", op: user.OpCreate, in: user.Input{Username: new("a"), Email: new("not an address")},
			want: []procure.FieldError{{Field: "email", Rule: "must be a valid email address"}},
		},
		{
			name: "email over 255", op: user.OpCreate, in: user.Input{Username: new("a"), Email: new(strings.Repeat("a", 250) + "@example.com")},
			want: []procure.FieldError{{Field: "email", Rule: "must be at most 255 characters"}},
		},
		{name: "empty email clears", op: user.OpCreate, in: user.Input{Username: new("a"), Email: new("")}},
		{
			// docs: users.md "The user object": attribute name and value at most 20 characters.
			name: "attribute lengths", op: user.OpCreate,
			in: user.Input{Username: new("a"), Attributes: &[]user.Attribute{
				{Name: strings.Repeat("n", 20), Value: strings.Repeat("v", 20)},
				{Name: strings.Repeat("n", 21), Value: strings.Repeat("v", 21)},
				{Name: "", Value: "x"},
				{Name: "empty value", Value: ""},
			}},
			want: []procure.FieldError{
				{Field: "attributes[1].name", Rule: "must be at most 20 characters"},
				{Field: "attributes[1].value", Rule: "must be at most 20 characters"},
				{Field: "attributes[2].name", Rule: "is required"},
			},
		},
		{
			name: "code required in each entry", op: user.OpCreate,
			in: user.Input{Username: new("a"), Roles: codes("BUYER", ""), BuyerGroups: codes("")},
			want: []procure.FieldError{
				{Field: "roles[1].code", Rule: "is required"},
				{Field: "buyerGroups[0].code", Rule: "is required"},
			},
		},
		{
			// docs: users.md: entries unique by code, attribute names unique.
			name: "duplicates", op: user.OpCreate,
			in: user.Input{
				Username:          new("a"),
				OrganisationUnits: codes("OU", "OU"),
				Roles:             codes("A", "B", "A", "A", "a"),
				Attributes:        &[]user.Attribute{{Name: "n", Value: "1"}, {Name: "n", Value: "2"}},
				ApproverGroups:    codes("G", "G"),
			},
			want: []procure.FieldError{
				{Field: "organisationUnits[1].code", Rule: `entries must be unique by code: "OU" is already at organisationUnits[0]`},
				{Field: "roles[2].code", Rule: `entries must be unique by code: "A" is already at roles[0]`},
				{Field: "roles[3].code", Rule: `entries must be unique by code: "A" is already at roles[0]`},
				{Field: "attributes[1].name", Rule: `attribute names must be unique: "n" is already at attributes[0]`},
				{Field: "approverGroups[1].code", Rule: `entries must be unique by code: "G" is already at approverGroups[0]`},
			},
		},
		{
			name: "errors sorted by field and index", op: user.OpCreate,
			in: user.Input{
				Roles: codes("A", "A", long),
				Email: new("bad"),
			},
			want: []procure.FieldError{
				{Field: "username", Rule: "is required"},
				{Field: "email", Rule: "must be a valid email address"},
				{Field: "roles[1].code", Rule: `entries must be unique by code: "A" is already at roles[0]`},
				{Field: "roles[2].code", Rule: "must be at most 255 characters"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.in.Validate(tt.op)
			if tt.want == nil {
				if err != nil {
					t.Fatalf("Validate = %v, want nil", err)
				}
				return
			}
			var ve *procure.ValidationError
			if !errors.As(err, &ve) || !errors.Is(err, procure.ErrInvalid) {
				t.Fatalf("Validate = %v (%T), want a *procure.ValidationError", err, err)
			}
			if ve.Source != procure.SourceBody {
				t.Errorf("Source = %q, want body", ve.Source)
			}
			if diff := cmp.Diff(tt.want, ve.Fields); diff != "" {
				t.Errorf("fields (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPrepareTrimsBeforeChecking(t *testing.T) {
	// docs: users.md: lengths are checked after trimming.
	padded := "  " + strings.Repeat("x", 255) + "  "
	in, err := user.Input{Username: &padded, Roles: codes(" A", "A ")}.Prepare(user.OpCreate)
	var ve *procure.ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("Prepare = %v, want the duplicate found after trimming", err)
	}
	if len(ve.Fields) != 1 || ve.Fields[0].Field != "roles[1].code" {
		t.Errorf("fields = %v, want only roles[1].code", ve.Fields)
	}
	in, err = user.Input{Username: &padded}.Prepare(user.OpCreate)
	if err != nil {
		t.Fatalf("Prepare: %v", err)
	}
	if len(*in.Username) != 255 {
		t.Errorf("prepared username has %d characters, want 255", len(*in.Username))
	}
}

func TestUserValidate(t *testing.T) {
	err := user.User{Username: "a", Roles: user.Codes("")}.Validate()
	var ve *procure.ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("Validate = %v, want a *procure.ValidationError", err)
	}
	want := []procure.FieldError{{Field: "id", Rule: "is required"}, {Field: "roles[0].code", Rule: "is required"}}
	if diff := cmp.Diff(want, ve.Fields); diff != "" || ve.Source != procure.SourceData {
		t.Errorf("source %q, fields (-want +got):\n%s", ve.Source, diff)
	}
	if err := (user.User{ID: "u", Username: "a", Enabled: true}).Validate(); err != nil {
		t.Errorf("valid user: %v", err)
	}
}

func TestUsernameKey(t *testing.T) {
	for _, names := range [][]string{{"JDoe", "jdoe", "JDOE"}, {"Ærøskøbing", "ÆRØSKØBING"}, {"ΣΊΣΥΦΟΣ", "σίσυφοσ"}} {
		for _, n := range names[1:] {
			if user.UsernameKey(n) != user.UsernameKey(names[0]) {
				t.Errorf("UsernameKey(%q) != UsernameKey(%q)", n, names[0])
			}
		}
	}
	if user.UsernameKey("jdoe") == user.UsernameKey("jdoe2") {
		t.Error("different usernames share a key")
	}
}
