package suppliers

import (
	"cmp"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/procurekit/procure"
	"github.com/procurekit/procure/auth"
	"github.com/procurekit/procure/httpapi/internal/httpx"
	"github.com/procurekit/procure/httpapi/internal/supplierjson"
	"github.com/procurekit/procure/paging"
	"github.com/procurekit/procure/supplier"
)

// BasePath is the path under which Mount registers the
// supplier read API (docs: suppliers.md "Authentication": every tenant's base address ends with it;
// docs: routes.md).
const BasePath = "/public/community"

// Options configure the supplier read API.
type Options struct {
	// Store serves the suppliers, scoped by the caller's community.
	// Required.
	Store supplier.Store

	// Tokens finds the bearer tokens callers present. Required.
	Tokens auth.TokenStore

	// Logger receives the cause of every 500 (never a secret, never sent
	// to the client). Nil means slog.Default(), so that a failure is never
	// silently dropped; pass a logger over io.Discard to silence it.
	Logger *slog.Logger

	// Now returns the current time; tokens expire against it. Nil means
	// time.Now.
	Now func() time.Time
}

// Mount registers the supplier read API (Interface A) on mux:
//
//	GET /public/community/suppliers
//	GET /public/community/suppliers/{id}
//	GET /public/community/suppliers/{supplierId}/contacts
//	GET /public/community/suppliers/{supplierId}/remittance-addresses
//	GET /public/community/openapi.json   (no authentication)
//
// HEAD is answered like GET. Any other method on those paths is a 405 with
// an Allow header, and any other path under /public/community is a JSON
// 404. Every error is a JSON body {code, message} whose codes the OpenAPI
// document lists.
//
// Each API request must carry `Authorization: Bearer <token>` for a token of
// opts.Tokens with the scope suppliers:read; the token's community scopes
// every store call, so another community's supplier is a 404.
//
// Mount panics, as http.ServeMux.Handle does, when mux, opts.Store
// or opts.Tokens is nil or the routes are already registered on mux.
func Mount(mux *http.ServeMux, opts Options) {
	if mux == nil {
		panic("suppliers.Mount: nil mux")
	}
	mount(mux, opts, BasePath)
}

// Handler returns the supplier read API as an http.Handler serving
// /suppliers, /suppliers/{id}, /suppliers/{supplierId}/contacts,
// /suppliers/{supplierId}/remittance-addresses and /openapi.json relative
// to wherever it is mounted (docs: routes.md "Mounting"); see Mount for
// the behaviour. It panics when opts.Store or opts.Tokens is nil.
func Handler(opts Options) http.Handler {
	mux := http.NewServeMux()
	mount(mux, opts, "")
	return httpx.MountedAt(mux)
}

// mount registers the supplier API's routes on mux under base:
// BasePath for Mount, nothing for Handler.
func mount(mux *http.ServeMux, opts Options, base string) {
	switch {
	case opts.Store == nil:
		panic("suppliers: nil Options.Store")
	case opts.Tokens == nil:
		panic("suppliers: nil Options.Tokens")
	}
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	api := &supplierAPI{
		store:     opts.Store,
		auth:      auth.Bearer{Tokens: opts.Tokens, Now: opts.Now},
		log:       log,
		summaries: supplierjson.NewSummaryMemo(),
		details:   supplierjson.NewDetailMemo(),
	}
	rt := httpx.Router{Mux: mux, Log: log, API: "suppliers"}
	rt.Handle(base+"/suppliers", map[string]http.Handler{
		http.MethodGet: api.authed(api.listSuppliers),
	})
	rt.Handle(base+"/suppliers/{id}", map[string]http.Handler{
		http.MethodGet: api.authed(api.getSupplier),
	})
	rt.Handle(base+"/suppliers/{supplierId}/contacts", map[string]http.Handler{
		http.MethodGet: api.authed(api.listContacts),
	})
	rt.Handle(base+"/suppliers/{supplierId}/remittance-addresses", map[string]http.Handler{
		http.MethodGet: api.authed(api.listRemittanceAddresses),
	})
	rt.Handle(base+"/openapi.json", map[string]http.Handler{
		http.MethodGet: httpx.DocumentAt(document, BasePath, cmp.Or(base, "/")),
	})
	// Everything else under the base path is a JSON 404, including the
	// base path itself (which the mux would otherwise redirect to base+"/").
	rt.NotFound(base + "/")
	if base != "" {
		rt.NotFound(base)
	}
}

