package httpapi

import (
	"io"
	"log/slog"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/procurekit/procure/budget"
	"github.com/procurekit/procure/httpapi/accountcode"
	"github.com/procurekit/procure/httpapi/admin"
	"github.com/procurekit/procure/httpapi/internal/httpx"
	"github.com/procurekit/procure/httpapi/scim"
	"github.com/procurekit/procure/httpapi/suppliers"
	"github.com/procurekit/procure/httpapi/users"
)

// The names below are those of the API packages, kept here so that one
// import serves every API and programs written against this package keep
// compiling. Each is an alias or a one-line call; the API package's
// documentation is the reference.

// Error codes: the stable `code` of every error body (docs: errors.md).
// The OpenAPI documents list them; clients switch on them.
const (
	CodeInvalidParameter     = httpx.CodeInvalidParameter     // 400: a query or path parameter broke a rule
	CodeInvalidField         = httpx.CodeInvalidField         // 400: a body field broke a rule
	CodeMalformedRequest     = httpx.CodeMalformedRequest     // 400: a body that is not valid JSON or has a wrong type
	CodeDuplicateUsername    = httpx.CodeDuplicateUsername    // 400: the username is taken in the community
	CodeDuplicateID          = httpx.CodeDuplicateID          // 400: the user id exists
	CodeUnauthorized         = httpx.CodeUnauthorized         // 401: missing or bad credentials
	CodeForbidden            = httpx.CodeForbidden            // 403: authenticated, but lacking the scope
	CodeNotFound             = httpx.CodeNotFound             // 404: no such route
	CodeSupplierNotFound     = httpx.CodeSupplierNotFound     // 404: no such supplier in the caller's community
	CodeUserNotFound         = httpx.CodeUserNotFound         // 404: no such user in the caller's community
	CodeVersionMismatch      = httpx.CodeVersionMismatch      // 412: If-Match names a version the user no longer has
	CodeMethodNotAllowed     = httpx.CodeMethodNotAllowed     // 405: a known path with another method
	CodePayloadTooLarge      = httpx.CodePayloadTooLarge      // 413: a body over 1 MiB
	CodeUnsupportedMediaType = httpx.CodeUnsupportedMediaType // 415: a body that is not JSON
	CodeInternal             = httpx.CodeInternal             // 500: anything unexpected; details are logged, never shown
	CodeUnavailable          = httpx.CodeUnavailable          // 503: the backend is down or timed out; retry after Retry-After seconds
	CodeCommunityNotFound    = httpx.CodeCommunityNotFound    // 404: no such community
	CodeCredentialNotFound   = httpx.CodeCredentialNotFound   // 404: no such token, service account or key in the community
	CodeBudgetNotFound       = httpx.CodeBudgetNotFound       // 404: no such account in the community's budget table
	CodeConflict             = httpx.CodeConflict             // 409: the write would break a uniqueness rule, or needs a modifiedDate past 9999
	CodeNotImplemented       = httpx.CodeNotImplemented       // 501: the server was configured without this operation
	CodeRequestTimeout       = httpx.CodeRequestTimeout       // 408: the import's body stopped arriving (admin ImportIdleTimeout)
	CodeTooManyRequests      = httpx.CodeTooManyRequests      // 429: a client failed the admin token too often, until Retry-After seconds have passed
	CodeUpstreamFailed       = httpx.CodeUpstreamFailed       // 502: the connector's validator (the customer's database behind it) failed or broke the reply rule
)

// ErrorBody is the body of every JSON error answer: {code, message} and,
// rarely, details (docs: errors.md).
type ErrorBody = httpx.ErrorBody

// RetryAfterSeconds is the Retry-After of a 503.
const RetryAfterSeconds = httpx.RetryAfterSeconds

// MaxErrorDetails is the most field errors one 400 names (docs: limits.md);
// the message then ends "; and N more".
const MaxErrorDetails = httpx.MaxErrorDetails

// IsUnavailable reports whether the APIs answer err 503 UNAVAILABLE (with
// Retry-After: RetryAfterSeconds): a backend that is down or timed out. A
// host's own routes use it to answer alike.
func IsUnavailable(err error) bool { return httpx.IsUnavailable(err) }

