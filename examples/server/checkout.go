package main

// The demo checkout route: the example host's own route, NOT part of the
// spec's API. It shows the platform's side of account code validation
// (Interface C): a requisition checked out through budget.Gate, with
// verdicts from the community's budget table in the data file, or, when a
// finance system URL is configured, from that system (for example
// `go run ./examples/connector`) over the XML exchange.
//
//	POST /demo/checkout
//	Authorization: Bearer <any valid token of the community; no scope needed>
//	Content-Type: application/json
//
//	{"requisitionId": "REQ-1001", "username": "jdoe",
//	 "organisationUnit": "OU-SCI", "financeYear": "2026",
//	 "lines": [{"lineNumber": 1, "account": "6100-200", "amount": "125.50"}],
//	 "acknowledgement": "<from a previous soft stop>"}
//
// Only lines is required; amount is a decimal as a JSON string or number.
// A checkout with a requisitionId that is not a hard stop holds its
// amounts (docs: account-codes.md "Holds"), until the requisition is
// cancelled or confirmed, or the hold expires:
//
//	POST /demo/checkout/cancel   {"requisitionId": "REQ-1001"}   (Gate.Release)
//	POST /demo/checkout/confirm  {"requisitionId": "REQ-1001"}   (Gate.Confirm: a purchase order was issued)
//
// answer 200 {"requisitionId": "REQ-1001", "changed": 1} (0 for a
// requisition that holds nothing), 400 without a requisitionId, 501 when
// the finance system keeps no holds, 503 when it is unavailable.
//
// Answers of the checkout:
//
//	200 {"decision": "proceed" | "hard_stop" | "soft_stop", "message": "...",
//	     "lines": [{"lineNumber": 1, "status": "Valid", "message": ""}],
//	     "acknowledgement": "<on soft_stop: send it back to proceed>",
//	     "acknowledged": true}
//	503 {"decision": "unavailable", "message": "The account code check is unavailable. ..."}
//	400, 401, 405, 413, 415 with the JSON error body {"code", "message"}.
//
// With the in-memory tables, a sum over an account's budget is a Warning
// (so that the soft stop can be tried) and an account absent from the
// table is Invalid. The tables are checked by the connector's own engine,
// budget.TableValidator, reading the community's table at every check
// (an admin API edit counts at once), with each community's holds in a
// budget.HoldStore of its own. Acknowledgements are bound to the community: every
// gate binds its community id into what it signs (so one key for the
// whole deployment would be safe), and each community's gate here also
// signs with its own key, derived from one demo key.

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"reflect"
	"regexp"
	"strconv"
	"sync"
	"time"

	"github.com/procurekit/procure"
	"github.com/procurekit/procure/accountcodeapi"
	"github.com/procurekit/procure/auth"
	"github.com/procurekit/procure/budget"
	"github.com/procurekit/procure/httpapi"
)

// checkoutPath is the demo route.
const checkoutPath = "/demo/checkout"

// checkoutMaxBody bounds a demo checkout request.
const checkoutMaxBody = 1 << 20

// checkoutConfig configures the demo checkout route.
type checkoutConfig struct {
	// Store holds the communities' budget tables (memstore or pgstore);
	// required unless FinanceURL is set.
	Store checkoutBudgets
	// Tokens authenticates the bearer token; its community chooses the
	// budget table and the gate. Required.
	Tokens auth.TokenStore
	// FinanceURL, when set, is a finance system (a connector's
	// .../account-code-validation URL) asked over the XML exchange instead
	// of the in-memory tables.
	FinanceURL string
	// FinanceToken is the connector's secret (PROCURE_CONNECTOR_TOKEN),
	// sent as "Authorization: Bearer <FinanceToken>" to FinanceURL
	// (docs: account-codes.md "Connector callers"); empty sends none, which
	// only a connector started with -insecure-no-auth accepts.
	FinanceToken string
	// OverBudget is the in-memory tables' status for a sum over budget;
	// empty means Warning (a demo of the soft stop).
	OverBudget budget.Status
	// Key derives each community's acknowledgement key; nil means a random
	// key (acknowledgements then last until the server restarts).
	Key []byte
	// Logger receives the causes of unavailable checks; nil means
	// slog.Default().
	Logger *slog.Logger
	// Holds returns the holds store of a community's budget table; nil
	// keeps each community's holds in memory (budget.MemHolds).
	Holds func(community string) (budget.HoldStore, error)
	// HoldFor is how long a hold lasts; zero means budget.DefaultHoldFor.
	HoldFor time.Duration
}

