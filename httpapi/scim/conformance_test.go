package scim_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/elimity-com/scim/schema"

	"github.com/procurekit/procure/httpapi/scim"
)

// A SCIM conformance check in the tree (issue 19): every response of the
// replayed Okta and Entra ID sequences (replay, replay_test.go) is
// checked against RFC 7643's schemas as elimity-com/scim encodes them -
// an implementation written apart from this one - besides scim.json:
// required attributes, attribute types, canonical values, the common
// attributes (id, meta), the message schemas of RFC 7644 (ListResponse,
// Error with the scimType its status allows), and the served discovery
// schema's agreement with RFC 7643 (types, multiValued, mutability).

// rfcUser is RFC 7643's User schema (section 4.1, 8.7.1).
var rfcUser = schema.CoreUserSchema()

// scimTypesByStatus are the scimTypes RFC 7644 3.12 allows per status.
var scimTypesByStatus = map[int][]string{
	400: {"invalidFilter", "tooMany", "invalidSyntax", "invalidPath", "noTarget", "invalidValue", "invalidVers", "sensitive", "mutability"},
	409: {"uniqueness"},
}

// rfcStatuses are the statuses of RFC 7644 3.12, and the 2xx and 304 of
// the operations.
var rfcStatuses = []int{200, 201, 204, 304, 307, 308, 400, 401, 403, 404, 409, 412, 413, 500, 501}

// conformSCIM checks one response of a request to path.
func conformSCIM(t *testing.T, s *scimServer, method, path string, got scimResp) {
	t.Helper()
	if !slices.Contains(rfcStatuses, got.status) && got.status != http.StatusServiceUnavailable {
		t.Errorf("%s %s: status %d is not one of RFC 7644 3.12", method, path, got.status)
	}
	if got.status == http.StatusNoContent || got.status == http.StatusNotModified {
		if len(got.body) != 0 {
			t.Errorf("%s %s: %d with a body %s", method, path, got.status, got.body)
		}
		return
	}
	var doc map[string]any
	if err := json.Unmarshal(got.body, &doc); err != nil {
		t.Fatalf("%s %s: %v: %s", method, path, err, got.body)
	}
	schemas, _ := doc["schemas"].([]any)
	switch {
	case got.status >= 400:
		conformError(t, got.status, doc)
	case slices.Contains(schemas, any("urn:ietf:params:scim:api:messages:2.0:ListResponse")):
		total, _ := doc["totalResults"].(float64)
		items, _ := doc["itemsPerPage"].(float64)
		start, _ := doc["startIndex"].(float64)
		resources, _ := doc["Resources"].([]any)
		if int(items) != len(resources) || int(total) < len(resources) || start < 1 {
			t.Errorf("%s %s: ListResponse totalResults %v itemsPerPage %v startIndex %v with %d resources", method, path, total, items, start, len(resources))
		}
		if strings.HasPrefix(path, "/scim/v2/Users") {
			for _, r := range resources {
				res, _ := r.(map[string]any)
				conformUser(t, s, res, "")
			}
		}
	case strings.HasPrefix(path, "/scim/v2/Users"):
		conformUser(t, s, doc, got.header.Get("ETag"))
	}
}

// conformError checks an error body (RFC 7644 3.12).
func conformError(t *testing.T, status int, doc map[string]any) {
	t.Helper()
	schemas, _ := doc["schemas"].([]any)
	if len(schemas) != 1 || schemas[0] != "urn:ietf:params:scim:api:messages:2.0:Error" {
		t.Errorf("error schemas %v", schemas)
	}
	if doc["status"] != strconv.Itoa(status) {
		t.Errorf("error status %v (%T); want the string %q", doc["status"], doc["status"], strconv.Itoa(status))
	}
	if st, ok := doc["scimType"].(string); ok && !slices.Contains(scimTypesByStatus[status], st) {
		t.Errorf("scimType %q is not one RFC 7644 gives a %d", st, status)
	}
	if d, _ := doc["detail"].(string); d == "" {
		t.Errorf("error without a detail: %v", doc)
	}
}