// RequestLog wraps next (a mux with the APIs' routes) so that every
// request is logged once, when it ends, at level Info: its request id,
// method, route (the pattern's path, never the raw path or query),
// status, duration in milliseconds and the caller's community. Headers
// are never logged. It is Observe with a Logger alone.
func RequestLog(log *slog.Logger, next http.Handler) http.Handler { return httpx.RequestLog(log, next) }

// LogCommunity records, for the RequestLog line of the request w answers,
// the community its caller authenticated as. The APIs of this module do
// it themselves; a route of the host's own that authenticates its callers
// (examples/server's demo checkout) calls it so that its line names the
// community too. It does nothing when RequestLog does not log the request.
func LogCommunity(w http.ResponseWriter, community string) { httpx.NoteCommunity(w, community) }

// HeaderRequestID is the header of a request's id (docs: operations.md
// "Request ids"), in every answer Observe wraps.
const HeaderRequestID = httpx.HeaderRequestID

// ObserveOptions say what Observe records.
type ObserveOptions struct {
	// Logger receives one line per request (see RequestLog); nil: none.
	Logger *slog.Logger
	// Metrics, when not nil, counts each request (NewRequestMetrics).
	Metrics *RequestMetrics
}

// NewLogHandler returns a slog handler on w for ObserveOptions.Logger:
// slog.NewJSONHandler(w, opts) when json is true, else
// slog.NewTextHandler(w, opts), which writes Observe's request lines
// itself, the same bytes a fifth of the cost (a line through slog cost a
// supplier read 6% of the server's CPU; bench/README.md, session 18).
// Every other record, and a request line only slog can write exactly
// (say, a caller's request id that needs quoting), goes through the slog
// handler; with opts.ReplaceAttr or opts.AddSource every line does.
func NewLogHandler(w io.Writer, opts *slog.HandlerOptions, json bool) slog.Handler {
	return httpx.NewLogHandler(w, opts, json)
}

// Observe wraps next (a mux with the APIs' routes, or any handler) so
// that every request gets an id - the trace id of a well-formed W3C
// traceparent header, else a well-formed X-Request-Id of the caller's,
// else a new one - returned in the X-Request-Id header and written on
// every log line about the request; is logged as RequestLog says; and
// is counted in opts.Metrics (docs: operations.md).
func Observe(next http.Handler, opts ObserveOptions) http.Handler {
	return httpx.Observe(next, opts.Logger, opts.Metrics)
}

// Routed returns h, telling Observe that its requests belong to the API
// named api: the api label of the request metrics of a host's own routes
// (the API packages name theirs; a route nobody names is "other").
func Routed(api string, h http.Handler) http.Handler { return httpx.Routed(api, h) }

// RequestMetrics are the request metrics Observe records: the latency
// histogram procure_http_request_duration_seconds by API (suppliers,
// users, scim, admin, or other for a host's own routes), route pattern
// and status class, whose _count counts requests, and the gauge
// procure_http_requests_in_flight (docs: operations.md "Metrics").
type RequestMetrics = httpx.Metrics

// RequestDurationBuckets are the bounds, in seconds, of the request
// latency histogram: from a tenth of a millisecond to ten seconds.
var RequestDurationBuckets = httpx.DurationBuckets

// NewRequestMetrics registers the request metrics on reg: a registry of
// the caller's (prometheus.NewRegistry), never a global one that other
// code shares. Register once per registry, however many listeners share
// the metrics; a second registration fails with
// prometheus.AlreadyRegisteredError.
func NewRequestMetrics(reg prometheus.Registerer) (*RequestMetrics, error) {
	return httpx.NewMetrics(reg)
}

// The supplier read API, Interface A: package suppliers.

// SupplierBasePath is suppliers.BasePath.
const SupplierBasePath = suppliers.BasePath

// SupplierOptions is suppliers.Options.
type SupplierOptions = suppliers.Options

// MountSuppliers calls suppliers.Mount.
func MountSuppliers(mux *http.ServeMux, opts SupplierOptions) { suppliers.Mount(mux, opts) }

