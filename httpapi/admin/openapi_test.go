package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/go-cmp/cmp"

	"github.com/procurekit/procure/httpapi"
)

// The served OpenAPI documents as third-party tools read them (Spectral,
// Redocly, Prism): each must stand on its own, since a tool is given one
// URL and the admin listener serves no other document.

// servedDocs are the OpenAPI documents the APIs serve, by file name.
func servedDocs() map[string][]byte {
	return map[string][]byte{
		"suppliers.json": httpapi.SupplierOpenAPI(),
		"users.json":     httpapi.UserOpenAPI(),
		"admin.json":     httpapi.AdminOpenAPI(),
		"scim.json":      httpapi.SCIMOpenAPI(),
	}
}

var (
	loadedDocsMu sync.Mutex
	loadedDocs   = map[string]*openapi3.T{}
)

// loadDoc parses doc with kin-openapi, which resolves every $ref; a
// reference outside the document fails, as it does for a tool given only
// the served URL. Loaded documents are kept per content.
func loadDoc(tb testing.TB, name string, doc []byte) *openapi3.T {
	tb.Helper()
	loadedDocsMu.Lock()
	defer loadedDocsMu.Unlock()
	if t, ok := loadedDocs[string(doc)]; ok {
		return t
	}
	loader := openapi3.NewLoader()
	loader.IsExternalRefsAllowed = false
	t, err := loader.LoadFromData(doc)
	if err != nil {
		tb.Fatalf("%s does not load: %v", name, err)
	}
	loadedDocs[string(doc)] = t
	return t
}

// Every served document loads with every reference resolved, passes the
// library's structural validation as OpenAPI 3.1, refers only within
// itself, uses every component it defines, describes and names every
// operation, and gives every array its items.
func TestOpenAPIDocumentsValid(t *testing.T) {
	for name, doc := range servedDocs() {
		t.Run(name, func(t *testing.T) {
			problems := lintDocument(t, name, doc)
			for _, p := range problems {
				t.Error(p)
			}
		})
	}
}

// lintDocument lists what is wrong with the OpenAPI document doc.
func lintDocument(tb testing.TB, name string, doc []byte) []string {
	tb.Helper()
	var problems []string
	loader := openapi3.NewLoader()
	loader.IsExternalRefsAllowed = false
	spec, err := loader.LoadFromData(doc)
	if err != nil {
		return []string{name + " does not load: " + err.Error()}
	}
	if spec.OpenAPI != "3.1.0" {
		problems = append(problems, "openapi is "+strconv.Quote(spec.OpenAPI)+", want 3.1.0")
	}
	if err := spec.Validate(context.Background(), openapi3.EnableExamplesValidation()); err != nil {
		problems = append(problems, "invalid OpenAPI: "+err.Error())
	}

	var raw map[string]any
	if err := json.Unmarshal(doc, &raw); err != nil {
		return append(problems, "not JSON: "+err.Error())
	}
	refs := map[string]bool{}
	walkJSON(raw, "#", func(at string, obj map[string]any) {
		if ref, ok := obj["$ref"].(string); ok {
			if !strings.HasPrefix(ref, "#/") || !resolves(raw, ref) {
				problems = append(problems, at+": $ref "+ref+" does not resolve within the document")
			}
			refs[ref] = true
		}
		if isArraySchema(obj) && obj["items"] == nil && obj["prefixItems"] == nil {
			problems = append(problems, at+": an array without items")
		}
	})

	// Unused components: a component is used when something refers to it
	// (a security scheme when a security requirement names it).
	used := map[string]bool{}
	for ref := range refs {
		used[ref] = true
	}
	for _, req := range spec.Security {
		for s := range req {
			used["#/components/securitySchemes/"+s] = true
		}
	}
	for path, item := range spec.Paths.Map() {
		for method, op := range item.Operations() {
			where := strings.ToLower(method) + " " + path
			if strings.TrimSpace(op.Description) == "" {
				problems = append(problems, where+": no description")
			}
			if op.OperationID == "" {
				problems = append(problems, where+": no operationId")
			}
			if op.Security != nil {
				for _, req := range *op.Security {
					for s := range req {
						used["#/components/securitySchemes/"+s] = true
					}
				}
			}
		}
	}
	if comps, ok := raw["components"].(map[string]any); ok {
		for kind, m := range comps {
			entries, _ := m.(map[string]any)
			for n := range entries {
				ref := "#/components/" + kind + "/" + escapePointer(n)
				if !used[ref] {
					problems = append(problems, ref+" is not used")
				}
			}
		}
	}
	sort.Strings(problems)
	return problems
}

