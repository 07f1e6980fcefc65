package user

import (
	"cmp"
	"errors"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/procurekit/procure"
	"github.com/procurekit/procure/internal/check"
)

// Op says which request an Input is checked for.
type Op int

// The operations of the user API.
const (
	// OpCreate: username required, id optional.
	OpCreate Op = iota + 1
	// OpUpdate: id and username required.
	OpUpdate
)

func trim(s string) string { return strings.TrimSpace(s) }

// Normalize returns a copy of in with surrounding white space (Unicode
// white space, as strings.TrimSpace) removed from every text field, code,
// attribute name and attribute value, and the username in Unicode
// normalisation form NFC (docs: users.md "Usernames"). It does not change
// in or anything in points to: the result's lists are fresh copies.
func (in Input) Normalize() Input {
	out := in.clone()
	trimPtr(&out.ID)
	if out.Username != nil {
		if n := normalizeUsername(*out.Username); n != *out.Username {
			out.Username = &n
		}
	}
	trimPtr(&out.ExternalID)
	trimPtr(&out.FirstName)
	trimPtr(&out.LastName)
	trimPtr(&out.DisplayName)
	trimPtr(&out.Email)
	trimPtr(&out.Phone)
	if out.OrganisationUnits != nil {
		trimCodes(*out.OrganisationUnits)
	}
	if out.Roles != nil {
		trimCodes(*out.Roles)
	}
	if out.BuyerGroups != nil {
		trimCodes(*out.BuyerGroups)
	}
	if out.Attributes != nil {
		trimAttributes(*out.Attributes)
	}
	if out.ApproverGroups != nil {
		trimCodes(*out.ApproverGroups)
	}
	return out
}

// trimPtr replaces *p by a pointer to the trimmed text, leaving the text
// *p pointed to untouched (the caller may still hold it).
func trimPtr(p **string) {
	if *p == nil {
		return
	}
	if t := trim(**p); t != **p {
		*p = new(t)
	}
}

func trimCodes(cs []Code) {
	for i := range cs {
		cs[i].Code = trim(cs[i].Code)
	}
}

func trimAttributes(as []Attribute) {
	for i := range as {
		as[i].Name = trim(as[i].Name)
		as[i].Value = trim(as[i].Value)
	}
}

// Normalize returns a deep copy of u with every text field, code,
// attribute name and value trimmed and the username in NFC, as
// Input.Normalize does.
func (u User) Normalize() User {
	u = u.Clone()
	for _, p := range []*string{&u.ID, &u.ExternalID, &u.FirstName, &u.LastName, &u.DisplayName, &u.Email, &u.Phone} {
		*p = trim(*p)
	}
	u.Username = normalizeUsername(u.Username)
	trimCodes(u.OrganisationUnits)
	trimCodes(u.Roles)
	trimCodes(u.BuyerGroups)
	trimAttributes(u.Attributes)
	trimCodes(u.ApproverGroups)
	return u
}

// Prepare normalises in and validates the result for op: the two steps
// every create or update takes before a store is called.
func (in Input) Prepare(op Op) (Input, error) {
	in = in.Normalize()
	if err := in.Validate(op); err != nil {
		return Input{}, err
	}
	return in, nil
}

// Validate checks the fields present in in against the rules of docs: users.md "The user object"
// and docs: users.md, as they stand: call Normalize first, since
// lengths count characters after trimming. The rules:
//
//   - username is required (present and not empty), and for OpUpdate so
//     is id;
//   - id, username, externalId, firstName, lastName, displayName, email,
//     phone and every code: at most 255 characters;
//   - email, when not empty, is a valid address;
//   - every entry of organisationUnits, roles, buyerGroups and
//     approverGroups has a code, unique within its list;
//   - every attribute has a name, unique among the attributes; name and
//     value are at most 20 characters;
//   - every list holds at most MaxListEntries entries (a list over the
//     limit is then the only error reported);
//   - every text is Storable: UTF-8 without NUL;
//   - the username holds no default-ignorable code point (zero width
//     space, soft hyphen, byte order mark, word joiner and the like) and
//     no bidirectional control (docs: users.md "Usernames").
//
// It returns nil or a *procure.ValidationError (Source body) listing every
// broken rule in field order, with JSON paths such as "roles[1].code".
func (in Input) Validate(op Op) error {
	u := in.view()
	ve := &procure.ValidationError{Source: procure.SourceBody}
	if op == OpUpdate && u.ID == "" {
		ve.Add("id", "is required to identify the user to update")
	}
	if err := validateUser(&u, ve); err != nil {
		return err
	}
	return ve.Err()
}

