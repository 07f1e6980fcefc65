package admin

import (
	"bytes"
	"cmp"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/procurekit/procure"
	"github.com/procurekit/procure/auth"
	"github.com/procurekit/procure/budget"
	"github.com/procurekit/procure/datafile"
	"github.com/procurekit/procure/httpapi/internal/httpx"
	"github.com/procurekit/procure/httpapi/internal/supplierjson"
	"github.com/procurekit/procure/httpapi/suppliers"
	"github.com/procurekit/procure/internal/check"
	"github.com/procurekit/procure/paging"
	"github.com/procurekit/procure/supplier"
)

// BasePath is where Mount mounts the admin API.
const BasePath = "/admin/v1"

// MaxBodyBytes bounds every admin request body but the import's.
const MaxBodyBytes = httpx.MaxBodyBytes

// document is the OpenAPI 3.1.0 document of the admin API, written by
// hand.
//
//go:embed openapi.json
var document []byte

// OpenAPI returns the OpenAPI 3.1.0 document of the admin API, as
// served at GET /admin/v1/openapi.json. The slice is a copy.
func OpenAPI() []byte { return bytes.Clone(document) }

// Store is everything the admin API writes: what memstore.Store and
// pgstore.Store both implement.
type Store interface {
	procure.CommunityStore
	supplier.Store
	supplier.Writer
	auth.TokenWriter
	auth.KeyWriter
	budget.Writer
}

// ImportFunc upserts a data file read from r (docs: datafile.md, "Live
// data") and returns what it did with the entities of each kind the file
// held: how many it created, updated and found unchanged (memstore's and
// pgstore's ImportStream). Errors that are the file's fault
// match procure.ErrInvalid (datafile.Stream's do) and are answered 400
// with their whole text, which names the JSON path and, for malformed
// JSON, the line; procure.ErrConflict is a 409, procure.ErrUnavailable a
// 503, a failure to read the body a 400 (413 past MaxImportBytes, 408
// when it stalls past Options.ImportIdleTimeout), and anything else a
// 500 whose cause is only logged.
type ImportFunc func(ctx context.Context, r io.Reader) (datafile.ImportCounts, error)

// Options configure Mount.
type Options struct {
	// Token is the admin token every request must carry as
	// `Authorization: Bearer <token>`. Required; only its SHA-256 hash is
	// kept.
	Token string
	// Store is written by every route. Required.
	Store Store
	// Import serves POST /admin/v1/import; nil answers that route 501.
	Import ImportFunc
	// MaxImportBytes bounds the import body; 0 means no bound.
	MaxImportBytes int64
	// ImportIdleTimeout is how long the import waits for the next bytes
	// of its body: a body that sends nothing for that long aborts the
	// import, which stores nothing and is answered 408 REQUEST_TIMEOUT
	// (docs: admin.md "Import"). The deadline moves only while bytes
	// arrive, so a large file sent steadily takes as long as it takes.
	// 0 means DefaultImportIdleTimeout.
	ImportIdleTimeout time.Duration
	// Logger receives the causes of 500s and failed authentications; nil
	// means slog.Default().
	Logger *slog.Logger
	// FailedAuthBurst and FailedAuthEvery limit failed authentications per
	// client address (docs: admin.md "Failed attempts"): a client may fail
	// FailedAuthBurst times in a row, then once per FailedAuthEvery, and is
	// answered 429 in between. Zero means FailBurst and
	// FailEvery; a negative FailedAuthBurst turns the limit off (for a
	// gateway in front that limits already).
	FailedAuthBurst int
	FailedAuthEvery time.Duration
	// Guard, when not nil, checks the token instead of one made from
	// Token and the fields above: the Guard that also protects the
	// host's own routes on the admin listener (/metrics, /debug/pprof/),
	// so that failed attempts on all of them count together.
	Guard *Guard
}

