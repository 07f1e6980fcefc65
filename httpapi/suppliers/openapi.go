package httpapi

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"net/http"
	"time"
)

// supplierOpenAPI is the OpenAPI 3.1.0 document of the supplier read API,
// written by hand: every path, parameter, schema and error code.
//
//go:embed openapi/suppliers.json
var supplierOpenAPI []byte

// SupplierOpenAPI returns the OpenAPI 3.1.0 document (version 1.0.0) of the
// supplier read API, as served at GET /public/community/openapi.json. The
// slice is a copy; the caller may keep or change it.
func SupplierOpenAPI() []byte { return bytes.Clone(supplierOpenAPI) }

// serveDocument serves a fixed JSON document with a strong ETag, so that
// clients and proxies can revalidate it cheaply (If-None-Match gives a
// 304), and with HEAD and Range handled by http.ServeContent.
func serveDocument(doc []byte) http.Handler {
	sum := sha256.Sum256(doc)
	etag := []string{`"` + hex.EncodeToString(sum[:16]) + `"`}
	ctype := []string{"application/json"}
	cache := []string{"public, max-age=300"}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h["Content-Type"] = ctype
		h["Etag"] = etag
		h["Cache-Control"] = cache
		http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(doc))
	})
}