// conformUser checks a User resource against RFC 7643's User schema and
// the served extension schema; etag, when given, must be meta.version.
func conformUser(t *testing.T, s *scimServer, u map[string]any, etag string) {
	t.Helper()
	if _, err := rfcUser.Validate(u); err != nil {
		t.Errorf("the user breaks RFC 7643's User schema (%s: %s): %v", err.ScimType, err.Detail, u)
	}
	id, _ := u["id"].(string)
	meta, _ := u["meta"].(map[string]any)
	if id == "" || meta == nil || meta["resourceType"] != "User" {
		t.Errorf("id %q, meta %v; want an id and meta.resourceType User", id, meta)
		return
	}
	if loc, _ := meta["location"].(string); !strings.HasSuffix(loc, "/scim/v2/Users/"+id) {
		t.Errorf("meta.location %q does not name the user %s", loc, id)
	}
	if v, _ := meta["version"].(string); v == "" || (etag != "" && v != etag) {
		t.Errorf("meta.version %q, ETag %q; want them equal", v, etag)
	}
	for _, attr := range []string{"emails", "phoneNumbers"} {
		def, _ := rfcUser.Attributes.ContainsAttribute(attr)
		typ, _ := def.SubAttributes().ContainsAttribute("type")
		entries, _ := u[attr].([]any)
		for _, e := range entries {
			if v, ok := e.(map[string]any)["type"].(string); ok && !slices.Contains(typ.CanonicalValues(), v) {
				t.Errorf("%s.type %q is not a canonical value %v", attr, v, typ.CanonicalValues())
			}
		}
	}
	schemas, _ := u["schemas"].([]any)
	ext, hasExt := u[scim.ExtensionSchema]
	if hasExt != slices.Contains(schemas, any(scim.ExtensionSchema)) {
		t.Errorf("schemas %v and the extension's presence (%v) disagree", schemas, hasExt)
	}
	if hasExt {
		if _, err := servedSchema(t, s, scim.ExtensionSchema).ValidateExtension(ext); err != nil {
			t.Errorf("the extension breaks its served schema (%s): %v", err.ScimType, ext)
		}
	}
	for k := range u {
		if _, core := rfcUser.Attributes.ContainsAttribute(k); !core && !slices.Contains([]string{"schemas", "id", "externalId", "meta", scim.ExtensionSchema}, k) {
			t.Errorf("attribute %q is in no schema of the resource", k)
		}
	}
}

// servedSchema reads a schema the endpoint serves, as a client does.
func servedSchema(t *testing.T, s *scimServer, id string) schema.Schema {
	t.Helper()
	got := s.do(t, scimReq{method: http.MethodGet, path: "/scim/v2/Schemas/" + id, key: "-"})
	var sc schema.Schema
	if got.status != 200 {
		t.Fatalf("GET /Schemas/%s: %d", id, got.status)
	}
	if err := json.Unmarshal(got.body, &sc); err != nil {
		t.Fatalf("the served schema %s does not read as a SCIM schema: %v", id, err)
	}
	return sc
}

