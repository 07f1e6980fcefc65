package scim

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"

	"github.com/procurekit/procure/internal/jsontext"
	"github.com/procurekit/procure/user"
)

// The mapping between a SCIM User (RFC 7643 4.1 and the procure
// extension) and the user of docs: users.md "The user object", written once: scimResource goes
// out, scimInput comes in, and the attribute table below is what both
// follow.
//
//	SCIM                                   user (docs: users.md "The user object")
//	id                                     id
//	userName                               username
//	externalId                             externalId
//	name.givenName                         firstName
//	name.familyName                        lastName
//	displayName                            displayName
//	emails (primary, else first work,      email (out: one entry, type work, primary)
//	        else first)
//	phoneNumbers (primary, else first)     phone (out: one entry, type work)
//	active                                 enabled
//	<extension>.organisationUnits          organisationUnits   [{"code": ...}]
//	<extension>.roleCodes                  roles (input: "roles" too)
//	<extension>.buyerGroups                buyerGroups
//	<extension>.approverGroups             approverGroups
//	<extension>.attributes                 attributes          [{"name": ..., "value": ...}]
//
// Anything else a client sends (name.formatted, title, locale, addresses,
// groups, password, the enterprise extension...) the user cannot hold: it
// is ignored on input and never appears on output.

// appendSCIMUser appends u as a SCIM User resource, the one place the
// output shape is written: the attributes of the table above in this
// order, those without a value left out (active always there), the
// extension only when one of its lists has entries, and meta with the
// resource's location and version. It is written by hand because it
// saves a large share of a whole SCIM request's handler against
// encoding/json (bench/README.md has the figures);
// TestAppendSCIMUserIsEncodingJSON holds it to encoding/json's output,
// and the OpenAPI schema checks every response it makes.
func appendSCIMUser(b []byte, u *user.User, location string) []byte {
	ext := len(u.OrganisationUnits)+len(u.Roles)+len(u.BuyerGroups)+len(u.ApproverGroups)+len(u.Attributes) > 0
	b = append(b, `{"schemas":["`+scimUserSchema+`"`...)
	if ext {
		b = append(b, `,"`+ExtensionSchema+`"`...)
	}
	b = append(b, `],"id":`...)
	b = jsontext.AppendString(b, u.ID)
	if u.ExternalID != "" {
		b = append(b, `,"externalId":`...)
		b = jsontext.AppendString(b, u.ExternalID)
	}
	b = append(b, `,"userName":`...)
	b = jsontext.AppendString(b, u.Username)
	if u.FirstName != "" || u.LastName != "" {
		b = append(b, `,"name":{`...)
		if u.FirstName != "" {
			b = append(b, `"givenName":`...)
			b = jsontext.AppendString(b, u.FirstName)
			if u.LastName != "" {
				b = append(b, ',')
			}
		}
		if u.LastName != "" {
			b = append(b, `"familyName":`...)
			b = jsontext.AppendString(b, u.LastName)
		}
		b = append(b, '}')
	}
	if u.DisplayName != "" {
		b = append(b, `,"displayName":`...)
		b = jsontext.AppendString(b, u.DisplayName)
	}
	if u.Email != "" {
		b = append(b, `,"emails":[{"value":`...)
		b = jsontext.AppendString(b, u.Email)
		b = append(b, `,"type":"work","primary":true}]`...)
	}
	if u.Phone != "" {
		b = append(b, `,"phoneNumbers":[{"value":`...)
		b = jsontext.AppendString(b, u.Phone)
		b = append(b, `,"type":"work"}]`...)
	}
	b = append(b, `,"active":`...)
	b = strconv.AppendBool(b, u.Enabled)
	if ext {
		b = append(b, `,"`+ExtensionSchema+`":{`...)
		first := true
		list := func(name string, cs []user.Code) {
			if len(cs) == 0 {
				return
			}
			if !first {
				b = append(b, ',')
			}
			first = false
			b = append(b, '"')
			b = append(b, name...)
			b = append(b, `":`...)
			b = user.AppendCodesJSON(b, cs)
		}
		list("organisationUnits", u.OrganisationUnits)
		list("roleCodes", u.Roles)
		list("buyerGroups", u.BuyerGroups)
		list("approverGroups", u.ApproverGroups)
		if len(u.Attributes) > 0 {
			if !first {
				b = append(b, ',')
			}
			b = append(b, `"attributes":`...)
			b = user.AppendAttributesJSON(b, u.Attributes)
		}
		b = append(b, '}')
	}
	b = append(b, `,"meta":{"resourceType":"User","location":`...)
	b = jsontext.AppendString(b, location)
	b = append(b, `,"version":"W/\"`...)
	b = strconv.AppendInt(b, u.Version, 10)
	b = append(b, `\""}}`...)
	return b
}

