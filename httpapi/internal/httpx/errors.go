package httpx

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/procurekit/procure"
	"github.com/procurekit/procure/auth"
	"github.com/procurekit/procure/budget"
	"github.com/procurekit/procure/supplier"
	"github.com/procurekit/procure/user"
)

// Error codes: the stable `code` of every error body. The OpenAPI documents
// list them; clients switch on them.
const (
	CodeInvalidParameter     = "INVALID_PARAMETER"      // 400: a query or path parameter broke a rule
	CodeInvalidField         = "INVALID_FIELD"          // 400: a body field broke a rule
	CodeMalformedRequest     = "MALFORMED_REQUEST"      // 400: a body that is not valid JSON or has a wrong type
	CodeDuplicateUsername    = "DUPLICATE_USERNAME"     // 400: the username is taken in the community
	CodeDuplicateID          = "DUPLICATE_ID"           // 400: the user id exists
	CodeUnauthorized         = "UNAUTHORIZED"           // 401: missing or bad credentials
	CodeForbidden            = "FORBIDDEN"              // 403: authenticated, but lacking the scope
	CodeNotFound             = "NOT_FOUND"              // 404: no such route
	CodeSupplierNotFound     = "SUPPLIER_NOT_FOUND"     // 404: no such supplier in the caller's community
	CodeUserNotFound         = "USER_NOT_FOUND"         // 404: no such user in the caller's community
	CodeVersionMismatch      = "VERSION_MISMATCH"       // 412: If-Match names a version the user no longer has
	CodeMethodNotAllowed     = "METHOD_NOT_ALLOWED"     // 405: a known path with another method
	CodePayloadTooLarge      = "PAYLOAD_TOO_LARGE"      // 413: a body over 1 MiB
	CodeUnsupportedMediaType = "UNSUPPORTED_MEDIA_TYPE" // 415: a body that is not JSON
	CodeInternal             = "INTERNAL_ERROR"         // 500: anything unexpected; details are logged, never shown
	CodeUnavailable          = "UNAVAILABLE"            // 503: the backend is down or timed out; retry after Retry-After seconds

	// Codes of the admin API.
	CodeCommunityNotFound  = "COMMUNITY_NOT_FOUND"  // 404: no such community
	CodeCredentialNotFound = "CREDENTIAL_NOT_FOUND" // 404: no such token, service account or key in the community
	CodeBudgetNotFound     = "BUDGET_NOT_FOUND"     // 404: no such account in the community's budget table
	CodeConflict           = "CONFLICT"             // 409: the write would break a uniqueness rule, or needs a modifiedDate past 9999
	CodeNotImplemented     = "NOT_IMPLEMENTED"      // 501: the server was configured without this operation
	CodeRequestTimeout     = "REQUEST_TIMEOUT"      // 408: the import's body stopped arriving (admin ImportIdleTimeout)
	CodeTooManyRequests    = "TOO_MANY_REQUESTS"    // 429: a client failed the admin token too often, until Retry-After seconds have passed

	// Codes of the connector (Interface C).
	CodeUpstreamFailed = "UPSTREAM_FAILED" // 502: the connector's validator (the customer's database behind it) failed or broke the reply rule
)

// ErrorBody is the body of every error response (docs: errors.md, the operation
// error shape; docs: errors.md).
type ErrorBody struct {
	Code    string  `json:"code"`
	Message string  `json:"message"`
	Details *string `json:"details,omitempty"`
}

// apiError is an error that already knows its HTTP answer.
type apiError struct {
	status  int
	code    string
	message string
}

func (e *apiError) Error() string { return e.message }

func NewError(status int, code, message string) error {
	return &apiError{status: status, code: code, message: message}
}

// Classify is the one place that maps errors to HTTP statuses and codes.
// Anything it does not know is a 500 whose message says nothing internal.
func Classify(err error) (status int, code, message string) {
	var ae *apiError
	var ve *procure.ValidationError
	switch {
	case errors.As(err, &ae):
		return ae.status, ae.code, ae.message
	case errors.As(err, &ve):
		code := CodeInvalidParameter
		if ve.Source == procure.SourceBody {
			code = CodeInvalidField
		}
		return http.StatusBadRequest, code, ValidationMessage(ve)
	case errors.Is(err, auth.ErrUnauthenticated):
		return http.StatusUnauthorized, CodeUnauthorized, "authentication failed"
	case errors.Is(err, auth.ErrForbidden):
		return http.StatusForbidden, CodeForbidden, "access denied: the credential lacks the scope " + auth.ScopeSuppliersRead
	case errors.Is(err, procure.ErrUnknownCommunity):
		return http.StatusNotFound, CodeCommunityNotFound, "community not found"
	case errors.Is(err, procure.ErrConflict):
		return http.StatusConflict, CodeConflict, conflictMessage(err)
	case errors.Is(err, auth.ErrNotFound):
		return http.StatusNotFound, CodeCredentialNotFound, "credential not found: no such token, service account or key in the community"
	case errors.Is(err, budget.ErrNotFound):
		return http.StatusNotFound, CodeBudgetNotFound, "budget not found: the account is not in the community's budget table"
	case errors.Is(err, supplier.ErrNotFound):
		return http.StatusNotFound, CodeSupplierNotFound, "supplier not found"
	case errors.Is(err, user.ErrNotFound):
		return http.StatusNotFound, CodeUserNotFound, "user not found"
	case errors.Is(err, user.ErrDuplicateUsername):
		return http.StatusBadRequest, CodeDuplicateUsername, "username: is already taken by another user of the community"
	case errors.Is(err, user.ErrVersionMismatch):
		return http.StatusPreconditionFailed, CodeVersionMismatch,
			"the user has changed since the version named in If-Match: read it again (its ETag is the current version) and retry"
	case errors.Is(err, user.ErrDuplicateID):
		return http.StatusBadRequest, CodeDuplicateID, "id: a user with this id already exists"
	case unavailable(err):
		return http.StatusServiceUnavailable, CodeUnavailable, "the service is temporarily unavailable: retry after " + strconv.Itoa(RetryAfterSeconds) + " seconds"
	}
	return http.StatusInternalServerError, CodeInternal, "internal server error"
}

