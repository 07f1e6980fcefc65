package users

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/netip"
	"net/textproto"
	"net/url"
	"reflect"
	"strings"

	"github.com/procurekit/procure/auth"
	"github.com/procurekit/procure/httpapi/internal/httpx"
	"github.com/procurekit/procure/user"
)

// document is the OpenAPI 3.1.0 document of the user API, written by
// hand: every path, status, schema, error code and both credential headers.
//
//go:embed openapi.json
var document []byte

// OpenAPI returns the OpenAPI 3.1.0 document of the user API, as served
// at GET /v1/openapi.json. The slice is a copy.
func OpenAPI() []byte { return bytes.Clone(document) }

// BasePath is the version segment every path of the user API starts
// with (docs: routes.md).
const BasePath = "/v1"

// HeaderAutoRoles is the response header of GET
// /v1/users/username/{username} that lists the role codes the community
// adds to every user created or updated through the API: the codes, each
// percent-encoded (url.QueryEscape), joined by commas; empty when there
// are none. userapi.Sync reads it.
const HeaderAutoRoles = "Procure-Auto-Roles"

func encodeAutoRoles(roles []string) string {
	var b strings.Builder
	for i, r := range roles {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(url.QueryEscape(r))
	}
	return b.String()
}

// MaxBodyBytes is the largest request body the user API reads (1 MiB,
// docs: errors.md); a larger one is a 413.
const MaxBodyBytes = httpx.MaxBodyBytes

// Options configure the user API.
type Options struct {
	// Users applies the rules of the user API over a user.Store. Required.
	Users *user.Service

	// Accounts finds the service accounts callers authenticate as.
	// Required.
	Accounts auth.KeyStore

	// TrustedProxies are the reverse proxies in front of the service whose
	// X-Forwarded-For header is believed when matching an account's IP
	// allowlist (auth.ClientIP). None means the header is ignored and the
	// TCP peer is the client.
	TrustedProxies []netip.Prefix

	// Logger receives the cause of every 500 and, at Info level, why an
	// authentication failed (never a key). Nil means slog.Default(); pass
	// a logger over io.Discard to silence it.
	Logger *slog.Logger
}

// Mount registers the user synchronisation API (Interface B) on mux:
//
//	GET  /v1/users/username/{username}
//	POST /v1/users
//	PUT  /v1/users
//	GET  /v1/openapi.json   (no authentication)
//
// HEAD is answered like GET. Any other method on those paths is a 405 with
// an Allow header, and any other path under /v1 is a JSON 404. Every error
// is a JSON body {code, message} whose codes the OpenAPI document lists.
//
// Each API request must carry the Service-Account-ID and Service-API-Key
// headers of an active key of opts.Accounts, from an address the account's
// allowlist admits; every failure is the same 401. The account's community
// scopes every call. Request bodies must be JSON (415 otherwise) of at most
// 1 MiB (413 otherwise). Responses carry Cache-Control: no-store, since
// they hold personal data.
//
// Mount panics, as http.ServeMux.Handle does, when mux, opts.Users,
// opts.Users.Store or opts.Accounts is nil, or the routes are already
// registered on mux.
func Mount(mux *http.ServeMux, opts Options) {
	if mux == nil {
		panic("users.Mount: nil mux")
	}
	mount(mux, opts)
}

// Handler returns the user synchronisation API as an http.Handler
// serving /v1/users/username/{username}, /v1/users and /v1/openapi.json
// relative to wherever it is mounted (docs: routes.md "Mounting"); see
// Mount for the behaviour. It panics when opts.Users, opts.Users.Store or
// opts.Accounts is nil.
func Handler(opts Options) http.Handler {
	mux := http.NewServeMux()
	mount(mux, opts)
	return httpx.MountedAt(mux)
}

// mount registers the user API's routes on mux, for Mount and
// Handler.
func mount(mux *http.ServeMux, opts Options) {
	switch {
	case opts.Users == nil || opts.Users.Store == nil:
		panic("users: nil Options.Users or Users.Store")
	case opts.Accounts == nil:
		panic("users: nil Options.Accounts")
	}
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	api := &userAPI{
		users: opts.Users,
		auth:  auth.ServiceKey{Accounts: opts.Accounts, TrustedProxies: opts.TrustedProxies},
		log:   log,
	}
	rt := httpx.Router{Mux: mux, Log: log, API: "users"}
	const base = BasePath
	rt.Handle(base+"/users/username/{username}", map[string]http.Handler{
		http.MethodGet: api.authed(api.getUser),
	})
	rt.Handle(base+"/users", map[string]http.Handler{
		http.MethodPost: api.authed(api.createUser),
		http.MethodPut:  api.authed(api.updateUser),
	})
	rt.Handle(base+"/openapi.json", map[string]http.Handler{
		http.MethodGet: httpx.DocumentAt(document, "/", "/"),
	})
	rt.NotFound(base + "/")
	rt.NotFound(base)
}

// userAPI serves the three operations of Interface B.
type userAPI struct {
	users *user.Service
	auth  auth.ServiceKey
	log   *slog.Logger
}

// The credential headers' keys as net/http stores them. The spec spells
// them Service-Account-ID and Service-API-Key (auth's constants), which
// are not canonical: Header.Get would make the canonical form, an
// allocation and a scan, twice a request.
var (
	hdrAccountID = textproto.CanonicalMIMEHeaderKey(auth.HeaderAccountID)
	hdrAPIKey    = textproto.CanonicalMIMEHeaderKey(auth.HeaderAPIKey)
)

