package accountcode

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"mime"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/procurekit/procure"
	"github.com/procurekit/procure/auth"
	"github.com/procurekit/procure/budget"
	"github.com/procurekit/procure/httpapi/internal/httpx"
	"github.com/procurekit/procure/internal/acxml"
)

// Path is where the connector serves the account code
// validation exchange (docs: account-codes.md).
const Path = "/account-code-validation"

// DefaultMaxBody is the largest request body the connector
// reads unless configured otherwise: 1 MiB, some ten thousand lines
// (budget.MaxLines). The client bounds a reply alike
// (accountcodeapi.DefaultMaxReplyBytes).
const DefaultMaxBody = 1 << 20

// MaxXMLDepth is the deepest element nesting the exchange reads
// (docs: limits.md), the root element being at depth 1: unknown
// elements are skipped, but a document nesting them deeper is malformed.
const MaxXMLDepth = acxml.MaxDepth

// Options configure a Handler.
type Options struct {
	// Logger receives validator failures (Error) and rejected requests
	// (Debug); nil means slog.Default().
	Logger *slog.Logger
	// MaxBodyBytes bounds a request body; 0 means DefaultMaxBody.
	// A larger body is answered 413.
	MaxBodyBytes int64

	// Token is the secret the platform sends as "Authorization: Bearer
	// <Token>" (docs: account-codes.md "Connector callers"); it is compared in
	// constant time and never logged. It is required unless
	// InsecureNoAuth is set.
	Token string

	// AllowedIPs, when not empty, is the allowlist of caller addresses
	// (the TCP peer, or by TrustedProxies the X-Forwarded-For rule of
	// auth.ClientIP); a request from elsewhere is refused like a bad
	// token.
	AllowedIPs []netip.Prefix

	// TrustedProxies are the reverse proxies whose X-Forwarded-For header
	// is believed when matching AllowedIPs; none means the header is
	// ignored.
	TrustedProxies []netip.Prefix

	// Currency is the ISO 4217 code of a request that names none
	// (docs: account-codes.md "Splits and currency"); empty means
	// budget.DefaultCurrency.
	Currency string

	// InsecureNoAuth serves without a token, for local trials only: a
	// connector answers whether an account has budget for an amount, so
	// an open one is a budget (and, with a stored procedure, permission)
	// oracle for anyone who reaches it. AllowedIPs still applies.
	InsecureNoAuth bool
}

