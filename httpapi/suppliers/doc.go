// Package suppliers serves the supplier read API, Interface A
// (docs: suppliers.md): Mount on a ServeMux under /public/community, or
// Handler under any prefix and router, over any supplier.Store and
// auth.TokenStore (memstore and pgstore implement both). Callers present
// a bearer token with the scope suppliers:read; its community scopes every
// read. The API serves its OpenAPI 3.1 document at openapi.json (OpenAPI).
//
// The pages and suppliers are encoded by hand (httpapi/internal/supplierjson),
// next to the benchmark that shows why; errors share the body and codes of
// every JSON API of httpapi.
package suppliers
