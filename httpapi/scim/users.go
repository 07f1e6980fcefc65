package scim

import (
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"

	"github.com/procurekit/procure"
	"github.com/procurekit/procure/httpapi/internal/httpx"
	"github.com/procurekit/procure/user"
)

// The /Users handlers of the SCIM endpoint.

var scimListSchemas = []string{scimListSchema}

// listUsers answers GET /Users: the users matching the filter, startIndex
// (1-based; below 1 counts as 1) and count (default and most
// scimMaxResults; below 0 counts as 0), in id order.
func (a *scimAPI) listUsers(w http.ResponseWriter, r *http.Request, community string) error {
	q, err := scimListParams(r.URL.RawQuery)
	if err != nil {
		return err
	}
	start, err := scimIntParam(q.startIndex, "startIndex", 1)
	if err != nil {
		return err
	}
	count, err := scimIntParam(q.count, "count", scimMaxResults)
	if err != nil {
		return err
	}
	start, count = max(start, 1), min(max(count, 0), scimMaxResults)
	var f scimUserFilter
	if s := q.filter; strings.TrimSpace(s) != "" {
		n, err := parseSCIMFilter(s)
		if err != nil {
			return err
		}
		if f, err = userFilter(n); err != nil {
			return err
		}
	}
	users, total, err := a.findUsers(r, community, f, start-1, count)
	if err != nil {
		return err
	}
	// A ListResponse (RFC 7644 3.4.2), written as appendSCIMUser writes
	// its resources.
	base := a.base(r)
	p := scimBufPool.Get().(*[]byte)
	defer putSCIMBuf(p)
	b := append((*p)[:0], `{"schemas":["`+scimListSchema+`"],"totalResults":`...)
	b = strconv.AppendInt(b, int64(total), 10)
	b = append(b, `,"startIndex":`...)
	b = strconv.AppendInt(b, int64(start), 10)
	b = append(b, `,"itemsPerPage":`...)
	b = strconv.AppendInt(b, int64(len(users)), 10)
	b = append(b, `,"Resources":[`...)
	for i := range users {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendSCIMUser(b, &users[i], base+"/Users/"+users[i].ID)
	}
	b = append(b, "]}\n"...)
	writeSCIMBody(w, http.StatusOK, b)
	*p = b // keep the grown array for the next answer
	return nil
}

// findUsers answers a filter: by lookup when it names a userName or an id
// (at most one user, which must then meet every other clause too),
// through the store's user.Lister otherwise.
func (a *scimAPI) findUsers(r *http.Request, community string, f scimUserFilter, offset, limit int) ([]user.User, int, error) {
	if f.none {
		return nil, 0, nil
	}
	ctx := r.Context()
	var u user.User
	var err error
	switch {
	case f.id != nil:
		u, err = a.users.ByID(ctx, community, *f.id)
	case f.userName != nil:
		if strings.TrimSpace(*f.userName) == "" {
			return nil, 0, nil // no user has an empty username
		}
		u, err = a.users.Get(ctx, community, *f.userName)
	default:
		l, ok := a.users.Store.(user.Lister)
		if !ok {
			return nil, 0, newSCIMError(http.StatusNotImplemented, "",
				"this server's user store cannot list users: filter on userName or id")
		}
		return l.ListUsers(ctx, community, user.Query{ExternalID: f.externalID}, offset, limit)
	}
	switch {
	case errors.Is(err, user.ErrNotFound):
		return nil, 0, nil
	case err != nil:
		return nil, 0, err
	case !f.matches(&u):
		return nil, 0, nil
	case offset > 0 || limit == 0:
		return nil, 1, nil
	}
	return []user.User{u}, 1, nil
}

// scimListQuery holds the query parameters of GET /Users that the
// endpoint reads; the others (attributes, excludedAttributes, sortBy...)
// are ignored.
type scimListQuery struct{ filter, startIndex, count string }

// scimListParams reads them from a raw query, unescaping only their
// values (the first of each, as url.Values.Get does). A value that does
// not unescape is a 400.
func scimListParams(raw string) (scimListQuery, error) {
	var p scimListQuery
	var seen [3]bool
	for raw != "" {
		var pair string
		pair, raw, _ = strings.Cut(raw, "&")
		key, value, _ := strings.Cut(pair, "=")
		var slot *string
		var i int
		switch key {
		case "filter":
			slot, i = &p.filter, 0
		case "startIndex":
			slot, i = &p.startIndex, 1
		case "count":
			slot, i = &p.count, 2
		default:
			continue
		}
		if seen[i] {
			continue
		}
		seen[i] = true
		v, err := url.QueryUnescape(value)
		if err != nil {
			return p, newSCIMError(http.StatusBadRequest, "invalidValue", key+": the value is not a valid query-string encoding")
		}
		*slot = v
	}
	return p, nil
}