// Handler is the connector's side of Interface C: an
// http.Handler for POST /account-code-validation that reads the XML
// message, asks a budget.Validator, and writes the XML reply. The message's
// root element says what it asks (docs: account-codes.md): a check
// (AccountCodeValidationRequest, answered by the validator), or a release
// or confirm of a requisition's holds (AccountCodeReleaseRequest,
// AccountCodeConfirmRequest, answered by the validator's budget.Committer).
// A check without Currency is in the handler's default currency. The
// caller's address reaches the validator through budget.WithCaller.
//
// Answers:
//   - 401 (UNAUTHORIZED, with WWW-Authenticate: Bearer) before anything
//     else, when the caller lacks "Authorization: Bearer <Token>" or is
//     outside AllowedIPs; one answer whichever check failed.
//   - 200, application/xml; charset=utf-8: to a check, an
//     AccountCodeValidationResponse with one Line per request line, in
//     request order, each with its LineNumber, Status and Message (empty
//     when there is none); to a release or confirm, an
//     AccountCodeReleaseResponse or AccountCodeConfirmResponse with the
//     RequisitionId and Changed, how many holds changed (0 for a
//     requisition that holds nothing).
//   - 400: a document that is not one of the messages (MALFORMED_REQUEST),
//     or a well-formed one with a bad field (INVALID_FIELD): no Lines or no
//     Line, a missing element, a LineNumber that is not an integer, a
//     duplicate line number, a blank Account, an Amount that is empty or
//     not a decimal number, or finer than the currency's minor units, a
//     split that breaks the rules of budget.Split, an unknown Currency, a
//     RequisitionId over budget.MaxRequisitionIDLength characters, a
//     release or confirm without one. The message names the element by its
//     path, e.g. "Lines/Line[2]/Amount: must be a decimal number such as
//     125.50 (got "12,50")". Nothing is held or changed.
//   - 501 (NOT_IMPLEMENTED): a release or confirm to a connector whose
//     validator keeps no holds (it is not a budget.Committer, or it answers
//     budget.ErrUnsupported).
//   - 405 with "Allow: POST" for any other method.
//   - 413 for a body over the limit.
//   - 415 for a Content-Type other than application/xml or text/xml, or a
//     charset other than UTF-8 (or its subset US-ASCII).
//   - 502 (UPSTREAM_FAILED) when the validator (or its holds) fails or
//     breaks the reply rule (budget.CheckReply); the cause is logged, never
//     sent.
//
// Every error answer has an XML body:
//
//	<AccountCodeValidationError><Code>INVALID_FIELD</Code><Message>...</Message></AccountCodeValidationError>
//
// with the codes of the JSON APIs. The handler checks the method itself, so
// it may be mounted on any path; Mount uses Path.
type Handler struct {
	v         budget.Validator
	currency  string
	log       *slog.Logger
	maxBody   int64
	tokenHash auth.Hash // SHA-256 of the token; compared, never the token itself
	noAuth    bool
	allowed   []netip.Prefix
	trusted   []netip.Prefix
}

var _ http.Handler = (*Handler)(nil)

// NewHandler returns a handler that delegates to v, which must
// not be nil. It panics when v is nil, when opts has neither a Token nor
// InsecureNoAuth, or when opts.Currency is not a currency of
// budget.MinorUnits: a connector without a budget source, open to anyone,
// or in no currency is a programming mistake, better found at start.
func NewHandler(v budget.Validator, opts Options) *Handler {
	if v == nil {
		panic("accountcode.NewHandler: nil validator")
	}
	if opts.Token == "" && !opts.InsecureNoAuth {
		panic("accountcode.NewHandler: no Token (set InsecureNoAuth to serve without one)")
	}
	if opts.Currency == "" {
		opts.Currency = budget.DefaultCurrency
	}
	if _, ok := budget.MinorUnits(opts.Currency); !ok {
		panic("accountcode.NewHandler: " + acxml.Quote(opts.Currency) + " is not an ISO 4217 currency code")
	}
	h := &Handler{
		v: v, currency: opts.Currency, log: opts.Logger, maxBody: opts.MaxBodyBytes,
		tokenHash: auth.HashSecret(opts.Token), noAuth: opts.InsecureNoAuth && opts.Token == "",
		allowed: slices.Clone(opts.AllowedIPs), trusted: slices.Clone(opts.TrustedProxies),
	}
	if h.log == nil {
		h.log = slog.Default()
	}
	if h.maxBody <= 0 {
		h.maxBody = DefaultMaxBody
	}
	return h
}

// Mount registers h on mux at Path.
func (h *Handler) Mount(mux *http.ServeMux) {
	mux.Handle(Path, h)
}