// scimInput is a SCIM User resource as a client sends it (POST, PUT).
// encoding/json matches attribute names case-insensitively, as SCIM
// requires (RFC 7643 2.1); unknown attributes are ignored.
//
// L is the type of the extension's coded lists: []user.Code, decoded in
// one pass, or scimCodes, which also takes plain strings and costs a
// second pass (parseSCIMInput tries the first, then the second).
type scimInput = scimInputOf[[]user.Code]

// The core text attributes are plain strings: on create and replace an
// absent one is empty, as one sent empty or null is.
type scimInputOf[L any] struct {
	UserName     string            `json:"userName"`
	ExternalID   string            `json:"externalId"`
	Name         scimNameValue     `json:"name"`
	DisplayName  string            `json:"displayName"`
	Emails       []scimMultiIn     `json:"emails"`
	PhoneNumbers []scimMultiIn     `json:"phoneNumbers"`
	Active       *scimBool         `json:"active"`
	Extension    *scimProcureIn[L] `json:"urn:procurekit:params:scim:schemas:extension:procure:2.0:User"`
}

// parseSCIMInput decodes a POST or PUT body.
func parseSCIMInput(body []byte) (scimInput, error) {
	var in scimInput
	err := json.Unmarshal(body, &in)
	var te *json.UnmarshalTypeError
	switch {
	case err == nil:
		return in, nil
	case !errors.As(err, &te) || !strings.HasPrefix(te.Field, ExtensionSchema):
		return in, scimDecodeError(err)
	}
	// Codes sent as strings ("roles": ["BUYER"], as identity providers
	// map a string attribute): decode again, leniently.
	var lenient scimInputOf[scimCodes]
	if err := json.Unmarshal(body, &lenient); err != nil {
		return in, scimDecodeError(err)
	}
	x := lenient.Extension
	in.Extension = &scimProcureIn[[]user.Code]{
		OrganisationUnits: (*[]user.Code)(x.OrganisationUnits),
		RoleCodes:         (*[]user.Code)(x.RoleCodes),
		Roles:             (*[]user.Code)(x.Roles),
		BuyerGroups:       (*[]user.Code)(x.BuyerGroups),
		ApproverGroups:    (*[]user.Code)(x.ApproverGroups),
		Attributes:        x.Attributes,
	}
	return in, nil
}

// extensionRoles returns the extension's role codes, sent as roleCodes or under
// the former name roles (still accepted, docs: scim.md "Mapping"); both,
// with different codes, is a 400.
func extensionRoles(x *scimProcureIn[[]user.Code]) (*[]user.Code, error) {
	switch {
	case x.RoleCodes == nil:
		return x.Roles, nil
	case x.Roles != nil && !slices.Equal(*x.Roles, *x.RoleCodes):
		return nil, newSCIMError(400, "invalidValue", ExtensionSchema+": roleCodes and roles (its former name) differ: send roleCodes only")
	}
	return x.RoleCodes, nil
}

type scimNameValue struct {
	GivenName  string `json:"givenName"`
	FamilyName string `json:"familyName"`
}

// scimNameIn is a name in a PATCH, which changes only the sub-attributes
// it holds.
type scimNameIn struct {
	GivenName  *string `json:"givenName"`
	FamilyName *string `json:"familyName"`
}

type scimMultiIn struct {
	Value   string   `json:"value"`
	Type    string   `json:"type"`
	Primary scimBool `json:"primary"`
}

// scimProcureIn is the extension as sent: a list that is present replaces
// the user's, an absent one keeps it. Roles is the former name of
// RoleCodes, renamed because RFC 7643 3.3 asks extensions not to reuse a
// core attribute's name; clients written before still send it.
type scimProcureIn[L any] struct {
	OrganisationUnits *L                `json:"organisationUnits"`
	RoleCodes         *L                `json:"roleCodes"`
	Roles             *L                `json:"roles"`
	BuyerGroups       *L                `json:"buyerGroups"`
	ApproverGroups    *L                `json:"approverGroups"`
	Attributes        *[]user.Attribute `json:"attributes"`
}

// scimBool is a SCIM boolean as identity providers send it: true or
// false, or (Microsoft Entra ID) the strings "True" and "False", in any
// case.
type scimBool bool

func (b *scimBool) UnmarshalJSON(data []byte) error {
	v, ok := parseSCIMBool(data)
	if !ok {
		return newSCIMError(400, "invalidValue", "a boolean attribute must be true or false (got "+string(truncate(data, 40))+")")
	}
	*b = scimBool(v)
	return nil
}