// checkoutBudgets is a store of per-community budget tables: memstore.Store
// and pgstore.Store both are.
type checkoutBudgets interface {
	BudgetLoader(community string) budget.TableLoader
}

// mountCheckoutDemo registers POST /demo/checkout (and 405 for other
// methods) on mux.
func mountCheckoutDemo(mux *http.ServeMux, cfg checkoutConfig) error {
	if cfg.Tokens == nil {
		return errors.New("checkout demo: no token store")
	}
	if cfg.Store == nil && cfg.FinanceURL == "" {
		return errors.New("checkout demo: neither a store nor a finance system URL")
	}
	if cfg.OverBudget == "" {
		cfg.OverBudget = budget.Warning
	}
	if cfg.Key == nil {
		cfg.Key = make([]byte, 32)
		if _, err := rand.Read(cfg.Key); err != nil {
			return fmt.Errorf("checkout demo: %w", err)
		}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	d := &checkoutDemo{cfg: cfg, bearer: &auth.Bearer{Tokens: cfg.Tokens}}
	if cfg.FinanceURL != "" {
		client, err := accountcodeapi.New(cfg.FinanceURL, accountcodeapi.Options{Token: cfg.FinanceToken})
		if err != nil {
			return fmt.Errorf("checkout demo: %w", err)
		}
		d.finance = client
	}
	if cfg.Holds == nil {
		d.cfg.Holds = func(string) (budget.HoldStore, error) { return budget.NewMemHolds(nil), nil }
	}
	mux.Handle("POST "+checkoutPath, d)
	mux.Handle("POST "+checkoutCancelPath, d.commitHandler(false))
	mux.Handle("POST "+checkoutConfirmPath, d.commitHandler(true))
	for _, p := range []string{checkoutPath, checkoutCancelPath, checkoutConfirmPath} {
		mux.HandleFunc(p, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Allow", http.MethodPost)
			checkoutError(w, http.StatusMethodNotAllowed, httpapi.CodeMethodNotAllowed, "method "+r.Method+" is not allowed on this path; allowed: POST")
		})
	}
	return nil
}

// The demo's cancel and confirm routes.
const (
	checkoutCancelPath  = checkoutPath + "/cancel"
	checkoutConfirmPath = checkoutPath + "/confirm"
)

type commitRequest struct {
	RequisitionID string `json:"requisitionId"`
}

type commitResponse struct {
	RequisitionID string `json:"requisitionId"`
	Changed       int    `json:"changed"`
}

// commitHandler serves cancel (Gate.Release) or, when confirm is true,
// confirm (Gate.Confirm).
func (d *checkoutDemo) commitHandler(confirm bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, ok := d.authenticate(w, r)
		if !ok {
			return
		}
		body, ok := readJSONBody(w, r)
		if !ok {
			return
		}
		var in commitRequest
		if err := json.Unmarshal(body, &in); err != nil {
			checkoutError(w, http.StatusBadRequest, httpapi.CodeMalformedRequest, "the body is not a cancel or confirm request: "+jsonProblem(err))
			return
		}
		if err := budget.ValidateRequisitionID(in.RequisitionID); err != nil {
			checkoutError(w, http.StatusBadRequest, httpapi.CodeInvalidField, message(err))
			return
		}
		g, err := d.gate(p.Community)
		if err != nil {
			d.cfg.Logger.ErrorContext(r.Context(), "checkout demo: gate", "community", p.Community, "err", message(err))
			checkoutError(w, http.StatusInternalServerError, httpapi.CodeInternal, "internal server error")
			return
		}
		op := g.Release
		if confirm {
			op = g.Confirm
		}
		n, err := op(r.Context(), in.RequisitionID)
		switch {
		case err == nil:
			checkoutJSON(w, http.StatusOK, commitResponse{RequisitionID: in.RequisitionID, Changed: n})
		case errors.Is(err, budget.ErrUnsupported):
			checkoutError(w, http.StatusNotImplemented, httpapi.CodeNotImplemented, "the finance system keeps no holds")
		case errors.Is(err, procure.ErrInvalid):
			checkoutError(w, http.StatusBadRequest, httpapi.CodeInvalidField, message(err))
		default:
			d.cfg.Logger.WarnContext(r.Context(), "checkout demo: cancel or confirm unavailable", "community", p.Community, "err", message(err))
			checkoutJSON(w, http.StatusServiceUnavailable, checkoutResponse{Decision: budget.Unavailable.String(), Message: budget.UnavailableMessage})
		}
	})
}