// Mount registers the admin API (docs: admin.md) on mux under
// /admin/v1. Serve it on a listener of its own, never the public one.
// Every route but GET /admin/v1/openapi.json needs the admin token;
// failures are one 401 with `WWW-Authenticate: Bearer realm="admin"`.
// Errors share the JSON model of the other APIs; a duplicate is 409
// CONFLICT. Secrets (a new bearer token, a new API key) appear only in the
// 201 answer that creates them; lists show ids and metadata only.
//
// Mount panics when mux or opts.Store is nil, opts.Token is shorter
// than MinTokenBytes, or the routes are registered already.
func Mount(mux *http.ServeMux, opts Options) {
	if mux == nil {
		panic("admin.Mount: nil mux")
	}
	mount(mux, opts, BasePath)
}

// Handler returns the admin API as an http.Handler serving
// /communities, /communities/{c}/..., /import and /openapi.json relative to wherever it
// is mounted (docs: routes.md "Mounting"): behind http.StripPrefix on any
// router, its document naming the prefix as server. See Mount for the
// behaviour; it panics as Mount does.
func Handler(opts Options) http.Handler {
	mux := http.NewServeMux()
	mount(mux, opts, "")
	return httpx.MountedAt(mux)
}

// mount registers the admin routes on mux under base: BasePath
// for Mount, nothing for Handler.
func mount(mux *http.ServeMux, opts Options, base string) {
	if opts.Store == nil {
		panic("admin: nil Options.Store")
	}
	guard := opts.Guard
	if guard == nil {
		guard = NewGuard(opts)
	}
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	a := &adminAPI{
		guard:     guard,
		store:     opts.Store,
		imp:       opts.Import,
		maxImport: opts.MaxImportBytes,
		idle:      cmp.Or(opts.ImportIdleTimeout, DefaultImportIdleTimeout),
		log:       log,
	}
	rt := httpx.Router{Mux: mux, Log: log, API: "admin"}
	rt.Handle(base+"/communities", map[string]http.Handler{
		http.MethodGet: a.authed(a.listCommunities),
	})
	c := base + "/communities/{c}"
	rt.Handle(c, map[string]http.Handler{
		http.MethodGet: a.authed(a.getCommunity),
		http.MethodPut: a.authed(a.putCommunity),
	})
	rt.Handle(c+"/suppliers", map[string]http.Handler{
		http.MethodGet: a.authed(a.listSuppliers),
	})
	rt.Handle(c+"/suppliers/{id}", map[string]http.Handler{
		http.MethodGet:    a.authed(a.getSupplier),
		http.MethodPut:    a.authed(a.putSupplier),
		http.MethodDelete: a.authed(a.deleteSupplier),
	})
	rt.Handle(c+"/suppliers/{sid}/contacts/{id}", map[string]http.Handler{
		http.MethodPut:    a.authed(a.putContact),
		http.MethodDelete: a.authed(a.deleteContact),
	})
	rt.Handle(c+"/suppliers/{sid}/remittance-addresses/{id}", map[string]http.Handler{
		http.MethodPut:    a.authed(a.putAddress),
		http.MethodDelete: a.authed(a.deleteAddress),
	})
	rt.Handle(c+"/tokens", map[string]http.Handler{
		http.MethodGet:  a.authed(a.listTokens),
		http.MethodPost: a.authed(a.issueToken),
	})
	rt.Handle(c+"/tokens/{id}", map[string]http.Handler{
		http.MethodDelete: a.authed(a.revokeToken),
	})
	rt.Handle(c+"/service-accounts/{a}", map[string]http.Handler{
		http.MethodGet: a.authed(a.getAccount),
		http.MethodPut: a.authed(a.putAccount),
	})
	rt.Handle(c+"/service-accounts/{a}/keys", map[string]http.Handler{
		http.MethodPost: a.authed(a.addKey),
	})
	rt.Handle(c+"/service-accounts/{a}/keys/{id}", map[string]http.Handler{
		http.MethodPatch: a.authed(a.patchKey),
	})
	rt.Handle(c+"/budgets/{account}", map[string]http.Handler{
		http.MethodPut:    a.authed(a.putBudget),
		http.MethodDelete: a.authed(a.deleteBudget),
	})
	rt.Handle(base+"/import", map[string]http.Handler{
		http.MethodPost: a.authed(a.importFile),
	})
	rt.Handle(base+"/openapi.json", map[string]http.Handler{
		http.MethodGet: httpx.DocumentAt(document, BasePath, cmp.Or(base, "/")),
	})
	rt.NotFound(base + "/")
	if base != "" {
		rt.NotFound(base)
	}
}

