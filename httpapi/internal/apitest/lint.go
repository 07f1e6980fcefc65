package apitest

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

var (
	loadedDocsMu sync.Mutex
	loadedDocs   = map[string]*openapi3.T{}
)

// LoadDoc parses doc with kin-openapi, which resolves every $ref; a
// reference outside the document fails, as it does for a tool given only
// the served URL. Loaded documents are kept per content.
func LoadDoc(tb testing.TB, name string, doc []byte) *openapi3.T {
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

// LintDocument lists what is wrong with the OpenAPI document doc, as
// third-party tools read it (Spectral, Redocly, Prism): each document must
// stand on its own, since a tool is given one URL and the admin listener
// serves no other document. It must load with every reference resolved,
// pass kin-openapi's structural validation as OpenAPI 3.1, refer only
// within itself, use every component it defines, describe and name every
// operation, and give every array its items.
func LintDocument(tb testing.TB, name string, doc []byte) []string {
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
			if !strings.HasPrefix(ref, "#/") || !Resolves(raw, ref) {
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
				ref := "#/components/" + kind + "/" + EscapePointer(n)
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
			walkJSON(e, at+"/"+EscapePointer(k), f)
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

// MustJSON parses b as JSON for a schema's Validate, failing tb when it is
// not JSON.
func MustJSON(tb testing.TB, b []byte) any {
	tb.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		tb.Fatal(err)
	}
	return v
}

// Resolves reports whether the local JSON pointer ref ("#/a/b") names a
// value of doc.
func Resolves(doc any, ref string) bool {
	p, ok := strings.CutPrefix(ref, "#/")
	if !ok {
		return false
	}
	cur := doc
	for _, tok := range strings.Split(p, "/") {
		tok = strings.NewReplacer("~1", "/", "~0", "~").Replace(tok)
		m, ok := cur.(map[string]any)
		if !ok {
			return false
		}
		if cur, ok = m[tok]; !ok {
			return false
		}
	}
	return true
}
