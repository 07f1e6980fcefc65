package httpx

import (
	"net/http"
	"strconv"
	"strings"
)

// Versions over HTTP (optimistic concurrency on both user APIs).
//
// A user's version (user.User.Version) travels as a weak entity tag,
// W/"<version>": in the ETag header of every user response, and as
// meta.version of a SCIM resource. An update that sends If-Match with
// such a tag is carried out only when the stored user still has that
// version, checked inside the store's atomic update; otherwise it is a
// 412 and nothing changes. Without If-Match an update is unconditional,
// as the spec's clients expect.
//
// Decisions (RFC 9110 and RFC 7644 leave room):
//   - The tag is weak because RFC 7644's examples use weak tags for
//     meta.version and SCIM clients echo it; If-Match compares tags
//     weakly (W/"3" and "3" both match version 3), since one version has
//     exactly one representation.
//   - If-Match: * is no precondition (the user must exist: an unknown id
//     is a 404 either way).
//   - If-Match holding a tag this API never issued (not a version
//     number) matches nothing: a 412.
//   - If-Match holding several tags is a 400: a client updating a user
//     has read one version of it.
//   - A read (GET or HEAD) with If-None-Match matching the current tag
//     is a 304 with the ETag and no body (RFC 9110 13.1.2): weak
//     comparison, "*" matches any existing user, and a list matches when
//     any of its tags does. A header that does not parse matches nothing,
//     so the client gets the full 200 it can always use.

// VersionETag returns the entity tag of a user version.
func VersionETag(v int64) string { return `W/"` + strconv.FormatInt(v, 10) + `"` }

// noVersionMatches is a version no stored user has (versions start at 1):
// a precondition with it always fails.
const noVersionMatches = -1

// IfMatchVersion returns the version an update's If-Match header requires:
// 0 when there is no precondition (no header, or *), noVersionMatches for
// a tag that names no version, and an error (a 400) for a list of tags.
func IfMatchVersion(r *http.Request) (int64, error) {
	vals := r.Header.Values("If-Match")
	if len(vals) == 0 {
		return 0, nil
	}
	h := strings.TrimSpace(strings.Join(vals, ","))
	if h == "*" {
		return 0, nil
	}
	if strings.Contains(h, ",") {
		return 0, NewError(http.StatusBadRequest, CodeInvalidParameter,
			"If-Match: send one entity tag (the ETag of the version read), not a list")
	}
	tag := strings.TrimPrefix(h, "W/")
	if len(tag) < 3 || tag[0] != '"' || tag[len(tag)-1] != '"' {
		return noVersionMatches, nil
	}
	v, err := strconv.ParseInt(tag[1:len(tag)-1], 10, 64)
	if err != nil || v <= 0 {
		return noVersionMatches, nil
	}
	return v, nil
}

// IfNoneMatch reports whether the request's If-None-Match header matches
// etag, the current entity tag of the resource a GET or HEAD would
// return (RFC 9110 13.1.2): "*", or a list of entity tags one of which
// equals etag under weak comparison (W/"3" matches "3"). Several header
// lines read as one list. A list that breaks the grammar matches only
// through the tags read before the fault: answering the full
// representation is never wrong, a 304 on a misread tag would be.
func IfNoneMatch(r *http.Request, etag string) bool {
	vals := r.Header.Values("If-None-Match")
	if len(vals) == 0 {
		return false
	}
	want := strings.TrimPrefix(etag, "W/")
	for _, v := range vals {
		if entityTagListMatches(v, want) {
			return true
		}
	}
	return false
}

// entityTagListMatches walks one If-None-Match field value ("*" or
// #entity-tag, RFC 9110 8.8.3) and reports whether it holds "*" or an
// entity tag whose opaque-tag (quotes included) is want. An opaque tag
// may hold commas, so the list is scanned tag by tag, not split.
func entityTagListMatches(v, want string) bool {
	for {
		v = strings.TrimLeft(v, " \t,")
		if v == "" {
			return false
		}
		if v[0] == '*' {
			// "*" stands alone in the grammar; accept it first in a list too.
			return true
		}
		v = strings.TrimPrefix(v, "W/")
		if v == "" || v[0] != '"' {
			return false
		}
		end := strings.IndexByte(v[1:], '"')
		if end < 0 {
			return false
		}
		if v[:end+2] == want {
			return true
		}
		v = v[end+2:]
		if rest := strings.TrimLeft(v, " \t"); rest != "" && rest[0] != ',' {
			return false
		}
	}
}

// WriteNotModified answers a read whose If-None-Match matched: 304 with
// the ETag (RFC 9110 15.4.5: the headers a 200 would have had that
// describe the representation) and no body. Headers already set on w,
// such as Cache-Control, are sent as they are.
func WriteNotModified(w http.ResponseWriter, etag string) {
	w.Header().Set("ETag", etag)
	w.WriteHeader(http.StatusNotModified)
}