// The served User schema is RFC 7643's as far as it goes: every attribute
// it declares is one of RFC 7643's User, with the same type, plurality,
// mutability and sub-attributes, and canonical values where RFC 7643
// gives them; userName is required.
func TestSCIMServedSchemaAgreesWithRFC7643(t *testing.T) {
	s := newSCIMServer(t)
	served := servedSchema(t, s, "urn:ietf:params:scim:schemas:core:2.0:User")
	var compare func(path string, ours, rfc schema.CoreAttribute)
	compare = func(path string, ours, rfc schema.CoreAttribute) {
		if ours.AttributeType() != rfc.AttributeType() || ours.MultiValued() != rfc.MultiValued() || ours.Mutability() != rfc.Mutability() ||
			ours.Required() != rfc.Required() {
			t.Errorf("%s: type %s multiValued %v mutability %s required %v; RFC 7643: %s %v %s %v", path,
				ours.AttributeType(), ours.MultiValued(), ours.Mutability(), ours.Required(),
				rfc.AttributeType(), rfc.MultiValued(), rfc.Mutability(), rfc.Required())
		}
		if !slices.Equal(ours.CanonicalValues(), rfc.CanonicalValues()) {
			t.Errorf("%s: canonical values %v; RFC 7643: %v", path, ours.CanonicalValues(), rfc.CanonicalValues())
		}
		for _, sub := range ours.SubAttributes() {
			r, ok := rfc.SubAttributes().ContainsAttribute(sub.Name())
			if !ok {
				t.Errorf("%s.%s is not in RFC 7643's User", path, sub.Name())
				continue
			}
			compare(path+"."+sub.Name(), sub, r)
		}
	}
	// RFC 7643 3.1 lets a schema list the common attributes too
	// (externalId here), with their characteristics.
	rfcAttrs := append(schema.Attributes(schema.CommonAttributes()), rfcUser.Attributes...)
	for _, a := range served.Attributes {
		rfc, ok := rfcAttrs.ContainsAttribute(a.Name())
		if !ok {
			t.Errorf("%s is not in RFC 7643's User", a.Name())
			continue
		}
		compare(a.Name(), a, rfc)
	}
	// The extension does not redefine a core attribute (RFC 7643 3.3).
	for _, a := range servedSchema(t, s, scim.ExtensionSchema).Attributes {
		if _, core := rfcUser.Attributes.ContainsAttribute(a.Name()); core {
			t.Errorf("the extension redefines the core attribute %s", a.Name())
		}
	}
}