// walkJSON calls f on every JSON object of v, skipping the values of the
// keywords that hold data rather than schemas (examples, enums, defaults).
func walkJSON(v any, at string, f func(at string, obj map[string]any)) {
	switch v := v.(type) {
	case map[string]any:
		f(at, v)
		for k, e := range v {
			switch k {
			case "example", "examples", "enum", "const", "default":
				continue
			}
			walkJSON(e, at+"/"+escapePointer(k), f)
		}
	case []any:
		for i, e := range v {
			walkJSON(e, at+"/"+strconv.Itoa(i), f)
		}
	}
}

// isArraySchema reports whether obj is a schema whose type is or
// includes "array".
func isArraySchema(obj map[string]any) bool {
	switch t := obj["type"].(type) {
	case string:
		return t == "array"
	case []any:
		return slices.Contains(t, any("array"))
	}
	return false
}

// The lint has teeth: each rule catches the fault it is for.
func TestLintDocumentCatches(t *testing.T) {
	const okDoc = `{"openapi": "3.1.0", "info": {"title": "t", "version": "1"},
	  "paths": {"/a": {"get": {"operationId": "getA", "description": "Reads a.",
	    "responses": {"200": {"description": "ok", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/A"}}}}}}}},
	  "components": {"schemas": {"A": {"type": "array", "items": {"type": "string"}}}}}`
	if p := lintDocument(t, "ok", []byte(okDoc)); len(p) != 0 {
		t.Fatalf("a sound document: %v", p)
	}
	for _, tt := range []struct {
		name, old, new, want string
	}{
		{"external ref", `"#/components/schemas/A"`, `"/other.json#/components/schemas/A"`, "does not load"},
		{"array without items", `"type": "array", "items": {"type": "string"}`, `"type": "array"`, "an array without items"},
		{"unused component", `"A": {`, `"B": {"type": "string"}, "A": {`, "#/components/schemas/B is not used"},
		{"no description", `"description": "Reads a.",`, ``, "get /a: no description"},
		{"no operationId", `"operationId": "getA",`, ``, "get /a: no operationId"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			doc := strings.Replace(okDoc, tt.old, tt.new, 1)
			p := lintDocument(t, tt.name, []byte(doc))
			if !slices.ContainsFunc(p, func(s string) bool { return strings.Contains(s, tt.want) }) {
				t.Errorf("problems %q, want one with %q", p, tt.want)
			}
		})
	}
}

// admin.json holds copies of the supplier API's schemas (a tool reading
// the admin document cannot follow a reference into another listener's
// document): each copy equals its source, and each write body is derived
// from the schema it writes by one rule - the id (given by the path) and the
// dates (stamped by the store) become optional - so neither can drift.
func TestAdminOpenAPICopiesSupplierSchemas(t *testing.T) {
	schemas := func(doc []byte) map[string]map[string]any {
		var d struct {
			Components struct {
				Schemas map[string]map[string]any `json:"schemas"`
			} `json:"components"`
		}
		if err := json.Unmarshal(doc, &d); err != nil {
			t.Fatal(err)
		}
		return d.Components.Schemas
	}
	sup, adm := schemas(httpapi.SupplierOpenAPI()), schemas(httpapi.AdminOpenAPI())
	copied := 0
	for name, want := range sup {
		got, ok := adm[name]
		if !ok || name == "Error" { // each API lists its own error codes
			continue
		}
		copied++
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("admin.json's %s differs from suppliers.json's (-suppliers +admin):\n%s", name, diff)
		}
	}
	if copied < 3 {
		t.Errorf("only %d schemas copied; admin.json answers with SupplierDetail, SupplierContact and RemittanceAddress", copied)
	}

	// writeBody is source as a write body: id and dates optional.
	writeBody := func(source string) map[string]any {
		var s map[string]any
		b, _ := json.Marshal(sup[source])
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatal(err)
		}
		var req []any
		for _, r := range s["required"].([]any) {
			if r != "id" && r != "modifiedDate" && r != "createdDate" {
				req = append(req, r)
			}
		}
		s["required"] = req
		return s
	}
	supplierIn := writeBody("SupplierDetail")
	props := supplierIn["properties"].(map[string]any)
	// keywords, and contacts and addresses that must be empty (they have
	// routes of their own), are the write body's own.
	for _, p := range []string{"keywords", "contacts", "remittanceAddresses"} {
		props[p] = adm["SupplierInput"]["properties"].(map[string]any)[p]
	}
	// The default contact and address are written with the supplier: their
	// ids are required (nothing else names them), their dates optional.
	props["defaultContact"] = map[string]any{"$ref": "#/components/schemas/ContactInput", "required": []any{"id"}}
	props["defaultRemittanceAddress"] = map[string]any{"$ref": "#/components/schemas/RemittanceAddressInput", "required": []any{"id"}}
	for name, want := range map[string]map[string]any{
		"SupplierInput":          supplierIn,
		"ContactInput":           writeBody("SupplierContact"),
		"RemittanceAddressInput": writeBody("RemittanceAddress"),
	} {
		got := adm[name]
		if got == nil {
			t.Errorf("admin.json has no %s", name)
			continue
		}
		// Its own description says what the body is; everything else is derived.
		want["description"] = got["description"]
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("admin.json's %s is not its source as a write body (-want +got):\n%s", name, diff)
		}
	}
}