type adminAPI struct {
	guard     *Guard
	store     Store
	imp       ImportFunc
	maxImport int64
	idle      time.Duration
	log       *slog.Logger
}

// authed checks the admin token (Guard) and runs h.
func (a *adminAPI) authed(h func(w http.ResponseWriter, r *http.Request) error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !a.guard.check(w, r) {
			return
		}
		httpx.NoteCommunity(w, r.PathValue("c"))
		if err := h(w, r); err != nil {
			httpx.WriteError(w, r, a.log, err)
		}
	})
}

// readBody decodes a JSON request body of at most max bytes into v: 415
// for another content type, then as httpx.ReadBody reads every body (413,
// 400), 400 for malformed JSON or a wrong JSON type. No body at all is
// allowed when emptyOK.
func readBody(w http.ResponseWriter, r *http.Request, max int64, v any, emptyOK bool) error {
	if r.ContentLength == 0 && emptyOK && r.Header.Get("Content-Type") == "" {
		return nil
	}
	if !httpx.IsJSONContentType(r.Header.Get("Content-Type")) {
		return httpx.ErrNotJSON
	}
	what := "a JSON object"
	if emptyOK {
		what = "" // a body of white space is read as none
	}
	body, release, err := httpx.ReadBody(w, r, max, what)
	if emptyOK && err == httpx.ErrEmptyBody {
		return nil
	}
	if err != nil {
		return err
	}
	defer release()
	if err := json.Unmarshal(body, v); err != nil {
		var ve *procure.ValidationError
		if errors.As(err, &ve) {
			return err
		}
		if m := httpx.MalformedJSON(err, body); m != nil {
			return m
		}
		var typ *json.UnmarshalTypeError
		if errors.As(err, &typ) {
			field := jsonPath(typ.Field)
			if field == "" {
				field = "the body"
			}
			return httpx.NewError(http.StatusBadRequest, httpx.CodeMalformedRequest,
				field+": must be "+httpx.Article(httpx.JSONTypeName(typ.Type.Kind()))+" (got "+typ.Value+")")
		}
		return httpx.NewError(http.StatusBadRequest, httpx.CodeInvalidField, err.Error())
	}
	return nil
}

// jsonPath is an UnmarshalTypeError's Field as the body's JSON path:
// encoding/json names the Go fields of embedded structs on the way
// ("Detail.Summary.name"); JSON names here all start in lower case, so
// those are the steps dropped.
func jsonPath(field string) string {
	parts := strings.Split(field, ".")
	out := parts[:0]
	for _, p := range parts {
		if p != "" && (p[0] < 'A' || p[0] > 'Z') {
			out = append(out, p)
		}
	}
	return strings.Join(out, ".")
}

// fromBody reports a store's validation error about what the request body
// carried as a body error (400 INVALID_FIELD): stores validate a supplier
// with the data file's rules, whose errors say SourceData.
func fromBody(err error) error {
	var ve *procure.ValidationError
	if errors.As(err, &ve) && ve.Source != procure.SourceBody {
		return &procure.ValidationError{Source: procure.SourceBody, Fields: ve.Fields}
	}
	return err
}

// community is the {c} path value: a community id.
func community(r *http.Request) string { return r.PathValue("c") }

// --- communities -----------------------------------------------------------

type communityBody struct {
	Name      string   `json:"name"`
	Region    string   `json:"region"`
	AutoRoles []string `json:"autoRoles"`
}

func (a *adminAPI) putCommunity(w http.ResponseWriter, r *http.Request) error {
	var b communityBody
	if err := readBody(w, r, MaxBodyBytes, &b, false); err != nil {
		return err
	}
	c, err := a.store.PutCommunity(r.Context(), procure.Community{ID: community(r), Name: b.Name, Region: b.Region, AutoRoles: b.AutoRoles})
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, c)
	return nil
}