// RetryAfterSeconds is the Retry-After of a 503: long enough for a
// database restart or failover to finish, short enough that a client does
// not give up.
const RetryAfterSeconds = 5

// IsUnavailable reports whether the handlers of this package answer err
// 503 UNAVAILABLE (with Retry-After: RetryAfterSeconds): a backend that
// is down or timed out. A host's own routes use it to answer alike.
func IsUnavailable(err error) bool { return unavailable(err) }

// unavailable reports whether err says that the backend could not answer
// now but may soon (docs: limits.md): it matches
// procure.ErrUnavailable, or is one of the failures a database driver
// reports for that, recognised by their shape so that this package needs
// no driver:
//   - a deadline passed (context.DeadlineExceeded, or a network timeout);
//   - an SQLSTATE (the SQLState method of pgx's and lib/pq's errors) of
//     class 08 (connection exception), 53 (insufficient resources) or 57
//     (operator intervention: 57014 is a statement timeout, 57P01 an
//     administrator's shutdown, 57P03 a server still starting);
//   - a connection that was refused, reset or broken (a *net.OpError,
//     syscall.ECONNREFUSED, io.ErrUnexpectedEOF from a dropped
//     connection), or an error the driver marks safe to retry because
//     nothing reached the server.
func unavailable(err error) bool {
	if errors.Is(err, procure.ErrUnavailable) || errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, io.ErrUnexpectedEOF) {
		return true
	}
	var state interface{ SQLState() string }
	if errors.As(err, &state) {
		switch c := state.SQLState(); {
		case strings.HasPrefix(c, "08"), strings.HasPrefix(c, "53"), strings.HasPrefix(c, "57"):
			return true
		}
	}
	var op *net.OpError
	if errors.As(err, &op) {
		return true
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return true
	}
	var retry interface{ SafeToRetry() bool }
	return errors.As(err, &retry) && retry.SafeToRetry()
}

// MaxErrorDetails is the most field errors one 400 names (docs: limits.md); the message then ends "; and N more". maxDetailBytes bounds
// each one's text (a rule may quote the value sent), so a 400 stays a few
// kilobytes whatever the request.
const (
	MaxErrorDetails = 20
	maxDetailBytes  = 300
)

// ValidationMessage is the message of a 400 for ve: its field errors in
// order, "field: rule" joined by "; ", at most MaxErrorDetails of them.
func ValidationMessage(ve *procure.ValidationError) string {
	var b strings.Builder
	for i, f := range ve.Fields {
		if i == MaxErrorDetails {
			break
		}
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(CutText(f.Field+": "+f.Rule, maxDetailBytes))
	}
	if more := len(ve.Fields) - min(len(ve.Fields), MaxErrorDetails) + ve.Omitted; more > 0 {
		b.WriteString("; and " + strconv.Itoa(more) + " more")
	}
	return b.String()
}

// CutText cuts s to at most n bytes at a character boundary, marking the
// cut with "...".
func CutText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n - 3
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "..."
}

// WriteError answers r with the JSON error body for err. A 500 logs its
// cause (never sent to the client).
func WriteError(w http.ResponseWriter, r *http.Request, log *slog.Logger, err error) {
	status, code, message := Classify(err)
	switch {
	case status == http.StatusInternalServerError && r.Context().Err() != nil && errors.Is(err, context.Canceled):
		// The client went away (a closed connection cancels the
		// request's context) while the store worked: not a server fault,
		// and nobody reads the answer. It is logged at Info, and the
		// request log shows a 503.
		log.InfoContext(r.Context(), "request abandoned by the client", "request_id", RequestID(w), "method", r.Method, "path", r.URL.Path)
		status, code, message = http.StatusServiceUnavailable, CodeUnavailable, "the request was canceled"
	case status == http.StatusInternalServerError:
		log.ErrorContext(r.Context(), "request failed", "request_id", RequestID(w), "method", r.Method, "path", r.URL.Path, "err", err)
	case status == http.StatusServiceUnavailable:
		log.WarnContext(r.Context(), "backend unavailable", "request_id", RequestID(w), "method", r.Method, "path", r.URL.Path, "err", err)
	}
	if status == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", strconv.Itoa(RetryAfterSeconds))
	}
	WriteJSON(w, status, ErrorBody{Code: code, Message: message})
}

// conflictMessage is the message of a 409: the store's words, which name
// the id in conflict and never a secret.
func conflictMessage(err error) string {
	return "conflict: " + err.Error()
}
