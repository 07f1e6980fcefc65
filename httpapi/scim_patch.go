package httpapi

import (
	"bytes"
	"encoding/json"
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
//     \"work\"].value", "urn:...:procure:2.0:User:roles"), or without
//     one, the value then being an object of attribute names (which may
//     themselves be paths, "name.familyName") to values (Okta's
//     {"op":"replace","value":{"active":false}});
//   - active may be a boolean or the strings "True"/"False" (Entra);
//   - attribute names compare case-insensitively.
//
// The paths a user can hold are applied; any other attribute (title,
// locale, the enterprise extension...) is ignored, as on create. On the
// single-valued e-mail and phone number, add and replace are alike; a
// value filter on emails or phoneNumbers must select the work or the
// primary entry (the one a user holds): a filter on another type is
// ignored. On the extension's lists, add merges (new codes appended,
// attributes replaced by name), replace replaces, and remove takes
// either the whole list or the entries given as value (or selected by
// [code eq "X"] / [name eq "X"]).

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

// parsePatch decodes and checks a PATCH body, before the user is read.
func parsePatch(body []byte) ([]scimPatchOp, error) {
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
	for i := range req.Operations {
		op := &req.Operations[i]
		op.Op = strings.ToLower(strings.TrimSpace(op.Op))
		at := "Operations[" + strconv.Itoa(i) + "]"
		switch op.Op {
		case "add", "replace":
			if len(op.Value) == 0 {
				return nil, newSCIMError(http.StatusBadRequest, "invalidValue", at+".value: is required for "+op.Op)
			}
			if op.Path == "" && bytes.TrimSpace(op.Value)[0] != '{' {
				return nil, newSCIMError(http.StatusBadRequest, "invalidValue", at+".value: without a path, the value must be an object of attributes")
			}
		case "remove":
			if op.Path == "" {
				return nil, newSCIMError(http.StatusBadRequest, "noTarget", at+".path: is required for remove")
			}
		default:
			return nil, newSCIMError(http.StatusBadRequest, "invalidSyntax", at+".op: must be add, replace or remove (got "+strconv.Quote(op.Op)+")")
		}
	}
	return req.Operations, nil
}

// maxPatchOps bounds the operations of one PATCH (docs: limits.md:
// every input is bounded).
const maxPatchOps = 1000

// applyPatch applies ops to u in order.
func applyPatch(u *user.User, ops []scimPatchOp) error {
	for i, op := range ops {
		at := "Operations[" + strconv.Itoa(i) + "]"
		if op.Path == "" {
			// An object of attribute (or path) names to values. Keys are
			// applied in a fixed order (sorted), since JSON objects have
			// none and the result must not depend on map iteration.
			var attrs map[string]json.RawMessage
			if err := json.Unmarshal(op.Value, &attrs); err != nil {
				return newSCIMError(http.StatusBadRequest, "invalidValue", at+".value: must be an object of attributes")
			}
			keys := make([]string, 0, len(attrs))
			for k := range attrs {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for _, k := range keys {
				if err := applyPath(u, op.Op, k, attrs[k], at); err != nil {
					return err
				}
			}
			continue
		}
		if err := applyPath(u, op.Op, op.Path, op.Value, at); err != nil {
			return err
		}
	}
	return nil
}

// scimPath is a parsed PATCH path: attr[filter].sub, where attr may carry
// the extension's URN.
type scimPath struct {
	ext    bool   // an attribute of the procure extension
	attr   string // lower case
	filter []scimComparison
	sub    string // lower case
}

// parsePath parses a PATCH path. ok is false for a path the user cannot
// hold (another schema's URN), which is ignored.
func parsePath(p, at string) (path scimPath, ok bool, err error) {
	p = strings.TrimSpace(stripCoreURN(p))
	lower := strings.ToLower(p)
	extURN := strings.ToLower(SCIMExtensionSchema)
	switch {
	case lower == extURN:
		return scimPath{ext: true}, true, nil
	case strings.HasPrefix(lower, extURN+":"):
		path.ext = true
		p = p[len(extURN)+1:]
	case strings.HasPrefix(lower, "urn:"):
		return path, false, nil // the enterprise extension, or any other schema
	}
	if i := strings.IndexByte(p, '['); i >= 0 {
		j := strings.LastIndexByte(p, ']')
		if j < i {
			return path, false, newSCIMError(http.StatusBadRequest, "invalidPath", at+".path: unbalanced [ in "+strconv.Quote(p))
		}
		cs, err := parseSCIMFilter(p[i+1 : j])
		if err != nil {
			return path, false, newSCIMError(http.StatusBadRequest, "invalidPath", at+".path: "+err.Error())
		}
		path.filter = cs
		rest := p[j+1:]
		if rest != "" {
			if rest[0] != '.' {
				return path, false, newSCIMError(http.StatusBadRequest, "invalidPath", at+".path: expected . after ] in "+strconv.Quote(p))
			}
			path.sub = strings.ToLower(rest[1:])
		}
		p = p[:i]
	} else if attr, sub, found := strings.Cut(p, "."); found {
		p, path.sub = attr, strings.ToLower(sub)
	}
	path.attr = strings.ToLower(p)
	if path.attr == "" {
		return path, false, newSCIMError(http.StatusBadRequest, "invalidPath", at+".path: no attribute named")
	}
	return path, true, nil
}

// applyPath applies one operation on one path.
func applyPath(u *user.User, op, rawPath string, value json.RawMessage, at string) error {
	path, ok, err := parsePath(rawPath, at)
	if err != nil || !ok {
		return err
	}
	if path.ext {
		return applyExtension(u, op, path, value, at)
	}
	switch path.attr {
	case "username":
		return setText(&u.Username, op, value, at, "userName")
	case "externalid":
		return setText(&u.ExternalID, op, value, at, "externalId")
	case "displayname":
		return setText(&u.DisplayName, op, value, at, "displayName")
	case "active":
		if op == "remove" {
			return nil // active has no empty value; removing it changes nothing
		}
		v, ok := parseSCIMBool(value)
		if !ok {
			return newSCIMError(http.StatusBadRequest, "invalidValue", at+".value: active must be true or false")
		}
		u.Enabled = v
		return nil
	case "name":
		switch path.sub {
		case "givenname":
			return setText(&u.FirstName, op, value, at, "name.givenName")
		case "familyname":
			return setText(&u.LastName, op, value, at, "name.familyName")
		case "":
			if op == "remove" {
				u.FirstName, u.LastName = "", ""
				return nil
			}
			var n scimNameIn
			if err := json.Unmarshal(value, &n); err != nil {
				return newSCIMError(http.StatusBadRequest, "invalidValue", at+".value: name must be an object")
			}
			// RFC 7644 3.5.2.3: sub-attributes not given are left as
			// they are, for replace as for add.
			if n.GivenName != nil {
				u.FirstName = *n.GivenName
			}
			if n.FamilyName != nil {
				u.LastName = *n.FamilyName
			}
		}
		return nil // name.formatted and the like: not held
	case "emails":
		return setMulti(&u.Email, op, path, value, at, pickEmail)
	case "phonenumbers":
		return setMulti(&u.Phone, op, path, value, at, pickPhone)
	}
	return nil // an attribute a user cannot hold
}

// setText sets or clears a single-valued text attribute. null clears.
func setText(dst *string, op string, value json.RawMessage, at, name string) error {
	if op == "remove" || isNull(value) {
		*dst = ""
		return nil
	}
	var s string
	if err := json.Unmarshal(value, &s); err != nil {
		return newSCIMError(http.StatusBadRequest, "invalidValue", at+".value: "+name+" must be a string")
	}
	*dst = s
	return nil
}

func isNull(v json.RawMessage) bool { return string(bytes.TrimSpace(v)) == "null" }

// setMulti applies an operation to emails or phoneNumbers, of which a
// user holds one entry.
func setMulti(dst *string, op string, path scimPath, value json.RawMessage, at string, pick func([]scimMultiIn) string) error {
	if path.filter != nil && !selectsHeldEntry(path.filter) {
		return nil // a home or other entry: not held
	}
	switch {
	case op == "remove":
		if path.sub == "" || path.sub == "value" {
			*dst = ""
		}
		return nil
	case path.sub == "value" || (path.filter != nil && path.sub == ""):
		if path.sub == "" {
			// emails[type eq "work"] with an entry object as value.
			var e scimMultiIn
			if err := json.Unmarshal(value, &e); err != nil {
				return newSCIMError(http.StatusBadRequest, "invalidValue", at+".value: must be an object with a value")
			}
			*dst = e.Value
			return nil
		}
		return setText(dst, op, value, at, "value")
	case path.sub != "":
		return nil // type, primary, display: not held
	}
	var es []scimMultiIn
	if isNull(value) {
		*dst = ""
		return nil
	}
	if err := json.Unmarshal(value, &es); err != nil {
		var one scimMultiIn // a single entry where an array belongs
		if err := json.Unmarshal(value, &one); err != nil {
			return newSCIMError(http.StatusBadRequest, "invalidValue", at+".value: must be an array of {\"value\": ...} entries")
		}
		es = []scimMultiIn{one}
	}
	if v := pick(es); v != "" || op == "replace" {
		*dst = v
	}
	return nil
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

// applyExtension applies an operation to the procure extension.
func applyExtension(u *user.User, op string, path scimPath, value json.RawMessage, at string) error {
	if path.attr == "" { // the extension as a whole: an object of its lists
		if op == "remove" {
			u.OrganisationUnits, u.Roles, u.BuyerGroups, u.ApproverGroups, u.Attributes = nil, nil, nil, nil, nil
			return nil
		}
		var attrs map[string]json.RawMessage
		if err := json.Unmarshal(value, &attrs); err != nil {
			return newSCIMError(http.StatusBadRequest, "invalidValue", at+".value: the extension must be an object")
		}
		keys := make([]string, 0, len(attrs))
		for k := range attrs {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			if err := applyExtension(u, op, scimPath{ext: true, attr: strings.ToLower(k)}, attrs[k], at); err != nil {
				return err
			}
		}
		return nil
	}
	var list *[]user.Code
	switch path.attr {
	case "organisationunits", "organisationsunits":
		list = &u.OrganisationUnits
	case "roles":
		list = &u.Roles
	case "buyergroups":
		list = &u.BuyerGroups
	case "approvergroups":
		list = &u.ApproverGroups
	case "attributes":
		return patchAttributes(&u.Attributes, op, path, value, at)
	default:
		return nil // not part of the extension: ignored
	}
	var codes scimCodes
	if op != "remove" || (len(value) > 0 && !isNull(value)) {
		if isNull(value) {
			codes = nil
		} else if err := json.Unmarshal(value, &codes); err != nil {
			return err
		}
	}
	switch op {
	case "replace":
		*list = slices.Clone([]user.Code(codes))
	case "add":
		for _, c := range codes {
			if !slices.ContainsFunc(*list, func(h user.Code) bool { return h.Code == c.Code }) {
				*list = append(*list, c)
			}
		}
	case "remove":
		drop, err := codeSelection(path, codes, "code", at)
		if err != nil {
			return err
		}
		if drop == nil {
			*list = nil
			return nil
		}
		*list = slices.DeleteFunc(*list, func(c user.Code) bool { return drop[c.Code] })
	}
	return nil
}

// codeSelection returns the keys a remove selects: from its value, or
// from a [key eq "X"] filter; nil means the whole list.
func codeSelection(path scimPath, codes scimCodes, key, at string) (map[string]bool, error) {
	switch {
	case path.filter != nil:
		drop := map[string]bool{}
		for _, c := range path.filter {
			s, ok := c.value.(string)
			if c.op != "eq" || !strings.EqualFold(c.attr, key) || !ok {
				return nil, newSCIMError(http.StatusBadRequest, "invalidPath", at+".path: only ["+key+" eq \"...\"] selects entries of this list")
			}
			drop[s] = true
		}
		return drop, nil
	case len(codes) > 0:
		drop := map[string]bool{}
		for _, c := range codes {
			drop[c.Code] = true
		}
		return drop, nil
	}
	return nil, nil
}

// patchAttributes applies an operation to the extension's attributes:
// add replaces by name or appends, replace replaces the list, remove
// drops the named ones (or all).
func patchAttributes(list *[]user.Attribute, op string, path scimPath, value json.RawMessage, at string) error {
	var attrs []user.Attribute
	if len(value) > 0 && !isNull(value) {
		if err := json.Unmarshal(value, &attrs); err != nil {
			return newSCIMError(http.StatusBadRequest, "invalidValue", at+".value: attributes must be an array of {\"name\": ..., \"value\": ...}")
		}
	}
	switch op {
	case "replace":
		*list = attrs
	case "add":
		for _, a := range attrs {
			i := slices.IndexFunc(*list, func(h user.Attribute) bool { return h.Name == a.Name })
			if i >= 0 {
				(*list)[i] = a
			} else {
				*list = append(*list, a)
			}
		}
	case "remove":
		names := make(scimCodes, len(attrs))
		for i, a := range attrs {
			names[i] = user.Code{Code: a.Name}
		}
		drop, err := codeSelection(path, names, "name", at)
		if err != nil {
			return err
		}
		if drop == nil {
			*list = nil
			return nil
		}
		*list = slices.DeleteFunc(*list, func(a user.Attribute) bool { return drop[a.Name] })
	}
	return nil
}
