package scim

import (
	"bytes"
	"encoding/json"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/procurekit/procure/user"
)

// SCIM PATCH (RFC 7644 3.5.2) on a user, as Okta and Microsoft Entra ID
// send it:
//
//   - op is add, replace or remove, in any case ("Replace", Entra);
//   - with a path ("active", "name.givenName", "emails[type eq
//     \"work\"].value", "urn:...:procure:2.0:User:roleCodes"), or without
//     one, the value then being an object of attribute names (which may
//     themselves be paths, "name.familyName") to values (Okta's
//     {"op":"replace","value":{"active":false}});
//   - active may be a boolean or the strings "True"/"False" (Entra);
//   - attribute names compare case-insensitively.
//
// A PATCH is checked and decoded whole before the user is read
// (parsePatch): its shape, every path, every value's type and the size of
// every list it sends, so that a request that cannot succeed costs no
// store lock and the work done under one is a set of ready changes
// (patchStep), each linear in the lists it touches.
//
// Paths are checked against the schemas of docs/scim.md: an attribute of
// RFC 7643's User (or of the enterprise extension) that a user does not
// hold (title, locale, employeeNumber...) is ignored, as on create,
// because identity providers send them whatever the endpoint declares; a
// name in no schema is a 400 invalidPath; id and meta are read-only, a
// 400 mutability. Without a path, an id equal to the user's and meta are
// ignored, as PUT ignores them (RFC 7644 3.5.1), since a client may send
// back what it read.
//
// On the single-valued e-mail and phone number, add and replace are alike;
// a value filter on emails or phoneNumbers must select the work or the
// primary entry (the one a user holds): a filter on another type is
// ignored. On the extension's lists, add merges (new codes appended,
// attributes replaced by name), replace replaces, and remove takes either
// the whole list or the entries given as value (or selected by [code eq
// "X"] / [name eq "X"]).

// scimPatchRequest is a PATCH body.
type scimPatchRequest struct {
	Schemas    []string      `json:"schemas"`
	Operations []scimPatchOp `json:"Operations"`
}

type scimPatchOp struct {
	Op    string          `json:"op"`
	Path  string          `json:"path"`
	Value json.RawMessage `json:"value"`
}

// patchStep is one checked change of a PATCH, its value decoded: it runs
// on a copy of the stored user that Service.Modify read, outside any store
// lock, before the result is committed. idx holds the lookup sets
// of the lists the PATCH merges into, built once per list and kept up to
// date by the merges, so that a thousand adds to one list cost a thousand
// times their own entries, not a thousand times the list.
type patchStep func(u *user.User, idx *patchIndex) error

// patchIndex holds, per list of the extension (by schema name), the codes
// or attribute positions the list holds; a step that replaces or removes
// entries forgets its list's.
type patchIndex struct {
	codes map[string]map[string]struct{}
	attrs map[string]int
}

// codeSet returns the set of the codes list holds, building it on first
// use.
func (x *patchIndex) codeSet(name string, list []user.Code) map[string]struct{} {
	if held, ok := x.codes[name]; ok {
		return held
	}
	held := make(map[string]struct{}, len(list))
	for _, c := range list {
		held[c.Code] = struct{}{}
	}
	if x.codes == nil {
		x.codes = map[string]map[string]struct{}{}
	}
	x.codes[name] = held
	return held
}

// attrIndex returns the position of the first attribute of each name.
func (x *patchIndex) attrIndex(list []user.Attribute) map[string]int {
	if x.attrs == nil {
		x.attrs = make(map[string]int, len(list))
		for i, a := range list {
			if _, ok := x.attrs[a.Name]; !ok {
				x.attrs[a.Name] = i
			}
		}
	}
	return x.attrs
}

// maxPatchOps bounds the operations of one PATCH (docs: limits.md:
// every input is bounded).
const maxPatchOps = 1000

