package scim

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/netip"
	"runtime"
	"sort"
	"strconv"
	"strings"

	"github.com/procurekit/procure"
	"github.com/procurekit/procure/auth"
	"github.com/procurekit/procure/httpapi/internal/httpx"
	"github.com/procurekit/procure/user"
)

// SCIM 2.0 provisioning (RFC 7643, RFC 7644) over the same users as the
// user API: what Okta's and Microsoft Entra ID's provisioning send.
//
// Where the SCIM surface deviates from RFC 7644, and why:
//   - DELETE /Users/{id} disables the user (active false) and answers
//     204; it never deletes, because requisitions and approvals refer to
//     buyers. A later GET still finds the user, inactive.
//   - PUT replaces the core attributes; an absent "active" keeps its value
//     (as PUT /v1/users does), and the procure extension's lists are
//     replaced only when the extension is sent, so that an identity
//     provider that does not know them cannot wipe what the HRIS set.
//   - Filters: only "eq" on userName (case-insensitive, as usernames are
//     unique), externalId (exact) and id, joined by "and" in any grouping
//     of parentheses; anything else is a 400 invalidFilter naming what
//     is not supported (the whole grammar is parsed: filter.go). No sorting, no bulk, no /Groups, no /Me, no
//     password changes; "attributes" and "excludedAttributes" are ignored
//     (the whole resource is always returned).
//   - A user holds one e-mail address and one phone number: on input the
//     primary e-mail (or the first of type work, or the first) and the
//     primary (or first) phone number are kept; on output each is a
//     single "work" entry. Other attributes a user cannot hold are ignored
//     on input and absent on output (RFC 7643 allows this).
//   - meta has resourceType, location and version, not created and
//     lastModified (the store keeps no such times).
//   - The community's auto-roles are added on create and update, as on
//     /v1/users.
//   - The procure extension's role list is roleCodes, so as not to
//     redefine the core attribute roles (RFC 7643 3.3); the former name
//     is still accepted on input.
//
// Statuses are RFC 7644's (3.12): an unsupported method is a 501 with an
// Allow header, a body of another content type a 400 invalidSyntax,
// where the user and supplier APIs answer 405 and 415.

// BasePath is where Mount serves SCIM 2.0.
const BasePath = "/scim/v2"

// ExtensionSchema is the schema URN of the procure extension of the
// SCIM User: organisation units, roles, buyer groups, approver groups and
// attributes of docs: users.md "The user object".
const ExtensionSchema = "urn:procurekit:params:scim:schemas:extension:procure:2.0:User"

// SCIM schema and message URNs (RFC 7643, RFC 7644).
const (
	scimUserSchema        = "urn:ietf:params:scim:schemas:core:2.0:User"
	scimListSchema        = "urn:ietf:params:scim:api:messages:2.0:ListResponse"
	scimPatchSchema       = "urn:ietf:params:scim:api:messages:2.0:PatchOp"
	scimErrorSchema       = "urn:ietf:params:scim:api:messages:2.0:Error"
	scimSPCSchema         = "urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig"
	scimResourceTypeURN   = "urn:ietf:params:scim:schemas:core:2.0:ResourceType"
	scimSchemaSchema      = "urn:ietf:params:scim:schemas:core:2.0:Schema"
	scimContentType       = "application/scim+json"
	scimMaxResults        = 100 // the most users one list returns (ServiceProviderConfig filter.maxResults)
	scimDocumentationLink = "https://github.com/procurekit/procure#provisioning-from-okta-or-entra"
)

// document is the OpenAPI 3.1.0 document of the SCIM endpoint.
//
//go:embed openapi.json
var document []byte

// OpenAPI returns the OpenAPI 3.1.0 document of the SCIM endpoint, as
// served at GET /scim/v2/openapi.json. The slice is a copy.
func OpenAPI() []byte { return bytes.Clone(document) }

