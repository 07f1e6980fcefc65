// Package admin serves the admin API of live data (docs: admin.md):
// communities, suppliers with their contacts and remittance addresses,
// bearer tokens, service accounts and their keys, budgets, and the import
// of a data file, written to any Store (memstore and pgstore implement
// it) while the service runs. Mount it on a ServeMux under /admin/v1, on a
// listener of its own, or Handler under any prefix. One admin token
// guards every route; failed attempts are limited per client. The API
// serves its OpenAPI 3.1 document at openapi.json (OpenAPI).
package admin