// The admin write bodies take what the server takes (docs: admin.md
// "Suppliers", "Contacts and addresses"): no id or dates needed, and refuse
// what it refuses.
func TestAdminOpenAPIWriteBodies(t *testing.T) {
	doc := httpapi.AdminOpenAPI()
	const contact = `{"name": "Ann"}`
	const address = `{"address": {"line1": "1 Lambton Quay", "city": "Wellington", "country": "NZ"}}`
	const sup = `{"profileType": "COMPANY", "name": "Acme", "keywords": ["paper"],
	  "defaultContact": {"id": "3f2b8a4e-1c2d-4e5f-8a9b-0c1d2e3f4a5b", "name": "Ann"}}`
	// The server agrees: what the schema takes is written (200), what it
	// refuses is a 400.
	e := newAdminEnv(t, httpapi.AdminOptions{})
	e.community(t, "acme-au")
	const supPath = "/communities/acme-au/suppliers/" + adminSupplierID
	paths := map[string]string{
		"SupplierInput":          supPath,
		"ContactInput":           supPath + "/contacts/" + otherUUID,
		"RemittanceAddressInput": supPath + "/remittance-addresses/" + otherUUID,
	}
	for _, tt := range []struct{ schema, body string }{
		{"SupplierInput", sup},
		{"SupplierInput", `{"profileType": "COMPANY", "contacts": [], "remittanceAddresses": []}`},
		{"SupplierInput", `{"id": "` + adminSupplierID + `", "profileType": "INDIVIDUAL", "modifiedDate": "2026-05-01T00:00:00Z", "createdDate": "2026-05-01T00:00:00Z"}`},
		{"ContactInput", contact},
		{"RemittanceAddressInput", address},
	} {
		checkSchema(t, doc, tt.schema, []byte(tt.body))
		e.call(t, http.MethodPut, paths[tt.schema], tt.body).want(t, http.StatusOK, "", "")
	}
	for _, tt := range []struct{ name, schema, body string }{
		{"contact without name", "ContactInput", `{"email": "a@example.com"}`},
		{"address without address", "RemittanceAddressInput", `{"code": "A"}`},
		{"supplier without profileType", "SupplierInput", `{"name": "Acme"}`},
		{"supplier with contacts", "SupplierInput", `{"profileType": "COMPANY", "contacts": [{"id": "` + otherUUID + `", "name": "Ann"}]}`},
		{"supplier with addresses", "SupplierInput", `{"profileType": "COMPANY", "remittanceAddresses": [{"id": "` + otherUUID + `", "address": {"line1": "1 Lambton Quay", "country": "NZ"}}]}`},
		{"default contact without id", "SupplierInput", `{"profileType": "COMPANY", "defaultContact": {"name": "Ann"}}`},
		{"keyword too long", "SupplierInput", `{"profileType": "COMPANY", "keywords": ["` + strings.Repeat("k", 256) + `"]}`},
	} {
		s := compileSchema(t, doc, "#/components/schemas/"+tt.schema)
		if err := s.Validate(mustJSON(t, []byte(tt.body))); err == nil {
			t.Errorf("%s: %s accepted %s", tt.name, tt.schema, tt.body)
		}
		if got := e.call(t, http.MethodPut, paths[tt.schema], tt.body); got.status != http.StatusBadRequest {
			t.Errorf("%s: the server answered %d, want 400: %s", tt.name, got.status, got.body)
		}
	}
}