type checkoutDemo struct {
	cfg     checkoutConfig
	bearer  *auth.Bearer
	finance budget.Validator // nil: the in-memory tables
	gates   sync.Map         // community -> *budget.Gate
	making  sync.Mutex       // held while a gate is made
}

// gate returns the community's gate, made on first use. Gates are made
// one at a time: two first checkouts of a community at once must not
// each make a validator, whose expiry loop (and, with -postgres, holds
// store) the loser would leave running.
func (d *checkoutDemo) gate(community string) (*budget.Gate, error) {
	if g, ok := d.gates.Load(community); ok {
		return g.(*budget.Gate), nil
	}
	d.making.Lock()
	defer d.making.Unlock()
	if g, ok := d.gates.Load(community); ok {
		return g.(*budget.Gate), nil
	}
	v := d.finance
	if v == nil {
		holds, err := d.cfg.Holds(community)
		if err != nil {
			return nil, err
		}
		// The expiry loop of a community's validator lasts as long as the
		// server; a gate is made once per community.
		tv, err := budget.NewTableValidator(context.Background(), budget.TableConfig{
			Load: d.cfg.Store.BudgetLoader(community), LoadEach: true, OverBudget: d.cfg.OverBudget,
			Holds: holds, HoldFor: d.cfg.HoldFor, Logger: d.cfg.Logger,
		})
		if err != nil {
			return nil, err
		}
		v = tv
	}
	mac := hmac.New(sha256.New, d.cfg.Key)
	mac.Write([]byte("checkout demo community\x00" + community))
	g, err := budget.NewGate(v, budget.GateConfig{Community: community, Key: mac.Sum(nil)})
	if err != nil {
		return nil, err
	}
	d.gates.Store(community, g)
	return g, nil
}

// The demo's JSON messages.
type checkoutRequest struct {
	RequisitionID    string         `json:"requisitionId"`
	Username         string         `json:"username"`
	OrganisationUnit string         `json:"organisationUnit"`
	FinanceYear      string         `json:"financeYear"`
	Lines            []checkoutLine `json:"lines"`
	Acknowledgement  string         `json:"acknowledgement"`
}

type checkoutLine struct {
	LineNumber *int            `json:"lineNumber"`
	Account    string          `json:"account"`
	Amount     json.RawMessage `json:"amount"`
}

type checkoutResponse struct {
	Decision        string           `json:"decision"`
	Message         string           `json:"message,omitempty"`
	Lines           []checkoutResult `json:"lines,omitempty"`
	Acknowledgement string           `json:"acknowledgement,omitempty"`
	Acknowledged    bool             `json:"acknowledged,omitempty"`
}

type checkoutResult struct {
	LineNumber int    `json:"lineNumber"`
	Status     string `json:"status"`
	Message    string `json:"message"`
}

