package user

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"unicode/utf8"

	"github.com/procurekit/procure"
	"github.com/procurekit/procure/internal/jsontext"
)

// Input is the body of a create or update request: a User whose fields
// each may be absent. A nil pointer is a field that was not sent; a
// non-nil pointer is a field that was sent, even when it points to an
// empty value (which clears the field on update).
//
// Build one from a User with InputOf, or field by field:
//
//	in := user.Input{Username: new("jdoe"), Enabled: new(false)}
//
// Decoding (UnmarshalJSON) accepts organisationsUnits as a second spelling
// of organisationUnits; encoding writes only the fields that are present,
// and organisationUnits in its spec sample spelling.
type Input struct {
	ID                *string      `json:"id,omitempty"`
	Username          *string      `json:"username,omitempty"`
	ExternalID        *string      `json:"externalId,omitempty"`
	FirstName         *string      `json:"firstName,omitempty"`
	LastName          *string      `json:"lastName,omitempty"`
	DisplayName       *string      `json:"displayName,omitempty"`
	Email             *string      `json:"email,omitempty"`
	Phone             *string      `json:"phone,omitempty"`
	Enabled           *bool        `json:"enabled,omitempty"`
	OrganisationUnits *[]Code      `json:"organisationUnits,omitempty"`
	Roles             *[]Code      `json:"roles,omitempty"`
	BuyerGroups       *[]Code      `json:"buyerGroups,omitempty"`
	Attributes        *[]Attribute `json:"attributes,omitempty"`
	ApproverGroups    *[]Code      `json:"approverGroups,omitempty"`
}

// InputOf returns an Input in which every field of u is present, so that
// an update with it replaces the whole user. The id is present only when
// u has one. The Input shares nothing with u.
func InputOf(u User) Input {
	u = u.Clone()
	in := Input{
		Username:          &u.Username,
		ExternalID:        &u.ExternalID,
		FirstName:         &u.FirstName,
		LastName:          &u.LastName,
		DisplayName:       &u.DisplayName,
		Email:             &u.Email,
		Phone:             &u.Phone,
		Enabled:           &u.Enabled,
		OrganisationUnits: &u.OrganisationUnits,
		Roles:             &u.Roles,
		BuyerGroups:       &u.BuyerGroups,
		Attributes:        &u.Attributes,
		ApproverGroups:    &u.ApproverGroups,
	}
	if u.ID != "" {
		in.ID = &u.ID
	}
	return in
}

// ApplyTo sets every field of u that is present in in, leaving the others
// as they are. Lists are copied: u shares nothing with in afterwards.
func (in Input) ApplyTo(u *User) { in.applyTo(u, true) }

// applyTo is ApplyTo; copy false lets u share in's lists.
func (in Input) applyTo(u *User, copyLists bool) {
	setString(&u.ID, in.ID)
	setString(&u.Username, in.Username)
	setString(&u.ExternalID, in.ExternalID)
	setString(&u.FirstName, in.FirstName)
	setString(&u.LastName, in.LastName)
	setString(&u.DisplayName, in.DisplayName)
	setString(&u.Email, in.Email)
	setString(&u.Phone, in.Phone)
	if in.Enabled != nil {
		u.Enabled = *in.Enabled
	}
	setList(&u.OrganisationUnits, in.OrganisationUnits, copyLists)
	setList(&u.Roles, in.Roles, copyLists)
	setList(&u.BuyerGroups, in.BuyerGroups, copyLists)
	setList(&u.Attributes, in.Attributes, copyLists)
	setList(&u.ApproverGroups, in.ApproverGroups, copyLists)
}

// view returns the user in describes, absent fields empty, sharing in's
// lists (for reading only).
func (in Input) view() User {
	var u User
	in.applyTo(&u, false)
	return u
}

func setString(dst *string, src *string) {
	if src != nil {
		*dst = *src
	}
}

func setList[T any](dst *[]T, src *[]T, copyList bool) {
	switch {
	case src == nil:
	case copyList:
		*dst = cloneList(*src)
	default:
		*dst = *src
	}
}

