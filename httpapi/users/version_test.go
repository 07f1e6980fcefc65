package users_test

import (
	"net/http"
	"testing"

	"github.com/procurekit/procure/httpapi/internal/apitest"
	"github.com/procurekit/procure/httpapi/internal/httpx"
	"github.com/procurekit/procure/httpapi/users"
)

// Optimistic concurrency on /v1/users (etag.go): every user response
// carries the version as an ETag; an update with If-Match of an older
// version is a 412 that changes nothing; without If-Match (as the spec's
// clients send) an update is unconditional.
func TestUsersVersions(t *testing.T) {
	s := newUserServer(t)
	get := req{method: http.MethodGet, path: "/v1/users/username/Alice.Smith"}
	res := s.do(t, get)
	checkUserResponse(t, get, res, 200, "")
	if got := res.header.Get("ETag"); got != `W/"1"` {
		t.Fatalf("GET ETag = %q; want W/\"1\" (a loaded user)", got)
	}

	put := func(ifMatch, first string) (req, userResponse) {
		r := req{method: http.MethodPut, path: "/v1/users", body: `{"id":"a-0001","username":"Alice.Smith","firstName":"` + first + `"}`}
		if ifMatch != "" {
			r.header = map[string]string{"If-Match": ifMatch}
		}
		return r, s.do(t, r)
	}
	steps := []struct {
		name, ifMatch, first string
		status               int
		code, etag           string
	}{
		{"current version", `W/"1"`, "A2", 200, "", `W/"2"`},
		{"strong form of the current version", `"2"`, "A3", 200, "", `W/"3"`},
		{"old version", `W/"2"`, "stale", 412, httpx.CodeVersionMismatch, ""},
		{"a tag never issued", `"abc"`, "stale", 412, httpx.CodeVersionMismatch, ""},
		{"version zero", `W/"0"`, "stale", 412, httpx.CodeVersionMismatch, ""},
		{"a list of tags", `W/"3", W/"4"`, "stale", 400, httpx.CodeInvalidParameter, ""},
		{"any version", `*`, "A4", 200, "", `W/"4"`},
		{"no If-Match: unconditional", "", "A5", 200, "", `W/"5"`},
	}
	for _, st := range steps {
		r, got := put(st.ifMatch, st.first)
		checkUserResponse(t, r, got, st.status, st.code)
		if st.status == 200 {
			if tag := got.header.Get("ETag"); tag != st.etag {
				t.Errorf("%s: ETag %q; want %q", st.name, tag, st.etag)
			}
			if u := decodeUser(t, got.body); u.FirstName != st.first {
				t.Errorf("%s: first name %q; want %q", st.name, u.FirstName, st.first)
			}
		}
	}
	// The refused updates changed nothing.
	res = s.do(t, get)
	if u := decodeUser(t, res.body); u.FirstName != "A5" || res.header.Get("ETag") != `W/"5"` {
		t.Errorf("after the refused updates: first name %q, ETag %q; want A5, W/\"5\"", u.FirstName, res.header.Get("ETag"))
	}
	// An unknown id is a 404, whatever If-Match says.
	r := req{method: http.MethodPut, path: "/v1/users", body: `{"id":"nope","username":"x"}`, header: map[string]string{"If-Match": `W/"1"`}}
	checkUserResponse(t, r, s.do(t, r), 404, httpx.CodeUserNotFound)

	// A created user starts at version 1.
	post := req{method: http.MethodPost, path: "/v1/users", body: `{"username":"new.user"}`}
	res = s.do(t, post)
	checkUserResponse(t, post, res, 200, "")
	if got := res.header.Get("ETag"); got != `W/"1"` {
		t.Errorf("POST ETag = %q; want W/\"1\"", got)
	}
}

// The pre-check announces the community's auto-roles (HeaderAutoRoles),
// percent-encoded; a community without any sends the header empty.
func TestUsersAnnounceAutoRoles(t *testing.T) {
	s := newUserServer(t)
	if err := s.store.SetAutoRoles("community-a", []string{"EMPLOYEE", "A,B %"}); err != nil {
		t.Fatal(err)
	}
	res := s.do(t, req{method: http.MethodGet, path: "/v1/users/username/alice.smith"})
	if got := res.header.Values(users.HeaderAutoRoles); len(got) != 1 || got[0] != "EMPLOYEE,A%2CB+%25" {
		t.Errorf("community A: %s %q; want EMPLOYEE,A%%2CB+%%25", users.HeaderAutoRoles, got)
	}
	res = s.do(t, req{method: http.MethodGet, path: "/v1/users/username/carol", account: apitest.AccountB, key: apitest.KeyB})
	if got, ok := res.header[users.HeaderAutoRoles]; !ok || len(got) != 1 || got[0] != "" {
		t.Errorf("community B: %s %q (present %v); want present and empty", users.HeaderAutoRoles, got, ok)
	}
}
