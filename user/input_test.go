package user_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/procurekit/procure"
	"github.com/procurekit/procure/user"
)

func codes(cs ...string) *[]user.Code {
	l := user.Codes(cs...)
	if l == nil {
		l = []user.Code{}
	}
	return &l
}

func TestParseInput(t *testing.T) {
	tests := []struct {
		name string
		body string
		want user.Input
	}{
		{
			name: "every field",
			body: `{"id":"u-1","username":"jdoe","externalId":"E1","firstName":"Jane","lastName":"Doe",
				"displayName":"Jane Doe","email":"jane@example.com","phone":"+64 4 555","enabled":false,
				"organisationUnits":[{"code":"OU1"}],"roles":[{"code":"BUYER"}],"buyerGroups":[{"code":"BG"}],
				"attributes":[{"name":"costCentre","value":"CC1"}],"approverGroups":[{"code":"AG"}]}`,
			want: user.Input{
				ID: new("u-1"), Username: new("jdoe"), ExternalID: new("E1"), FirstName: new("Jane"),
				LastName: new("Doe"), DisplayName: new("Jane Doe"), Email: new("jane@example.com"),
				Phone: new("+64 4 555"), Enabled: new(false), OrganisationUnits: codes("OU1"),
				Roles: codes("BUYER"), BuyerGroups: codes("BG"),
				Attributes:     &[]user.Attribute{{Name: "costCentre", Value: "CC1"}},
				ApproverGroups: codes("AG"),
			},
		},
		{
			// docs: users.md: an update replaces only what is present.
			name: "omitted fields are absent",
			body: `{"username":"jdoe"}`,
			want: user.Input{Username: new("jdoe")},
		},
		{
			// Package doc: null is "present, with no value".
			name: "null clears text and lists",
			body: `{"username":"jdoe","email":null,"roles":null,"attributes":null}`,
			want: user.Input{Username: new("jdoe"), Email: new(""), Roles: codes(), Attributes: &[]user.Attribute{}},
		},
		{
			name: "null enabled counts as omitted",
			body: `{"username":"jdoe","enabled":null}`,
			want: user.Input{Username: new("jdoe")},
		},
		{
			name: "empty values are present",
			body: `{"username":"","phone":"","buyerGroups":[]}`,
			want: user.Input{Username: new(""), Phone: new(""), BuyerGroups: codes()},
		},
		{
			// docs: users.md: unknown JSON fields are ignored.
			name: "unknown fields ignored",
			body: `{"username":"jdoe","nickname":"JD","roles":[{"code":"R","label":"x"}],"extra":{"a":[1,2]}}`,
			want: user.Input{Username: new("jdoe"), Roles: codes("R")},
		},
		{
			// docs: users.md: both spellings are accepted on input.
			name: "spec table spelling organisationsUnits",
			body: `{"organisationsUnits":[{"code":"OU1"},{"code":"OU2"}]}`,
			want: user.Input{OrganisationUnits: codes("OU1", "OU2")},
		},
		{
			name: "both spellings, equal after trimming",
			body: `{"organisationUnits":[{"code":"OU1"}],"organisationsUnits":[{"code":" OU1 "}]}`,
			want: user.Input{OrganisationUnits: codes("OU1")},
		},
		{
			name: "escapes and non-ASCII text",
			body: `{"username":"j\u00e9r\u00f4me","displayName":"A \"quoted\" name\t","lastName":"Ng\u0169y\u1ec5n"}`,
			want: user.Input{Username: new("jérôme"), DisplayName: new("A \"quoted\" name\t"), LastName: new("Ngũyễn")},
		},
		{
			name: "invalid UTF-8 becomes U+FFFD",
			body: "{\"firstName\":\"a\xffb\"}",
			want: user.Input{FirstName: new("a\uFFFDb")},
		},
		{
			name: "case-insensitive keys, as encoding/json matches them",
			body: `{"UserName":"jdoe","ENABLED":true}`,
			want: user.Input{Username: new("jdoe"), Enabled: new(true)},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := user.ParseInput([]byte(tt.body))
			if err != nil {
				t.Fatalf("ParseInput: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Input (-want +got):\n%s", diff)
			}
			// json.Unmarshal goes through Input.UnmarshalJSON: the same.
			var viaJSON user.Input
			if err := json.Unmarshal([]byte(tt.body), &viaJSON); err != nil {
				t.Fatalf("json.Unmarshal: %v", err)
			}
			if diff := cmp.Diff(tt.want, viaJSON); diff != "" {
				t.Errorf("json.Unmarshal Input (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseInputErrors(t *testing.T) {
	tests := []struct {
		name      string
		body      string
		wantField string // UnmarshalTypeError.Field
		wantValue string // UnmarshalTypeError.Value (the JSON type sent)
		wantKind  string // Kind of the expected Go type
	}{
		{"username number", `{"username":5}`, "username", "number", "string"},
		{"email object", `{"email":{"a":1}}`, "email", "object", "string"},
		{"enabled string", `{"enabled":"yes"}`, "enabled", "string", "bool"},
		{"enabled number", `{"enabled":1}`, "enabled", "number", "bool"},
		{"roles string", `{"roles":"ADMIN"}`, "roles", "string", "slice"},
		{"roles of strings", `{"roles":["ADMIN"]}`, "roles", "string", "struct"},
		{"role code number", `{"roles":[{"code":5}]}`, "roles.code", "number", "string"},
		{"attribute value bool", `{"attributes":[{"name":"a","value":true}]}`, "attributes.value", "bool", "string"},
		{"top level array", `[{"username":"jdoe"}]`, "", "array", "struct"},
		{"top level string", `"jdoe"`, "", "string", "struct"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := user.ParseInput([]byte(tt.body))
			var te *json.UnmarshalTypeError
			if !errors.As(err, &te) {
				t.Fatalf("ParseInput(%s) = %v (%T), want a *json.UnmarshalTypeError", tt.body, err, err)
			}
			if te.Field != tt.wantField || te.Value != tt.wantValue || te.Type.Kind().String() != tt.wantKind {
				t.Errorf("type error field %q value %q kind %s, want %q %q %s", te.Field, te.Value, te.Type.Kind(), tt.wantField, tt.wantValue, tt.wantKind)
			}
		})
	}

	t.Run("malformed JSON", func(t *testing.T) {
		for _, body := range []string{``, `{`, `{"username":"a",}`, `{"username":"a"} trailing`, `{'username':'a'}`} {
			_, err := user.ParseInput([]byte(body))
			var se *json.SyntaxError
			if !errors.As(err, &se) {
				t.Errorf("ParseInput(%q) = %v (%T), want a *json.SyntaxError", body, err, err)
			}
		}
	})

	t.Run("both spellings differ", func(t *testing.T) {
		// docs: users.md: both present and different is a 400 naming both.
		for _, body := range []string{
			`{"organisationUnits":[{"code":"A"}],"organisationsUnits":[{"code":"B"}]}`,
			`{"organisationUnits":[{"code":"A"},{"code":"B"}],"organisationsUnits":[{"code":"B"},{"code":"A"}]}`,
			`{"organisationUnits":[],"organisationsUnits":[{"code":"A"}]}`,
		} {
			_, err := user.ParseInput([]byte(body))
			var ve *procure.ValidationError
			if !errors.As(err, &ve) || !errors.Is(err, procure.ErrInvalid) {
				t.Fatalf("ParseInput(%s) = %v, want a *procure.ValidationError", body, err)
			}
			want := []procure.FieldError{{Field: "organisationsUnits", Rule: "must hold the same codes as organisationUnits when both are sent (they are two spellings of one field; send one)"}}
			if diff := cmp.Diff(want, ve.Fields); diff != "" || ve.Source != procure.SourceBody {
				t.Errorf("source %q, fields (-want +got):\n%s", ve.Source, diff)
			}
		}
	})
}

func TestInputMarshalJSON(t *testing.T) {
	in := user.Input{
		Username:          new("jdoe"),
		Email:             new(""),
		Enabled:           new(false),
		OrganisationUnits: codes("OU1"),
		Roles:             codes(),
	}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	// Only present fields, in the spec sample's spelling; present empty
	// values are sent, so that they clear the field on update.
	want := `{"username":"jdoe","email":"","enabled":false,"organisationUnits":[{"code":"OU1"}],"roles":[]}`
	if string(b) != want {
		t.Errorf("json.Marshal = %s\nwant %s", b, want)
	}
	back, err := user.ParseInput(b)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(in, back); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
}

func TestUserJSON(t *testing.T) {
	t.Run("encode", func(t *testing.T) {
		u := user.User{ID: "u-1", Username: "jdoe", OrganisationUnits: user.Codes("OU1"), Roles: []user.Code{}}
		b, err := json.Marshal(u)
		if err != nil {
			t.Fatal(err)
		}
		// docs: users.md: every response includes enabled, and uses
		// organisationUnits; empty optional fields are omitted, never null.
		want := `{"id":"u-1","username":"jdoe","enabled":false,"organisationUnits":[{"code":"OU1"}]}`
		if string(b) != want {
			t.Errorf("json.Marshal = %s\nwant %s", b, want)
		}
	})
	t.Run("decode", func(t *testing.T) {
		tests := []struct {
			name, body string
			want       user.User
		}{
			{"enabled defaults to true", `{"id":"u","username":"a"}`, user.User{ID: "u", Username: "a", Enabled: true}},
			{"enabled false kept", `{"id":"u","username":"a","enabled":false}`, user.User{ID: "u", Username: "a"}},
			{"other spelling", `{"id":"u","username":"a","organisationsUnits":[{"code":"X"}]}`, user.User{ID: "u", Username: "a", Enabled: true, OrganisationUnits: user.Codes("X")}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				var got user.User
				if err := json.Unmarshal([]byte(tt.body), &got); err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("User (-want +got):\n%s", diff)
				}
			})
		}
	})
}

func TestInputOfApplyTo(t *testing.T) {
	u := user.User{
		ID: "u-1", Username: "jdoe", Email: "j@example.com", Enabled: true,
		Roles:      user.Codes("A", "B"),
		Attributes: []user.Attribute{{Name: "n", Value: "v"}},
	}
	in := user.InputOf(u)
	if got := in.Fields(); len(got) != 14 {
		t.Errorf("InputOf(u).Fields() = %v, want all 14 fields", got)
	}
	var got user.User
	in.ApplyTo(&got)
	if diff := cmp.Diff(u, got); diff != "" {
		t.Errorf("ApplyTo(InputOf(u)) (-want +got):\n%s", diff)
	}
	// Neither shares lists with the other.
	(*in.Roles)[0].Code = "CHANGED"
	got.Attributes[0].Value = "CHANGED"
	if u.Roles[0].Code != "A" || u.Attributes[0].Value != "v" {
		t.Errorf("InputOf or ApplyTo shares lists with its argument: %+v", u)
	}

	t.Run("absent fields untouched", func(t *testing.T) {
		cur := u.Clone()
		user.Input{Email: new(""), Enabled: new(false)}.ApplyTo(&cur)
		want := u.Clone()
		want.Email, want.Enabled = "", false
		if diff := cmp.Diff(want, cur); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})
	t.Run("no id without one", func(t *testing.T) {
		if in := user.InputOf(user.User{Username: "a"}); in.ID != nil {
			t.Errorf("InputOf a user without id has ID %q", *in.ID)
		}
	})
}
