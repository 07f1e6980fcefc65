package httpx

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/procurekit/procure/internal/jsontext"
)

// MountedAt returns h, which serves paths relative to its mount point,
// recording for RequestLog the prefix a request came through.
func MountedAt(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		notePrefix(w, r)
		h.ServeHTTP(w, r)
	})
}

// MountPrefix is the part of the request's path that a prefix-stripping
// router removed before the handler saw r: RequestURI's path less
// r.URL's. It is empty when nothing was stripped or RequestURI is not a
// path (a test request built without it, a CONNECT).
func MountPrefix(r *http.Request) string {
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

// DocumentAt serves doc, whose servers list holds one server with the URL
// home, with that URL replaced by the prefix each request came through, or
// by noPrefix when it came through none. The few distinct prefixes a
// deployment has are kept, up to a bound; past it documents are built per
// request.
func DocumentAt(doc []byte, home, noPrefix string) http.Handler {
	asIs := serveDocument(doc)
	var (
		mu    sync.Mutex
		built = map[string]http.Handler{}
	)
	const maxBuilt = 16
	from := []byte(`"url": ` + string(jsontext.AppendString(nil, home)))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		prefix := cmp.Or(MountPrefix(r), noPrefix)
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

// serveDocument serves a fixed JSON document with a strong ETag, so that
// clients and proxies can revalidate it cheaply (If-None-Match gives a
// 304), and with HEAD and Range handled by http.ServeContent.
func serveDocument(doc []byte) http.Handler {
	sum := sha256.Sum256(doc)
	etag := []string{`"` + hex.EncodeToString(sum[:16]) + `"`}
	ctype := []string{"application/json"}
	cache := []string{"public, max-age=300"}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h["Content-Type"] = ctype
		h["Etag"] = etag
		h["Cache-Control"] = cache
		http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(doc))
	})
}
