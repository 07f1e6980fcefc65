package httpapi

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

// versionETag returns the entity tag of a user version.
func versionETag(v int64) string { return `W/"` + strconv.FormatInt(v, 10) + `"` }

// noVersionMatches is a version no stored user has (versions start at 1):
// a precondition with it always fails.
const noVersionMatches = -1

// ifMatchVersion returns the version an update's If-Match header requires:
// 0 when there is no precondition (no header, or *), noVersionMatches for
// a tag that names no version, and an error (a 400) for a list of tags.
func ifMatchVersion(r *http.Request) (int64, error) {
	vals := r.Header.Values("If-Match")
	if len(vals) == 0 {
		return 0, nil
	}
	h := strings.TrimSpace(strings.Join(vals, ","))
	if h == "*" {
		return 0, nil
	}
	if strings.Contains(h, ",") {
		return 0, newError(http.StatusBadRequest, CodeInvalidParameter,
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