var xmlBufPool = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	defer func() {
		if p := recover(); p != nil {
			if p == http.ErrAbortHandler {
				panic(p)
			}
			h.log.ErrorContext(r.Context(), "panic serving account code validation", "panic", p)
			h.fail(w, r, httpx.NewError(http.StatusInternalServerError, httpx.CodeInternal, "internal server error"))
		}
	}()
	// The caller is authenticated before anything else is looked at, so
	// that an unauthenticated caller learns nothing (not even the method).
	if err := h.authenticate(r); err != nil {
		h.log.InfoContext(r.Context(), "account code validation: authentication failed", "reason", err.Error())
		w.Header().Set("WWW-Authenticate", "Bearer")
		h.fail(w, r, err)
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		h.fail(w, r, httpx.NewError(http.StatusMethodNotAllowed, httpx.CodeMethodNotAllowed,
			"method "+r.Method+" is not allowed on this path; allowed: POST"))
		return
	}
	if err := checkXMLContentType(r.Header.Get("Content-Type")); err != nil {
		h.fail(w, r, err)
		return
	}
	if r.ContentLength > h.maxBody {
		h.fail(w, r, h.tooLarge())
		return
	}
	body := http.MaxBytesReader(w, r.Body, h.maxBody)
	msg, err := acxml.DecodeMessage(body)
	if err == nil && msg.Kind == acxml.Check && msg.Request.Currency == "" {
		// The amounts were not checked against a currency's minor units:
		// check them against the default's.
		msg.Request.Currency = h.currency
		err = acxml.ValidateRequest(&msg.Request)
	}
	if err != nil {
		var tooBig *http.MaxBytesError
		var ve *procure.ValidationError
		switch {
		case errors.As(err, &tooBig):
			err = h.tooLarge()
		case errors.As(err, &ve):
			// httpx.Classify answers it: 400 INVALID_FIELD with the field paths
		case errors.Is(err, acxml.ErrMalformed):
			err = httpx.NewError(http.StatusBadRequest, httpx.CodeMalformedRequest, "the body is not an "+acxml.MessageRoots+" document: "+strings.TrimPrefix(err.Error(), acxml.ErrMalformed.Error()+": "))
		default:
			err = httpx.NewError(http.StatusBadRequest, httpx.CodeMalformedRequest, "the request body could not be read")
		}
		h.log.DebugContext(r.Context(), "account code validation request rejected", "err", err)
		h.fail(w, r, err)
		return
	}
	ctx := budget.WithCaller(r.Context(), auth.ClientIP(r.RemoteAddr, r.Header[httpx.HdrXFF], h.trusted).String())
	if msg.Kind != acxml.Check {
		h.commit(w, r.WithContext(ctx), msg)
		return
	}
	req := msg.Request

	results, err := h.v.Validate(ctx, req)
	if err == nil {
		err = budget.CheckReply(req, results)
	}
	if err != nil {
		var ve *procure.ValidationError
		switch {
		case errors.As(err, &ve):
			h.fail(w, r, acxml.ElementPaths(err))
		case r.Context().Err() != nil && errors.Is(err, context.Canceled):
			// The caller has gone; nobody reads an answer.
			h.log.InfoContext(r.Context(), "account code validation abandoned by the caller", "err", err)
		default:
			h.log.ErrorContext(r.Context(), "account code validation failed", "lines", len(req.Lines), "err", err)
			h.fail(w, r, httpx.NewError(http.StatusBadGateway, httpx.CodeUpstreamFailed,
				"the budget check failed; the connector's log has the cause"))
		}
		return
	}

	bp := xmlBufPool.Get().(*[]byte)
	b := acxml.AppendResponse((*bp)[:0], results)
	writeXML(w, http.StatusOK, b)
	if cap(b) <= 1<<20 { // don't keep huge buffers alive
		*bp = b
		xmlBufPool.Put(bp)
	}
}