// Fields lists the JSON names of the fields present in in, in the order of
// docs: users.md "The user object".
func (in Input) Fields() []string {
	var out []string
	add := func(present bool, name string) {
		if present {
			out = append(out, name)
		}
	}
	add(in.ID != nil, "id")
	add(in.Username != nil, "username")
	add(in.ExternalID != nil, "externalId")
	add(in.FirstName != nil, "firstName")
	add(in.LastName != nil, "lastName")
	add(in.DisplayName != nil, "displayName")
	add(in.Email != nil, "email")
	add(in.Phone != nil, "phone")
	add(in.Enabled != nil, "enabled")
	add(in.OrganisationUnits != nil, "organisationUnits")
	add(in.Roles != nil, "roles")
	add(in.BuyerGroups != nil, "buyerGroups")
	add(in.Attributes != nil, "attributes")
	add(in.ApproverGroups != nil, "approverGroups")
	return out
}

// wireUser is the JSON shape a request body is decoded into: every field
// records whether it was present, and both spellings of the organisation
// units field have a slot.
type wireUser struct {
	ID          optString `json:"id"`
	Username    optString `json:"username"`
	ExternalID  optString `json:"externalId"`
	FirstName   optString `json:"firstName"`
	LastName    optString `json:"lastName"`
	DisplayName optString `json:"displayName"`
	Email       optString `json:"email"`
	Phone       optString `json:"phone"`
	Enabled     optBool   `json:"enabled"`
	// The lists are decoded by encoding/json itself (no second pass over
	// their bytes). Each pointer starts at a nil slice inside lists: after
	// decoding, a nil pointer means null, a pointer to a nil slice means
	// absent, and anything else was sent (encoding/json makes [] a
	// non-nil empty slice).
	OrganisationUnits  *[]Code      `json:"organisationUnits"`
	OrganisationsUnits *[]Code      `json:"organisationsUnits"`
	Roles              *[]Code      `json:"roles"`
	BuyerGroups        *[]Code      `json:"buyerGroups"`
	Attributes         *[]Attribute `json:"attributes"`
	ApproverGroups     *[]Code      `json:"approverGroups"`
	lists              struct {
		units, units2, roles, buyer, approver []Code
		attrs                                 []Attribute
	}
}

// newWireUser returns a wireUser ready to decode into: each list pointer
// at its nil slice in lists.
func newWireUser() *wireUser {
	w := new(wireUser)
	w.OrganisationUnits, w.OrganisationsUnits = &w.lists.units, &w.lists.units2
	w.Roles, w.BuyerGroups, w.ApproverGroups = &w.lists.roles, &w.lists.buyer, &w.lists.approver
	w.Attributes = &w.lists.attrs
	return w
}

// listField turns a decoded list pointer into Input's form: nil when the
// field was absent, a pointer to an empty list when it was null.
func listField[T any](p *[]T) *[]T {
	switch {
	case p == nil: // null
		return &[]T{}
	case *p == nil: // absent
		return nil
	}
	return p
}

// ParseInput decodes a request body (a JSON object) into an Input; it is
// what UnmarshalJSON does, without a second pass over the bytes.
//
// Unknown fields are ignored. A field sent as null is present with an
// empty value, except enabled, for which null counts as omitted. Malformed
// JSON is a *json.SyntaxError; a value of the wrong JSON type is a
// *json.UnmarshalTypeError whose Field is the field's JSON path without
// list indexes ("roles.code"), and whose Offset is not meaningful (zero).
//
// Both organisationUnits and organisationsUnits are accepted (the spec
// spells the field both ways). When both are sent they must hold the same
// codes (after trimming, in the same order); otherwise the result is a
// *procure.ValidationError naming both fields.
func ParseInput(data []byte) (Input, error) { return parseInput(data, pathFastShared) }

// The decoding paths of parseInput.
const (
	pathJSON       = iota // encoding/json alone (the tests compare the others with it)
	pathFast              // fastWire, each value a string of its own
	pathFastShared        // fastWire, the values substrings of one copy of the body
)