// Validate checks a whole user as a store would hold it: the rules of
// Input.Validate for OpUpdate (id and username required), on the values as
// they stand. A data file's users are checked with it.
func (u User) Validate() error {
	ve := &procure.ValidationError{Source: procure.SourceData}
	if u.ID == "" {
		ve.Add("id", "is required")
	}
	if err := validateUser(&u, ve); err != nil {
		return err
	}
	return ve.Err()
}

// MaxListEntries is the most entries each list of a user (organisation
// units, roles, buyer groups, attributes, approver groups) may hold
// (docs: limits.md). It bounds what a request sends: the
// community's auto-roles, added by Service after the check, may take the
// stored roles a few entries past it (decided so, since a request cannot
// know them; a user read back and sent again whole is then refused until
// the auto-roles it already holds are left out, which they may be: they
// are added again).
const MaxListEntries = 1000

// ruleStorable is the rule a text with NUL or invalid UTF-8 breaks:
// PostgreSQL cannot store either, so both stores refuse them alike
// (docs: limits.md).
const ruleStorable = "must be UTF-8 text without NUL characters"

// Storable reports whether s can be stored as text by every store: valid
// UTF-8 without NUL.
func Storable(s string) bool {
	return strings.IndexByte(s, 0) < 0 && utf8.ValidString(s)
}

// validateUser adds every broken rule of u to ve, sorted in field order. It
// returns an error only when the validator itself fails.
func validateUser(u *User, ve *procure.ValidationError) error {
	// A list over its limit is reported alone: checking tens of thousands
	// of entries one by one would cost more than the request is worth.
	over := false
	for _, l := range [...]struct {
		name string
		n    int
	}{
		{"organisationUnits", len(u.OrganisationUnits)}, {"roles", len(u.Roles)}, {"buyerGroups", len(u.BuyerGroups)},
		{"attributes", len(u.Attributes)}, {"approverGroups", len(u.ApproverGroups)},
	} {
		if l.n > MaxListEntries {
			ve.Add(l.name, "at most "+strconv.Itoa(MaxListEntries)+" entries (got "+strconv.Itoa(l.n)+")")
			over = true
		}
	}
	if over {
		sortFields(ve.Fields)
		return nil
	}
	storableText(u, ve)
	if rule := checkUsername(u.Username); rule != "" {
		ve.Add("username", rule)
	}
	if !plainlyValid(u) {
		if err := checkTags(u, ve); err != nil {
			return err
		}
	}
	uniqueCodes(ve, "organisationUnits", u.OrganisationUnits)
	uniqueCodes(ve, "roles", u.Roles)
	uniqueCodes(ve, "buyerGroups", u.BuyerGroups)
	uniqueAttributes(ve, u.Attributes)
	uniqueCodes(ve, "approverGroups", u.ApproverGroups)
	sortFields(ve.Fields)
	return nil
}

// storableText adds a field error for every text of u that is not
// Storable.
func storableText(u *User, ve *procure.ValidationError) {
	for _, f := range [...]struct {
		name string
		v    string
	}{
		{"id", u.ID}, {"username", u.Username}, {"externalId", u.ExternalID}, {"firstName", u.FirstName},
		{"lastName", u.LastName}, {"displayName", u.DisplayName}, {"email", u.Email}, {"phone", u.Phone},
	} {
		if !Storable(f.v) {
			ve.Add(f.name, ruleStorable)
		}
	}
	for _, l := range [...]struct {
		name string
		cs   []Code
	}{{"organisationUnits", u.OrganisationUnits}, {"roles", u.Roles}, {"buyerGroups", u.BuyerGroups}, {"approverGroups", u.ApproverGroups}} {
		for i, c := range l.cs {
			if !Storable(c.Code) {
				ve.Add(l.name+"["+strconv.Itoa(i)+"].code", ruleStorable)
			}
		}
	}
	for i, a := range u.Attributes {
		if !Storable(a.Name) {
			ve.Add("attributes["+strconv.Itoa(i)+"].name", ruleStorable)
		}
		if !Storable(a.Value) {
			ve.Add("attributes["+strconv.Itoa(i)+"].value", ruleStorable)
		}
	}
}

// checkTags adds the broken rules of u's validate tags to ve: the
// authority on those rules, and what every error message comes from.
func checkTags(u *User, ve *procure.ValidationError) error {
	if err := check.Struct(ve.Source, u); err != nil {
		var cve *procure.ValidationError
		if !errors.As(err, &cve) {
			return err
		}
		ve.Fields = append(ve.Fields, cve.Fields...)
	}
	return nil
}