// parsePatch decodes and checks a PATCH body, before the user is read, and
// returns its changes in order.
func parsePatch(body []byte) ([]patchStep, error) {
	var req scimPatchRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, scimDecodeError(err)
	}
	if len(req.Operations) == 0 {
		return nil, newSCIMError(http.StatusBadRequest, "invalidSyntax", "Operations: at least one operation is required")
	}
	if len(req.Operations) > maxPatchOps {
		return nil, newSCIMError(http.StatusBadRequest, "tooMany", "Operations: at most "+strconv.Itoa(maxPatchOps)+" operations per request")
	}
	var steps []patchStep
	for i := range req.Operations {
		op := &req.Operations[i]
		op.Op = strings.ToLower(strings.TrimSpace(op.Op))
		at := "Operations[" + strconv.Itoa(i) + "]"
		switch op.Op {
		case "add", "replace":
			if len(op.Value) == 0 {
				return nil, newSCIMError(http.StatusBadRequest, "invalidValue", at+".value: is required for "+op.Op)
			}
		case "remove":
			if op.Path == "" {
				return nil, newSCIMError(http.StatusBadRequest, "noTarget", at+".path: is required for remove")
			}
		default:
			return nil, newSCIMError(http.StatusBadRequest, "invalidSyntax", at+".op: must be add, replace or remove (got "+strconv.Quote(op.Op)+")")
		}
		var err error
		if op.Path == "" {
			steps, err = appendObjectSteps(steps, op.Op, op.Value, at)
		} else {
			steps, err = appendPathStep(steps, op.Op, op.Path, op.Value, at, false)
		}
		if err != nil {
			return nil, err
		}
	}
	return steps, nil
}

// applyPatch applies the steps to u in order. It may run more than once
// (Store.UpdateUser), each time on a fresh copy and with fresh indexes.
func applyPatch(u *user.User, steps []patchStep) error {
	var idx patchIndex
	for _, step := range steps {
		if err := step(u, &idx); err != nil {
			return err
		}
	}
	return nil
}

// appendObjectSteps adds the steps of an add or replace without a path:
// an object of attribute (or path) names to values. Keys are applied in a
// fixed order (sorted), since JSON objects have none and the result must
// not depend on map iteration.
func appendObjectSteps(steps []patchStep, op string, value json.RawMessage, at string) ([]patchStep, error) {
	attrs, err := decodeObject(value, at+".value: without a path, the value must be an object of attributes")
	if err != nil {
		return nil, err
	}
	for _, k := range slices.Sorted(maps.Keys(attrs)) {
		if steps, err = appendPathStep(steps, op, k, attrs[k], at, true); err != nil {
			return nil, err
		}
	}
	return steps, nil
}

// decodeObject decodes a JSON object; anything else is a 400 with detail.
func decodeObject(value json.RawMessage, detail string) (map[string]json.RawMessage, error) {
	var attrs map[string]json.RawMessage
	if v := bytes.TrimSpace(value); len(v) == 0 || v[0] != '{' || json.Unmarshal(v, &attrs) != nil {
		return nil, newSCIMError(http.StatusBadRequest, "invalidValue", detail)
	}
	return attrs, nil
}

// scimPath is a parsed PATCH path: attr[filter].sub, where attr may carry
// a schema URN.
type scimPath struct {
	ext    bool   // an attribute of the procure extension ("" its whole object)
	attr   string // lower case
	filter []scimComparison
	sub    string // lower case
	text   string // the path as sent, for error messages
}

// The attributes of the schemas the endpoint knows (RFC 7643 4.1, 4.3 and
// the procure extension), lower case. A user holds some; the others are
// ignored. A name outside these is an invalidPath.
var (
	// scimCoreIgnored are the User attributes a user does not hold.
	scimCoreIgnored = nameSet("nickname", "profileurl", "title", "usertype", "preferredlanguage", "locale", "timezone",
		"password", "ims", "photos", "addresses", "groups", "entitlements", "roles", "x509certificates")
	scimNameSubs      = nameSet("formatted", "familyname", "givenname", "middlename", "honorificprefix", "honorificsuffix")
	scimMultiSubs     = nameSet("value", "display", "type", "primary")
	scimEnterpriseURN = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:user"
	scimEnterprise    = nameSet("employeenumber", "costcenter", "organization", "division", "department", "manager")
	scimManagerSubs   = nameSet("value", "$ref", "displayname")
)