// headerValue is h.Get(key) for a key already canonical.
func headerValue(h http.Header, key string) string {
	if v := h[key]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// hdrServiceKey names the credential scheme on a 401 (RFC 9110
// requires a WWW-Authenticate header there).
var hdrServiceKey = []string{"Service-API-Key"}

// authed authenticates the request and runs h with the caller's community.
// Every error, from authentication or from h, becomes the JSON error body
// through httpx.WriteError; authentication failures share one body.
func (a *userAPI) authed(h func(w http.ResponseWriter, r *http.Request, community string) error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hdr := w.Header()
		hdr["Cache-Control"] = httpx.HdrNoStore
		hdr["X-Content-Type-Options"] = httpx.HdrNoSniff
		client := a.auth.ClientIP(r.RemoteAddr, r.Header[httpx.HdrXFF])
		p, err := a.auth.Authenticate(r.Context(), headerValue(r.Header, hdrAccountID), headerValue(r.Header, hdrAPIKey), client)
		if err == nil {
			httpx.NoteCommunity(w, p.Community)
			err = h(w, r, p.Community)
		}
		if err == nil {
			return
		}
		if errors.Is(err, auth.ErrUnauthenticated) {
			// The reason goes to the log only; the client sees the one 401.
			a.log.InfoContext(r.Context(), "user API authentication failed", "request_id", httpx.RequestID(w),
				"reason", err.Error(), "client", client.String(), "method", r.Method, "path", r.URL.Path)
			hdr["Www-Authenticate"] = hdrServiceKey
		}
		httpx.WriteError(w, r, a.log, err)
	})
}

func (a *userAPI) getUser(w http.ResponseWriter, r *http.Request, community string) error {
	u, err := a.users.Get(r.Context(), community, r.PathValue("username"))
	if err != nil {
		return err
	}
	etag := httpx.VersionETag(u.Version)
	w.Header().Set("ETag", etag)
	// The pre-check tells a syncing client which roles the server adds by
	// itself (HeaderAutoRoles), so that it need not write a user whose
	// only difference is one. Auxiliary: a failure leaves the header out.
	if roles, err := a.users.AutoRolesOf(r.Context(), community); err == nil {
		w.Header()[HeaderAutoRoles] = []string{encodeAutoRoles(roles)}
	}
	if httpx.IfNoneMatch(r, etag) { // the client's copy is current
		httpx.WriteNotModified(w, etag)
		return nil
	}
	httpx.WriteJSON(w, http.StatusOK, &u)
	return nil
}

func (a *userAPI) createUser(w http.ResponseWriter, r *http.Request, community string) error {
	in, err := readUserInput(w, r)
	if err != nil {
		return err
	}
	u, err := a.users.Create(r.Context(), community, in)
	if err != nil {
		return err
	}
	w.Header().Set("ETag", httpx.VersionETag(u.Version))
	httpx.WriteJSON(w, http.StatusOK, &u)
	return nil
}

func (a *userAPI) updateUser(w http.ResponseWriter, r *http.Request, community string) error {
	version, err := httpx.IfMatchVersion(r)
	if err != nil {
		return err
	}
	in, err := readUserInput(w, r)
	if err != nil {
		return err
	}
	u, err := a.users.UpdateIf(r.Context(), community, in, version)
	if err != nil {
		return err
	}
	w.Header().Set("ETag", httpx.VersionETag(u.Version))
	httpx.WriteJSON(w, http.StatusOK, &u)
	return nil
}

// readUserInput reads and decodes a create or update body: JSON by
// Content-Type (415), then as httpx.ReadBody reads every body (413, 400),
// one JSON object whose fields have the right JSON types (400
// MALFORMED_REQUEST).
func readUserInput(w http.ResponseWriter, r *http.Request) (user.Input, error) {
	if !httpx.IsJSONContentType(r.Header.Get("Content-Type")) {
		return user.Input{}, httpx.ErrNotJSON
	}
	body, release, err := httpx.ReadBody(w, r, MaxBodyBytes, "a JSON User object")
	if err != nil {
		return user.Input{}, err
	}
	defer release()
	in, err := user.ParseInput(body)
	if err != nil {
		return user.Input{}, decodeError(err, body)
	}
	return in, nil
}

// decodeError turns an error of user.ParseInput into the client's error:
// a *procure.ValidationError (both spellings of organisation units, with
// different codes) as it is; malformed JSON or a wrong type as a 400
// MALFORMED_REQUEST naming where and what.
func decodeError(err error, body []byte) error {
	if m := httpx.MalformedJSON(err, body); m != nil {
		return m
	}
	var typ *json.UnmarshalTypeError
	if errors.As(err, &typ) {
		return httpx.NewError(http.StatusBadRequest, httpx.CodeMalformedRequest, typeErrorMessage(typ))
	}
	return err // a *procure.ValidationError: a 400 INVALID_FIELD
}

// typeErrorMessage says which field has the wrong JSON type, what it must
// be, and what it was.
func typeErrorMessage(typ *json.UnmarshalTypeError) string {
	got := typ.Value
	if got == "bool" {
		got = "boolean"
	}
	if typ.Field == "" {
		return "the request body must be a JSON object (a User), not " + httpx.Article(got)
	}
	if typ.Type.Kind() == reflect.Struct {
		// Only the entries of the coded lists and attributes are objects.
		return typ.Field + ": each entry must be a JSON object (got " + httpx.Article(got) + ")"
	}
	return typ.Field + ": must be a JSON " + httpx.JSONTypeName(typ.Type.Kind()) + " (got " + httpx.Article(got) + ")"
}
