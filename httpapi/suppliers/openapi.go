package suppliers

import (
	"bytes"
	_ "embed"
)

// document is the OpenAPI 3.1.0 document of the supplier read API,
// written by hand: every path, parameter, schema and error code.
//
//go:embed openapi.json
var document []byte

// OpenAPI returns the OpenAPI 3.1.0 document (version 1.0.0) of the
// supplier read API, as served at GET /public/community/openapi.json. The
// slice is a copy; the caller may keep or change it.
func OpenAPI() []byte { return bytes.Clone(document) }