// Options configure the SCIM endpoint.
type Options struct {
	// Users applies the rules of the user API over a user.Store. Required.
	// Listing without a userName or id filter needs a store that is a
	// user.Lister (memstore and pgstore are).
	Users *user.Service

	// Accounts finds the service account of a bearer API key. Required,
	// and it must implement auth.KeyHashStore (memstore and pgstore do).
	Accounts auth.KeyStore

	// TrustedProxies are the reverse proxies whose X-Forwarded-For header
	// is believed when matching an account's IP allowlist (auth.ClientIP).
	TrustedProxies []netip.Prefix

	// BaseURL is the absolute URL of the endpoint as clients reach it,
	// such as https://procure.example.com/scim/v2, used in Location
	// headers and meta.location. Empty means it is built from each
	// request: https when the connection is TLS, the Host header, and the
	// prefix a router stripped.
	BaseURL string

	// Logger receives the cause of every 500 and, at Info level, why an
	// authentication failed (never a key). Nil means slog.Default().
	Logger *slog.Logger
}

// Mount registers the SCIM 2.0 endpoint on mux under /scim/v2:
//
//	GET    /scim/v2/ServiceProviderConfig, /ResourceTypes[/User], /Schemas[/{id}]
//	GET    /scim/v2/Users            (filter, startIndex, count)
//	POST   /scim/v2/Users
//	GET    /scim/v2/Users/{id}
//	PUT    /scim/v2/Users/{id}
//	PATCH  /scim/v2/Users/{id}
//	DELETE /scim/v2/Users/{id}       (disables: see the deviations above)
//	GET    /scim/v2/openapi.json
//
// The /Users requests carry Authorization: Bearer <API key> with an active
// key of a service account of opts.Accounts, from an address its
// allowlist admits; the key alone names the account, and every failure is
// the same 401. The discovery documents and openapi.json need no
// credentials (they hold nothing of a community). Bodies are
// application/scim+json (application/json is accepted too) of at most
// 1 MiB; errors are SCIM error bodies with status and scimType. Every user
// response carries the version as ETag (and meta.version); PUT, PATCH and
// DELETE honour If-Match (412 when the user has changed).
//
// Mount panics when mux, opts.Users or its Store, or opts.Accounts is
// nil, when opts.Accounts is not an auth.KeyHashStore, or when the routes
// are already registered on mux.
func Mount(mux *http.ServeMux, opts Options) {
	switch {
	case mux == nil:
		panic("scim.Mount: nil mux")
	case opts.Users == nil || opts.Users.Store == nil:
		panic("scim: nil Options.Users or Users.Store")
	case opts.Accounts == nil:
		panic("scim: nil Options.Accounts")
	}
	keys, ok := opts.Accounts.(auth.KeyHashStore)
	if !ok {
		panic("scim: Options.Accounts cannot find an account by key hash (auth.KeyHashStore)")
	}
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	api := &scimAPI{
		users:   opts.Users,
		keys:    auth.KeyBearer{Accounts: keys},
		proxies: opts.TrustedProxies,
		baseURL: strings.TrimSuffix(opts.BaseURL, "/"),
		log:     log,
		heavy:   make(chan struct{}, max(1, runtime.GOMAXPROCS(0)/2)),
	}
	const base = BasePath
	api.handle(mux, base+"/Users", map[string]http.Handler{
		http.MethodGet:  api.authed(api.listUsers),
		http.MethodPost: api.authed(api.createUser),
	})
	api.handle(mux, base+"/Users/{id}", map[string]http.Handler{
		http.MethodGet:    api.authed(api.getUser),
		http.MethodPut:    api.authed(api.replaceUser),
		http.MethodPatch:  api.authed(api.patchUser),
		http.MethodDelete: api.authed(api.deleteUser),
	})
	api.handle(mux, base+"/ServiceProviderConfig", map[string]http.Handler{http.MethodGet: api.open(api.serviceProviderConfig)})
	api.handle(mux, base+"/ResourceTypes", map[string]http.Handler{http.MethodGet: api.open(api.resourceTypes)})
	api.handle(mux, base+"/ResourceTypes/{name}", map[string]http.Handler{http.MethodGet: api.open(api.resourceType)})
	api.handle(mux, base+"/Schemas", map[string]http.Handler{http.MethodGet: api.open(api.schemas)})
	api.handle(mux, base+"/Schemas/{id}", map[string]http.Handler{http.MethodGet: api.open(api.schema)})
	api.handle(mux, base+"/openapi.json", map[string]http.Handler{http.MethodGet: httpx.DocumentAt(document, "/", "/")})
	notFound := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeSCIMError(w, http.StatusNotFound, "", "no SCIM resource at "+r.URL.Path+" (this endpoint serves /Users and the discovery documents)")
	})
	mux.Handle(base+"/", httpx.Routed("scim", notFound))
	mux.Handle(base, httpx.Routed("scim", notFound))
}

