// Package httpapi is the map of the HTTP side of the service: each API is
// a package of its own under httpapi/, serving its routes on any net/http
// mux or router over any store that implements the domain packages'
// interfaces (memstore and pgstore do). Routes: docs: routes.md.
//
//   - suppliers: the supplier read API, Interface A (docs: suppliers.md),
//     under /public/community.
//   - users: the user synchronisation API, Interface B (docs: users.md),
//     under /v1.
//   - scim: SCIM 2.0 provisioning over the same users, our extension of B
//     (docs: scim.md), under /scim/v2.
//   - admin: the admin API of live data (docs: admin.md), under /admin/v1,
//     meant for a listener of its own.
//   - accountcode: account code validation, Interface C
//     (docs: account-codes.md), the connector side: a handler that
//     answers the platform's XML requests from a budget.Validator. The
//     platform side is package accountcodeapi.
//   - health: the probes GET /livez and GET /readyz of a host's
//     listeners (docs: operations.md "Health"), over checks such as a
//     store's procure.Readier.
//
// Each of the JSON APIs has Mount, registering its routes on a ServeMux at
// its document's server (suppliers.Mount(mux, suppliers.Options{...})),
// and Handler, an http.Handler serving the same paths relative to wherever
// it is mounted, for any router and prefix:
//
//	mux.Handle("/procurement/", http.StripPrefix("/procurement", suppliers.Handler(opts)))
//
// A Handler answers its own JSON 404 and 405s, and serves its openapi.json
// with the servers URL set to the prefix the request came through, so
// that a client generated from the document calls the right place.
//
// The APIs share, through httpapi/internal/httpx, one error body, ErrorBody
// {code, message}, the message naming the field or parameter and the rule
// it breaks; one function that maps the domain packages' sentinel errors
// to statuses and codes (docs: errors.md); one reader of JSON request
// bodies (bounds, UTF-8, the words of a refusal); and the request log. Each API serves its hand-written OpenAPI
// 3.1 document at openapi.json, without authentication; each package's
// tests validate every response against it. Bodies, headers, XML nesting,
// lines and error details are bounded (docs: limits.md).
//
// This package also keeps the names programs used before the APIs had
// packages of their own - MountSuppliers, SupplierHandler, MountUsers,
// MountSCIM, MountAdmin, NewAccountCodeHandler, the options types, the
// error codes - as aliases and one-line calls, so that one import serves
// every API. Observe wraps a mux so that every request gets an id (the
// X-Request-Id header), one log line without secrets or query values
// (RequestLog is Observe with a logger alone), and, with RequestMetrics,
// its place in the Prometheus request metrics (docs: operations.md).
package httpapi