// parseInput is ParseInput by the given path (fastWire falling back to
// encoding/json).
func parseInput(data []byte, path int) (Input, error) {
	w := newWireUser() // the Input points into it: one allocation for all fields
	if path == pathJSON || !fastWire(data, w, path == pathFastShared) {
		w = newWireUser()
		if err := json.Unmarshal(data, w); err != nil {
			var te *json.UnmarshalTypeError
			if errors.As(err, &te) {
				// Errors raised inside the fields' own decoders carry no
				// offset, others one; zero all so callers are not misled.
				te.Offset = 0
			}
			return Input{}, err
		}
	}
	units, err := w.units()
	if err != nil {
		return Input{}, err
	}
	in := Input{
		ID:                w.ID.ptr(),
		Username:          w.Username.ptr(),
		ExternalID:        w.ExternalID.ptr(),
		FirstName:         w.FirstName.ptr(),
		LastName:          w.LastName.ptr(),
		DisplayName:       w.DisplayName.ptr(),
		Email:             w.Email.ptr(),
		Phone:             w.Phone.ptr(),
		OrganisationUnits: units,
		Roles:             listField(w.Roles),
		BuyerGroups:       listField(w.BuyerGroups),
		Attributes:        listField(w.Attributes),
		ApproverGroups:    listField(w.ApproverGroups),
	}
	if w.Enabled.set && !w.Enabled.null {
		in.Enabled = &w.Enabled.v
	}
	return in, nil
}

// UnmarshalJSON decodes in as ParseInput does.
func (in *Input) UnmarshalJSON(data []byte) error {
	v, err := parseInput(data, pathFast) // inside a larger document: no copy of it
	if err != nil {
		return err
	}
	*in = v
	return nil
}

// UnmarshalJSON decodes a user as a data file or a response holds it. It
// follows Input's rules (both spellings of organisationUnits, unknown
// fields ignored); a field that is absent or null is empty, and an absent
// or null enabled is true, the same default as a create request.
func (u *User) UnmarshalJSON(data []byte) error {
	in, err := parseInput(data, pathFast) // a user a store may keep: no shared copy of data
	if err != nil {
		return err
	}
	*u = User{Enabled: true}
	in.ApplyTo(u)
	return nil
}

// units merges the two spellings of the organisation units field.
func (w *wireUser) units() (*[]Code, error) {
	a, b := listField(w.OrganisationUnits), listField(w.OrganisationsUnits)
	switch {
	case b == nil:
		return a, nil
	case a == nil:
		return b, nil
	}
	same := len(*a) == len(*b)
	for i := 0; same && i < len(*a); i++ {
		same = trim((*a)[i].Code) == trim((*b)[i].Code)
	}
	if !same {
		return nil, procure.Invalid(procure.SourceBody, "organisationsUnits",
			"must hold the same codes as organisationUnits when both are sent (they are two spellings of one field; send one)")
	}
	return a, nil
}

// optString is a string field that remembers whether it was present.
type optString struct {
	v    string
	set  bool
	null bool
}

var (
	stringType = reflect.TypeFor[string]()
	boolType   = reflect.TypeFor[bool]()
)

func (o *optString) UnmarshalJSON(b []byte) error {
	o.set = true
	switch {
	case len(b) > 0 && b[0] == 'n':
		o.null = true
		return nil
	case len(b) < 2 || b[0] != '"':
		return &json.UnmarshalTypeError{Value: jsontext.Kind(b), Type: stringType}
	}
	// The common case - no escapes, valid UTF-8 - needs no second decode.
	body := b[1 : len(b)-1]
	if bytes.IndexByte(body, '\\') < 0 && utf8.Valid(body) {
		o.v = string(body)
		return nil
	}
	return json.Unmarshal(b, &o.v)
}

func (o *optString) ptr() *string {
	if !o.set {
		return nil
	}
	return &o.v
}

// optBool is a boolean field that remembers whether it was present.
type optBool struct {
	v    bool
	set  bool
	null bool
}

func (o *optBool) UnmarshalJSON(b []byte) error {
	o.set = true
	switch string(b) {
	case "null":
		o.null = true
	case "true":
		o.v = true
	case "false":
		o.v = false
	default:
		return &json.UnmarshalTypeError{Value: jsontext.Kind(b), Type: boolType}
	}
	return nil
}

// clone returns a deep copy of in.
func (in Input) clone() Input {
	out := in
	out.OrganisationUnits = clonePtrList(in.OrganisationUnits)
	out.Roles = clonePtrList(in.Roles)
	out.BuyerGroups = clonePtrList(in.BuyerGroups)
	out.Attributes = clonePtrList(in.Attributes)
	out.ApproverGroups = clonePtrList(in.ApproverGroups)
	return out
}

func clonePtrList[T any](p *[]T) *[]T {
	if p == nil {
		return nil
	}
	s := slices.Clone(*p)
	if s == nil {
		s = []T{}
	}
	return &s
}