func nameSet(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// parsePath parses and checks a PATCH path. held is false for a path the
// endpoint knows but a user does not hold (ignored); an unknown attribute
// is invalidPath, a read-only one mutability. noPath is true for a key of
// a value object without a path, where id and meta are let through to be
// compared or ignored (see the package comment of this file).
func parsePath(raw, at string, noPath bool) (path scimPath, held bool, err error) {
	path.text = raw
	p := strings.TrimSpace(stripCoreURN(raw))
	lower := strings.ToLower(p)
	extURN := strings.ToLower(ExtensionSchema)
	enterprise := false
	switch {
	case lower == extURN:
		return scimPath{ext: true, text: raw}, true, nil
	case strings.HasPrefix(lower, extURN+":"):
		path.ext = true
		p = p[len(extURN)+1:]
	case lower == scimEnterpriseURN:
		return path, false, nil
	case strings.HasPrefix(lower, scimEnterpriseURN+":"):
		enterprise = true
		p = p[len(scimEnterpriseURN)+1:]
	case strings.HasPrefix(lower, "urn:"):
		return path, false, invalidPath(at, raw, "names no schema of this endpoint (the core User, the enterprise extension and "+ExtensionSchema+")")
	}
	if i := strings.IndexByte(p, '['); i >= 0 {
		j := strings.LastIndexByte(p, ']')
		if j < i {
			return path, false, invalidPath(at, raw, "has an unbalanced [")
		}
		n, err := parseSCIMFilter(p[i+1 : j])
		if err != nil {
			return path, false, newSCIMError(http.StatusBadRequest, "invalidPath", at+".path: "+err.Error())
		}
		cs, err := conjunction(n)
		if err != nil {
			return path, false, newSCIMError(http.StatusBadRequest, "invalidPath", at+".path: "+err.Error())
		}
		path.filter = cs
		rest := p[j+1:]
		if rest != "" {
			if rest[0] != '.' {
				return path, false, invalidPath(at, raw, "expects . after ]")
			}
			path.sub = strings.ToLower(rest[1:])
		}
		p = p[:i]
	} else if attr, sub, found := strings.Cut(p, "."); found {
		p, path.sub = attr, strings.ToLower(sub)
	}
	path.attr = strings.ToLower(strings.TrimSpace(p))
	if path.attr == "" {
		return path, false, invalidPath(at, raw, "names no attribute")
	}
	if path.ext {
		return path, true, checkExtensionPath(path, at)
	}
	if enterprise {
		switch {
		case !scimEnterprise[path.attr]:
			return path, false, invalidPath(at, raw, "names no attribute of the enterprise extension")
		case path.attr == "manager" && path.sub != "" && !scimManagerSubs[path.sub]:
			return path, false, invalidPath(at, raw, "names no sub-attribute of manager")
		}
		return path, false, nil
	}
	switch path.attr {
	case "id", "meta":
		if noPath && path.sub == "" && path.filter == nil {
			return path, true, nil
		}
		return path, false, newSCIMError(http.StatusBadRequest, "mutability", at+".path: "+strconv.Quote(raw)+" is read-only")
	case "schemas":
		// Set by the server from the attributes a user holds.
		return path, false, nil
	case "username", "externalid", "displayname", "active":
		if path.sub != "" || path.filter != nil {
			return path, false, invalidPath(at, raw, "addresses a sub-attribute of a single-valued attribute")
		}
		return path, true, nil
	case "name":
		switch {
		case path.filter != nil:
			return path, false, invalidPath(at, raw, "filters a single-valued attribute")
		case path.sub != "" && !scimNameSubs[path.sub]:
			return path, false, invalidPath(at, raw, "names no sub-attribute of name")
		}
		return path, path.sub == "" || path.sub == "givenname" || path.sub == "familyname", nil
	case "emails", "phonenumbers":
		if path.sub != "" && !scimMultiSubs[path.sub] {
			return path, false, invalidPath(at, raw, "names no sub-attribute of "+path.attr)
		}
		return path, true, nil
	}
	if scimCoreIgnored[path.attr] {
		return path, false, nil
	}
	return path, false, invalidPath(at, raw, "names no attribute of the User schema")
}

func invalidPath(at, raw, why string) error {
	return newSCIMError(http.StatusBadRequest, "invalidPath", at+".path: "+strconv.Quote(truncateString(raw, 100))+" "+why)
}

// The extension's attributes: the coded lists by their lower-case names
// (roles is the name roleCodes had before it stopped shadowing the core
// attribute, organisationsUnits the user API's other spelling), and
// attributes.
var scimExtLists = map[string]struct {
	name string // as in the schema, for messages
	list func(u *user.User) *[]user.Code
}{
	"organisationunits":  {"organisationUnits", func(u *user.User) *[]user.Code { return &u.OrganisationUnits }},
	"organisationsunits": {"organisationUnits", func(u *user.User) *[]user.Code { return &u.OrganisationUnits }},
	"rolecodes":          {"roleCodes", func(u *user.User) *[]user.Code { return &u.Roles }},
	"roles":              {"roleCodes", func(u *user.User) *[]user.Code { return &u.Roles }},
	"buyergroups":        {"buyerGroups", func(u *user.User) *[]user.Code { return &u.BuyerGroups }},
	"approvergroups":     {"approverGroups", func(u *user.User) *[]user.Code { return &u.ApproverGroups }},
}

// checkExtensionPath checks a path into the procure extension.
func checkExtensionPath(path scimPath, at string) error {
	if _, ok := scimExtLists[path.attr]; !ok && path.attr != "attributes" {
		return invalidPath(at, path.text, "names no attribute of the extension "+ExtensionSchema)
	}
	if path.sub != "" {
		return invalidPath(at, path.text, "addresses a sub-attribute: change whole entries of the list")
	}
	return nil
}

// appendPathStep adds the step of one operation on one path.
func appendPathStep(steps []patchStep, op, rawPath string, value json.RawMessage, at string, noPath bool) ([]patchStep, error) {
	if strings.EqualFold(strings.TrimSpace(rawPath), scimUserSchema) {
		// The core schema's URN alone: its value is an object of core
		// attributes, as some clients nest them.
		if op == "remove" {
			return nil, invalidPath(at, rawPath, "names the whole resource, which cannot be removed")
		}
		attrs, err := decodeObject(value, at+".value: the core schema's value must be an object of attributes")
		if err != nil {
			return nil, err
		}
		for _, k := range slices.Sorted(maps.Keys(attrs)) {
			if strings.EqualFold(strings.TrimSpace(k), scimUserSchema) {
				// Not again inside itself: each level would be decoded anew.
				return nil, invalidPath(at, k, "nests the core schema in itself")
			}
			if steps, err = appendPathStep(steps, op, k, attrs[k], at, true); err != nil {
				return nil, err
			}
		}
		return steps, nil
	}
	path, held, err := parsePath(rawPath, at, noPath)
	if err != nil || !held {
		return steps, err
	}
	if path.ext {
		return appendExtensionSteps(steps, op, path, value, at)
	}
	var step patchStep
	switch path.attr {
	case "id":
		// A value object's id: the user's own is no change.
		var id string
		if json.Unmarshal(value, &id) != nil {
			return nil, newSCIMError(http.StatusBadRequest, "invalidValue", at+".value: id must be a string")
		}
		step = func(u *user.User, _ *patchIndex) error {
			if id != u.ID {
				return newSCIMError(http.StatusBadRequest, "mutability", at+".value: id is read-only (it differs from the user's)")
			}
			return nil
		}
	case "meta":
		return steps, nil // read-only, sent back as read
	case "username":
		step, err = textStep(func(u *user.User) *string { return &u.Username }, op, value, at, "userName")
	case "externalid":
		step, err = textStep(func(u *user.User) *string { return &u.ExternalID }, op, value, at, "externalId")
	case "displayname":
		step, err = textStep(func(u *user.User) *string { return &u.DisplayName }, op, value, at, "displayName")
	case "active":
		if op == "remove" {
			return steps, nil // active has no empty value; removing it changes nothing
		}
		v, ok := parseSCIMBool(value)
		if !ok {
			return nil, newSCIMError(http.StatusBadRequest, "invalidValue", at+".value: active must be true or false")
		}
		step = func(u *user.User, _ *patchIndex) error { u.Enabled = v; return nil }
	case "name":
		step, err = nameStep(op, path, value, at)
	case "emails":
		step, err = multiStep(func(u *user.User) *string { return &u.Email }, op, path, value, at, pickEmail)
	case "phonenumbers":
		step, err = multiStep(func(u *user.User) *string { return &u.Phone }, op, path, value, at, pickPhone)
	}
	if err != nil || step == nil {
		return steps, err
	}
	return append(steps, step), nil
}

// textStep sets or clears a single-valued text attribute. null clears.
func textStep(field func(u *user.User) *string, op string, value json.RawMessage, at, name string) (patchStep, error) {
	s, err := decodeText(op, value, at, name)
	if err != nil {
		return nil, err
	}
	return func(u *user.User, _ *patchIndex) error { *field(u) = s; return nil }, nil
}

// decodeText is the value of a text attribute: empty for remove and null.
func decodeText(op string, value json.RawMessage, at, name string) (string, error) {
	if op == "remove" || isNull(value) {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(value, &s); err != nil {
		return "", newSCIMError(http.StatusBadRequest, "invalidValue", at+".value: "+name+" must be a string")
	}
	return s, nil
}

func isNull(v json.RawMessage) bool { return string(bytes.TrimSpace(v)) == "null" }

// nameStep changes name or one of its held sub-attributes.
func nameStep(op string, path scimPath, value json.RawMessage, at string) (patchStep, error) {
	switch path.sub {
	case "givenname":
		return textStep(func(u *user.User) *string { return &u.FirstName }, op, value, at, "name.givenName")
	case "familyname":
		return textStep(func(u *user.User) *string { return &u.LastName }, op, value, at, "name.familyName")
	}
	if op == "remove" {
		return func(u *user.User, _ *patchIndex) error { u.FirstName, u.LastName = "", ""; return nil }, nil
	}
	var n scimNameIn
	if err := json.Unmarshal(value, &n); err != nil {
		return nil, newSCIMError(http.StatusBadRequest, "invalidValue", at+".value: name must be an object")
	}
	// RFC 7644 3.5.2.3: sub-attributes not given are left as they are,
	// for replace as for add.
	return func(u *user.User, _ *patchIndex) error {
		if n.GivenName != nil {
			u.FirstName = *n.GivenName
		}
		if n.FamilyName != nil {
			u.LastName = *n.FamilyName
		}
		return nil
	}, nil
}

// multiStep applies an operation to emails or phoneNumbers, of which a
// user holds one entry.
func multiStep(field func(u *user.User) *string, op string, path scimPath, value json.RawMessage, at string, pick func([]scimMultiIn) string) (patchStep, error) {
	set := func(v string) patchStep { return func(u *user.User, _ *patchIndex) error { *field(u) = v; return nil } }
	if path.filter != nil && !selectsHeldEntry(path.filter) {
		return nil, nil // a home or other entry: not held
	}
	switch {
	case op == "remove":
		if path.sub == "" || path.sub == "value" {
			return set(""), nil
		}
		return nil, nil
	case path.sub == "value":
		s, err := decodeText(op, value, at, "value")
		return set(s), err
	case path.filter != nil && path.sub == "":
		// emails[type eq "work"] with an entry object as value.
		var e scimMultiIn
		if err := json.Unmarshal(value, &e); err != nil {
			return nil, newSCIMError(http.StatusBadRequest, "invalidValue", at+".value: must be an object with a value")
		}
		return set(e.Value), nil
	case path.sub != "":
		return nil, nil // type, primary, display: not held
	case isNull(value):
		return set(""), nil
	}
	var es []scimMultiIn
	if err := json.Unmarshal(value, &es); err != nil {
		var one scimMultiIn // a single entry where an array belongs
		if err := json.Unmarshal(value, &one); err != nil {
			return nil, newSCIMError(http.StatusBadRequest, "invalidValue", at+".value: must be an array of {\"value\": ...} entries")
		}
		es = []scimMultiIn{one}
	}
	if v := pick(es); v != "" || op == "replace" {
		return set(v), nil
	}
	return nil, nil
}

// selectsHeldEntry reports whether a value filter selects the entry a
// user holds: type eq "work" or primary eq true (and nothing else).
func selectsHeldEntry(cs []scimComparison) bool {
	for _, c := range cs {
		if c.op != "eq" {
			return false
		}
		switch {
		case strings.EqualFold(c.attr, "type"):
			if s, ok := c.value.(string); !ok || !strings.EqualFold(s, "work") {
				return false
			}
		case strings.EqualFold(c.attr, "primary"):
			if b, ok := c.value.(bool); !ok || !b {
				if s, ok := c.value.(string); !ok || !strings.EqualFold(s, "true") {
					return false
				}
			}
		case strings.EqualFold(c.attr, "value"):
		default:
			return false
		}
	}
	return true
}

// appendExtensionSteps adds the steps of an operation on the procure
// extension: its whole object, a coded list or the attributes.
func appendExtensionSteps(steps []patchStep, op string, path scimPath, value json.RawMessage, at string) ([]patchStep, error) {
	if path.attr == "" {
		if op == "remove" {
			return append(steps, func(u *user.User, idx *patchIndex) error {
				u.OrganisationUnits, u.Roles, u.BuyerGroups, u.ApproverGroups, u.Attributes = nil, nil, nil, nil, nil
				*idx = patchIndex{}
				return nil
			}), nil
		}
		attrs, err := decodeObject(value, at+".value: the extension must be an object")
		if err != nil {
			return nil, err
		}
		for _, k := range slices.Sorted(maps.Keys(attrs)) {
			sub, _, err := parsePath(ExtensionSchema+":"+k, at, false)
			if err != nil {
				return nil, err
			}
			if steps, err = appendExtensionSteps(steps, op, sub, attrs[k], at); err != nil {
				return nil, err
			}
		}
		return steps, nil
	}
	if path.attr == "attributes" {
		step, err := attributesStep(op, path, value, at)
		if err != nil {
			return nil, err
		}
		return append(steps, step), nil
	}
	l := scimExtLists[path.attr]
	var codes []user.Code
	if op != "remove" || (len(value) > 0 && !isNull(value)) {
		var err error
		if codes, err = decodeCodes(value, l.name, at); err != nil {
			return nil, err
		}
	}
	var step patchStep
	switch op {
	case "replace":
		if path.filter != nil {
			return nil, invalidPath(at, path.text, "filters a list that replace sets whole")
		}
		step = func(u *user.User, idx *patchIndex) error {
			*l.list(u) = slices.Clone(codes)
			delete(idx.codes, l.name)
			return nil
		}
	case "add":
		if path.filter != nil {
			return nil, invalidPath(at, path.text, "filters a list that add merges into")
		}
		step = func(u *user.User, idx *patchIndex) error {
			list := l.list(u)
			return mergeCodes(list, idx.codeSet(l.name, *list), codes, l.name, at)
		}
	case "remove":
		drop, err := selection(path, codes, func(c user.Code) string { return c.Code }, "code", at)
		if err != nil {
			return nil, err
		}
		step = func(u *user.User, idx *patchIndex) error {
			list := l.list(u)
			delete(idx.codes, l.name)
			if drop == nil {
				*list = nil
			} else {
				*list = slices.DeleteFunc(*list, func(c user.Code) bool { return drop[c.Code] })
			}
			return nil
		}
	}
	return append(steps, step), nil
}

// decodeCodes decodes a coded list of the extension ([{"code": "A"}] or
// ["A"]), refusing one of more than user.MaxListEntries entries before it
// keeps them (docs: limits.md "Lists").
func decodeCodes(value json.RawMessage, name, at string) ([]user.Code, error) {
	if isNull(value) {
		return nil, nil
	}
	codes, n, ok := scanCodes(value, user.MaxListEntries)
	if !ok {
		var err error
		if codes, n, err = decodeCodesJSON(value); err != nil {
			return nil, newSCIMError(http.StatusBadRequest, "invalidValue", at+".value: "+name+" must be an array of {\"code\": ...} objects or strings")
		}
	}
	if err := checkListSize(n, at+".value: "+name); err != nil {
		return nil, err
	}
	return codes, nil
}

// checkListSize refuses a list of more than user.MaxListEntries entries;
// where names it for the client.
func checkListSize(n int, where string) error {
	if n > user.MaxListEntries {
		return newSCIMError(http.StatusBadRequest, "invalidValue",
			where+": at most "+strconv.Itoa(user.MaxListEntries)+" entries (got "+strconv.Itoa(n)+")")
	}
	return nil
}

// mergeCodes appends to list each code it does not hold (held, the set of
// its codes, which it keeps up to date; codes compare exactly, as the user
// API's uniqueness rule does), stopping as soon as the list passes
// user.MaxListEntries.
func mergeCodes(list *[]user.Code, held map[string]struct{}, codes []user.Code, name, at string) error {
	for _, c := range codes {
		if _, ok := held[c.Code]; ok {
			continue
		}
		held[c.Code] = struct{}{}
		*list = append(*list, c)
		if len(*list) > user.MaxListEntries {
			return newSCIMError(http.StatusBadRequest, "invalidValue",
				at+": "+name+": at most "+strconv.Itoa(user.MaxListEntries)+" entries (the operation adds more)")
		}
	}
	return nil
}

// selection returns the keys a remove selects: from its value, or from a
// [key eq "X"] filter; nil means the whole list.
func selection[T any](path scimPath, values []T, keyOf func(T) string, key, at string) (map[string]bool, error) {
	switch {
	case path.filter != nil:
		drop := map[string]bool{}
		for _, c := range path.filter {
			s, ok := c.value.(string)
			if c.op != "eq" || !strings.EqualFold(c.attr, key) || !ok {
				return nil, invalidPath(at, path.text, "selects entries only by ["+key+" eq \"...\"]")
			}
			drop[s] = true
		}
		return drop, nil
	case len(values) > 0:
		drop := make(map[string]bool, len(values))
		for _, v := range values {
			drop[keyOf(v)] = true
		}
		return drop, nil
	}
	return nil, nil
}

// attributesStep applies an operation to the extension's attributes: add
// replaces by name or appends, replace replaces the list, remove drops the
// named ones (or all).
func attributesStep(op string, path scimPath, value json.RawMessage, at string) (patchStep, error) {
	const name = "attributes"
	var attrs []user.Attribute
	if len(value) > 0 && !isNull(value) {
		var raw []json.RawMessage
		if err := json.Unmarshal(value, &raw); err != nil {
			return nil, newSCIMError(http.StatusBadRequest, "invalidValue", at+".value: attributes must be an array of {\"name\": ..., \"value\": ...}")
		}
		if err := checkListSize(len(raw), at+".value: "+name); err != nil {
			return nil, err
		}
		if err := json.Unmarshal(value, &attrs); err != nil {
			return nil, newSCIMError(http.StatusBadRequest, "invalidValue", at+".value: attributes must be an array of {\"name\": ..., \"value\": ...}")
		}
	}
	switch op {
	case "replace":
		if path.filter != nil {
			return nil, invalidPath(at, path.text, "filters a list that replace sets whole")
		}
		return func(u *user.User, idx *patchIndex) error {
			u.Attributes, idx.attrs = slices.Clone(attrs), nil
			return nil
		}, nil
	case "add":
		if path.filter != nil {
			return nil, invalidPath(at, path.text, "filters a list that add merges into")
		}
		return func(u *user.User, idx *patchIndex) error {
			index := idx.attrIndex(u.Attributes)
			for _, a := range attrs {
				if i, ok := index[a.Name]; ok {
					u.Attributes[i] = a
					continue
				}
				index[a.Name] = len(u.Attributes)
				u.Attributes = append(u.Attributes, a)
				if len(u.Attributes) > user.MaxListEntries {
					return newSCIMError(http.StatusBadRequest, "invalidValue",
						at+": "+name+": at most "+strconv.Itoa(user.MaxListEntries)+" entries (the operation adds more)")
				}
			}
			return nil
		}, nil
	}
	drop, err := selection(path, attrs, func(a user.Attribute) string { return a.Name }, "name", at)
	if err != nil {
		return nil, err
	}
	return func(u *user.User, idx *patchIndex) error {
		idx.attrs = nil
		if drop == nil {
			u.Attributes = nil
		} else {
			u.Attributes = slices.DeleteFunc(u.Attributes, func(a user.Attribute) bool { return drop[a.Name] })
		}
		return nil
	}, nil
}
