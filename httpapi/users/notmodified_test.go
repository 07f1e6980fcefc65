package users_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/procurekit/procure/httpapi/users"
)

// GET /v1/users/username/{u} with If-None-Match naming the current
// version is a 304 with the ETag and no body (RFC 9110 13.1.2); any other
// tag, or a user changed since, is the full 200. The OpenAPI document
// lists the 304 and the header.
func TestUsersGetNotModified(t *testing.T) {
	s := newUserServer(t)
	const path = "/v1/users/username/alice.smith"
	tests := []struct {
		name        string
		method      string
		ifNoneMatch string
		status      int
	}{
		{"current weak tag", http.MethodGet, `W/"1"`, http.StatusNotModified},
		{"current strong tag", http.MethodGet, `"1"`, http.StatusNotModified},
		{"star", http.MethodGet, `*`, http.StatusNotModified},
		{"list holding it", http.MethodGet, `W/"7", W/"1"`, http.StatusNotModified},
		{"HEAD", http.MethodHead, `W/"1"`, http.StatusNotModified},
		{"other version", http.MethodGet, `W/"2"`, http.StatusOK},
		{"not a tag", http.MethodGet, `1`, http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := s.do(t, req{method: tt.method, path: path, header: map[string]string{"If-None-Match": tt.ifNoneMatch}})
			if res.status != tt.status {
				t.Fatalf("%s with If-None-Match %s = %d %s; want %d", tt.method, tt.ifNoneMatch, res.status, res.body, tt.status)
			}
			if got := res.header.Get("ETag"); got != `W/"1"` {
				t.Errorf("ETag = %q; want W/\"1\"", got)
			}
			if got := res.header.Get("Cache-Control"); got != "no-store" {
				t.Errorf("Cache-Control = %q; want no-store", got)
			}
			if tt.status == http.StatusNotModified && len(res.body) != 0 {
				t.Errorf("304 body = %q; want none", res.body)
			}
		})
	}

	// Unknown users and bad credentials are not hidden behind a 304.
	if res := s.do(t, req{method: http.MethodGet, path: "/v1/users/username/nobody", header: map[string]string{"If-None-Match": "*"}}); res.status != http.StatusNotFound {
		t.Errorf("unknown user with If-None-Match: * = %d; want 404", res.status)
	}
	if res := s.do(t, req{method: http.MethodGet, path: path, key: "wrong", header: map[string]string{"If-None-Match": "*"}}); res.status != http.StatusUnauthorized {
		t.Errorf("wrong key with If-None-Match: * = %d; want 401", res.status)
	}

	// After an update the old tag no longer matches.
	put := req{method: http.MethodPut, path: "/v1/users", body: `{"id":"a-0001","username":"Alice.Smith","firstName":"Alicia"}`}
	if res := s.do(t, put); res.status != http.StatusOK || res.header.Get("ETag") != `W/"2"` {
		t.Fatalf("PUT = %d ETag %q; want 200 W/\"2\"", res.status, res.header.Get("ETag"))
	}
	get := req{method: http.MethodGet, path: path, header: map[string]string{"If-None-Match": `W/"1"`}}
	res := s.do(t, get)
	checkUserResponse(t, get, res, http.StatusOK, "")
	if u := decodeUser(t, res.body); u.FirstName != "Alicia" {
		t.Errorf("after the update: firstName %q; want Alicia", u.FirstName)
	}

	// The document lists what the handler does.
	var doc struct {
		Paths map[string]map[string]struct {
			Parameters []struct {
				Ref string `json:"$ref"`
			} `json:"parameters"`
			Responses map[string]json.RawMessage `json:"responses"`
		} `json:"paths"`
		Components struct {
			Parameters map[string]struct {
				Name string `json:"name"`
				In   string `json:"in"`
			} `json:"parameters"`
		} `json:"components"`
	}
	if err := json.Unmarshal(users.OpenAPI(), &doc); err != nil {
		t.Fatal(err)
	}
	op := doc.Paths["/v1/users/username/{username}"]["get"]
	if _, ok := op.Responses["304"]; !ok {
		t.Error("OpenAPI: GET /v1/users/username/{username} lists no 304")
	}
	found := false
	for _, p := range op.Parameters {
		const prefix = "#/components/parameters/"
		if len(p.Ref) > len(prefix) {
			c := doc.Components.Parameters[p.Ref[len(prefix):]]
			found = found || (c.Name == "If-None-Match" && c.In == "header")
		}
	}
	if !found {
		t.Error("OpenAPI: GET /v1/users/username/{username} has no If-None-Match header parameter")
	}
}
