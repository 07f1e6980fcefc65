package apitest

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Schema validation of response bodies against an OpenAPI 3.1 document.
//
// OpenAPI 3.1 schemas are JSON Schema 2020-12, so the whole document is
// added to a jsonschema compiler as one resource and any schema inside it is
// compiled by its JSON pointer: "#/components/schemas/Error", or a
// response's own schema such as
// "#/paths/~1suppliers~1{id}/get/responses/404/content/application~1json/schema".
// Formats (uuid, date-time, email) are asserted, not just annotations.
//
// The helpers take the document as a parameter so that every API's tests
// can use them with its own document.

// schemaCache holds one compiled schema per (document, pointer): compiling
// is far slower than validating.
var schemaCache sync.Map // schemaKey -> *jsonschema.Schema

type schemaKey struct {
	doc     [sha256.Size]byte
	pointer string
}

// CompileSchema compiles the schema at pointer (a "#/..." fragment) of the
// OpenAPI document doc.
func CompileSchema(tb testing.TB, doc []byte, pointer string) *jsonschema.Schema {
	tb.Helper()
	key := schemaKey{doc: sha256.Sum256(doc), pointer: pointer}
	if s, ok := schemaCache.Load(key); ok {
		return s.(*jsonschema.Schema)
	}
	parsed, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		tb.Fatalf("OpenAPI document is not JSON: %v", err)
	}
	const url = "https://procurekit.test/openapi.json"
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	if err := c.AddResource(url, parsed); err != nil {
		tb.Fatalf("add OpenAPI document: %v", err)
	}
	s, err := c.Compile(url + pointer)
	if err != nil {
		tb.Fatalf("compile %s: %v", pointer, err)
	}
	schemaCache.Store(key, s)
	return s
}

// CheckSchema fails tb unless body is valid JSON that satisfies the schema
// at pointer of the OpenAPI document doc. name is a schema under
// #/components/schemas when it does not start with "#".
func CheckSchema(tb testing.TB, doc []byte, name string, body []byte) {
	tb.Helper()
	pointer := name
	if len(pointer) == 0 || pointer[0] != '#' {
		pointer = "#/components/schemas/" + name
	}
	s := CompileSchema(tb, doc, pointer)
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		tb.Errorf("body is not JSON (%v): %s", err, body)
		return
	}
	if err := s.Validate(v); err != nil {
		tb.Errorf("body does not match %s:\n%v\nbody: %s", pointer, err, body)
	}
}

// ResponseSchema returns the pointer to the JSON schema of an operation's
// response in the OpenAPI document doc, e.g. ResponseSchema(tb, doc,
// "/suppliers/{id}", "get", 404). A response given by $ref (to
// #/components/responses/...) is followed. It fails tb when the document
// does not describe that status for the operation: every status a handler
// answers must be documented.
func ResponseSchema(tb testing.TB, doc []byte, path, method string, status int) string {
	tb.Helper()
	var d struct {
		Paths map[string]map[string]struct {
			Responses map[string]struct {
				Ref string `json:"$ref"`
			} `json:"responses"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(doc, &d); err != nil {
		tb.Fatalf("OpenAPI document: %v", err)
	}
	code := strconv.Itoa(status)
	resp, ok := d.Paths[path][method].Responses[code]
	if !ok {
		tb.Fatalf("OpenAPI document has no response %d for %s %s", status, method, path)
	}
	base := "#/paths/" + EscapePointer(path) + "/" + method + "/responses/" + code
	if resp.Ref != "" {
		base = resp.Ref
	}
	return base + "/content/application~1json/schema"
}

func EscapePointer(s string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(s)
}
