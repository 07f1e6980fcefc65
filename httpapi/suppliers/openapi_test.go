package suppliers_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/procurekit/procure/httpapi/internal/apitest"
	"github.com/procurekit/procure/httpapi/internal/httpx"
	"github.com/procurekit/procure/httpapi/suppliers"
	"github.com/procurekit/procure/paging"
	"github.com/procurekit/procure/supplier"
)

// docs: routes.md: the document is served at
// GET /public/community/openapi.json without authentication; docs: routes.md: it is
// OpenAPI 3.1.0, version 1.0.0.
func TestOpenAPIServed(t *testing.T) {
	ts := newServer(t, nil, nil)
	res := ts.get(t, base+"/openapi.json", "") // no token
	if res.status != http.StatusOK {
		t.Fatalf("status %d, want 200", res.status)
	}
	if !bytes.Equal(res.body, suppliers.OpenAPI()) {
		t.Error("the served document is not the embedded one")
	}
	var doc struct {
		OpenAPI string `json:"openapi"`
		Info    struct {
			Version string `json:"version"`
		} `json:"info"`
	}
	if err := json.Unmarshal(res.body, &doc); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	if doc.OpenAPI != "3.1.0" || doc.Info.Version != "1.0.0" {
		t.Errorf("openapi %q version %q, want 3.1.0 and 1.0.0", doc.OpenAPI, doc.Info.Version)
	}

	// Revalidation with the ETag costs no body.
	etag := res.header.Get("ETag")
	if etag == "" {
		t.Fatal("no ETag")
	}
	req := httptest.NewRequest(http.MethodGet, base+"/openapi.json", nil)
	req.Header.Set("If-None-Match", etag)
	rec := httptest.NewRecorder()
	ts.handler.ServeHTTP(rec, req)
	if rec.Code != http.StatusNotModified || rec.Body.Len() != 0 {
		t.Errorf("If-None-Match: status %d with %d bytes, want 304 and none", rec.Code, rec.Body.Len())
	}
}

// SupplierOpenAPI hands out a copy: changing it does not change what is
// served.
func TestSupplierOpenAPIIsACopy(t *testing.T) {
	doc := suppliers.OpenAPI()
	doc[0] = 'X'
	if suppliers.OpenAPI()[0] != '{' {
		t.Error("changing the returned slice changed the document")
	}
}

// openAPIDoc is the part of the document the tests read.
type openAPIDoc struct {
	Paths      map[string]map[string]openAPIOperation `json:"paths"`
	Components struct {
		Schemas         map[string]schemaObject    `json:"schemas"`
		Parameters      map[string]json.RawMessage `json:"parameters"`
		Responses       map[string]json.RawMessage `json:"responses"`
		SecuritySchemes map[string]map[string]any  `json:"securitySchemes"`
	} `json:"components"`
	Security []map[string][]string `json:"security"`
}

type openAPIOperation struct {
	OperationID string `json:"operationId"`
	Parameters  []struct {
		Ref string `json:"$ref"`
	} `json:"parameters"`
	Responses map[string]json.RawMessage `json:"responses"`
	Security  *[]map[string][]string     `json:"security"`
}

type schemaObject struct {
	Type                 any                     `json:"type"`
	Required             []string                `json:"required"`
	Properties           map[string]schemaObject `json:"properties"`
	AdditionalProperties *bool                   `json:"additionalProperties"`
	MaxLength            *int                    `json:"maxLength"`
	Enum                 []any                   `json:"enum"`
	Ref                  string                  `json:"$ref"`
	AnyOf                []schemaObject          `json:"anyOf"`
	Format               string                  `json:"format"`
	Items                *schemaObject           `json:"items"`
}

func loadOpenAPI(tb testing.TB) openAPIDoc {
	tb.Helper()
	var d openAPIDoc
	if err := json.Unmarshal(suppliers.OpenAPI(), &d); err != nil {
		tb.Fatal(err)
	}
	return d
}