// SupplierHandler calls suppliers.Handler.
func SupplierHandler(opts SupplierOptions) http.Handler { return suppliers.Handler(opts) }

// SupplierOpenAPI calls suppliers.OpenAPI.
func SupplierOpenAPI() []byte { return suppliers.OpenAPI() }

// The user synchronisation API, Interface B: package users.

// UserBasePath is users.BasePath.
const UserBasePath = users.BasePath

// HeaderAutoRoles is users.HeaderAutoRoles.
const HeaderAutoRoles = users.HeaderAutoRoles

// MaxUserBodyBytes is users.MaxBodyBytes.
const MaxUserBodyBytes = users.MaxBodyBytes

// UserOptions is users.Options.
type UserOptions = users.Options

// MountUsers calls users.Mount.
func MountUsers(mux *http.ServeMux, opts UserOptions) { users.Mount(mux, opts) }

// UserHandler calls users.Handler.
func UserHandler(opts UserOptions) http.Handler { return users.Handler(opts) }

// UserOpenAPI calls users.OpenAPI.
func UserOpenAPI() []byte { return users.OpenAPI() }

// SCIM 2.0 provisioning: package scim.

// SCIMBasePath is scim.BasePath.
const SCIMBasePath = scim.BasePath

// SCIMExtensionSchema is scim.ExtensionSchema.
const SCIMExtensionSchema = scim.ExtensionSchema

// SCIMOptions is scim.Options.
type SCIMOptions = scim.Options

// MountSCIM calls scim.Mount.
func MountSCIM(mux *http.ServeMux, opts SCIMOptions) { scim.Mount(mux, opts) }

// SCIMHandler calls scim.Handler.
func SCIMHandler(opts SCIMOptions) http.Handler { return scim.Handler(opts) }

// SCIMOpenAPI calls scim.OpenAPI.
func SCIMOpenAPI() []byte { return scim.OpenAPI() }

// The admin API: package admin.

// Names of package admin.
const (
	AdminBasePath            = admin.BasePath
	MaxAdminBodyBytes        = admin.MaxBodyBytes
	MinAdminTokenBytes       = admin.MinTokenBytes
	AdminFailBurst           = admin.FailBurst
	AdminFailEvery           = admin.FailEvery
	DefaultImportIdleTimeout = admin.DefaultImportIdleTimeout
)

// AdminOptions is admin.Options.
type AdminOptions = admin.Options

// AdminStore is admin.Store.
type AdminStore = admin.Store

// AdminGuard is admin.Guard.
type AdminGuard = admin.Guard

// NewAdminGuard calls admin.NewGuard.
func NewAdminGuard(opts AdminOptions) *AdminGuard { return admin.NewGuard(opts) }

// ImportFunc is admin.ImportFunc.
type ImportFunc = admin.ImportFunc

// MountAdmin calls admin.Mount.
func MountAdmin(mux *http.ServeMux, opts AdminOptions) { admin.Mount(mux, opts) }

// AdminHandler calls admin.Handler.
func AdminHandler(opts AdminOptions) http.Handler { return admin.Handler(opts) }

// AdminOpenAPI calls admin.OpenAPI.
func AdminOpenAPI() []byte { return admin.OpenAPI() }

// The connector's side of Interface C: package accountcode.

// Names of package accountcode.
const (
	AccountCodePath           = accountcode.Path
	AccountCodeHoldsPath      = accountcode.HoldsPath
	DefaultAccountCodeMaxBody = accountcode.DefaultMaxBody
	MaxXMLDepth               = accountcode.MaxXMLDepth
)

// AccountCodeHandler is accountcode.Handler.
type AccountCodeHandler = accountcode.Handler

// AccountCodeHandlerOptions is accountcode.Options.
type AccountCodeHandlerOptions = accountcode.Options

// HoldLister is accountcode.HoldLister.
type HoldLister = accountcode.HoldLister

// NewAccountCodeHandler calls accountcode.NewHandler.
func NewAccountCodeHandler(v budget.Validator, opts AccountCodeHandlerOptions) *AccountCodeHandler {
	return accountcode.NewHandler(v, opts)
}