// lenOf is the length of an optional list.
func lenOf[T any](l *[]T) int {
	if l == nil {
		return 0
	}
	return len(*l)
}

// parseSCIMBool reads true, false, "true" or "false" (any case).
func parseSCIMBool(data []byte) (v, ok bool) {
	switch string(data) { // no allocation: the common spellings
	case "true":
		return true, true
	case "false":
		return false, true
	}
	s := string(bytes.TrimSpace(data))
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		s = s[1 : len(s)-1]
	}
	switch {
	case strings.EqualFold(s, "true"):
		return true, true
	case strings.EqualFold(s, "false"):
		return false, true
	}
	return false, false
}

func truncate(b []byte, n int) []byte {
	if len(b) > n {
		return append(b[:n:n], "..."...)
	}
	return b
}

// scimCodes is a coded list of the extension: [{"code": "A"}], or, for
// convenience, ["A"].
type scimCodes []user.Code

func (c *scimCodes) UnmarshalJSON(data []byte) error {
	var raw []json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return newSCIMError(400, "invalidValue", "a coded list must be an array of {\"code\": ...} objects or strings")
	}
	out, err := decodeCodeEntries(raw)
	if err != nil {
		return newSCIMError(400, "invalidValue", "a coded list must be an array of {\"code\": ...} objects or strings")
	}
	*c = out
	return nil
}

// decodeCodeEntries decodes the entries of a coded list, each a string or
// a {"code": ...} object.
func decodeCodeEntries(raw []json.RawMessage) ([]user.Code, error) {
	out := make([]user.Code, 0, len(raw))
	for _, r := range raw {
		var code user.Code
		if err := json.Unmarshal(r, &code.Code); err != nil {
			if err := json.Unmarshal(r, &code); err != nil {
				return nil, err
			}
		}
		out = append(out, code)
	}
	return out, nil
}

// pickEmail chooses the address a user keeps: the primary one, else the
// first of type work, else the first.
func pickEmail(es []scimMultiIn) string {
	for _, e := range es {
		if e.Primary {
			return e.Value
		}
	}
	for _, e := range es {
		if strings.EqualFold(e.Type, "work") {
			return e.Value
		}
	}
	if len(es) > 0 {
		return es[0].Value
	}
	return ""
}

// pickPhone chooses the number a user keeps: the primary one, else the
// first.
func pickPhone(ps []scimMultiIn) string {
	for _, p := range ps {
		if p.Primary {
			return p.Value
		}
	}
	if len(ps) > 0 {
		return ps[0].Value
	}
	return ""
}

// inputOf returns the create or replace request in describes: every core
// attribute present (an absent one is empty), enabled only when active
// was sent, and the extension's lists only when they were sent. The id is
// not set: the caller names it (PUT) or the service generates it (POST).
// Its one error is the extension's roles sent under both names, with
// different codes.
func inputOf(in *scimInput) (user.Input, error) {
	held := &struct { // one allocation for the values the Input points to
		email, phone string
		enabled      bool
	}{email: pickEmail(in.Emails), phone: pickPhone(in.PhoneNumbers)}
	out := user.Input{
		Username:    &in.UserName,
		ExternalID:  &in.ExternalID,
		FirstName:   &in.Name.GivenName,
		LastName:    &in.Name.FamilyName,
		DisplayName: &in.DisplayName,
		Email:       &held.email,
		Phone:       &held.phone,
	}
	if in.Active != nil {
		held.enabled = bool(*in.Active)
		out.Enabled = &held.enabled
	}
	if x := in.Extension; x != nil {
		roles, err := extensionRoles(x)
		if err != nil {
			return user.Input{}, err
		}
		// Each list is bounded before the user is read (docs: limits.md
		// "Lists"), as a PATCH's are.
		for _, l := range [...]struct {
			name string
			n    int
		}{
			{"organisationUnits", lenOf(x.OrganisationUnits)}, {"roleCodes", lenOf(roles)}, {"buyerGroups", lenOf(x.BuyerGroups)},
			{"approverGroups", lenOf(x.ApproverGroups)}, {"attributes", lenOf(x.Attributes)},
		} {
			if err := checkListSize(l.n, ExtensionSchema+"."+l.name); err != nil {
				return user.Input{}, err
			}
		}
		out.OrganisationUnits = x.OrganisationUnits
		out.Roles = roles
		out.BuyerGroups = x.BuyerGroups
		out.ApproverGroups = x.ApproverGroups
		out.Attributes = x.Attributes
	}
	return out, nil
}
