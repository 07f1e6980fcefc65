package users_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/procurekit/procure/httpapi/internal/httpx"
)

// Issue 19 item 13: a PUT /v1/users that changes nothing (after trimming
// and the auto-roles) keeps the version, so the ETag other clients hold
// stays valid; a real change still moves it.
func TestUsersNoOpUpdateKeepsETag(t *testing.T) {
	s := newUserServer(t)
	put := func(body string, header map[string]string) userResponse {
		t.Helper()
		r := req{method: http.MethodPut, path: "/v1/users", body: body, header: header}
		res := s.do(t, r)
		checkUserResponse(t, r, res, http.StatusOK, "")
		return res
	}
	// The first PUT adds the auto-role EMPLOYEE: version 2.
	const body = `{"id":"a-0001","username":"Alice.Smith","firstName":"Alice"}`
	if got := put(body, nil).header.Get("ETag"); got != `W/"2"` {
		t.Fatalf("first PUT ETag = %q; want W/\"2\"", got)
	}
	for _, tt := range []struct {
		name, body string
		header     map[string]string
	}{
		{"the same body", body, nil},
		{"the same values with spaces", `{"id":"a-0001","username":" Alice.Smith ","firstName":" Alice","enabled":true}`, nil},
		{"the stored lists sent back", `{"id":"a-0001","username":"Alice.Smith","organisationUnits":[{"code":"OU-SCI"}],"roles":[{"code":"BUYER"},{"code":"EMPLOYEE"}]}`, nil},
		{"with If-Match of the current version", body, map[string]string{"If-Match": `W/"2"`}},
	} {
		res := put(tt.body, tt.header)
		if got := res.header.Get("ETag"); got != `W/"2"` {
			t.Errorf("%s: ETag = %q; want W/\"2\" (nothing changed)", tt.name, got)
		}
		if u := decodeUser(t, res.body); u.FirstName != "Alice" || len(u.Roles) != 2 {
			t.Errorf("%s: answered %+v; want the stored user", tt.name, u)
		}
	}
	// The ETag a client kept is still good for a conditional request.
	if res := s.do(t, req{method: http.MethodGet, path: "/v1/users/username/alice.smith", header: map[string]string{"If-None-Match": `W/"2"`}}); res.status != http.StatusNotModified {
		t.Errorf("GET with the kept ETag = %d; want 304", res.status)
	}
	if got := put(`{"id":"a-0001","username":"Alice.Smith","firstName":"Alicia"}`, map[string]string{"If-Match": `W/"2"`}).header.Get("ETag"); got != `W/"3"` {
		t.Errorf("a real change: ETag = %q; want W/\"3\"", got)
	}
}

// Issue 19 item 10 on /v1/users: usernames with invisible or
// bidirectional control characters are a 400 naming username and the
// rule, on create and update; usernames are NFC, so the composed and
// decomposed forms are one user.
func TestUsersUsernameCharacters(t *testing.T) {
	s := newUserServer(t)
	for _, tt := range []struct{ method, body string }{
		{http.MethodPost, `{"username":"jsmith\u200b"}`},
		{http.MethodPost, `{"username":"\u200fjsmith"}`},
		{http.MethodPost, `{"username":"j\u00adsmith"}`},
		{http.MethodPost, `{"username":"\ufeffjsmith"}`},
		{http.MethodPost, `{"username":"js\u2060mith"}`},
		{http.MethodPost, `{"username":"jsmith\u202e"}`},
		{http.MethodPut, `{"id":"a-0001","username":"Alice.Smith\u200b"}`},
	} {
		r := req{method: tt.method, path: "/v1/users", body: tt.body}
		res := s.do(t, r)
		checkUserResponse(t, r, res, http.StatusBadRequest, httpx.CodeInvalidField)
		if msg := errorMessage(t, res.body); !strings.Contains(msg, "username") || !strings.Contains(msg, "invisible") {
			t.Errorf("%s %s: message %q; want it to name username and the rule", tt.method, tt.body, msg)
		}
	}
	if res := s.do(t, req{method: http.MethodGet, path: "/v1/users/username/jsmith"}); res.status != http.StatusNotFound {
		t.Errorf("GET jsmith after the refused creates = %d; want 404", res.status)
	}

	create := req{method: http.MethodPost, path: "/v1/users", body: `{"username":"Jose\u0301"}`}
	res := s.do(t, create)
	checkUserResponse(t, create, res, http.StatusOK, "")
	if u := decodeUser(t, res.body); u.Username != "Jos\u00e9" {
		t.Errorf("stored username %+q; want NFC %+q", u.Username, "Jos\u00e9")
	}
	for _, p := range []string{"/v1/users/username/jos%C3%A9", "/v1/users/username/JOSE%CC%81"} {
		if res := s.do(t, req{method: http.MethodGet, path: p}); res.status != http.StatusOK {
			t.Errorf("GET %s = %d; want 200", p, res.status)
		}
	}
	dup := req{method: http.MethodPost, path: "/v1/users", body: `{"username":"jos\u00e9"}`}
	checkUserResponse(t, dup, s.do(t, dup), http.StatusBadRequest, httpx.CodeDuplicateUsername)
}