// Okta's provisioning, as its SCIM 2.0 integration guide describes it:
// the connection test, the lookup before a create, profile pushes by PUT
// (AIW apps) and PATCH (OIN apps), deactivation and reactivation, a
// password push (not held), and list paging.
func TestSCIMConformanceOkta(t *testing.T) {
	const create = `{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"userName":"ada.lovelace@example.com",
		"name":{"givenName":"Ada","familyName":"Lovelace"},"emails":[{"primary":true,"value":"ada.lovelace@example.com","type":"work"}],
		"displayName":"Ada Lovelace","locale":"en-GB","externalId":"00u1ada","groups":[],"password":"t0p-secret","active":true}`
	patch := func(ops string) string { return patchBody(ops) }
	steps := []replayStep{
		{name: "test connection", method: http.MethodGet, path: "/scim/v2/Users?startIndex=1&count=2", status: 200, check: wantTotal(2)},
		{name: "lookup before create", method: http.MethodGet, path: "/scim/v2/Users?filter=" + q(`userName eq "ada.lovelace@example.com"`) + "&startIndex=1&count=100", status: 200, check: wantTotal(0)},
		{name: "create", method: http.MethodPost, path: "/scim/v2/Users", body: create, status: 201},
		{name: "read", method: http.MethodGet, path: "/scim/v2/Users/{id}", status: 200},
		{name: "lookup finds it", method: http.MethodGet, path: "/scim/v2/Users?filter=" + q(`userName eq "ADA.LOVELACE@example.com"`), status: 200, check: wantTotal(1)},
		{name: "profile push by PUT", method: http.MethodPut, path: "/scim/v2/Users/{id}", status: 200,
			body: `{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"id":"{id}","userName":"ada.lovelace@example.com","name":{"givenName":"Augusta Ada","familyName":"King"},
				"emails":[{"primary":true,"value":"ada.king@example.com","type":"work"}],"phoneNumbers":[{"value":"+44 20 7946 0000","type":"mobile"}],"active":true,"locale":"en-GB"}`,
			check: wantUserWith(func(u scimUserBody) bool {
				return u.Name.FamilyName == "King" && u.Emails[0].Value == "ada.king@example.com"
			}, "the pushed profile")},
		{name: "profile push by PATCH", method: http.MethodPatch, path: "/scim/v2/Users/{id}", status: 200,
			body:  patch(`[{"op":"replace","value":{"name.givenName":"Ada","displayName":"Ada King","title":"Countess"}}]`),
			check: wantUserWith(func(u scimUserBody) bool { return u.Name.GivenName == "Ada" && u.DisplayName == "Ada King" }, "the patched names")},
		{name: "password push, not held", method: http.MethodPatch, path: "/scim/v2/Users/{id}", status: 200, body: patch(`[{"op":"replace","value":{"password":"n3w-secret"}}]`)},
		{name: "deactivate", method: http.MethodPatch, path: "/scim/v2/Users/{id}", status: 200, body: patch(`[{"op":"replace","value":{"active":false}}]`),
			check: wantUserWith(func(u scimUserBody) bool { return !u.Active }, "inactive")},
		{name: "read inactive", method: http.MethodGet, path: "/scim/v2/Users/{id}", status: 200,
			check: wantUserWith(func(u scimUserBody) bool { return !u.Active }, "inactive")},
		{name: "reactivate", method: http.MethodPatch, path: "/scim/v2/Users/{id}", status: 200, body: patch(`[{"op":"replace","value":{"active":true}}]`),
			check: wantUserWith(func(u scimUserBody) bool { return u.Active }, "active")},
		{name: "import: page 1", method: http.MethodGet, path: "/scim/v2/Users?startIndex=1&count=2", status: 200,
			check: func(t *testing.T, got scimResp) {
				if l := decodeSCIMList(t, got.body); l.TotalResults != 3 || len(l.Resources) != 2 {
					t.Errorf("page 1: %d of %d", len(l.Resources), l.TotalResults)
				}
			}},
		{name: "import: page 2", method: http.MethodGet, path: "/scim/v2/Users?startIndex=3&count=2", status: 200,
			check: func(t *testing.T, got scimResp) {
				if l := decodeSCIMList(t, got.body); l.TotalResults != 3 || len(l.Resources) != 1 || l.StartIndex != 3 {
					t.Errorf("page 2: %d of %d from %d", len(l.Resources), l.TotalResults, l.StartIndex)
				}
			}},
		{name: "a filter it cannot answer", method: http.MethodGet, path: "/scim/v2/Users?filter=" + q(`title pr`), status: 400, scimType: "invalidFilter"},
		{name: "unsupported method", method: http.MethodDelete, path: "/scim/v2/Users", status: 501},
	}
	scimStores(t, func(t *testing.T, s *scimServer) { replay(t, s, steps) })
}