// Every schema has exactly the fields of its Go type, requires exactly the
// fields that are always present (no omitempty), carries the maxLength of
// the type's validate tag, and rejects stray fields: the document cannot
// drift from what the API sends.
func TestOpenAPISchemasMatchTypes(t *testing.T) {
	d := loadOpenAPI(t)
	types := map[string]reflect.Type{
		"SupplierSummary":   reflect.TypeFor[supplier.Summary](),
		"SupplierDetail":    reflect.TypeFor[supplier.Detail](),
		"SupplierContact":   reflect.TypeFor[supplier.Contact](),
		"Phone":             reflect.TypeFor[supplier.Phone](),
		"RemittanceAddress": reflect.TypeFor[supplier.RemittanceAddress](),
		"Address":           reflect.TypeFor[supplier.Address](),
		"Region":            reflect.TypeFor[supplier.Region](),
		"BankAccount":       reflect.TypeFor[supplier.BankAccount](),
		"Emails":            reflect.TypeFor[supplier.Emails](),
		"SupplierSettings":  reflect.TypeFor[supplier.Settings](),
		"PaymentTerm":       reflect.TypeFor[supplier.PaymentTerm](),
		"BuyerGroup":        reflect.TypeFor[supplier.BuyerGroup](),
		"Tag":               reflect.TypeFor[supplier.Tag](),
		"PageMetadata":      reflect.TypeFor[paging.Metadata](),
		"Error":             reflect.TypeFor[httpx.ErrorBody](),
	}
	for name, typ := range types {
		t.Run(name, func(t *testing.T) {
			s, ok := d.Components.Schemas[name]
			if !ok {
				t.Fatalf("no schema %s", name)
			}
			fields := jsonFieldsOf(typ)
			var wantProps, wantRequired []string
			for _, f := range fields {
				wantProps = append(wantProps, f.name)
				if !f.omitempty {
					wantRequired = append(wantRequired, f.name)
				}
			}
			var gotProps []string
			for p := range s.Properties {
				gotProps = append(gotProps, p)
			}
			sort.Strings(wantProps)
			sort.Strings(gotProps)
			if diff := cmp.Diff(wantProps, gotProps); diff != "" {
				t.Errorf("properties (-Go type +schema):\n%s", diff)
			}
			gotRequired := slices.Clone(s.Required)
			sort.Strings(gotRequired)
			sort.Strings(wantRequired)
			if diff := cmp.Diff(wantRequired, gotRequired); diff != "" {
				t.Errorf("required (-always present in Go +schema):\n%s", diff)
			}
			if s.AdditionalProperties == nil || *s.AdditionalProperties {
				t.Error("additionalProperties must be false")
			}
			for _, f := range fields {
				p := s.Properties[f.name]
				var got int
				if p.MaxLength != nil {
					got = *p.MaxLength
				}
				if got != f.maxLength {
					t.Errorf("%s: maxLength %d, validate tag says %d", f.name, got, f.maxLength)
				}
			}
		})
	}
}

// SupplierDetail is SupplierSummary plus five objects (docs: suppliers.md "SupplierDetail"): the two
// schemas agree on every shared field.
func TestOpenAPIDetailExtendsSummary(t *testing.T) {
	d := loadOpenAPI(t)
	sum, det := d.Components.Schemas["SupplierSummary"], d.Components.Schemas["SupplierDetail"]
	for name, p := range sum.Properties {
		if diff := cmp.Diff(p, det.Properties[name]); diff != "" {
			t.Errorf("%s differs (-summary +detail):\n%s", name, diff)
		}
	}
	if diff := cmp.Diff(sum.Required, det.Required); diff != "" {
		t.Errorf("required differs (-summary +detail):\n%s", diff)
	}
}

// The enums list exactly the Go enums' values, in the spec's order.
func TestOpenAPIEnums(t *testing.T) {
	d := loadOpenAPI(t)
	enums := map[string][]string{
		"ProfileType":           supplier.ProfileType("").Allowed(),
		"TaxIdentificationType": supplier.TaxIdentificationType("").Allowed(),
		"TinVerificationStatus": supplier.TinVerificationStatus("").Allowed(),
		"ConnectionState":       supplier.ConnectionState("").Allowed(),
		"TenantType":            supplier.TenantType("").Allowed(),
		"TermType":              supplier.TermType("").Allowed(),
	}
	for name, want := range enums {
		var got []string
		for _, v := range d.Components.Schemas[name].Enum {
			got = append(got, v.(string))
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s (-Go +schema):\n%s", name, diff)
		}
	}
	// docs: suppliers.md "BankAccount" types these two "string or null": inline enums with null.
	bank := d.Components.Schemas["BankAccount"].Properties
	for prop, allowed := range map[string][]string{
		"bankAccountType": supplier.BankAccountType("").Allowed(),
		"depositFormat":   supplier.DepositFormat("").Allowed(),
	} {
		want := []any{}
		for _, v := range allowed {
			want = append(want, v)
		}
		want = append(want, nil)
		if diff := cmp.Diff(want, bank[prop].Enum); diff != "" {
			t.Errorf("BankAccount.%s enum (-want +schema):\n%s", prop, diff)
		}
		if diff := cmp.Diff([]any{"string", "null"}, bank[prop].Type); diff != "" {
			t.Errorf("BankAccount.%s type (-want +schema):\n%s", prop, diff)
		}
	}
}

