package scim

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/procurekit/procure/httpapi/internal/apitest"
	"github.com/procurekit/procure/user"
)

// scimResource is a user as a SCIM User resource for encoding/json: the
// reference appendSCIMUser is held to, byte for byte, on random users
// (TestAppendSCIMUserIsEncodingJSON), and what BenchmarkSCIMUserEncoding
// compares it with.
type scimResource struct {
	Schemas      []string          `json:"schemas"`
	ID           string            `json:"id"`
	ExternalID   string            `json:"externalId,omitempty"`
	UserName     string            `json:"userName"`
	Name         *scimNameOut      `json:"name,omitempty"`
	DisplayName  string            `json:"displayName,omitempty"`
	Emails       []scimEmailOut    `json:"emails,omitempty"`
	PhoneNumbers []scimPhoneOut    `json:"phoneNumbers,omitempty"`
	Active       bool              `json:"active"`
	Extension    *scimExtensionOut `json:"urn:procurekit:params:scim:schemas:extension:procure:2.0:User,omitempty"`
	Meta         scimMeta          `json:"meta"`
}

type scimNameOut struct {
	GivenName  string `json:"givenName,omitempty"`
	FamilyName string `json:"familyName,omitempty"`
}

type scimEmailOut struct {
	Value   string `json:"value"`
	Type    string `json:"type"`
	Primary bool   `json:"primary"`
}

type scimPhoneOut struct {
	Value string `json:"value"`
	Type  string `json:"type"`
}

type scimExtensionOut struct {
	OrganisationUnits []user.Code      `json:"organisationUnits,omitempty"`
	RoleCodes         []user.Code      `json:"roleCodes,omitempty"`
	BuyerGroups       []user.Code      `json:"buyerGroups,omitempty"`
	ApproverGroups    []user.Code      `json:"approverGroups,omitempty"`
	Attributes        []user.Attribute `json:"attributes,omitempty"`
}

type scimMeta struct {
	ResourceType string `json:"resourceType"`
	Location     string `json:"location"`
	Version      string `json:"version"`
}

var (
	schemasCore     = []string{scimUserSchema}
	schemasExtended = []string{scimUserSchema, ExtensionSchema}
)

// resourceOf is u as a SCIM User at location.
func resourceOf(u *user.User, location string) scimResource {
	r := scimResource{
		Schemas: schemasCore, ID: u.ID, ExternalID: u.ExternalID, UserName: u.Username,
		DisplayName: u.DisplayName, Active: u.Enabled,
		Meta: scimMeta{ResourceType: "User", Location: location, Version: `W/"` + strconv.FormatInt(u.Version, 10) + `"`},
	}
	if u.FirstName != "" || u.LastName != "" {
		r.Name = &scimNameOut{GivenName: u.FirstName, FamilyName: u.LastName}
	}
	if u.Email != "" {
		r.Emails = []scimEmailOut{{Value: u.Email, Type: "work", Primary: true}}
	}
	if u.Phone != "" {
		r.PhoneNumbers = []scimPhoneOut{{Value: u.Phone, Type: "work"}}
	}
	if len(u.OrganisationUnits)+len(u.Roles)+len(u.BuyerGroups)+len(u.ApproverGroups)+len(u.Attributes) > 0 {
		r.Schemas = schemasExtended
		r.Extension = &scimExtensionOut{OrganisationUnits: u.OrganisationUnits, RoleCodes: u.Roles,
			BuyerGroups: u.BuyerGroups, ApproverGroups: u.ApproverGroups, Attributes: u.Attributes}
	}
	return r
}

func randText(r *rand.Rand) string {
	if r.IntN(3) == 0 {
		return ""
	}
	// Plain letters, what JSON escapes (quote, backslash, control and
	// HTML characters, U+2028), non-ASCII and invalid UTF-8.
	const alphabet = "ab Z<&>\"\\\x01\xff"
	var b strings.Builder
	for range r.IntN(12) {
		switch r.IntN(6) {
		case 0:
			b.WriteString("é")
		case 1:
			b.WriteString("\u2028")
		default:
			b.WriteByte(alphabet[r.IntN(len(alphabet))])
		}
	}
	return b.String()
}

func randCodes(r *rand.Rand) []user.Code {
	var cs []user.Code
	for range r.IntN(3) {
		cs = append(cs, user.Code{Code: randText(r)})
	}
	return cs
}

func randUser(r *rand.Rand) user.User {
	u := user.User{ID: randText(r), ExternalID: randText(r), Username: randText(r), FirstName: randText(r), LastName: randText(r),
		DisplayName: randText(r), Email: randText(r), Phone: randText(r), Enabled: r.IntN(2) == 0, Version: r.Int64N(1000),
		OrganisationUnits: randCodes(r), Roles: randCodes(r), BuyerGroups: randCodes(r), ApproverGroups: randCodes(r)}
	for range r.IntN(3) {
		u.Attributes = append(u.Attributes, user.Attribute{Name: randText(r), Value: randText(r)})
	}
	if r.IntN(10) == 0 {
		u.Roles = []user.Code{} // empty, not nil: left out as nil is
	}
	return u
}

// The hand-written encoder writes what encoding/json writes for
// scimResource, on random users: every attribute present or absent, text
// that needs escaping, the extension with and without lists.
func TestAppendSCIMUserIsEncodingJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 20000 {
		u := randUser(r)
		loc := randText(r)
		want, err := json.Marshal(resourceOf(&u, loc))
		if err != nil {
			t.Fatal(err)
		}
		if got := appendSCIMUser(nil, &u, loc); !bytes.Equal(got, want) {
			t.Fatalf("user %d %+v:\nappendSCIMUser %s\nencoding/json  %s", i, u, got, want)
		}
	}
}

// BenchmarkSCIMUserEncoding is the encoder alone, by hand and by
// encoding/json, on a user with every attribute (the figures of a whole
// request: bench/README.md).
func BenchmarkSCIMUserEncoding(b *testing.B) {
	in, err := user.ParseInput(apitest.BenchUserBody(5))
	if err != nil {
		b.Fatal(err)
	}
	var u user.User
	in.ApplyTo(&u)
	u.ID, u.Version = "9f5b2f4e-3c1d-4e5f-8a9b-0c1d2e3f4a5b", 3
	loc := "https://procure.example.com/scim/v2/Users/" + u.ID
	b.Run("hand", func(b *testing.B) {
		b.ReportAllocs()
		buf := make([]byte, 0, 2048)
		for b.Loop() {
			buf = appendSCIMUser(buf[:0], &u, loc)
		}
	})
	b.Run("encoding_json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := json.Marshal(resourceOf(&u, loc)); err != nil {
				b.Fatal(err)
			}
		}
	})
}