func (a *adminAPI) getCommunity(w http.ResponseWriter, r *http.Request) error {
	c, err := a.store.Community(r.Context(), community(r))
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, c)
	return nil
}

// communityPaging is the paging of GET /admin/v1/communities: by id, with
// no sort parameter.
var communityPaging = paging.Spec{DefaultSort: paging.Sort{Field: "id"}}

// listCommunities answers one page of every community, by id.
func (a *adminAPI) listCommunities(w http.ResponseWriter, r *http.Request) error {
	q, err := httpx.QueryValues(r)
	if err != nil {
		return err
	}
	p, err := paging.Parse(q, communityPaging)
	if err != nil {
		return err
	}
	all, err := a.store.Communities(r.Context())
	if err != nil {
		return err
	}
	lo, hi := paging.Window(len(all), p)
	httpx.WriteJSON(w, http.StatusOK, paging.NewPage(all[lo:hi], len(all), p))
	return nil
}

// --- suppliers, contacts, addresses -------------------------------------------

// bodyID reconciles an id in a body with the path's: absent takes the
// path's; present must equal it.
func bodyID(body *uuid.UUID, path uuid.UUID) error {
	switch *body {
	case uuid.Nil:
		*body = path
	case path:
	default:
		return procure.Invalid(procure.SourceBody, "id", "must equal the id in the path ("+path.String()+") or be absent")
	}
	return nil
}

// listSuppliers answers a page of the community's suppliers, with the
// parameters and the answer of the supplier API's list (docs:
// suppliers.md), for an operator who holds no token of the community.
func (a *adminAPI) listSuppliers(w http.ResponseWriter, r *http.Request) error {
	q, err := httpx.QueryValues(r)
	if err != nil {
		return err
	}
	lq, err := suppliers.ParseListQuery(q)
	if err != nil {
		return err
	}
	// An unknown community is a 404, as for the writes; the supplier API
	// never meets one (a token's community exists).
	if _, err := a.store.Community(r.Context(), community(r)); err != nil {
		return err
	}
	page, err := a.store.ListSuppliers(r.Context(), community(r), lq)
	if err != nil {
		return err
	}
	return supplierjson.WriteSummaryPage(w, &page, nil)
}

// getSupplier answers the supplier as the supplier API's GET
// /suppliers/{id} does (and putSupplier answers it).
func (a *adminAPI) getSupplier(w http.ResponseWriter, r *http.Request) error {
	id, err := httpx.PathID(r, "id")
	if err != nil {
		return err
	}
	if _, err := a.store.Community(r.Context(), community(r)); err != nil {
		return err
	}
	d, err := a.store.Supplier(r.Context(), community(r), id)
	if err != nil {
		return err
	}
	return supplierjson.WriteDetail(w, &d, nil)
}

func (a *adminAPI) putSupplier(w http.ResponseWriter, r *http.Request) error {
	id, err := httpx.PathID(r, "id")
	if err != nil {
		return err
	}
	var rec supplier.Record
	if err := readBody(w, r, MaxBodyBytes, &rec, false); err != nil {
		return err
	}
	if err := bodyID(&rec.ID, id); err != nil {
		return err
	}
	d, err := a.store.PutSupplier(r.Context(), community(r), rec)
	if err != nil {
		return fromBody(err)
	}
	return supplierjson.WriteDetail(w, &d, nil)
}

