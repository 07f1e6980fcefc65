// Package httpapi serves the procurement platform's interfaces over HTTP,
// on any net/http mux or router, over any store that implements the domain
// packages' interfaces (memstore and pgstore do).
//
// What it serves (docs: routes.md):
//
//   - the supplier read API, Interface A (docs: suppliers.md):
//     MountSuppliers on a ServeMux under /public/community, or
//     SupplierHandler under any prefix and router;
//   - the user synchronisation API, Interface B (docs: users.md):
//     MountUsers under /v1, or UserHandler;
//   - SCIM 2.0 provisioning over the same users, our extension of B
//     (docs: scim.md): MountSCIM under /scim/v2;
//   - the admin API of live data (docs: admin.md): MountAdmin under
//     /admin/v1, meant for a listener of its own;
//   - account code validation, Interface C (docs: account-codes.md): the
//     connector side, AccountCodeHandler, which answers the platform's XML
//     requests from a budget.Validator. The platform side, a
//     budget.Validator that asks a connector, is package accountcodeapi
//     (AccountCodeClient here is a deprecated alias).
//
// Every JSON API answers errors with one body, ErrorBody {code, message},
// the message naming the field or parameter and the rule it breaks; one
// function maps the domain packages' sentinel errors to statuses and codes
// (docs: errors.md). Each API serves its hand-written OpenAPI 3.1 document
// at openapi.json, without authentication; the package's tests validate
// every response against it. RequestLog wraps a mux to log one line per
// request, without secrets or query values.
//
// Bodies, headers, XML nesting, lines and error details are bounded
// (docs: limits.md). The supplier pages are encoded by hand, next to the
// benchmark that shows why (supplierjson.go); everything else uses
// encoding/json, and the XML exchange encoding/xml (internal/acxml, shared
// with the client; its token stream bounds the nesting).
package httpapi
