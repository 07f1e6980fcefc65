package apitest

import (
	"slices"
	"strings"
	"testing"
)

// The lint has teeth: each rule catches the fault it is for.
func TestLintDocumentCatches(t *testing.T) {
	const okDoc = `{"openapi": "3.1.0", "info": {"title": "t", "version": "1"},
	  "paths": {"/a": {"get": {"operationId": "getA", "description": "Reads a.",
	    "responses": {"200": {"description": "ok", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/A"}}}}}}}},
	  "components": {"schemas": {"A": {"type": "array", "items": {"type": "string"}}}}}`
	if p := LintDocument(t, "ok", []byte(okDoc)); len(p) != 0 {
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
			p := LintDocument(t, tt.name, []byte(doc))
			if !slices.ContainsFunc(p, func(s string) bool { return strings.Contains(s, tt.want) }) {
				t.Errorf("problems %q, want one with %q", p, tt.want)
			}
		})
	}
}