// scimIntParam reads an integer query parameter; absent is def.
func scimIntParam(s, name string, def int) (int, error) {
	if s == "" {
		return def, nil
	}
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		return 0, newSCIMError(http.StatusBadRequest, "invalidValue", name+": must be an integer (got "+strconv.Quote(truncateString(s, 40))+")")
	}
	return n, nil
}

func truncateString(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

// heavyBodyBytes is the body size from which a SCIM write is heavy: one
// of up to 1 MiB may carry tens of thousands of list entries, whose
// decoding is milliseconds of CPU.
const heavyBodyBytes = 64 << 10

// heavySlot waits for one of the endpoint's slots for heavy writes when
// body is heavy, and returns its release. Half the processors (at least
// one) decode heavy bodies at once: a few of them at once would otherwise
// keep every processor busy, and every other request - another
// community's read included - would wait for the scheduler
// (BenchmarkSCIMPatchWorstCase measures those reads). A request whose
// client leaves while it waits is ErrUnavailable (a 503).
func (a *scimAPI) heavySlot(r *http.Request, body []byte) (release func(), err error) {
	if len(body) < heavyBodyBytes {
		return func() {}, nil
	}
	select {
	case a.heavy <- struct{}{}:
		return func() { <-a.heavy }, nil
	case <-r.Context().Done():
		return nil, fmt.Errorf("SCIM request of %d bytes abandoned while waiting for a slot: %w", len(body), procure.ErrUnavailable)
	}
}

// createUser answers POST /Users: 201 with Location and ETag.
func (a *scimAPI) createUser(w http.ResponseWriter, r *http.Request, community string) error {
	in, release, err := a.readSCIMInput(w, r)
	if err != nil {
		return err
	}
	defer release()
	input, err := inputOf(&in)
	if err != nil {
		return err
	}
	u, err := a.users.Create(r.Context(), community, input)
	if err != nil {
		return err
	}
	return a.writeUser(w, r, http.StatusCreated, &u)
}

// getUser answers GET /Users/{id}: a 304 without a body when
// If-None-Match names the current version (RFC 7644 3.14, httpx.IfNoneMatch).
func (a *scimAPI) getUser(w http.ResponseWriter, r *http.Request, community string) error {
	u, err := a.users.ByID(r.Context(), community, r.PathValue("id"))
	if err != nil {
		return err
	}
	if etag := httpx.VersionETag(u.Version); httpx.IfNoneMatch(r, etag) {
		httpx.WriteNotModified(w, etag)
		return nil
	}
	return a.writeUser(w, r, http.StatusOK, &u)
}

// replaceUser answers PUT /Users/{id} (see the deviations in scim.go).
func (a *scimAPI) replaceUser(w http.ResponseWriter, r *http.Request, community string) error {
	version, err := scimIfMatch(r)
	if err != nil {
		return err
	}
	in, release, err := a.readSCIMInput(w, r)
	if err != nil {
		return err
	}
	defer release()
	input, err := inputOf(&in)
	if err != nil {
		return err
	}
	u, err := a.users.Modify(r.Context(), community, r.PathValue("id"), version, func(u *user.User) error {
		input.ApplyTo(u)
		return nil
	})
	if err != nil {
		return err
	}
	return a.writeUser(w, r, http.StatusOK, &u)
}

// patchUser answers PATCH /Users/{id}: the operations are applied to a copy
// of the stored user outside any store lock, and the result is committed
// only if the user has not changed since (Service.Modify).
func (a *scimAPI) patchUser(w http.ResponseWriter, r *http.Request, community string) error {
	version, err := scimIfMatch(r)
	if err != nil {
		return err
	}
	body, releaseBody, err := readSCIMBytes(w, r)
	if err != nil {
		return err
	}
	defer releaseBody()
	release, err := a.heavySlot(r, body)
	if err != nil {
		return err
	}
	defer release()
	steps, err := parsePatch(body)
	if err != nil {
		return err
	}
	u, err := a.users.Modify(r.Context(), community, r.PathValue("id"), version, func(u *user.User) error {
		return applyPatch(u, steps)
	})
	if err != nil {
		return err
	}
	return a.writeUser(w, r, http.StatusOK, &u)
}

// deleteUser answers DELETE /Users/{id}: the user is disabled, never
// deleted (buyers are referred to by requisitions and approvals), and the
// answer is 204 as for a deletion.
func (a *scimAPI) deleteUser(w http.ResponseWriter, r *http.Request, community string) error {
	version, err := scimIfMatch(r)
	if err != nil {
		return err
	}
	u, err := a.users.Modify(r.Context(), community, r.PathValue("id"), version, func(u *user.User) error {
		u.Enabled = false
		return nil
	})
	if err != nil {
		return err
	}
	w.Header().Set("ETag", httpx.VersionETag(u.Version))
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// writeUser answers with the user as a SCIM resource, its version as
// ETag, and (for a 201) its Location.
func (a *scimAPI) writeUser(w http.ResponseWriter, r *http.Request, status int, u *user.User) error {
	location := a.base(r) + "/Users/" + u.ID
	h := w.Header()
	h["Etag"] = []string{httpx.VersionETag(u.Version)}
	if status == http.StatusCreated {
		h["Location"] = []string{location}
	}
	p := scimBufPool.Get().(*[]byte)
	defer putSCIMBuf(p)
	b := appendSCIMUser((*p)[:0], u, location)
	b = append(b, '\n')
	writeSCIMBody(w, status, b)
	*p = b
	return nil
}

// scimBufPool holds the buffers SCIM answers are written into.
var scimBufPool = sync.Pool{New: func() any { b := make([]byte, 0, 2048); return &b }}

// putSCIMBuf returns a buffer to the pool unless it grew too large to
// keep.
func putSCIMBuf(p *[]byte) {
	if cap(*p) <= 1<<20 {
		scimBufPool.Put(p)
	}
}

// writeSCIMBody answers with a ready SCIM JSON body.
func writeSCIMBody(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	h["Content-Type"] = hdrSCIM
	h["Content-Length"] = httpx.ContentLength(len(body))
	w.WriteHeader(status)
	_, _ = w.Write(body) // the client has gone; nothing to do
}

// scimIfMatch is httpx.IfMatchVersion with its 400 as a SCIM error.
func scimIfMatch(r *http.Request) (int64, error) {
	v, err := httpx.IfMatchVersion(r)
	if err != nil {
		return 0, newSCIMError(http.StatusBadRequest, "invalidValue", err.Error())
	}
	return v, nil
}

// readSCIMInput reads a user body (readSCIMBytes, heavySlot,
// parseSCIMInput); the caller releases the slot when it is done.
func (a *scimAPI) readSCIMInput(w http.ResponseWriter, r *http.Request) (scimInput, func(), error) {
	body, releaseBody, err := readSCIMBytes(w, r)
	if err != nil {
		return scimInput{}, nil, err
	}
	defer releaseBody()
	release, err := a.heavySlot(r, body)
	if err != nil {
		return scimInput{}, nil, err
	}
	in, err := parseSCIMInput(body)
	if err != nil {
		release()
		return scimInput{}, nil, err
	}
	return in, release, nil
}

// readSCIMBytes reads a request body: application/scim+json or
// application/json (charset, if given, utf-8), then as httpx.ReadBody
// reads every body (413, 400 for a body that is empty or not UTF-8).
// Any other body is a 400 invalidSyntax: RFC 7644 3.12 lists no 415, and
// its clients know only its statuses. The body stays valid until release.
func readSCIMBytes(w http.ResponseWriter, r *http.Request) (body []byte, release func(), err error) {
	if !isSCIMContentType(r.Header.Get("Content-Type")) {
		return nil, nil, newSCIMError(http.StatusBadRequest, "invalidSyntax",
			"the request body must be JSON: send Content-Type: application/scim+json (or application/json)")
	}
	body, release, err = httpx.ReadBody(w, r, httpx.MaxBodyBytes, "")
	if err != nil {
		status, _, msg := httpx.Classify(err)
		scimType := "invalidSyntax"
		if status == http.StatusRequestEntityTooLarge {
			scimType = ""
		}
		return nil, nil, newSCIMError(status, scimType, msg)
	}
	return body, release, nil
}

// isSCIMContentType accepts application/scim+json and application/json,
// with an optional charset of utf-8.
func isSCIMContentType(ct string) bool {
	if strings.EqualFold(ct, scimContentType) || httpx.IsJSONContentType(ct) {
		return true
	}
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil || mt != scimContentType {
		return false
	}
	for k, v := range params {
		if k != "charset" || !(strings.EqualFold(v, "utf-8") || strings.EqualFold(v, "utf8")) {
			return false
		}
	}
	return true
}

// scimDecodeError turns a JSON decoding error into a SCIM 400: invalid
// JSON is invalidSyntax, a wrong type invalidValue naming the attribute.
func scimDecodeError(err error) error {
	var se *scimError
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return se
	case errors.As(err, &syn):
		return newSCIMError(http.StatusBadRequest, "invalidSyntax", "the request body is not valid JSON: "+syn.Error())
	case errors.As(err, &typ):
		if typ.Field == "" {
			return newSCIMError(http.StatusBadRequest, "invalidSyntax", "the request body must be a JSON object")
		}
		return newSCIMError(http.StatusBadRequest, "invalidValue", typ.Field+": must be a JSON "+httpx.JSONTypeName(typ.Type.Kind())+" (got "+httpx.Article(typ.Value)+")")
	}
	return newSCIMError(http.StatusBadRequest, "invalidSyntax", "the request body is not valid JSON")
}