// The error codes the document lists are exactly those the supplier API
// can answer with, and each response names its own.
func TestOpenAPIErrorCodes(t *testing.T) {
	d := loadOpenAPI(t)
	var got []string
	for _, v := range d.Components.Schemas["Error"].Properties["code"].Enum {
		got = append(got, v.(string))
	}
	want := []string{
		httpx.CodeInvalidParameter, httpx.CodeUnauthorized, httpx.CodeForbidden, httpx.CodeNotFound,
		httpx.CodeSupplierNotFound, httpx.CodeMethodNotAllowed, httpx.CodeInternal, httpx.CodeUnavailable,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Error.code enum (-want +got):\n%s", diff)
	}
	doc := suppliers.OpenAPI()
	for _, c := range []struct {
		status int
		code   string
	}{{400, httpx.CodeInvalidParameter}, {401, httpx.CodeUnauthorized}, {403, httpx.CodeForbidden}, {404, httpx.CodeSupplierNotFound}, {500, httpx.CodeInternal}} {
		ptr := apitest.ResponseSchema(t, doc, "/suppliers/{id}", "get", c.status)
		for _, code := range want {
			body := []byte(`{"code":"` + code + `","message":"m"}`)
			err := apitest.CompileSchema(t, doc, ptr).Validate(apitest.MustJSON(t, body))
			if (err == nil) != (code == c.code) {
				t.Errorf("%d response accepts code %s: %v; want only %s", c.status, code, err == nil, c.code)
			}
		}
	}
}