// Microsoft Entra ID's provisioning, as its SCIM guide and validator send
// it: matching on userName and externalId, PATCH with capitalised ops,
// value-filtered paths, enterprise attributes, "False" as a string,
// the procure extension, a path in no schema, DELETE, and the 404s.
func TestSCIMConformanceEntra(t *testing.T) {
	const create = `{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User","urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"],
		"externalId":"8c1e5f0a","userName":"grace.hopper@contoso.com","active":true,"displayName":"Grace Hopper",
		"emails":[{"primary":true,"type":"work","value":"grace.hopper@contoso.com"}],"meta":{"resourceType":"User"},
		"name":{"formatted":"Grace Hopper","familyName":"Hopper","givenName":"Grace"},"roles":[],
		"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User":{"employeeNumber":"1906","department":"Navy"}}`
	steps := []replayStep{
		{name: "match on userName: none", method: http.MethodGet, path: "/scim/v2/Users?filter=" + q(`userName eq "grace.hopper@contoso.com"`), status: 200, check: wantTotal(0)},
		{name: "create", method: http.MethodPost, path: "/scim/v2/Users", body: create, status: 201},
		{name: "match on externalId", method: http.MethodGet, path: "/scim/v2/Users?filter=" + q(`externalId eq "8c1e5f0a"`), status: 200, check: wantTotal(1)},
		{name: "match on both, grouped", method: http.MethodGet, path: "/scim/v2/Users?filter=" + q(`(externalId eq "8c1e5f0a") and (userName eq "grace.hopper@contoso.com")`), status: 200, check: wantTotal(1)},
		{name: "update attributes", method: http.MethodPatch, path: "/scim/v2/Users/{id}", status: 200,
			body: patchBody(`[{"op":"Replace","path":"displayName","value":"Rear Admiral Hopper"},
				{"op":"Add","path":"emails[type eq \"work\"].value","value":"ghopper@contoso.com"},
				{"op":"Add","path":"phoneNumbers[type eq \"work\"].value","value":"+1 555 0100"},
				{"op":"Add","path":"phoneNumbers[type eq \"mobile\"].value","value":"+1 555 0199"},
				{"op":"Replace","path":"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department","value":"Computing"},
				{"op":"Add","path":"` + scimExt + `:roleCodes","value":[{"code":"BUYER"},{"code":"APPROVER"}]}]`),
			check: wantUserWith(func(u scimUserBody) bool {
				return u.DisplayName == "Rear Admiral Hopper" && u.Emails[0].Value == "ghopper@contoso.com" && u.PhoneNumbers[0].Value == "+1 555 0100" &&
					u.Extension != nil && len(u.Extension.Roles) == 3
			}, "the patched attributes")},
		{name: "remove one role", method: http.MethodPatch, path: "/scim/v2/Users/{id}", status: 200,
			body:  patchBody(`[{"op":"Remove","path":"` + scimExt + `:roleCodes[code eq \"APPROVER\"]"}]`),
			check: wantUserWith(func(u scimUserBody) bool { return len(u.Extension.Roles) == 2 }, "two roles")},
		{name: "a path in no schema", method: http.MethodPatch, path: "/scim/v2/Users/{id}", status: 400, scimType: "invalidPath",
			body: patchBody(`[{"op":"Replace","path":"urn:ietf:params:scim:schemas:extension:CustomExtensionName:2.0:User:level","value":"3"}]`)},
		{name: "a read-only path", method: http.MethodPatch, path: "/scim/v2/Users/{id}", status: 400, scimType: "mutability",
			body: patchBody(`[{"op":"Replace","path":"meta.version","value":"W/\"99\""}]`)},
		{name: "disable", method: http.MethodPatch, path: "/scim/v2/Users/{id}", status: 200,
			body:  patchBody(`[{"op":"Replace","path":"active","value":"False"}]`),
			check: wantUserWith(func(u scimUserBody) bool { return !u.Active }, "inactive")},
		{name: "enable", method: http.MethodPatch, path: "/scim/v2/Users/{id}", status: 200,
			body:  patchBody(`[{"op":"Replace","path":"active","value":"True"}]`),
			check: wantUserWith(func(u scimUserBody) bool { return u.Active }, "active")},
		{name: "a taken userName", method: http.MethodPost, path: "/scim/v2/Users", status: 409, scimType: "uniqueness",
			body: `{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"userName":"GRACE.hopper@contoso.com"}`},
		{name: "an unreadable body", method: http.MethodPost, path: "/scim/v2/Users", status: 400, scimType: "invalidSyntax", body: `{"userName":`},
		{name: "hard delete", method: http.MethodDelete, path: "/scim/v2/Users/{id}", status: 204},
		{name: "deleted means disabled", method: http.MethodGet, path: "/scim/v2/Users/{id}", status: 200,
			check: wantUserWith(func(u scimUserBody) bool { return !u.Active }, "the user kept, inactive")},
		{name: "an unknown id", method: http.MethodGet, path: "/scim/v2/Users/00000000-0000-4000-8000-000000000000", status: 404},
		{name: "a PATCH of an unknown id", method: http.MethodPatch, path: "/scim/v2/Users/00000000-0000-4000-8000-000000000000", status: 404,
			body: patchBody(`[{"op":"Replace","path":"active","value":"False"}]`)},
	}
	scimStores(t, func(t *testing.T, s *scimServer) { replay(t, s, steps) })
}