// authenticate answers the request itself and returns false when its
// bearer token does not authenticate it.
func (d *checkoutDemo) authenticate(w http.ResponseWriter, r *http.Request) (auth.Principal, bool) {
	p, err := d.bearer.Authenticate(r.Context(), r.Header.Get("Authorization"))
	if err != nil {
		if errors.Is(err, auth.ErrUnauthenticated) {
			w.Header().Set("WWW-Authenticate", "Bearer")
			checkoutError(w, http.StatusUnauthorized, httpapi.CodeUnauthorized, "authentication failed")
			return p, false
		}
		if httpapi.IsUnavailable(err) { // the database is down or timed out
			d.cfg.Logger.WarnContext(r.Context(), "checkout demo: token lookup unavailable", "err", message(err))
			w.Header().Set("Retry-After", strconv.Itoa(httpapi.RetryAfterSeconds))
			checkoutError(w, http.StatusServiceUnavailable, httpapi.CodeUnavailable, "the service is temporarily unavailable: retry after "+strconv.Itoa(httpapi.RetryAfterSeconds)+" seconds")
			return p, false
		}
		d.cfg.Logger.ErrorContext(r.Context(), "checkout demo: token lookup failed", "err", message(err))
		checkoutError(w, http.StatusInternalServerError, httpapi.CodeInternal, "internal server error")
		return p, false
	}
	// The request's log line names the community, as the APIs' lines do.
	httpapi.LogCommunity(w, p.Community)
	return p, true
}

// readJSONBody reads a JSON body of at most checkoutMaxBody bytes, or
// answers the request itself and returns false.
func readJSONBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		checkoutError(w, http.StatusUnsupportedMediaType, httpapi.CodeUnsupportedMediaType, "the body must be JSON: send Content-Type application/json")
		return nil, false
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, checkoutMaxBody))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			checkoutError(w, http.StatusRequestEntityTooLarge, httpapi.CodePayloadTooLarge, "the body is larger than 1 MiB")
			return nil, false
		}
		checkoutError(w, http.StatusBadRequest, httpapi.CodeMalformedRequest, "the request body could not be read")
		return nil, false
	}
	return body, true
}

func (d *checkoutDemo) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p, ok := d.authenticate(w, r)
	if !ok {
		return
	}
	body, ok := readJSONBody(w, r)
	if !ok {
		return
	}
	var in checkoutRequest
	if err := json.Unmarshal(body, &in); err != nil {
		checkoutError(w, http.StatusBadRequest, httpapi.CodeMalformedRequest, "the body is not a checkout request: "+jsonProblem(err))
		return
	}
	req, err := in.budgetRequest()
	if err != nil {
		checkoutError(w, http.StatusBadRequest, httpapi.CodeInvalidField, message(err))
		return
	}

	g, err := d.gate(p.Community)
	if err != nil {
		d.cfg.Logger.ErrorContext(r.Context(), "checkout demo: gate", "community", p.Community, "err", message(err))
		checkoutError(w, http.StatusInternalServerError, httpapi.CodeInternal, "internal server error")
		return
	}
	dec, err := g.Checkout(r.Context(), req, in.Acknowledgement)
	if err != nil { // the request broke a rule budgetRequest did not see
		checkoutError(w, http.StatusBadRequest, httpapi.CodeInvalidField, message(err))
		return
	}
	out := checkoutResponse{
		Decision: dec.Outcome.String(), Message: dec.Message,
		Acknowledgement: dec.Acknowledgement, Acknowledged: dec.Acknowledged,
	}
	for _, l := range dec.Lines {
		out.Lines = append(out.Lines, checkoutResult{LineNumber: l.LineNumber, Status: string(l.Status), Message: l.Message})
	}
	status := http.StatusOK
	if dec.Outcome == budget.Unavailable {
		status = http.StatusServiceUnavailable
		d.cfg.Logger.WarnContext(r.Context(), "checkout demo: account code check unavailable",
			"community", p.Community, "lines", len(req.Lines), "err", message(dec.Cause))
	}
	checkoutJSON(w, status, out)
}

