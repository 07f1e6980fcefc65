package admin_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/procurekit/procure/httpapi/admin"
	"github.com/procurekit/procure/httpapi/internal/apitest"
	"github.com/procurekit/procure/httpapi/suppliers"
)

// The served OpenAPI documents as third-party tools read them (Spectral,
// Redocly, Prism): each must stand on its own, since a tool is given one
// URL and the admin listener serves no other document.

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
	sup, adm := schemas(suppliers.OpenAPI()), schemas(admin.OpenAPI())
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
	doc := admin.OpenAPI()
	const contact = `{"name": "Ann"}`
	const address = `{"address": {"line1": "1 Lambton Quay", "city": "Wellington", "country": "NZ"}}`
	const sup = `{"profileType": "COMPANY", "name": "Acme", "keywords": ["paper"],
	  "defaultContact": {"id": "3f2b8a4e-1c2d-4e5f-8a9b-0c1d2e3f4a5b", "name": "Ann"}}`
	// The server agrees: what the schema takes is written (200), what it
	// refuses is a 400.
	e := newAdminEnv(t, admin.Options{})
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
		apitest.CheckSchema(t, doc, tt.schema, []byte(tt.body))
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
		s := apitest.CompileSchema(t, doc, "#/components/schemas/"+tt.schema)
		if err := s.Validate(apitest.MustJSON(t, []byte(tt.body))); err == nil {
			t.Errorf("%s: %s accepted %s", tt.name, tt.schema, tt.body)
		}
		if got := e.call(t, http.MethodPut, paths[tt.schema], tt.body); got.status != http.StatusBadRequest {
			t.Errorf("%s: the server answered %d, want 400: %s", tt.name, got.status, got.body)
		}
	}
}

// The served document passes the lint of every served document: it stands
// on its own for a tool given its URL (apitest.LintDocument).
func TestOpenAPIDocumentValid(t *testing.T) {
	for _, p := range apitest.LintDocument(t, "admin.json", admin.OpenAPI()) {
		t.Error(p)
	}
}
