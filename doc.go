// Package procure implements, server-side, the three integration interfaces
// of a procurement platform: (A) the read-only supplier API with bearer
// tokens, (B) the user synchronisation API with service-account keys, and
// (C) account code validation at requisition checkout, plus our extensions:
// live data (every store takes writes at runtime), an admin API, and SCIM
// 2.0 provisioning. The contract, in our words, is docs/ in the repository
// (docs/README.md is its index). This package holds what every layer
// shares - the error types (ValidationError, ErrInvalid, ErrConflict,
// ErrUnavailable, ErrUnknownCommunity), Community and CommunityStore,
// Readier (a backend that says whether it can answer now) - and this map.
//
// # Packages
//
// Domain packages own their types and the interfaces their backends
// implement; they know nothing of HTTP or SQL.
//
//   - supplier: the resources of Interface A (Summary, Detail, Contact,
//     RemittanceAddress and the rest, enums that reject unknown values),
//     Record (a supplier as stored), the query types, supplier.Store (the
//     four reads scoped by community) and supplier.Writer (the writes).
//   - user: the user of Interface B, Input (a create or update body that
//     remembers which fields were sent), the rules of create and update,
//     user.Store, and the version that optimistic concurrency checks.
//   - budget: Interface C. The request and results of a validation, the
//     Validator interface, the budget-table and stored-procedure
//     validators of the connector, and the checkout gate that turns
//     verdicts into proceed, soft stop or hard stop.
//   - paging: page, size and sort parsing shared by every list, and the
//     page wrapper {content, page{size, number, totalElements, totalPages}}.
//   - auth: who a caller is. Bearer tokens (Interface A) and service
//     accounts with API keys and IP allowlists (Interface B); stores keep
//     only SHA-256 hashes of secrets, compared in constant time; the
//     Principal (community, scopes) that scopes every store call; the
//     token and key writers and the lastUsedAt recorder.
//   - datafile: the JSON data file that seeds a store: communities with
//     their tokens, service accounts, auto-roles, suppliers, users and
//     budgets. Errors name the entry by JSON path and line.
//
// Backends implement the domain interfaces:
//
//   - memstore: everything in memory, loaded from a data file and written
//     at runtime; ordered indexes make a supplier page cost O(log n + page
//     size) and a write O(log n)-ish.
//   - pgstore: everything in PostgreSQL (pgx), shared by any number of
//     stateless nodes; migrations are embedded and applied on Open.
//   - supplier/suppliertest, user/usertest and auth/authtest: the
//     conformance suites both backends run, so that they cannot behave
//     differently.
//   - internal/textkey: the sort and match keys of names, computed in Go
//     once per value, so that both backends (and PostgreSQL whatever its
//     collation) order and match names alike (docs: paging.md, filters.md).
//
// HTTP lives in httpapi for the server side, one package per API, and in
// one client package per interface for the calling side:
//
//   - httpapi: the map of the server side, and aliases of the names below
//     so that one import serves every API. Each JSON API has its OpenAPI
//     3.1 document, Mount for a *http.ServeMux, and Handler for any router
//     and prefix:
//   - httpapi/suppliers: Interface A, the supplier read API.
//   - httpapi/users: Interface B, the user synchronisation API.
//   - httpapi/scim: SCIM 2.0 provisioning over the users of Interface B.
//   - httpapi/admin: the admin API of live data.
//   - httpapi/accountcode: the connector's side of Interface C's XML
//     exchange, answered from a budget.Validator.
//   - httpapi/health: the liveness and readiness probes of a host
//     (docs: operations.md); httpapi.Observe gives requests their ids,
//     log lines and Prometheus metrics, pgstore.WithMetrics and
//     memstore's RegisterMetrics the store's (one write-latency family,
//     defined once in internal/storemetrics).
//   - httpapi/internal/httpx: what the APIs share - the error body and
//     the one mapping of errors to statuses and codes, JSON bodies, the
//     request log; httpapi/internal/supplierjson: the supplier encoder
//     the supplier and admin APIs share; httpapi/internal/apitest: what
//     their tests share, above all the proxy that validates every test
//     exchange against the served OpenAPI documents.
//   - userapi: a Go client of Interface B.
//   - accountcodeapi: a Go client of Interface C, the platform's side of
//     the XML exchange: a budget.Validator that asks the customer's
//     finance system or connector. Its XML codec, encoding/xml with the
//     bounds of docs/limits.md, is internal/acxml, shared with
//     httpapi/accountcode.
//
// Programs: examples/server serves the APIs over built-in demo data or a
// data file (an admin listener with -admin-addr); examples/procurectl is
// the operator's command over the admin API; examples/connector is the
// customer-side connector of Interface C; examples/usersync syncs an HRIS
// export; examples/gendata writes large realistic data files; bench holds
// the load harness. internal/maintest runs a program's main, exit status
// and all, from the program's own tests; internal/gcheadroom is the
// server's pacing of the garbage collector by a memory allowance
// (-gc-headroom).
//
// # How a request flows
//
// A supplier API request, GET /public/community/suppliers?query=acme:
//
//  1. httpapi/suppliers routes it (Go 1.22 method patterns on the caller's mux); any
//     other method is a 405, an unknown path a 404.
//  2. auth.Bearer checks the token against an auth.TokenStore (by hash);
//     the token's scope decides 401 or 403, its community scopes the rest.
//  3. httpapi/suppliers parses the query: paging.Parse for page, size and sort, and
//     the API's own filters (query, modifiedSince). Every broken rule is a
//     *procure.ValidationError naming the parameter. Nothing reaches a
//     store unvalidated.
//  4. The supplier.Store (memstore or pgstore) answers for the caller's
//     community only; another community's supplier is supplier.ErrNotFound.
//  5. httpapi/suppliers encodes the page and writes it.
//
// The user API follows the same path with service-account authentication
// and a JSON body: user.Input is decoded, normalised and validated before
// user.Store is called; stores enforce only what needs the data
// (uniqueness of ids and usernames).
//
// # Where things are decided
//
// Validation happens once, at the edge: data files in datafile (with
// supplier.Record.Validate), request parameters and bodies in httpapi and
// user, with go-playground/validator behind internal/check so that every
// error names the JSON field and the rule in words. Errors are mapped to
// HTTP statuses and codes in one place, httpapi/internal/httpx's
// Classify: ValidationError is 400, auth.ErrUnauthenticated 401,
// auth.ErrForbidden 403, the domain ErrNotFound 404, ErrConflict 409,
// ErrUnavailable 503 with Retry-After, and anything unknown a 500 whose
// body says nothing internal while the cause goes to log/slog.
package procure