// commit answers a release or confirm through the validator's
// budget.Committer.
func (h *Handler) commit(w http.ResponseWriter, r *http.Request, msg acxml.Message) {
	c, ok := h.v.(budget.Committer)
	if !ok {
		h.fail(w, r, errNoHolds(msg.Kind))
		return
	}
	var n int
	var err error
	if msg.Kind == acxml.Release {
		n, err = c.Release(r.Context(), msg.RequisitionID)
	} else {
		n, err = c.Confirm(r.Context(), msg.RequisitionID)
	}
	if err != nil {
		var ve *procure.ValidationError
		switch {
		case errors.Is(err, budget.ErrUnsupported):
			h.fail(w, r, errNoHolds(msg.Kind))
		case errors.As(err, &ve):
			h.fail(w, r, acxml.ElementPaths(err))
		case r.Context().Err() != nil && errors.Is(err, context.Canceled):
			h.log.InfoContext(r.Context(), "account code "+msg.Kind.Root()+" abandoned by the caller", "err", err)
		default:
			h.log.ErrorContext(r.Context(), "account code "+msg.Kind.Root()+" failed", "requisition", msg.RequisitionID, "err", err)
			h.fail(w, r, httpx.NewError(http.StatusBadGateway, httpx.CodeUpstreamFailed,
				"the holds could not be changed; the connector's log has the cause"))
		}
		return
	}
	writeXML(w, http.StatusOK, acxml.AppendCommitResponse(nil, msg.Kind, msg.RequisitionID, n))
}

func errNoHolds(k acxml.Kind) error {
	return httpx.NewError(http.StatusNotImplemented, httpx.CodeNotImplemented,
		"this connector keeps no holds, so it cannot answer an "+k.Root())
}

// authenticate checks the caller's address against the allowlist and its
// bearer token against the connector's, in constant time (both SHA-256
// hashed, so the comparison does not depend on the lengths either). Every
// failure matches auth.ErrUnauthenticated (one 401); the error says which
// check failed, for the log, and never holds a token.
func (h *Handler) authenticate(r *http.Request) error {
	if len(h.allowed) > 0 {
		client := auth.ClientIP(r.RemoteAddr, r.Header[httpx.HdrXFF], h.trusted)
		if !auth.AddrAllowed(client, h.allowed) {
			return fmt.Errorf("%w: client address %s is outside the connector's allowlist", auth.ErrUnauthenticated, client)
		}
	}
	if h.noAuth {
		return nil
	}
	token, ok := auth.BearerToken(r.Header.Get("Authorization"))
	if !ok {
		return fmt.Errorf("%w: no Authorization: Bearer header", auth.ErrUnauthenticated)
	}
	if !auth.HashSecret(token).Equal(h.tokenHash) {
		return fmt.Errorf("%w: the bearer token is not the connector's", auth.ErrUnauthenticated)
	}
	return nil
}

func (h *Handler) tooLarge() error {
	return httpx.NewError(http.StatusRequestEntityTooLarge, httpx.CodePayloadTooLarge,
		"the body is larger than "+strconv.FormatInt(h.maxBody, 10)+" bytes")
}

// fail writes the XML error body for err (statuses by httpx.Classify).
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	status, code, message := httpx.Classify(err)
	if status == http.StatusInternalServerError {
		h.log.ErrorContext(r.Context(), "request failed", "method", r.Method, "path", r.URL.Path, "err", err)
	}
	writeXML(w, status, acxml.AppendError(nil, code, message))
}

func writeXML(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/xml; charset=utf-8")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(body) // the client has gone; nothing to do
}

// checkXMLContentType accepts application/xml and text/xml, with no charset
// or a UTF-8 one (US-ASCII is a subset).
func checkXMLContentType(ct string) error {
	if ct == "" {
		return httpx.NewError(http.StatusUnsupportedMediaType, httpx.CodeUnsupportedMediaType,
			"the Content-Type header is missing; send application/xml; charset=utf-8")
	}
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil || (mt != "application/xml" && mt != "text/xml") {
		return httpx.NewError(http.StatusUnsupportedMediaType, httpx.CodeUnsupportedMediaType,
			"the body must be XML: send Content-Type application/xml; charset=utf-8")
	}
	if cs, ok := params["charset"]; ok && !strings.EqualFold(cs, "utf-8") && !strings.EqualFold(cs, "us-ascii") {
		return httpx.NewError(http.StatusUnsupportedMediaType, httpx.CodeUnsupportedMediaType,
			"the charset "+acxml.Quote(cs)+" is not supported; send UTF-8")
	}
	return nil
}