// Every route is documented with its parameters and every status the
// handlers answer with (docs: suppliers.md "Endpoints"; errors.md); the API requires bearerAuth with
// suppliers:read, the document itself nothing.
func TestOpenAPIOperations(t *testing.T) {
	d := loadOpenAPI(t)
	ops := []struct {
		path     string
		params   []string
		statuses []string
	}{
		{"/suppliers", []string{"query", "modifiedSince", "page", "size", "supplierSort"}, []string{"200", "400", "401", "403", "500", "503"}},
		{"/suppliers/{id}", []string{"id"}, []string{"200", "400", "401", "403", "404", "500", "503"}},
		{"/suppliers/{supplierId}/contacts", []string{"supplierId", "page", "size"}, []string{"200", "400", "401", "403", "404", "500", "503"}},
		{"/suppliers/{supplierId}/remittance-addresses", []string{"supplierId", "modifiedSince", "page", "size", "addressSort"}, []string{"200", "400", "401", "403", "404", "500", "503"}},
	}
	var paths []string
	for p := range d.Paths {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	if diff := cmp.Diff([]string{"/openapi.json", "/suppliers", "/suppliers/{id}", "/suppliers/{supplierId}/contacts", "/suppliers/{supplierId}/remittance-addresses"}, paths); diff != "" {
		t.Errorf("paths (-want +got):\n%s", diff)
	}
	for _, op := range ops {
		get, ok := d.Paths[op.path]["get"]
		if !ok || len(d.Paths[op.path]) != 1 {
			t.Errorf("%s: want exactly a get operation, got %v", op.path, d.Paths[op.path])
			continue
		}
		var params []string
		for _, p := range get.Parameters {
			params = append(params, strings.TrimPrefix(p.Ref, "#/components/parameters/"))
		}
		if diff := cmp.Diff(op.params, params); diff != "" {
			t.Errorf("%s parameters (-want +got):\n%s", op.path, diff)
		}
		var statuses []string
		for s := range get.Responses {
			statuses = append(statuses, s)
		}
		sort.Strings(statuses)
		if diff := cmp.Diff(op.statuses, statuses); diff != "" {
			t.Errorf("%s statuses (-want +got):\n%s", op.path, diff)
		}
		if get.Security != nil {
			t.Errorf("%s overrides the document's security", op.path)
		}
	}
	if diff := cmp.Diff([]map[string][]string{{"bearerAuth": {"suppliers:read"}}}, d.Security); diff != "" {
		t.Errorf("security (-want +got):\n%s", diff)
	}
	if s := d.Components.SecuritySchemes["bearerAuth"]; s["type"] != "http" || s["scheme"] != "bearer" {
		t.Errorf("bearerAuth scheme: %v", s)
	}
	if sec := d.Paths["/openapi.json"]["get"].Security; sec == nil || len(*sec) != 0 {
		t.Error("/openapi.json must need no authentication (security: [])")
	}
}

// The parameters carry the limits of docs: suppliers.md "Endpoints"; limits.md.
func TestOpenAPIParameterLimits(t *testing.T) {
	doc := suppliers.OpenAPI()
	tests := []struct {
		param string
		valid []any
		bad   []any
	}{
		{"page", []any{0, 7}, []any{-1, 1.5, "1"}},
		{"size", []any{1, 20, 100}, []any{0, 101}},
		{"query", []any{"", strings.Repeat("é", 255)}, []any{strings.Repeat("é", 256)}},
		{"supplierSort", []any{"name", "name,asc", "createdDate,DESC", "modifiedDate,Desc"}, []any{"companyName", "name,", "name,up", "id"}},
		{"addressSort", []any{"companyName", "modifiedDate,desc"}, []any{"name", "createdDate"}},
		// docs: filters.md "modifiedSince": a date-time with an offset, a full date, or
		// a date-time whose + arrived as a space.
		{"modifiedSince", []any{"2026-05-01T09:30:00+12:00", "2026-05-01T09:30:00.5Z", "2026-05-01", "2026-05-01T09:30:00 12:00", "2026-05-01t09:30:00.123456 05:30"},
			[]any{"yesterday", "2026-05-01T09:30:00", "2026-02-30", "2026-5-1", "2026-05-01T09:30:00 1200", "2026-05-01T09:30:00-12:00 "}},
		{"id", []any{"3f2b8a4e-1c2d-4e5f-8a9b-0c1d2e3f4a5b", "3F2B8A4E-1C2D-4E5F-8A9B-0C1D2E3F4A5B"}, []any{"3f2b8a4e1c2d4e5f8a9b0c1d2e3f4a5b", "{3f2b8a4e-1c2d-4e5f-8a9b-0c1d2e3f4a5b}", "x"}},
		{"supplierId", []any{"3f2b8a4e-1c2d-4e5f-8a9b-0c1d2e3f4a5b"}, []any{"urn:uuid:3f2b8a4e-1c2d-4e5f-8a9b-0c1d2e3f4a5b"}},
	}
	for _, tt := range tests {
		s := apitest.CompileSchema(t, doc, "#/components/parameters/"+tt.param+"/schema")
		for _, v := range tt.valid {
			if err := s.Validate(jsonValue(t, v)); err != nil {
				t.Errorf("%s=%v rejected: %v", tt.param, v, err)
			}
		}
		for _, v := range tt.bad {
			if err := s.Validate(jsonValue(t, v)); err == nil {
				t.Errorf("%s=%v accepted", tt.param, v)
			}
		}
	}
}

// The schemas have teeth: formats are asserted, lengths counted in
// characters, stray fields and nulls where none are allowed rejected. (A
// validator that accepted everything would pass every other test.)
func TestOpenAPISchemasReject(t *testing.T) {
	doc := suppliers.OpenAPI()
	const okContact = `{"id":"3f2b8a4e-1c2d-4e5f-8a9b-0c1d2e3f4a5b","name":"Ann","modifiedDate":"2026-05-01T00:00:00Z","createdDate":"2026-05-01T00:00:00Z"}`
	apitest.CheckSchema(t, doc, "SupplierContact", []byte(okContact))
	bad := []struct {
		name, schema, body string
	}{
		{"stray field", "SupplierContact", strings.Replace(okContact, `"name"`, `"nickname":"A","name"`, 1)},
		{"bad uuid", "SupplierContact", strings.Replace(okContact, "3f2b8a4e-1c2d", "3f2b8a4e1c2d", 1)},
		{"bad date-time", "SupplierContact", strings.Replace(okContact, "2026-05-01T00:00:00Z", "2026-05-01 00:00:00", 1)},
		{"bad email", "SupplierContact", strings.Replace(okContact, `"name"`, `"email":"not-an-email","name"`, 1)},
		{"missing required", "SupplierContact", strings.Replace(okContact, `"name":"Ann",`, "", 1)},
		{"null name", "SupplierContact", strings.Replace(okContact, `"Ann"`, "null", 1)},
		{"name too long", "SupplierContact", strings.Replace(okContact, `"Ann"`, `"`+strings.Repeat("ü", 256)+`"`, 1)},
		{"unknown enum", "SupplierContact", strings.Replace(okContact, `"name"`, `"managedBy":"BUYER","name"`, 1)},
		{"unknown error code", "Error", `{"code":"TEAPOT","message":"m"}`},
		{"page without totals", "SupplierContactPage", `{"content":[],"page":{"size":20,"number":0}}`},
		{"content null", "SupplierContactPage", `{"content":null,"page":{"size":20,"number":0,"totalElements":0,"totalPages":0}}`},
	}
	for _, tt := range bad {
		s := apitest.CompileSchema(t, doc, "#/components/schemas/"+tt.schema)
		if err := s.Validate(apitest.MustJSON(t, []byte(tt.body))); err == nil {
			t.Errorf("%s: %s accepted %s", tt.name, tt.schema, tt.body)
		}
	}
	// Nullable fields accept null, as docs: values.md allows.
	apitest.CheckSchema(t, doc, "SupplierContact", []byte(strings.Replace(okContact, `"name"`, `"email":null,"phone":{"prefix":null},"name"`, 1)))
}

func jsonValue(tb testing.TB, v any) any {
	tb.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		tb.Fatal(err)
	}
	return apitest.MustJSON(tb, b)
}