func (a *adminAPI) deleteSupplier(w http.ResponseWriter, r *http.Request) error {
	id, err := httpx.PathID(r, "id")
	if err != nil {
		return err
	}
	if err := a.store.DeleteSupplier(r.Context(), community(r), id); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// childIDs reads the {sid} and {id} path values.
func childIDs(r *http.Request) (sid, id uuid.UUID, err error) {
	if sid, err = httpx.PathID(r, "sid"); err != nil {
		return
	}
	id, err = httpx.PathID(r, "id")
	return
}

func (a *adminAPI) putContact(w http.ResponseWriter, r *http.Request) error {
	sid, id, err := childIDs(r)
	if err != nil {
		return err
	}
	var c supplier.Contact
	if err := readBody(w, r, MaxBodyBytes, &c, false); err != nil {
		return err
	}
	if err := bodyID(&c.ID, id); err != nil {
		return err
	}
	out, err := a.store.PutContact(r.Context(), community(r), sid, c)
	if err != nil {
		return fromBody(err)
	}
	return supplierjson.WriteContact(w, &out)
}

func (a *adminAPI) deleteContact(w http.ResponseWriter, r *http.Request) error {
	sid, id, err := childIDs(r)
	if err != nil {
		return err
	}
	if err := a.store.DeleteContact(r.Context(), community(r), sid, id); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (a *adminAPI) putAddress(w http.ResponseWriter, r *http.Request) error {
	sid, id, err := childIDs(r)
	if err != nil {
		return err
	}
	var ra supplier.RemittanceAddress
	if err := readBody(w, r, MaxBodyBytes, &ra, false); err != nil {
		return err
	}
	if err := bodyID(&ra.ID, id); err != nil {
		return err
	}
	out, err := a.store.PutRemittanceAddress(r.Context(), community(r), sid, ra)
	if err != nil {
		return fromBody(err)
	}
	return supplierjson.WriteAddress(w, &out)
}

func (a *adminAPI) deleteAddress(w http.ResponseWriter, r *http.Request) error {
	sid, id, err := childIDs(r)
	if err != nil {
		return err
	}
	if err := a.store.DeleteRemittanceAddress(r.Context(), community(r), sid, id); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// --- tokens ----------------------------------------------------------------

type tokenBody struct {
	Name    string     `json:"name"`
	Scopes  []string   `json:"scopes"`
	Expires *time.Time `json:"expires"`
}

// tokenView is a token as lists show it: never the secret nor its hash.
type tokenView struct {
	ID         string     `json:"id"`
	Name       string     `json:"name"`
	Scopes     []string   `json:"scopes"`
	Expires    *time.Time `json:"expires"`
	Revoked    bool       `json:"revoked"`
	CreatedAt  time.Time  `json:"createdAt"`
	LastUsedAt *time.Time `json:"lastUsedAt"`
}

// issuedToken is the 201 answer: the only place the secret appears.
type issuedToken struct {
	ID        string     `json:"id"`
	Name      string     `json:"name"`
	Token     string     `json:"token"`
	Scopes    []string   `json:"scopes"`
	Expires   *time.Time `json:"expires"`
	CreatedAt time.Time  `json:"createdAt"`
}

func optTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	t = t.UTC()
	return &t
}

func (b *tokenBody) validate(now time.Time) error {
	v := &procure.ValidationError{Source: procure.SourceBody}
	if utf8.RuneCountInString(b.Name) > 255 || !utf8.ValidString(b.Name) || strings.ContainsRune(b.Name, 0) {
		v.Add("name", "must be valid text of at most 255 characters")
	}
	if len(b.Scopes) == 0 {
		v.Add("scopes", "is required: at least one scope, e.g. "+auth.ScopeSuppliersRead)
	}
	for i, s := range b.Scopes {
		if s == "" || len(s) > 100 || strings.ContainsFunc(s, func(r rune) bool { return r <= ' ' || r >= 0x7f }) {
			v.Add("scopes["+strconv.Itoa(i)+"]", "must be 1 to 100 printable ASCII characters without spaces")
		}
	}
	switch {
	case b.Expires == nil:
	case !check.Instant(*b.Expires):
		// The same rule as every instant (docs: values.md "Dates"):
		// 9999-12-31T23:30:00-01:00 is in the future, but in year 10000.
		v.Add("expires", check.InstantRule)
	case !b.Expires.After(now):
		v.Add("expires", "must be in the future")
	}
	return v.Err()
}

func (a *adminAPI) issueToken(w http.ResponseWriter, r *http.Request) error {
	var b tokenBody
	if err := readBody(w, r, MaxBodyBytes, &b, false); err != nil {
		return err
	}
	if err := b.validate(time.Now()); err != nil {
		return err
	}
	secret, hash := auth.NewBearerToken()
	t := auth.Token{ID: uuid.NewString(), Name: b.Name, Hash: hash, Community: community(r), Scopes: b.Scopes}
	if b.Expires != nil {
		t.Expires = *b.Expires
	}
	t, err := a.store.AddToken(r.Context(), t)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusCreated, issuedToken{
		ID: t.ID, Name: t.Name, Token: secret, Scopes: nonNil(t.Scopes),
		Expires: optTime(t.Expires), CreatedAt: t.CreatedAt.UTC(),
	})
	return nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func (a *adminAPI) listTokens(w http.ResponseWriter, r *http.Request) error {
	ts, err := a.store.Tokens(r.Context(), community(r))
	if err != nil {
		return err
	}
	out := make([]tokenView, len(ts))
	for i, t := range ts {
		out[i] = tokenView{
			ID: t.ID, Name: t.Name, Scopes: nonNil(t.Scopes), Expires: optTime(t.Expires), Revoked: t.Revoked,
			CreatedAt: t.CreatedAt.UTC(), LastUsedAt: optTime(t.LastUsedAt),
		}
	}
	httpx.WriteJSON(w, http.StatusOK, struct {
		Content []tokenView `json:"content"`
	}{out})
	return nil
}

func (a *adminAPI) revokeToken(w http.ResponseWriter, r *http.Request) error {
	if err := a.store.RevokeToken(r.Context(), community(r), r.PathValue("id")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// --- service accounts and keys -------------------------------------------------

type keyView struct {
	ID         string     `json:"id"`
	Active     bool       `json:"active"`
	CreatedAt  time.Time  `json:"createdAt"`
	LastUsedAt *time.Time `json:"lastUsedAt"`
}

type accountView struct {
	ID         string    `json:"id"`
	Community  string    `json:"community"`
	AllowedIPs []string  `json:"allowedIPs"`
	Keys       []keyView `json:"keys"`
}

func viewKey(k auth.Key) keyView {
	return keyView{ID: k.ID, Active: k.Active, CreatedAt: k.CreatedAt.UTC(), LastUsedAt: optTime(k.LastUsedAt)}
}

func viewAccount(sa auth.ServiceAccount) accountView {
	v := accountView{ID: sa.ID, Community: sa.Community, AllowedIPs: make([]string, len(sa.AllowedIPs)), Keys: make([]keyView, len(sa.Keys))}
	for i, p := range sa.AllowedIPs {
		v.AllowedIPs[i] = p.String()
	}
	for i, k := range sa.Keys {
		v.Keys[i] = viewKey(k)
	}
	return v
}

// account returns the community's account {a}, or ErrNotFound.
func (a *adminAPI) account(ctx context.Context, c, id string) (auth.ServiceAccount, error) {
	all, err := a.store.ServiceAccounts(ctx, c)
	if err != nil {
		return auth.ServiceAccount{}, err
	}
	for _, sa := range all {
		if sa.ID == id {
			return sa, nil
		}
	}
	return auth.ServiceAccount{}, auth.ErrNotFound
}

func (a *adminAPI) getAccount(w http.ResponseWriter, r *http.Request) error {
	sa, err := a.account(r.Context(), community(r), r.PathValue("a"))
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, viewAccount(sa))
	return nil
}

func (a *adminAPI) putAccount(w http.ResponseWriter, r *http.Request) error {
	var b struct {
		AllowedIPs []string `json:"allowedIPs"`
	}
	if err := readBody(w, r, MaxBodyBytes, &b, true); err != nil {
		return err
	}
	v := &procure.ValidationError{Source: procure.SourceBody}
	ips := make([]netip.Prefix, 0, len(b.AllowedIPs))
	for i, s := range b.AllowedIPs {
		p, err := auth.ParsePrefix(s)
		if err != nil {
			v.Add("allowedIPs["+strconv.Itoa(i)+"]", "must be an IP address or a CIDR such as 203.0.113.0/24 (got "+httpx.QuoteParam(s)+")")
			continue
		}
		ips = append(ips, p)
	}
	if err := v.Err(); err != nil {
		return err
	}
	sa, err := a.store.PutServiceAccount(r.Context(), community(r), r.PathValue("a"), ips)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, viewAccount(sa))
	return nil
}

func (a *adminAPI) addKey(w http.ResponseWriter, r *http.Request) error {
	// No body, or {}: a field would suggest the caller chooses something
	// (the id, the secret), which the server alone does, so any is refused.
	var b map[string]json.RawMessage
	if err := readBody(w, r, MaxBodyBytes, &b, true); err != nil {
		return err
	}
	if len(b) > 0 {
		names := make([]string, 0, len(b))
		for k := range b {
			names = append(names, k)
		}
		slices.Sort(names)
		return procure.Invalid(procure.SourceBody, names[0], "is not a field of this body: the server makes the key and its id; send no body or {}")
	}
	secret, hash := auth.NewAPIKey()
	k, err := a.store.AddKey(r.Context(), community(r), r.PathValue("a"), auth.Key{ID: uuid.NewString(), Hash: hash, Active: true})
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusCreated, struct {
		ID        string    `json:"id"`
		Key       string    `json:"key"`
		Active    bool      `json:"active"`
		CreatedAt time.Time `json:"createdAt"`
	}{k.ID, secret, k.Active, k.CreatedAt.UTC()})
	return nil
}

func (a *adminAPI) patchKey(w http.ResponseWriter, r *http.Request) error {
	var b struct {
		Active *bool `json:"active"`
	}
	if err := readBody(w, r, MaxBodyBytes, &b, false); err != nil {
		return err
	}
	if b.Active == nil {
		return procure.Invalid(procure.SourceBody, "active", "is required (true or false)")
	}
	k, err := a.store.SetKeyActive(r.Context(), community(r), r.PathValue("a"), r.PathValue("id"), *b.Active)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, viewKey(k))
	return nil
}