// supplierAPI serves the four reads of Interface A.
type supplierAPI struct {
	store supplier.Store
	auth  auth.Bearer
	log   *slog.Logger
	// The JSON of summaries and details encoded before (supplierjson.Memo).
	summaries *supplierjson.Memo[supplier.Summary]
	details   *supplierjson.Memo[supplier.Detail]
}

// Header values of the API's 401 and 403; set by assigning the canonical
// key directly, which costs no allocation per request.
var (
	// docs: suppliers.md "Authentication": exactly "Bearer" on a 401.
	hdrBearer = []string{"Bearer"}
	// RFC 6750 section 3.1: a valid token lacking a scope is a 403 that
	// names the scope it needs.
	hdrInsufficientScope = []string{`Bearer error="insufficient_scope", scope="` + auth.ScopeSuppliersRead + `"`}
)

// authed authenticates the request, checks the scope and runs h with the
// caller's community. Every error, from the check or from h, becomes the
// JSON error body through httpx.WriteError.
func (a *supplierAPI) authed(h func(w http.ResponseWriter, r *http.Request, community string) error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hdr := w.Header()
		hdr["Cache-Control"] = httpx.HdrNoStore
		hdr["X-Content-Type-Options"] = httpx.HdrNoSniff
		p, err := a.auth.Authenticate(r.Context(), r.Header.Get("Authorization"))
		if err == nil && !p.HasScope(auth.ScopeSuppliersRead) {
			err = auth.ErrForbidden
		}
		if err == nil {
			httpx.NoteCommunity(w, p.Community)
			err = h(w, r, p.Community)
		}
		if err == nil {
			return
		}
		switch {
		case errors.Is(err, auth.ErrUnauthenticated):
			hdr["Www-Authenticate"] = hdrBearer
		case errors.Is(err, auth.ErrForbidden):
			hdr["Www-Authenticate"] = hdrInsufficientScope
		}
		httpx.WriteError(w, r, a.log, err)
	})
}

func (a *supplierAPI) listSuppliers(w http.ResponseWriter, r *http.Request, community string) error {
	q, err := httpx.QueryValues(r)
	if err != nil {
		return err
	}
	lq, err := ParseListQuery(q)
	if err != nil {
		return err
	}
	app, ok := a.store.(supplier.Appender)
	if !ok {
		page, err := a.store.ListSuppliers(r.Context(), community, lq)
		if err != nil {
			return err
		}
		return supplierjson.WriteSummaryPage(w, &page, a.summaries)
	}
	// A store that can fill a buffer lists into a pooled one: the page is
	// encoded before the buffer goes back, and nothing else keeps it.
	bufp := summaryBufs.Get().(*[]supplier.Summary)
	defer summaryBufs.Put(bufp)
	page, err := app.AppendSuppliers(r.Context(), community, lq, *bufp)
	if err != nil {
		return err
	}
	err = supplierjson.WriteSummaryPage(w, &page, a.summaries)
	clear(page.Content) // drop the references to stored strings
	return err
}

// summaryBufs holds page buffers for supplier.Appender stores, each with
// room for the largest page.
var summaryBufs = sync.Pool{New: func() any {
	b := make([]supplier.Summary, 0, paging.MaxSize)
	return &b
}}

// ParseListQuery reads the parameters of the supplier list (docs:
// suppliers.md, filters.md, paging.md): query, modifiedSince, page, size
// and sort. Every broken rule is reported, in one
// *procure.ValidationError of the query. The admin API's list of a
// community's suppliers reads its parameters with it, so that both lists
// take the same ones by the same rules.
func ParseListQuery(q url.Values) (supplier.ListQuery, error) {
	var errs fieldErrors
	var lq supplier.ListQuery
	if v, ok := singleParam(q, "query", &errs); ok {
		switch {
		case !utf8.ValidString(v):
			errs.add("query", "must be valid UTF-8 text")
		case strings.IndexByte(v, 0) >= 0:
			// No stored text holds a NUL (PostgreSQL cannot): refused
			// like invalid UTF-8, on every store (docs: limits.md).
			errs.add("query", "must not contain NUL characters")
		case utf8.RuneCountInString(v) > supplier.MaxQueryLength:
			errs.add("query", "must be at most 255 characters (got "+strconv.Itoa(utf8.RuneCountInString(v))+")")
		default:
			lq.Query = v
		}
	}
	lq.ModifiedSince = modifiedSinceParam(q, &errs)
	lq.Page = pageParams(q, supplier.ListPaging, &errs)
	if err := errs.err(); err != nil {
		return supplier.ListQuery{}, err
	}
	return lq, nil
}