// budgetRequest converts and checks the demo request; errors name the
// field as in the JSON ("lines[1].amount: ..."). The community never comes
// from the body: it is the token's.
func (in *checkoutRequest) budgetRequest() (budget.Request, error) {
	req := budget.Request{
		RequisitionID: in.RequisitionID, Username: in.Username,
		OrganisationUnit: in.OrganisationUnit, FinanceYear: in.FinanceYear,
	}
	if len(in.Lines) == 0 {
		return req, errors.New("lines: at least one line is required")
	}
	if len(in.Lines) > budget.MaxLines {
		// docs: limits.md: refused before any line is converted.
		return req, fmt.Errorf("lines: at most %d lines per request (got %d)", budget.MaxLines, len(in.Lines))
	}
	seen := make(map[int]bool, len(in.Lines))
	for i, l := range in.Lines {
		at := "lines[" + strconv.Itoa(i) + "]"
		if l.LineNumber == nil {
			return req, errors.New(at + ".lineNumber: is required")
		}
		if seen[*l.LineNumber] {
			return req, fmt.Errorf("%s.lineNumber: line number %d appears more than once", at, *l.LineNumber)
		}
		seen[*l.LineNumber] = true
		raw := l.Amount
		var s string
		switch {
		case len(raw) == 0 || string(raw) == "null":
			return req, errors.New(at + ".amount: is required")
		case raw[0] == '"':
			if err := json.Unmarshal(raw, &s); err != nil {
				return req, errors.New(at + ".amount: must be a decimal number")
			}
		default:
			s = string(bytes.TrimSpace(raw))
		}
		amount, err := budget.ParseAmount(s)
		if err != nil {
			return req, errors.New(at + ".amount: " + err.Error())
		}
		req.Lines = append(req.Lines, budget.Line{Number: *l.LineNumber, Account: l.Account, Amount: amount})
	}
	if err := req.Validate(); err != nil {
		return req, boundedError(err)
	}
	return req, nil
}

// boundedError keeps a 400 short (docs: limits.md): a validation
// error naming more than httpapi.MaxErrorDetails fields names the first
// ones and counts the rest.
func boundedError(err error) error {
	var ve *procure.ValidationError
	if !errors.As(err, &ve) || len(ve.Fields) <= httpapi.MaxErrorDetails {
		return err
	}
	return &procure.ValidationError{Source: ve.Source, Fields: ve.Fields[:httpapi.MaxErrorDetails], Omitted: ve.Omitted + len(ve.Fields) - httpapi.MaxErrorDetails}
}

// message is err as the demo shows it, to a client or in its log: the
// fields and rules of a validation error, and never the names of the Go
// packages an error passed through ("budget: checkout: ...", "pgholds:
// ..."), which tell a buyer or an operator nothing.
func message(err error) string {
	var ve *procure.ValidationError
	if errors.As(err, &ve) {
		return ve.Error()
	}
	return withoutPackages(err.Error())
}

// goPackage matches the prefix a Go package puts on its errors, at the
// start of a message or of a wrapped one: the packages whose errors the
// demo meets, and encoding/json's.
var goPackage = regexp.MustCompile(`(^|: )(budget|pgholds|accountcodeapi|pgstore|memstore|httpapi|procure|auth|json): `)

// withoutPackages drops the Go package prefixes from msg.
func withoutPackages(msg string) string {
	for {
		next := goPackage.ReplaceAllString(msg, "$1")
		if next == msg {
			return msg
		}
		msg = next
	}
}

// jsonProblem says what is wrong with a body that does not decode, in the
// terms of its JSON (a field and the type it must have), never in Go's
// ("cannot unmarshal string into Go struct field checkoutRequest.lines
// of type []main.checkoutLine").
func jsonProblem(err error) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return "not valid JSON: " + syn.Error()
	case errors.As(err, &typ) && typ.Field != "":
		return typ.Field + ": must be " + jsonType(typ.Type) + " (got " + typ.Value + ")"
	case errors.As(err, &typ):
		return "must be a JSON object (got " + typ.Value + ")"
	}
	return withoutPackages(err.Error())
}

// jsonType names the JSON type a Go type decodes from.
func jsonType(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Pointer:
		return jsonType(t.Elem())
	}
	return "an object"
}

func checkoutError(w http.ResponseWriter, status int, code, message string) {
	checkoutJSON(w, status, httpapi.ErrorBody{Code: code, Message: message})
}

func checkoutJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		b = []byte(`{"code":"` + httpapi.CodeInternal + `","message":"internal server error"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}
