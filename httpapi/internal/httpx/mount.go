package httpapi

import (
	"bytes"
	"cmp"
	"net/http"
	"strings"
	"sync"

	"github.com/procurekit/procure/internal/jsontext"
)

// Router-agnostic mounting (docs: routes.md).
//
// SupplierHandler, UserHandler, SCIMHandler and AdminHandler return each
// API as a plain http.Handler
// that serves the API's paths exactly as its OpenAPI document lists them:
// "/suppliers/{id}" for the supplier API (whose document's server is
// /public/community), "/v1/users" for the user API (whose server is the
// host root). Put one under any prefix with http.StripPrefix, which every
// router can mount (chi's Mount, gorilla's PathPrefix, a ServeMux):
//
//	mux.Handle("/procurement/", http.StripPrefix("/procurement", httpapi.SupplierHandler(opts)))
//
// Each answers its own JSON 404 and 405s, and serves its openapi.json with
// the servers URL set to the prefix the request came through (what the
// request's RequestURI has before the path the handler saw), so that a
// client generated from the document calls the right place.
// MountSuppliers, MountUsers, MountSCIM and MountAdmin register the same
// routes on a ServeMux at the documents' own servers.

// SupplierHandler returns the supplier read API (Interface A) as an
// http.Handler serving /suppliers, /suppliers/{id},
// /suppliers/{supplierId}/contacts,
// /suppliers/{supplierId}/remittance-addresses and /openapi.json relative
// to wherever it is mounted; see MountSuppliers for the behaviour. It
// panics when opts.Store or opts.Tokens is nil.
func SupplierHandler(opts SupplierOptions) http.Handler {
	mux := http.NewServeMux()
	mountSuppliers(mux, opts, "")
	return mountedAt(mux)
}

// UserHandler returns the user synchronisation API (Interface B) as an
// http.Handler serving /v1/users/username/{username}, /v1/users and
// /v1/openapi.json relative to wherever it is mounted; see MountUsers for
// the behaviour. It panics when opts.Users, opts.Users.Store or
// opts.Accounts is nil.
func UserHandler(opts UserOptions) http.Handler {
	mux := http.NewServeMux()
	mountUsers(mux, opts)
	return mountedAt(mux)
}

// mountedAt returns h, which serves paths relative to its mount point,
// recording for RequestLog the prefix a request came through.
func mountedAt(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		notePrefix(w, r)
		h.ServeHTTP(w, r)
	})
}

// mountPrefix is the part of the request's path that a prefix-stripping
// router removed before the handler saw r: RequestURI's path less
// r.URL's. It is empty when nothing was stripped or RequestURI is not a
// path (a test request built without it, a CONNECT).
func mountPrefix(r *http.Request) string {
	uri := r.RequestURI
	if i := strings.IndexAny(uri, "?#"); i >= 0 {
		uri = uri[:i]
	}
	if !strings.HasPrefix(uri, "/") {
		return ""
	}
	prefix, ok := strings.CutSuffix(uri, r.URL.EscapedPath())
	if !ok {
		return ""
	}
	return prefix
}

// documentAt serves doc, whose servers list holds one server with the URL
// home, with that URL replaced by the prefix each request came through, or
// by noPrefix when it came through none. The few distinct prefixes a
// deployment has are kept, up to a bound; past it documents are built per
// request.
func documentAt(doc []byte, home, noPrefix string) http.Handler {
	asIs := serveDocument(doc)
	var (
		mu    sync.Mutex
		built = map[string]http.Handler{}
	)
	const maxBuilt = 16
	from := []byte(`"url": ` + string(jsontext.AppendString(nil, home)))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		prefix := cmp.Or(mountPrefix(r), noPrefix)
		if prefix == home {
			asIs.ServeHTTP(w, r)
			return
		}
		mu.Lock()
		h, ok := built[prefix]
		if !ok {
			to := []byte(`"url": ` + string(jsontext.AppendString(nil, prefix)))
			h = serveDocument(bytes.Replace(doc, from, to, 1))
			if len(built) < maxBuilt {
				built[prefix] = h
			}
		}
		mu.Unlock()
		h.ServeHTTP(w, r)
	})
}

// SCIMHandler returns the SCIM 2.0 endpoint as an http.Handler serving
// /scim/v2/... relative to wherever it is mounted (as UserHandler serves
// /v1/...); see MountSCIM for the behaviour. Resource locations and the
// served document follow the prefix. It panics as MountSCIM does.
func SCIMHandler(opts SCIMOptions) http.Handler {
	mux := http.NewServeMux()
	MountSCIM(mux, opts)
	return mountedAt(mux)
}