func (a *supplierAPI) getSupplier(w http.ResponseWriter, r *http.Request, community string) error {
	id, err := httpx.PathID(r, "id")
	if err != nil {
		return err
	}
	if v, ok := a.store.(supplier.Viewer); ok {
		// Encoded while lent: no detail made for the request.
		return v.ViewSupplier(r.Context(), community, id, func(d *supplier.Detail) error {
			return supplierjson.WriteDetail(w, d, a.details)
		})
	}
	d, err := a.store.Supplier(r.Context(), community, id)
	if err != nil {
		return err
	}
	return supplierjson.WriteDetail(w, &d, a.details)
}

func (a *supplierAPI) listContacts(w http.ResponseWriter, r *http.Request, community string) error {
	id, err := httpx.PathID(r, "supplierId")
	if err != nil {
		return err
	}
	q, err := httpx.QueryValues(r)
	if err != nil {
		return err
	}
	// docs: suppliers.md "Endpoints": contacts take page and size only; sort, query and
	// modifiedSince are ignored like any unknown parameter.
	var errs fieldErrors
	p := pageParams(q, supplier.ContactPaging, &errs)
	if err := errs.err(); err != nil {
		return err
	}
	page, err := a.store.ListContacts(r.Context(), community, id, p)
	if err != nil {
		return err
	}
	return supplierjson.WriteContactPage(w, &page)
}

func (a *supplierAPI) listRemittanceAddresses(w http.ResponseWriter, r *http.Request, community string) error {
	id, err := httpx.PathID(r, "supplierId")
	if err != nil {
		return err
	}
	q, err := httpx.QueryValues(r)
	if err != nil {
		return err
	}
	var errs fieldErrors
	var aq supplier.AddressQuery
	aq.ModifiedSince = modifiedSinceParam(q, &errs)
	aq.Page = pageParams(q, supplier.AddressPaging, &errs)
	if err := errs.err(); err != nil {
		return err
	}
	page, err := a.store.ListRemittanceAddresses(r.Context(), community, id, aq)
	if err != nil {
		return err
	}
	return supplierjson.WriteAddressPage(w, &page)
}

// fieldErrors collects the rules query parameters broke. It stays nil, and
// costs nothing, while there are none.
type fieldErrors []procure.FieldError

func (e *fieldErrors) add(field, rule string) {
	*e = append(*e, procure.FieldError{Field: field, Rule: rule})
}

// err returns the collected rules as a *procure.ValidationError of the
// query, or nil.
func (e fieldErrors) err() error {
	if len(e) == 0 {
		return nil
	}
	return &procure.ValidationError{Source: procure.SourceQuery, Fields: e}
}

// singleParam returns the value of a parameter that may appear at most
// once, recording a broken rule when it appears more often.
func singleParam(q url.Values, name string, errs *fieldErrors) (string, bool) {
	vs, ok := q[name]
	switch {
	case !ok:
		return "", false
	case len(vs) > 1:
		errs.add(name, "must be given at most once")
		return "", false
	}
	return vs[0], true
}

// pageParams parses page, size and sort, recording any broken rule.
func pageParams(q url.Values, spec paging.Spec, errs *fieldErrors) paging.Request {
	p, err := paging.Parse(q, spec)
	if err == nil {
		return p
	}
	var ve *procure.ValidationError
	if errors.As(err, &ve) {
		*errs = append(*errs, ve.Fields...)
	} else {
		errs.add("page", err.Error())
	}
	return paging.Request{}
}

// modifiedSinceParam parses the modifiedSince parameter; the zero time
// means absent. A broken rule is recorded in errs.
func modifiedSinceParam(q url.Values, errs *fieldErrors) time.Time {
	v, ok := singleParam(q, "modifiedSince", errs)
	if !ok {
		return time.Time{}
	}
	t, rule := parseModifiedSince(v)
	if rule != "" {
		errs.add("modifiedSince", rule+" (got "+httpx.QuoteParam(v)+")")
		return time.Time{}
	}
	return t
}