// Handler returns the SCIM 2.0 endpoint as an http.Handler serving
// /scim/v2/... relative to wherever it is mounted (as the user API's
// Handler serves /v1/...); see Mount for the behaviour. Resource
// locations and the served document follow the prefix. It panics as
// Mount does.
func Handler(opts Options) http.Handler {
	mux := http.NewServeMux()
	Mount(mux, opts)
	return httpx.MountedAt(mux)
}

// scimAPI serves the SCIM endpoint.
type scimAPI struct {
	users   *user.Service
	keys    auth.KeyBearer
	proxies []netip.Prefix
	baseURL string
	log     *slog.Logger
	heavy   chan struct{} // slots of heavy writes (users.go, heavySlot)
}

// handle registers each method's handler on path, and for any other
// method a SCIM 501 with an Allow header: RFC 7644 3.12 has no 405, and
// names 501 for an operation the service provider does not offer. GET
// implies HEAD (net/http's ServeMux does so).
func (a *scimAPI) handle(mux *http.ServeMux, path string, methods map[string]http.Handler) {
	allowed := make([]string, 0, len(methods)+1)
	for m, h := range methods {
		allowed = append(allowed, m)
		if m == http.MethodGet {
			allowed = append(allowed, http.MethodHead)
		}
		mux.Handle(m+" "+path, httpx.Routed("scim", a.recoverer(h)))
	}
	sort.Strings(allowed)
	allow := strings.Join(allowed, ", ")
	mux.Handle(path, httpx.Routed("scim", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Allow", allow)
		writeSCIMError(w, http.StatusNotImplemented, "", "method "+r.Method+" is not supported on this path; supported: "+allow)
	})))
}

// recoverer turns a panic into a SCIM 500 (http.ErrAbortHandler is
// re-raised, as net/http expects).
func (a *scimAPI) recoverer(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			v := recover()
			if v == nil {
				return
			}
			if v == http.ErrAbortHandler {
				panic(v)
			}
			a.log.ErrorContext(r.Context(), "panic serving SCIM request", "request_id", httpx.RequestID(w), "method", r.Method, "path", r.URL.Path, "panic", v)
			writeSCIMError(w, http.StatusInternalServerError, "", "internal server error")
		}()
		next.ServeHTTP(w, r)
	})
}

// open serves a discovery document: no credentials needed.
func (a *scimAPI) open(h func(w http.ResponseWriter, r *http.Request) error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := h(w, r); err != nil {
			a.writeError(w, r, err)
		}
	})
}

// authed authenticates the bearer API key and runs h with the caller's
// community. Every authentication failure is the one 401.
func (a *scimAPI) authed(h func(w http.ResponseWriter, r *http.Request, community string) error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hdr := w.Header()
		hdr["Cache-Control"] = httpx.HdrNoStore
		hdr["X-Content-Type-Options"] = httpx.HdrNoSniff
		client := auth.ClientIP(r.RemoteAddr, r.Header[httpx.HdrXFF], a.proxies)
		p, err := a.keys.Authenticate(r.Context(), r.Header.Get("Authorization"), client)
		if err == nil {
			httpx.NoteCommunity(w, p.Community)
			err = h(w, r, p.Community)
		}
		if err == nil {
			return
		}
		if errors.Is(err, auth.ErrUnauthenticated) {
			a.log.InfoContext(r.Context(), "SCIM authentication failed", "request_id", httpx.RequestID(w),
				"reason", err.Error(), "client", client.String(), "method", r.Method, "path", r.URL.Path)
			hdr.Set("WWW-Authenticate", `Bearer realm="scim"`)
		}
		a.writeError(w, r, err)
	})
}