// --- budgets ---------------------------------------------------------------

func (a *adminAPI) putBudget(w http.ResponseWriter, r *http.Request) error {
	var b struct {
		Budget json.RawMessage `json:"budget"`
	}
	if err := readBody(w, r, MaxBodyBytes, &b, false); err != nil {
		return err
	}
	raw := strings.TrimSpace(string(b.Budget))
	if raw == "" || raw == "null" {
		return procure.Invalid(procure.SourceBody, "budget", "is required: a decimal number, as a JSON string or number")
	}
	if s, err := strconv.Unquote(raw); err == nil && raw[0] == '"' {
		raw = s
	}
	amount, err := budget.ParseAmount(raw)
	if err != nil {
		return procure.Invalid(procure.SourceBody, "budget", "must be a decimal number such as 1250.00 (got "+httpx.QuoteParam(raw)+")")
	}
	account := r.PathValue("account")
	if err := a.store.PutBudget(r.Context(), community(r), account, amount); err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, struct {
		Account string          `json:"account"`
		Budget  decimal.Decimal `json:"budget"`
	}{strings.TrimSpace(account), amount})
	return nil
}

func (a *adminAPI) deleteBudget(w http.ResponseWriter, r *http.Request) error {
	if err := a.store.DeleteBudget(r.Context(), community(r), r.PathValue("account")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// --- import ----------------------------------------------------------------

func (a *adminAPI) importFile(w http.ResponseWriter, r *http.Request) error {
	if a.imp == nil {
		return httpx.NewError(http.StatusNotImplemented, httpx.CodeNotImplemented, "this server does not import data files")
	}
	if ct := r.Header.Get("Content-Type"); ct != "" && !httpx.IsJSONContentType(ct) {
		return httpx.NewError(http.StatusUnsupportedMediaType, httpx.CodeUnsupportedMediaType,
			"the request body must be a JSON data file: send Content-Type: application/json")
	}
	// A large file takes longer than any per-request deadline of the
	// server (examples/server: 15 s to read a request): replace them for
	// this one by a read deadline that moves while bytes arrive, so that
	// a body that stalls cannot hold the store's locks or transaction for
	// ever. Writers that cannot (a test's recorder) keep the server's.
	rc := http.NewResponseController(w)
	_ = rc.SetWriteDeadline(time.Time{}) // best effort: ErrNotSupported keeps the server's deadline
	body := &importBody{r: r.Body, rc: rc, idle: a.idle}
	if a.maxImport > 0 {
		body.r = http.MaxBytesReader(w, r.Body, a.maxImport)
	}
	body.extend()
	counts, err := a.imp(r.Context(), body)
	if err != nil {
		return a.importError(err, body.err)
	}
	httpx.WriteJSON(w, http.StatusOK, importAnswer(counts))
	return nil
}

// importAnswer is the 200 of an import (docs: admin.md "Import"): how
// many entities of each kind the file held, at the top level as the
// answer has always had them ({"communities": 1, "suppliers": 1000, ...}),
// and under "changes" what the import did with them, kind by kind.
// Every kind is in it, zero when the ImportFunc did not name it.
func importAnswer(counts datafile.ImportCounts) map[string]any {
	all := datafile.NewImportCounts()
	for k, o := range counts {
		all.Add(k, o)
	}
	out := make(map[string]any, len(all)+1)
	for k, n := range all.Totals() {
		out[k] = n
	}
	out["changes"] = all
	return out
}

// DefaultImportIdleTimeout is Options.ImportIdleTimeout's default.
const DefaultImportIdleTimeout = 30 * time.Second

// importBody remembers the error reading the request body ended with, so
// that a failed import can be told apart: the body's fault, the file's or
// the store's. It moves the connection's read deadline idle ahead each
// time bytes arrive.
type importBody struct {
	r    io.Reader
	rc   *http.ResponseController
	idle time.Duration
	err  error
}

// extend sets the read deadline idle from now: best effort, as a writer
// may not support deadlines (ErrNotSupported keeps the server's).
func (b *importBody) extend() { _ = b.rc.SetReadDeadline(time.Now().Add(b.idle)) }

func (b *importBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if n > 0 {
		b.extend()
	}
	if err != nil && err != io.EOF {
		b.err = err
	}
	return n, err
}

// maxImportMessage bounds the message of a 400 from the import: the
// file's error names the JSON path and the line, and may quote a value.
const maxImportMessage = 1000

// importError answers a failed import: 413 past the bound, 400 when the
// body could not be read or the file is at fault (errors matching
// procure.ErrInvalid, as datafile.Stream's do; the message keeps the
// whole text, line and JSON path included), and anything else as
// httpx.Classify says (409, 503, a logged 500).
func (a *adminAPI) importError(err, readErr error) error {
	var mbe *http.MaxBytesError
	var syn *json.SyntaxError
	switch {
	case errors.As(err, &mbe) || errors.As(readErr, &mbe):
		return httpx.NewError(http.StatusRequestEntityTooLarge, httpx.CodePayloadTooLarge,
			"the data file is larger than "+strconv.FormatInt(a.maxImport, 10)+" bytes")
	case readErr != nil && errors.Is(err, readErr) && errors.Is(readErr, os.ErrDeadlineExceeded):
		// The body stalled (importBody's deadline); the import stored
		// nothing.
		return httpx.NewError(http.StatusRequestTimeout, httpx.CodeRequestTimeout,
			"the data file stopped arriving: no bytes for "+a.idle.String()+"; nothing was imported")
	case readErr != nil && errors.Is(err, readErr):
		return httpx.NewError(http.StatusBadRequest, httpx.CodeMalformedRequest, "the request body could not be read")
	case errors.As(err, &syn):
		return httpx.NewError(http.StatusBadRequest, httpx.CodeMalformedRequest, httpx.CutText(err.Error(), maxImportMessage))
	case errors.Is(err, procure.ErrInvalid):
		// datafile.Stream's syntax and type errors say "malformed JSON" or
		// "must be a JSON <type>"; every other mistake of the file broke a
		// rule.
		code, msg := httpx.CodeInvalidField, err.Error()
		var ve *procure.ValidationError
		if !errors.As(err, &ve) && (strings.Contains(msg, "malformed JSON") || strings.Contains(msg, "must be a JSON ")) {
			code = httpx.CodeMalformedRequest
		}
		return httpx.NewError(http.StatusBadRequest, code, httpx.CutText(msg, maxImportMessage))
	}
	return err
}
