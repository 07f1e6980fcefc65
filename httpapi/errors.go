package httpapi

import (
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
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

	// Codes of the admin API.
	CodeCommunityNotFound  = "COMMUNITY_NOT_FOUND"  // 404: no such community
	CodeCredentialNotFound = "CREDENTIAL_NOT_FOUND" // 404: no such token, service account or key in the community
	CodeBudgetNotFound     = "BUDGET_NOT_FOUND"     // 404: no such account in the community's budget table
	CodeConflict           = "CONFLICT"             // 409: the write would break a uniqueness rule
	CodeNotImplemented     = "NOT_IMPLEMENTED"      // 501: the server was configured without this operation
)

// ErrorBody is the body of every error response (spec 7.1, the operation
// error shape; DECISIONS.md "Errors").
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

func newError(status int, code, message string) error {
	return &apiError{status: status, code: code, message: message}
}

// classify is the one place that maps errors to HTTP statuses and codes.
// Anything it does not know is a 500 whose message says nothing internal.
func classify(err error) (status int, code, message string) {
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
		return http.StatusBadRequest, code, validationMessage(ve)
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
	}
	return http.StatusInternalServerError, CodeInternal, "internal server error"
}

// MaxErrorDetails is the most field errors one 400 names (DECISIONS.md
// "Limits"); the message then ends "; and N more". maxDetailBytes bounds
// each one's text (a rule may quote the value sent), so a 400 stays a few
// kilobytes whatever the request.
const (
	MaxErrorDetails = 20
	maxDetailBytes  = 300
)

// validationMessage is the message of a 400 for ve: its field errors in
// order, "field: rule" joined by "; ", at most MaxErrorDetails of them.
func validationMessage(ve *procure.ValidationError) string {
	var b strings.Builder
	for i, f := range ve.Fields {
		if i == MaxErrorDetails {
			b.WriteString("; and " + strconv.Itoa(len(ve.Fields)-MaxErrorDetails) + " more")
			break
		}
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(cutText(f.Field+": "+f.Rule, maxDetailBytes))
	}
	return b.String()
}

// cutText cuts s to at most n bytes at a character boundary, marking the
// cut with "...".
func cutText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n - 3
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "..."
}

// writeError answers r with the JSON error body for err. A 500 logs its
// cause (never sent to the client).
func writeError(w http.ResponseWriter, r *http.Request, log *slog.Logger, err error) {
	status, code, message := classify(err)
	if status == http.StatusInternalServerError {
		log.ErrorContext(r.Context(), "request failed", "method", r.Method, "path", r.URL.Path, "err", err)
	}
	writeJSON(w, status, ErrorBody{Code: code, Message: message})
}

// conflictMessage is the message of a 409: the store's words, which name
// the id in conflict and never a secret.
func conflictMessage(err error) string {
	return "conflict: " + err.Error()
}
