package users_test

import (
	"net/http"
	"testing"

	"github.com/procurekit/procure/httpapi/internal/httpx"
)

// docs: users.md: usernames compare case-insensitively, under
// Unicode simple case folding (user.UsernameKey): two usernames that
// strings.EqualFold calls equal cannot coexist, and the lookup folds.
func TestUsernamesCaseFolded(t *testing.T) {
	s := newUserServer(t)
	// The fixture holds Alice.Smith; "ſ" (long s) folds to "s".
	r := req{method: http.MethodPost, path: "/v1/users", body: `{"username":"ALICE.ſMITH"}`}
	checkUserResponse(t, r, s.do(t, r), 400, httpx.CodeDuplicateUsername)
	for _, name := range []string{"alice.smith", "ALICE.SMITH", "alice.%C5%BFmith"} {
		r := req{method: http.MethodGet, path: "/v1/users/username/" + name}
		got := s.do(t, r)
		checkUserResponse(t, r, got, 200, "")
		if u := decodeUser(t, got.body); u.ID != "a-0001" {
			t.Errorf("GET %s = %s; want a-0001", name, u.ID)
		}
	}
	// The Kelvin sign K is a k; the dotted capital İ is not an i.
	r = req{method: http.MethodPost, path: "/v1/users", body: `{"username":"kate"}`}
	checkUserResponse(t, r, s.do(t, r), 200, "")
	r.body = `{"username":"\u212Aate"}`
	checkUserResponse(t, r, s.do(t, r), 400, httpx.CodeDuplicateUsername)
	r.body = `{"username":"ilse"}`
	checkUserResponse(t, r, s.do(t, r), 200, "")
	r.body = `{"username":"İlse"}`
	checkUserResponse(t, r, s.do(t, r), 200, "")
}