// plainlyValid reports, without reflection, that u breaks none of the
// rules of its validate tags (checkTags would add nothing): every user a
// client creates or updates passes through here, and go-playground's
// validator costs several microseconds and dozens of allocations a user.
//
// It is conservative: true only when each rule plainly holds - a text no
// longer in bytes than its limit in characters, an email in a plain
// subset of the addresses the validator accepts (check.PlainEmail, the one
// fast path shared with datafile). Anything else - a long text in
// multi-byte characters, an unusual but valid address, a broken rule -
// returns false, and the validator decides and words the errors.
// TestPlainlyValidAgreesWithValidator checks the claim on random users.
//
// Why it exists (BenchmarkPlainlyValid, beside it; figures in
// bench/README.md): the validator costs a typical user tens of times more
// and allocates - most of a create or update's CPU before the store is
// called.
func plainlyValid(u *User) bool {
	const maxText, maxAttr = 255, 20
	if u.Username == "" || len(u.Username) > maxText || len(u.ID) > maxText ||
		len(u.ExternalID) > maxText || len(u.FirstName) > maxText || len(u.LastName) > maxText ||
		len(u.DisplayName) > maxText || len(u.Phone) > maxText || len(u.Email) > maxText {
		return false
	}
	if u.Email != "" && !check.PlainEmail(u.Email) {
		return false
	}
	for _, cs := range [...][]Code{u.OrganisationUnits, u.Roles, u.BuyerGroups, u.ApproverGroups} {
		for _, c := range cs {
			if c.Code == "" || len(c.Code) > maxText {
				return false
			}
		}
	}
	for _, a := range u.Attributes {
		if a.Name == "" || len(a.Name) > maxAttr || len(a.Value) > maxAttr {
			return false
		}
	}
	return true
}

// uniqueCodes reports every entry whose code repeats an earlier entry's.
// Empty codes are left to the required rule.
func uniqueCodes(ve *procure.ValidationError, field string, cs []Code) {
	if len(cs) < 2 {
		return
	}
	seen := make(map[string]int, len(cs))
	for i, c := range cs {
		if c.Code == "" {
			continue
		}
		if j, dup := seen[c.Code]; dup {
			ve.Add(field+"["+strconv.Itoa(i)+"].code",
				"entries must be unique by code: "+strconv.Quote(c.Code)+" is already at "+field+"["+strconv.Itoa(j)+"]")
			continue
		}
		seen[c.Code] = i
	}
}

// uniqueAttributes reports every attribute whose name repeats an earlier
// attribute's.
func uniqueAttributes(ve *procure.ValidationError, as []Attribute) {
	if len(as) < 2 {
		return
	}
	seen := make(map[string]int, len(as))
	for i, a := range as {
		if a.Name == "" {
			continue
		}
		if j, dup := seen[a.Name]; dup {
			ve.Add("attributes["+strconv.Itoa(i)+"].name",
				"attribute names must be unique: "+strconv.Quote(a.Name)+" is already at attributes["+strconv.Itoa(j)+"]")
			continue
		}
		seen[a.Name] = i
	}
}

// fieldRank orders the top-level fields as docs: users.md "The user object" lists them.
var fieldRank = map[string]int{
	"id": 1, "username": 2, "externalId": 3, "firstName": 4, "lastName": 5,
	"displayName": 6, "email": 7, "phone": 8, "enabled": 9,
	"organisationUnits": 10, "roles": 11, "buyerGroups": 12,
	"attributes": 13, "approverGroups": 14,
}

// sortFields orders field errors by field (spec order), then list index,
// keeping the order of errors on one field.
func sortFields(fs []procure.FieldError) {
	slices.SortStableFunc(fs, func(a, b procure.FieldError) int {
		an, ai := splitPath(a.Field)
		bn, bi := splitPath(b.Field)
		return cmp.Or(cmp.Compare(fieldRank[an], fieldRank[bn]), cmp.Compare(ai, bi))
	})
}

// splitPath splits "roles[3].code" into "roles" and 3; a field without an
// index has index -1.
func splitPath(p string) (string, int) {
	name, rest, ok := strings.Cut(p, "[")
	if !ok {
		name, _, _ = strings.Cut(p, ".")
		return name, -1
	}
	end := strings.IndexByte(rest, ']')
	if end < 0 {
		return name, -1
	}
	i, err := strconv.Atoi(rest[:end])
	if err != nil {
		return name, -1
	}
	return name, i
}