// writeError answers err as a SCIM error body; a 500 logs its cause.
func (a *scimAPI) writeError(w http.ResponseWriter, r *http.Request, err error) {
	status, scimType, detail := scimClassify(err)
	switch status {
	case http.StatusInternalServerError:
		a.log.ErrorContext(r.Context(), "SCIM request failed", "request_id", httpx.RequestID(w), "method", r.Method, "path", r.URL.Path, "err", err)
	case http.StatusServiceUnavailable:
		a.log.WarnContext(r.Context(), "backend unavailable", "request_id", httpx.RequestID(w), "method", r.Method, "path", r.URL.Path, "err", err)
		w.Header().Set("Retry-After", strconv.Itoa(httpx.RetryAfterSeconds))
	}
	writeSCIMError(w, status, scimType, detail)
}

// scimError is an error that knows its SCIM answer.
type scimError struct {
	status   int
	scimType string
	detail   string
}

func (e *scimError) Error() string { return e.detail }

func newSCIMError(status int, scimType, detail string) error {
	return &scimError{status: status, scimType: scimType, detail: detail}
}

// scimClassify maps errors to SCIM statuses and scimTypes (RFC 7644
// 3.12), as httpx.Classify does for the JSON APIs.
func scimClassify(err error) (status int, scimType, detail string) {
	var se *scimError
	var ve *procure.ValidationError
	switch {
	case errors.As(err, &se):
		return se.status, se.scimType, se.detail
	case errors.As(err, &ve):
		return http.StatusBadRequest, "invalidValue", scimFieldNames.Replace(httpx.ValidationMessage(ve))
	case errors.Is(err, auth.ErrUnauthenticated):
		return http.StatusUnauthorized, "", "authentication failed"
	case errors.Is(err, user.ErrNotFound):
		return http.StatusNotFound, "", "user not found"
	case errors.Is(err, user.ErrDuplicateUsername):
		return http.StatusConflict, "uniqueness", "userName: is already taken by another user of the community"
	case errors.Is(err, user.ErrDuplicateID):
		return http.StatusConflict, "uniqueness", "id: a user with this id already exists"
	case errors.Is(err, user.ErrVersionMismatch):
		return http.StatusPreconditionFailed, "", "the user has changed since the version named in If-Match: read it again and retry"
	}
	// Timeouts and an unavailable backend keep the JSON APIs' 503.
	if status, _, message := httpx.Classify(err); status == http.StatusServiceUnavailable {
		return status, "", message
	}
	return http.StatusInternalServerError, "", "internal server error"
}

// scimFieldNames renames the user fields of validation messages to their
// SCIM attributes.
var scimFieldNames = strings.NewReplacer(
	"username:", "userName:",
	"firstName:", "name.givenName:",
	"lastName:", "name.familyName:",
	"email:", "emails[0].value:",
	"phone:", "phoneNumbers[0].value:",
)

// scimErrorBody is the SCIM error response (RFC 7644 3.12): status is a
// string there.
type scimErrorBody struct {
	Schemas  []string `json:"schemas"`
	Status   string   `json:"status"`
	ScimType string   `json:"scimType,omitempty"`
	Detail   string   `json:"detail,omitempty"`
}

var scimErrorSchemas = []string{scimErrorSchema}

func writeSCIMError(w http.ResponseWriter, status int, scimType, detail string) {
	writeSCIM(w, status, scimErrorBody{Schemas: scimErrorSchemas, Status: strconv.Itoa(status), ScimType: scimType, Detail: detail})
}

var hdrSCIM = []string{scimContentType}

// writeSCIM answers with v as application/scim+json, encoded into a
// pooled buffer first (as httpx.WriteJSON does) so that a failure is still a
// clean 500 and the response has a Content-Length.
func writeSCIM(w http.ResponseWriter, status int, v any) {
	buf := httpx.BufPool.Get().(*bytes.Buffer)
	buf.Reset()
	defer func() {
		if buf.Cap() <= 1<<20 {
			httpx.BufPool.Put(buf)
		}
	}()
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		status = http.StatusInternalServerError
		buf.Reset()
		buf.WriteString(`{"schemas":["` + scimErrorSchema + `"],"status":"500","detail":"internal server error"}` + "\n")
	}
	h := w.Header()
	h["Content-Type"] = hdrSCIM
	h["Content-Length"] = httpx.ContentLength(buf.Len())
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes()) // the client has gone; nothing to do
}

// base returns the absolute URL of the endpoint for r (Options.BaseURL).
func (a *scimAPI) base(r *http.Request) string {
	if a.baseURL != "" {
		return a.baseURL
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host + httpx.MountPrefix(r) + BasePath
}
