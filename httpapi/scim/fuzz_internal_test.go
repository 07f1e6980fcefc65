package scim

import (
	"testing"

	"github.com/procurekit/procure/user"
)

// The SCIM parsers take anything a client sends: they answer an error or
// a result, never a panic.

func FuzzSCIMFilter(f *testing.F) {
	for _, s := range []string{`userName eq "a"`, `userName eq "a" and externalId eq "b"`, `id eq "x\"y"`,
		`userName eq`, `(a eq "b")`, `a eq 5`, `a pr`, `emails[type eq "work"].value eq "x"`, `a eq "\u00e9"`, `userName eq "x" and (id eq "y" or not (externalId pr))`, `((((a eq 1))))`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := parseSCIMFilter(s)
		if err != nil {
			return
		}
		if n == nil {
			t.Fatalf("%q: no error and no filter", s)
		}
		if _, err := userFilter(n); err != nil {
			return
		}
	})
}

func FuzzSCIMPatch(f *testing.F) {
	for _, s := range []string{
		`{"Operations":[{"op":"replace","value":{"active":false}}]}`,
		`{"Operations":[{"op":"Replace","path":"active","value":"False"}]}`,
		`{"Operations":[{"op":"add","path":"emails[type eq \"work\"].value","value":"a@b.c"}]}`,
		`{"Operations":[{"op":"remove","path":"urn:procurekit:params:scim:schemas:extension:procure:2.0:User:roles[code eq \"A\"]"}]}`,
		`{"Operations":[{"op":"add","path":"urn:procurekit:params:scim:schemas:extension:procure:2.0:User:attributes","value":[{"name":"a","value":"b"}]}]}`,
		`{"Operations":[{"op":"replace","path":"name","value":{"givenName":"x"}}]}`,
		`{"Operations":[{"op":"replace","path":"emails[","value":"x"}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		ops, err := parsePatch(body)
		if err != nil {
			return
		}
		u := user.User{ID: "u", Username: "x", Enabled: true, Roles: user.Codes("A"), Attributes: []user.Attribute{{Name: "a", Value: "b"}}}
		_ = applyPatch(&u, ops)
	})
}

func FuzzSCIMInput(f *testing.F) {
	f.Add([]byte(`{"userName":"a","active":"True","emails":[{"value":"a@b.c","primary":"true"}]}`))
	f.Add([]byte(`{"userName":"a","urn:procurekit:params:scim:schemas:extension:procure:2.0:User":{"roles":["A",{"code":"B"}]}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		in, err := parseSCIMInput(body)
		if err != nil {
			return
		}
		_, _ = inputOf(&in)
	})
}