// goField is a JSON member of a Go type.
type goField struct {
	name      string
	omitempty bool
	maxLength int
}

// jsonFieldsOf lists the JSON members of struct type t, with embedded
// structs flattened as encoding/json does.
func jsonFieldsOf(t reflect.Type) []goField {
	var out []goField
	for _, f := range reflect.VisibleFields(t) {
		if f.Anonymous || !f.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		g := goField{name: name, omitempty: strings.Contains(opts, "omitempty") || strings.Contains(opts, "omitzero")}
		text := f.Type.Kind() == reflect.String || f.Type == reflect.TypeFor[supplier.Text]()
		for _, rule := range strings.Split(f.Tag.Get("validate"), ",") {
			if n, ok := strings.CutPrefix(rule, "max="); ok && text {
				g.maxLength, _ = strconv.Atoi(n)
			}
		}
		out = append(out, g)
	}
	return out
}

// Every $ref of the document points at something that exists.
func TestOpenAPIRefsResolve(t *testing.T) {
	var doc any
	if err := json.Unmarshal(suppliers.OpenAPI(), &doc); err != nil {
		t.Fatal(err)
	}
	var walk func(v any, at string)
	n := 0
	walk = func(v any, at string) {
		switch v := v.(type) {
		case map[string]any:
			for k, e := range v {
				if ref, ok := e.(string); ok && k == "$ref" {
					n++
					if !apitest.Resolves(doc, ref) {
						t.Errorf("%s: $ref %s does not resolve", at, ref)
					}
					continue
				}
				walk(e, at+"/"+k)
			}
		case []any:
			for i, e := range v {
				walk(e, at+"/"+strconv.Itoa(i))
			}
		}
	}
	walk(doc, "#")
	if n < 50 {
		t.Errorf("only %d $refs found; the walk is broken", n)
	}
}

// The served document passes the lint of every served document: it stands
// on its own for a tool given its URL (apitest.LintDocument).
func TestOpenAPIDocumentValid(t *testing.T) {
	for _, p := range apitest.LintDocument(t, "suppliers.json", suppliers.OpenAPI()) {
		t.Error(p)
	}
}
