package users_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/google/uuid"

	"github.com/procurekit/procure/auth"
	"github.com/procurekit/procure/httpapi/internal/apitest"
	"github.com/procurekit/procure/httpapi/internal/httpx"
	"github.com/procurekit/procure/httpapi/users"
	"github.com/procurekit/procure/internal/syncbuf"
	"github.com/procurekit/procure/memstore"
	"github.com/procurekit/procure/user"
)

// userAPI is the served document, for the validating proxy.
var userAPI = apitest.Document("users.json", users.OpenAPI())

// userServer is a real HTTP server over the user API and a memstore.
type userServer struct {
	*httptest.Server
	store *memstore.Store
	logs  *syncbuf.Buffer
}

func newUserServer(tb testing.TB, change ...func(*users.Options)) *userServer {
	tb.Helper()
	store, err := memstore.LoadReader(apitest.UserFixture().Reader())
	if err != nil {
		tb.Fatal(err)
	}
	logs := &syncbuf.Buffer{}
	opts := users.Options{
		Users:    user.NewService(store),
		Accounts: store,
		Logger:   slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}
	for _, c := range change {
		c(&opts)
	}
	mux := http.NewServeMux()
	users.Mount(mux, opts)
	srv := httptest.NewServer(apitest.ValidatedBy(tb, mux, userAPI))
	tb.Cleanup(srv.Close)
	return &userServer{Server: srv, store: store, logs: logs}
}

// userResponse is a finished exchange.
type userResponse struct {
	status int
	header http.Header
	body   []byte
}

// req describes a request; zero fields take the defaults of do.
type req struct {
	method, path string
	body         string
	contentType  string            // default application/json; charset=utf-8 when body is set; "-" for none
	account, key string            // default apitest.AccountA/apitest.KeyA; "-" to leave the header out
	header       map[string]string // extra headers
}

// do sends r and returns the response; it does not check it.
func (s *userServer) do(tb testing.TB, r req) userResponse {
	tb.Helper()
	var body io.Reader
	if r.body != "" {
		body = strings.NewReader(r.body)
	}
	hr, err := http.NewRequest(r.method, s.URL+r.path, body)
	if err != nil {
		tb.Fatal(err)
	}
	switch {
	case r.contentType == "-":
	case r.contentType != "":
		hr.Header.Set("Content-Type", r.contentType)
	case r.body != "":
		hr.Header.Set("Content-Type", "application/json; charset=utf-8")
	}
	account, key := userOr(r.account, apitest.AccountA), userOr(r.key, apitest.KeyA)
	if account != "-" {
		hr.Header.Set("Service-Account-ID", account)
	}
	if key != "-" {
		hr.Header.Set("Service-API-Key", key)
	}
	for k, v := range r.header {
		hr.Header.Set(k, v)
	}
	resp, err := s.Client().Do(hr)
	if err != nil {
		tb.Fatalf("%s %s: %v", r.method, r.path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatal(err)
	}
	return userResponse{status: resp.StatusCode, header: resp.Header, body: b}
}

// userOperationPath maps a request path to its path template in the OpenAPI
// document.
func userOperationPath(path string) string {
	switch {
	case strings.HasPrefix(path, "/v1/users/username/"):
		return "/v1/users/username/{username}"
	case path == "/v1/users":
		return "/v1/users"
	}
	return path
}

// checkUserResponse fails tb unless the response has the status, is JSON,
// carries the error code (for an error) and matches the OpenAPI document's
// schema for that operation and status.
func checkUserResponse(tb testing.TB, r req, got userResponse, status int, code string) {
	tb.Helper()
	if got.status != status {
		tb.Fatalf("%s %s = %d %s; want %d", r.method, r.path, got.status, got.body, status)
	}
	if ct := got.header.Get("Content-Type"); ct != "application/json" {
		tb.Errorf("Content-Type = %q, want application/json", ct)
	}
	if r.method == http.MethodHead {
		return
	}
	var pointer string
	switch status {
	case http.StatusMethodNotAllowed:
		pointer = "#/components/schemas/Error" // the code is checked below
	default:
		if code == httpx.CodeNotFound {
			pointer = "#/components/schemas/Error"
		} else {
			pointer = apitest.ResponseSchema(tb, users.OpenAPI(), userOperationPath(r.path), strings.ToLower(r.method), status)
		}
	}
	apitest.CheckSchema(tb, users.OpenAPI(), pointer, got.body)
	if status != http.StatusOK {
		var e httpx.ErrorBody
		if err := json.Unmarshal(got.body, &e); err != nil {
			tb.Fatalf("error body: %v", err)
		}
		if e.Code != code {
			tb.Errorf("code = %q (%s), want %q", e.Code, e.Message, code)
		}
	}
}

// decodeUser decodes a 200 body.
func decodeUser(tb testing.TB, body []byte) user.User {
	tb.Helper()
	var u user.User
	if err := json.Unmarshal(body, &u); err != nil {
		tb.Fatalf("user body: %v: %s", err, body)
	}
	return u
}

func errorMessage(tb testing.TB, body []byte) string {
	tb.Helper()
	var e httpx.ErrorBody
	if err := json.Unmarshal(body, &e); err != nil {
		tb.Fatalf("error body: %v", err)
	}
	return e.Message
}

var equateEmpty = cmpopts.EquateEmpty()

func TestUsersGet(t *testing.T) {
	s := newUserServer(t)
	tests := []struct {
		name    string
		r       req
		status  int
		code    string
		wantID  string
		rawWant string // exact body, when set
	}{
		{name: "as stored", r: req{path: "/v1/users/username/Alice.Smith"}, status: 200, wantID: "a-0001",
			rawWant: `{"id":"a-0001","username":"Alice.Smith","firstName":"Alice","email":"alice@example.com","enabled":true,"organisationUnits":[{"code":"OU-SCI"}],"roles":[{"code":"BUYER"}],"attributes":[{"name":"costCentre","value":"CC-1"}]}` + "\n"},
		// docs: users.md: the lookup is case-insensitive.
		{name: "other case", r: req{path: "/v1/users/username/ALICE.SMITH"}, status: 200, wantID: "a-0001"},
		{name: "escaped slash and plus", r: req{path: "/v1/users/username/BOB%2Fops+1@example.com"}, status: 200, wantID: "a-0002"},
		{name: "percent-encoded letters", r: req{path: "/v1/users/username/%41lice.Smith"}, status: 200, wantID: "a-0001"},
		{name: "surrounding spaces trimmed", r: req{path: "/v1/users/username/%20alice.smith%20"}, status: 200, wantID: "a-0001"},
		// docs: users.md "Endpoints": 404 when no such user exists.
		{name: "unknown", r: req{path: "/v1/users/username/nobody"}, status: 404, code: httpx.CodeUserNotFound},
		// docs: tenancy.md: another community's user is a 404.
		{name: "another community's user", r: req{path: "/v1/users/username/carol"}, status: 404, code: httpx.CodeUserNotFound},
		{name: "own user seen by the other community", r: req{path: "/v1/users/username/carol", account: apitest.AccountB, key: apitest.KeyB}, status: 200, wantID: "b-0001"},
		{name: "alice is not B's", r: req{path: "/v1/users/username/alice.smith", account: apitest.AccountB, key: apitest.KeyB}, status: 404, code: httpx.CodeUserNotFound},
		{name: "blank username", r: req{path: "/v1/users/username/%20%20"}, status: 400, code: httpx.CodeInvalidParameter},
		{name: "too long to exist", r: req{path: "/v1/users/username/" + strings.Repeat("a", 300)}, status: 404, code: httpx.CodeUserNotFound},
		{name: "HEAD", r: req{method: http.MethodHead, path: "/v1/users/username/alice.smith"}, status: 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.r.method = userOr(tt.r.method, http.MethodGet)
			got := s.do(t, tt.r)
			checkUserResponse(t, tt.r, got, tt.status, tt.code)
			// User data is personal: never cached.
			if cc := got.header.Get("Cache-Control"); cc != "no-store" {
				t.Errorf("Cache-Control = %q, want no-store", cc)
			}
			if tt.rawWant != "" && string(got.body) != tt.rawWant {
				t.Errorf("body = %s\nwant %s", got.body, tt.rawWant)
			}
			if tt.wantID != "" && tt.r.method == http.MethodGet {
				if u := decodeUser(t, got.body); u.ID != tt.wantID {
					t.Errorf("user id = %q, want %q", u.ID, tt.wantID)
				}
			}
			if tt.r.method == http.MethodHead && len(got.body) != 0 {
				t.Errorf("HEAD has a body: %s", got.body)
			}
		})
	}
}

func TestUsersCreate(t *testing.T) {
	t.Run("generated id, defaults, trimming, auto-roles", func(t *testing.T) {
		s := newUserServer(t)
		r := req{method: http.MethodPost, path: "/v1/users", body: `{
			"username": "  dana.lee@example.com ",
			"firstName": "Dana ", "email": "dana.lee@example.com",
			"organisationsUnits": [{"code": "OU-ENG"}],
			"roles": [{"code": "BUYER"}],
			"attributes": [{"name": " grade", "value": "7 "}],
			"favouriteColour": "teal"
		}`}
		got := s.do(t, r)
		checkUserResponse(t, r, got, 200, "")
		u := decodeUser(t, got.body)
		if err := uuid.Validate(u.ID); err != nil {
			t.Errorf("generated id %q: %v", u.ID, err)
		}
		want := user.User{
			ID: u.ID, Username: "dana.lee@example.com", FirstName: "Dana", Email: "dana.lee@example.com",
			Enabled:           true,                            // docs: users.md: enabled defaults to true
			OrganisationUnits: user.Codes("OU-ENG"),            // the other spelling, answered as organisationUnits
			Roles:             user.Codes("BUYER", "EMPLOYEE"), // docs: users.md: the response shows auto-roles
			Attributes:        []user.Attribute{{Name: "grade", Value: "7"}},
		}
		if diff := cmp.Diff(want, u, equateEmpty); diff != "" {
			t.Errorf("created user (-want +got):\n%s", diff)
		}
		if !bytes.Contains(got.body, []byte(`"organisationUnits"`)) || bytes.Contains(got.body, []byte("organisationsUnits")) {
			t.Errorf("response does not spell organisationUnits: %s", got.body)
		}
		// The pre-check finds it, case-insensitively.
		g := req{method: http.MethodGet, path: "/v1/users/username/DANA.LEE@EXAMPLE.COM"}
		get := s.do(t, g)
		checkUserResponse(t, g, get, 200, "")
		if !bytes.Equal(get.body, got.body) {
			t.Errorf("GET after POST = %s\nwant %s", get.body, got.body)
		}
	})
	t.Run("given id, disabled", func(t *testing.T) {
		s := newUserServer(t)
		r := req{method: http.MethodPost, path: "/v1/users", body: `{"id":"hr-1234","username":"erin","enabled":false}`}
		got := s.do(t, r)
		checkUserResponse(t, r, got, 200, "")
		want := `{"id":"hr-1234","username":"erin","enabled":false,"roles":[{"code":"EMPLOYEE"}]}` + "\n"
		if string(got.body) != want {
			t.Errorf("body = %s\nwant %s", got.body, want)
		}
	})
	t.Run("content types accepted", func(t *testing.T) {
		s := newUserServer(t)
		for i, ct := range []string{"application/json", "Application/JSON; Charset=UTF-8", "application/json;charset=utf8", "application/json ; charset=\"utf-8\""} {
			r := req{method: http.MethodPost, path: "/v1/users", contentType: ct, body: fmt.Sprintf(`{"username":"ct-%d"}`, i)}
			checkUserResponse(t, r, s.do(t, r), 200, "")
		}
	})
	t.Run("body of exactly 1 MiB", func(t *testing.T) {
		s := newUserServer(t)
		body := `{"username":"big"}`
		body += strings.Repeat(" ", users.MaxBodyBytes-len(body))
		r := req{method: http.MethodPost, path: "/v1/users", body: body}
		checkUserResponse(t, r, s.do(t, r), 200, "")
	})
}

func TestUsersCreateErrors(t *testing.T) {
	s := newUserServer(t)
	tests := []struct {
		name    string
		r       req
		status  int
		code    string
		message string // exact message, when set
	}{
		// docs: users.md: conflicts are 400 with their own code.
		{name: "username taken, other case", r: req{body: `{"username":"alice.SMITH"}`}, status: 400, code: httpx.CodeDuplicateUsername},
		{name: "id taken in another community", r: req{body: `{"id":"b-0001","username":"new1"}`}, status: 400, code: httpx.CodeDuplicateID},
		{name: "no username", r: req{body: `{"firstName":"X"}`}, status: 400, code: httpx.CodeInvalidField, message: "username: is required"},
		{name: "several rules", r: req{body: `{"username":"x","email":"nope","roles":[{"code":"A"},{"code":""},{"code":"A"}],"attributes":[{"name":"123456789012345678901","value":"v"}]}`},
			status: 400, code: httpx.CodeInvalidField,
			message: `email: must be a valid email address; roles[1].code: is required; roles[2].code: entries must be unique by code: "A" is already at roles[0]; attributes[0].name: must be at most 20 characters`},
		{name: "both spellings differ", r: req{body: `{"username":"x","organisationUnits":[{"code":"A"}],"organisationsUnits":[{"code":"B"}]}`},
			status: 400, code: httpx.CodeInvalidField,
			message: "organisationsUnits: must hold the same codes as organisationUnits when both are sent (they are two spellings of one field; send one)"},
		// docs: users.md: malformed JSON or a wrong JSON type is a 400.
		{name: "malformed JSON", r: req{body: "{\n  \"username\": \"x\",\n}"}, status: 400, code: httpx.CodeMalformedRequest,
			message: "the request body is not valid JSON: invalid character '}' looking for beginning of object key string (at line 3, column 1)"},
		{name: "truncated JSON", r: req{body: `{"username":"x"`}, status: 400, code: httpx.CodeMalformedRequest},
		{name: "trailing data", r: req{body: `{"username":"x"} {}`}, status: 400, code: httpx.CodeMalformedRequest},
		{name: "wrong type", r: req{body: `{"username":"x","enabled":"yes"}`}, status: 400, code: httpx.CodeMalformedRequest,
			message: "enabled: must be a JSON boolean (got a string)"},
		{name: "wrong nested type", r: req{body: `{"username":"x","roles":[{"code":7}]}`}, status: 400, code: httpx.CodeMalformedRequest,
			message: "roles.code: must be a JSON string (got a number)"},
		{name: "list of strings", r: req{body: `{"username":"x","roles":["BUYER"]}`}, status: 400, code: httpx.CodeMalformedRequest,
			message: "roles: each entry must be a JSON object (got a string)"},
		{name: "not an object", r: req{body: `[{"username":"x"}]`}, status: 400, code: httpx.CodeMalformedRequest,
			message: "the request body must be a JSON object (a User), not an array"},
		{name: "empty body", r: req{contentType: "application/json"}, status: 400, code: httpx.CodeMalformedRequest, message: "the request body is empty: send a JSON User object"},
		{name: "blank body", r: req{body: " \n "}, status: 400, code: httpx.CodeMalformedRequest},
		{name: "no content type", r: req{body: `{"username":"x"}`, contentType: "-"}, status: 415, code: httpx.CodeUnsupportedMediaType},
		{name: "text/plain", r: req{body: `{"username":"x"}`, contentType: "text/plain"}, status: 415, code: httpx.CodeUnsupportedMediaType},
		{name: "form", r: req{body: `username=x`, contentType: "application/x-www-form-urlencoded"}, status: 415, code: httpx.CodeUnsupportedMediaType},
		{name: "other charset", r: req{body: `{"username":"x"}`, contentType: "application/json; charset=iso-8859-1"}, status: 415, code: httpx.CodeUnsupportedMediaType},
		{name: "malformed content type", r: req{body: `{"username":"x"}`, contentType: "application/json; charset"}, status: 415, code: httpx.CodeUnsupportedMediaType},
		{name: "over 1 MiB", r: req{body: `{"username":"x","displayName":"` + strings.Repeat("a", users.MaxBodyBytes) + `"}`}, status: 413, code: httpx.CodePayloadTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.r.method, tt.r.path = http.MethodPost, "/v1/users"
			got := s.do(t, tt.r)
			checkUserResponse(t, tt.r, got, tt.status, tt.code)
			if tt.message != "" {
				if m := errorMessage(t, got.body); m != tt.message {
					t.Errorf("message = %q\nwant      %q", m, tt.message)
				}
			}
		})
	}
	// Nothing was stored by any failed request.
	for _, name := range []string{"new1", "x", "big"} {
		if _, err := s.store.UserByUsername(context.Background(), "community-a", name); !errors.Is(err, user.ErrNotFound) {
			t.Errorf("user %q exists after failed requests", name)
		}
	}

	t.Run("over 1 MiB without Content-Length", func(t *testing.T) {
		big := strings.Repeat(" ", users.MaxBodyBytes) + `{"username":"chunked"}`
		hr, _ := http.NewRequest(http.MethodPost, s.URL+"/v1/users", io.MultiReader(strings.NewReader(big))) // unknown length: chunked
		hr.Header.Set("Content-Type", "application/json")
		hr.Header.Set("Service-Account-ID", apitest.AccountA)
		hr.Header.Set("Service-API-Key", apitest.KeyA)
		resp, err := s.Client().Do(hr)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if hr.ContentLength != -1 && hr.ContentLength != 0 {
			t.Fatalf("request has a length: %d", hr.ContentLength)
		}
		checkUserResponse(t, req{method: http.MethodPost, path: "/v1/users"}, userResponse{resp.StatusCode, resp.Header, body}, 413, httpx.CodePayloadTooLarge)
	})
}

func TestUsersUpdate(t *testing.T) {
	put := func(s *userServer, t *testing.T, body string, status int, code string) user.User {
		t.Helper()
		r := req{method: http.MethodPut, path: "/v1/users", body: body}
		got := s.do(t, r)
		checkUserResponse(t, r, got, status, code)
		if status != 200 {
			return user.User{}
		}
		return decodeUser(t, got.body)
	}
	get := func(s *userServer, t *testing.T, username string, status int) user.User {
		t.Helper()
		r := req{method: http.MethodGet, path: "/v1/users/username/" + username}
		got := s.do(t, r)
		code := ""
		if status == 404 {
			code = httpx.CodeUserNotFound
		}
		checkUserResponse(t, r, got, status, code)
		if status != 200 {
			return user.User{}
		}
		return decodeUser(t, got.body)
	}

	t.Run("present fields replace, omitted keep", func(t *testing.T) {
		s := newUserServer(t)
		got := put(s, t, `{"id":"a-0001","username":"Alice.Smith","lastName":"Smith","email":null,"attributes":[]}`, 200, "")
		want := user.User{ID: "a-0001", Username: "Alice.Smith", FirstName: "Alice", LastName: "Smith", Enabled: true,
			OrganisationUnits: user.Codes("OU-SCI"), Roles: user.Codes("BUYER", "EMPLOYEE")}
		if diff := cmp.Diff(want, got, equateEmpty); diff != "" {
			t.Errorf("updated (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(want, get(s, t, "alice.smith", 200), equateEmpty); diff != "" {
			t.Errorf("stored (-want +got):\n%s", diff)
		}
	})
	t.Run("disable and enable", func(t *testing.T) {
		// docs: users.md "Enabled": enabled true -> false -> true; an omitted enabled keeps its value.
		s := newUserServer(t)
		steps := []struct {
			body string
			want bool
		}{
			{`{"id":"a-0001","username":"Alice.Smith","enabled":false}`, false},
			{`{"id":"a-0001","username":"Alice.Smith","firstName":"Al"}`, false},
			{`{"id":"a-0001","username":"Alice.Smith","enabled":true}`, true},
			{`{"id":"a-0001","username":"Alice.Smith","enabled":null}`, true},
		}
		for i, st := range steps {
			if u := put(s, t, st.body, 200, ""); u.Enabled != st.want {
				t.Errorf("step %d: response enabled = %v, want %v", i, u.Enabled, st.want)
			}
			if u := get(s, t, "alice.smith", 200); u.Enabled != st.want {
				t.Errorf("step %d: stored enabled = %v, want %v", i, u.Enabled, st.want)
			}
		}
	})
	t.Run("rename", func(t *testing.T) {
		// docs: users.md: a username may change; the id stays.
		s := newUserServer(t)
		u := put(s, t, `{"id":"a-0001","username":"alice.jones"}`, 200, "")
		if u.ID != "a-0001" || u.Username != "alice.jones" {
			t.Errorf("renamed = %+v", u)
		}
		get(s, t, "Alice.Jones", 200)
		get(s, t, "alice.smith", 404)
		// The case of its own username.
		if u := put(s, t, `{"id":"a-0001","username":"ALICE.JONES"}`, 200, ""); u.Username != "ALICE.JONES" {
			t.Errorf("case-only rename = %q", u.Username)
		}
		// To a taken one: 400, nothing changed.
		put(s, t, `{"id":"a-0001","username":"BOB/OPS+1@example.com"}`, 400, httpx.CodeDuplicateUsername)
		get(s, t, "alice.jones", 200)
		// To carol's username, taken only in community B: fine.
		put(s, t, `{"id":"a-0001","username":"carol"}`, 200, "")
	})
	t.Run("errors", func(t *testing.T) {
		s := newUserServer(t)
		put(s, t, `{"id":"nope","username":"x"}`, 404, httpx.CodeUserNotFound)
		// docs: tenancy.md: another community's user is a 404.
		put(s, t, `{"id":"b-0001","username":"carol"}`, 404, httpx.CodeUserNotFound)
		// docs: users.md: id and username required on update.
		put(s, t, `{"username":"Alice.Smith"}`, 400, httpx.CodeInvalidField)
		put(s, t, `{"id":"a-0001"}`, 400, httpx.CodeInvalidField)
		put(s, t, `{"id":"a-0001","username":"Alice.Smith","email":"bad"}`, 400, httpx.CodeInvalidField)
		put(s, t, `{"id":"a-0001","username":"Alice.Smith","enabled":0}`, 400, httpx.CodeMalformedRequest)
		r := req{method: http.MethodPut, path: "/v1/users", body: `{"id":"a-0001","username":"x"}`, contentType: "text/json"}
		checkUserResponse(t, r, s.do(t, r), 415, httpx.CodeUnsupportedMediaType)
		want := apitest.UserFixture().Communities[0].Users[0]
		if diff := cmp.Diff(want, get(s, t, "alice.smith", 200), equateEmpty); diff != "" {
			t.Errorf("failed updates changed alice (-want +got):\n%s", diff)
		}
	})
}

func TestUsersAuthentication(t *testing.T) {
	s := newUserServer(t)
	get := req{method: http.MethodGet, path: "/v1/users/username/alice.smith"}
	with := func(account, key string, header map[string]string) req {
		r := get
		r.account, r.key, r.header = account, key, header
		return r
	}
	failures := []struct {
		name string
		r    req
	}{
		{"no headers", with("-", "-", nil)},
		{"no key", with(apitest.AccountA, "-", nil)},
		{"no account", with("-", apitest.KeyA, nil)},
		{"empty key", with(apitest.AccountA, "-", map[string]string{"Service-API-Key": ""})},
		{"unknown account", with("sa-nobody", apitest.KeyA, nil)},
		{"wrong key", with(apitest.AccountA, "fixture-wrong-key", nil)},
		{"another account's key", with(apitest.AccountA, apitest.KeyB, nil)},
		// docs: users.md: a deactivated key is refused like any other.
		{"deactivated key", with(apitest.AccountA, apitest.KeyAOld, nil)},
		{"account id in another case", with(strings.ToUpper(apitest.AccountA), apitest.KeyA, nil)},
		// docs: users.md "Authentication" rule 1: outside the allowlist, even with the correct key.
		{"outside the allowlist", with(apitest.AccountLock, apitest.KeyLocked, nil)},
		// docs: users.md: without trusted proxies X-Forwarded-For is ignored.
		{"spoofed X-Forwarded-For", with(apitest.AccountLock, apitest.KeyLocked, map[string]string{"X-Forwarded-For": "203.0.113.7"})},
		{"bearer token instead", with("-", "-", map[string]string{"Authorization": "Bearer " + apitest.KeyA})},
	}
	var first []byte
	for _, tt := range failures {
		t.Run(tt.name, func(t *testing.T) {
			got := s.do(t, tt.r)
			checkUserResponse(t, tt.r, got, 401, httpx.CodeUnauthorized)
			// docs: users.md: one and the same body whichever part failed.
			if first == nil {
				first = got.body
			} else if !bytes.Equal(first, got.body) {
				t.Errorf("401 body %s differs from %s", got.body, first)
			}
			if h := got.header.Get("WWW-Authenticate"); h != "Service-API-Key" {
				t.Errorf("WWW-Authenticate = %q", h)
			}
		})
	}
	t.Run("log says why, never the key", func(t *testing.T) {
		logs := s.logs.String()
		for _, want := range []string{"the key is deactivated", "unknown service account", "outside its allowlist", "matches none of its keys", "are both required"} {
			if !strings.Contains(logs, want) {
				t.Errorf("log lacks %q:\n%s", want, logs)
			}
		}
		for _, secret := range []string{apitest.KeyA, apitest.KeyAOld, apitest.KeyB, apitest.KeyLocked, "fixture-wrong-key"} {
			if strings.Contains(logs, secret) {
				t.Errorf("log holds a key:\n%s", logs)
			}
		}
	})
	t.Run("every operation needs authentication", func(t *testing.T) {
		for _, r := range []req{
			{method: http.MethodPost, path: "/v1/users", body: `{"username":"x"}`, account: "-"},
			{method: http.MethodPut, path: "/v1/users", body: `{"id":"a-0001","username":"x"}`, key: "wrong"},
			// Authentication comes before the body is looked at.
			{method: http.MethodPost, path: "/v1/users", body: `not json`, contentType: "text/plain", key: "wrong"},
		} {
			got := s.do(t, r)
			checkUserResponse(t, r, got, 401, httpx.CodeUnauthorized)
			if !bytes.Equal(first, got.body) {
				t.Errorf("401 body %s differs from %s", got.body, first)
			}
		}
	})
}

func TestUsersAllowlist(t *testing.T) {
	// The test server's peer is 127.0.0.1: trusted as a proxy or not.
	behindProxy := func(o *users.Options) {
		o.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32"), netip.MustParsePrefix("10.0.0.0/8")}
	}
	direct := newUserServer(t)
	proxied := newUserServer(t, behindProxy)
	tests := []struct {
		name   string
		s      *userServer
		xff    string
		status int
	}{
		{"direct peer outside the list", direct, "", 401},
		{"direct, header ignored", direct, "203.0.113.9", 401},
		{"proxied client inside the list", proxied, "203.0.113.9", 200},
		{"proxied client through two trusted hops", proxied, "203.0.113.9, 10.1.1.1", 200},
		{"proxied IPv6 client", proxied, "2001:db8::1", 200},
		{"proxied IPv4-mapped client", proxied, "::ffff:203.0.113.9", 200},
		// The right-most untrusted entry counts: a client cannot prepend its way in.
		{"client-prepended entry", proxied, "203.0.113.9, 198.51.100.1", 401},
		{"proxied client outside the list", proxied, "198.51.100.1", 401},
		{"malformed entry fails closed", proxied, "203.0.113.9, garbage", 401},
		{"no header behind proxy: the proxy itself", proxied, "", 401},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := req{method: http.MethodGet, path: "/v1/users/username/alice.smith", account: apitest.AccountLock, key: apitest.KeyLocked}
			if tt.xff != "" {
				r.header = map[string]string{"X-Forwarded-For": tt.xff}
			}
			code := ""
			if tt.status == 401 {
				code = httpx.CodeUnauthorized
			}
			checkUserResponse(t, r, tt.s.do(t, r), tt.status, code)
		})
	}
	t.Run("accounts without a list ignore addresses", func(t *testing.T) {
		r := req{method: http.MethodGet, path: "/v1/users/username/alice.smith", header: map[string]string{"X-Forwarded-For": "garbage"}}
		checkUserResponse(t, r, proxied.do(t, r), 200, "")
	})
}

func TestUsersRoutes(t *testing.T) {
	s := newUserServer(t)
	tests := []struct {
		name   string
		r      req
		status int
		code   string
		allow  string
	}{
		{"GET on /v1/users", req{method: http.MethodGet, path: "/v1/users"}, 405, httpx.CodeMethodNotAllowed, "POST, PUT"},
		{"DELETE on /v1/users", req{method: http.MethodDelete, path: "/v1/users"}, 405, httpx.CodeMethodNotAllowed, "POST, PUT"},
		{"PATCH on /v1/users", req{method: http.MethodPatch, path: "/v1/users", body: `{}`}, 405, httpx.CodeMethodNotAllowed, "POST, PUT"},
		{"POST on a user", req{method: http.MethodPost, path: "/v1/users/username/alice", body: `{}`}, 405, httpx.CodeMethodNotAllowed, "GET, HEAD"},
		{"DELETE on a user", req{method: http.MethodDelete, path: "/v1/users/username/alice"}, 405, httpx.CodeMethodNotAllowed, "GET, HEAD"},
		{"POST on the document", req{method: http.MethodPost, path: "/v1/openapi.json", body: `{}`}, 405, httpx.CodeMethodNotAllowed, "GET, HEAD"},
		{"unknown path", req{method: http.MethodGet, path: "/v1/groups"}, 404, httpx.CodeNotFound, ""},
		{"empty username", req{method: http.MethodGet, path: "/v1/users/username/"}, 404, httpx.CodeNotFound, ""},
		{"trailing slash", req{method: http.MethodPost, path: "/v1/users/", body: `{}`}, 404, httpx.CodeNotFound, ""},
		{"version root", req{method: http.MethodGet, path: "/v1"}, 404, httpx.CodeNotFound, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := s.do(t, tt.r)
			checkUserResponse(t, tt.r, got, tt.status, tt.code)
			if a := got.header.Get("Allow"); a != tt.allow {
				t.Errorf("Allow = %q, want %q", a, tt.allow)
			}
		})
	}
}

func TestUsersOpenAPIDocument(t *testing.T) {
	s := newUserServer(t)
	r := req{method: http.MethodGet, path: "/v1/openapi.json", account: "-", key: "-"}
	got := s.do(t, r)
	if got.status != 200 || got.header.Get("Content-Type") != "application/json" {
		t.Fatalf("GET /v1/openapi.json = %d %s", got.status, got.header.Get("Content-Type"))
	}
	if !bytes.Equal(got.body, users.OpenAPI()) {
		t.Error("served document differs from UserOpenAPI()")
	}
	var doc struct {
		OpenAPI string `json:"openapi"`
		Info    struct {
			Version string `json:"version"`
		} `json:"info"`
		Paths      map[string]map[string]json.RawMessage `json:"paths"`
		Components struct {
			Schemas         map[string]json.RawMessage `json:"schemas"`
			SecuritySchemes map[string]struct {
				Type, In, Name string
			} `json:"securitySchemes"`
		} `json:"components"`
	}
	if err := json.Unmarshal(got.body, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.OpenAPI != "3.1.0" {
		t.Errorf("openapi = %q", doc.OpenAPI)
	}
	var paths []string
	for p, ops := range doc.Paths {
		for m := range ops {
			paths = append(paths, strings.ToUpper(m)+" "+p)
		}
	}
	slices.Sort(paths)
	want := []string{"GET /v1/openapi.json", "GET /v1/users/username/{username}", "POST /v1/users", "PUT /v1/users"}
	if diff := cmp.Diff(want, paths); diff != "" {
		t.Errorf("operations (-want +got):\n%s", diff)
	}
	var headers []string
	for _, sch := range doc.Components.SecuritySchemes {
		if sch.Type == "apiKey" && sch.In == "header" {
			headers = append(headers, sch.Name)
		}
	}
	slices.Sort(headers)
	if diff := cmp.Diff([]string{"Service-API-Key", "Service-Account-ID"}, headers); diff != "" {
		t.Errorf("security header schemes (-want +got):\n%s", diff)
	}
	// Every schema compiles (format assertions on).
	for name := range doc.Components.Schemas {
		apitest.CompileSchema(t, users.OpenAPI(), "#/components/schemas/"+name)
	}
	// The error code enum lists every code the user API answers.
	var errSchema struct {
		Properties struct {
			Code struct {
				Enum []string `json:"enum"`
			} `json:"code"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(doc.Components.Schemas["Error"], &errSchema); err != nil {
		t.Fatal(err)
	}
	codes := []string{
		httpx.CodeInvalidParameter, httpx.CodeInvalidField, httpx.CodeMalformedRequest,
		httpx.CodeDuplicateUsername, httpx.CodeDuplicateID, httpx.CodeUnauthorized, httpx.CodeNotFound,
		httpx.CodeUserNotFound, httpx.CodeMethodNotAllowed, httpx.CodePayloadTooLarge,
		httpx.CodeUnsupportedMediaType, httpx.CodeInternal, httpx.CodeVersionMismatch, httpx.CodeUnavailable,
	}
	if diff := cmp.Diff(codes, errSchema.Properties.Code.Enum, cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
		t.Errorf("Error code enum (-want +got):\n%s", diff)
	}
	// A valid create body matches the request schema, an invalid one not.
	apitest.CheckSchema(t, users.OpenAPI(), "UserCreate", []byte(`{"username":"x","organisationsUnits":[{"code":"A"}],"enabled":null}`))
	apitest.CheckSchema(t, users.OpenAPI(), "UserUpdate", []byte(`{"id":"a","username":"x","email":null}`))
}

func TestUsersConcurrentCreate(t *testing.T) {
	// docs: users.md: concurrent requests never produce two users with one username.
	s := newUserServer(t)
	const n = 64
	statuses := make([]int, n)
	bodies := make([][]byte, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			r := req{method: http.MethodPost, path: "/v1/users", body: fmt.Sprintf(`{"username":"Race.%s","firstName":"%d"}`, []string{"winner", "WINNER"}[i%2], i)}
			got := s.do(t, r)
			statuses[i], bodies[i] = got.status, got.body
		}()
	}
	close(start)
	wg.Wait()
	ok, dup := 0, 0
	for i, st := range statuses {
		switch {
		case st == 200:
			ok++
		case st == 400 && bytes.Contains(bodies[i], []byte(httpx.CodeDuplicateUsername)):
			dup++
		default:
			t.Errorf("request %d: %d %s", i, st, bodies[i])
		}
	}
	if ok != 1 || dup != n-1 {
		t.Fatalf("%d creates succeeded, %d were duplicates; want 1 and %d", ok, dup, n-1)
	}
}

// failingUsers fails every call, as a database that is down would.
type failingUsers struct{ user.Store }

var errDatabase = errors.New("pq: connection refused to 10.0.0.7:5432")

func (failingUsers) UserByUsername(context.Context, string, string) (user.User, error) {
	return user.User{}, errDatabase
}

func (failingUsers) CreateUser(context.Context, string, user.User) (user.User, error) {
	return user.User{}, errDatabase
}

type failingAccounts struct{}

func (failingAccounts) ServiceAccount(context.Context, string) (auth.ServiceAccount, error) {
	return auth.ServiceAccount{}, errDatabase
}

func TestUsersInternalErrors(t *testing.T) {
	// docs: errors.md: a 500 never shows internals; the cause is logged.
	tests := []struct {
		name   string
		change func(*users.Options)
		r      req
	}{
		{"user store down on get", func(o *users.Options) { o.Users = user.NewService(failingUsers{o.Users.Store}) },
			req{method: http.MethodGet, path: "/v1/users/username/alice"}},
		{"user store down on create", func(o *users.Options) { o.Users = user.NewService(failingUsers{o.Users.Store}) },
			req{method: http.MethodPost, path: "/v1/users", body: `{"username":"x"}`}},
		// A key store failure is a 500, not a 401.
		{"key store down", func(o *users.Options) { o.Accounts = failingAccounts{} },
			req{method: http.MethodGet, path: "/v1/users/username/alice"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newUserServer(t, tt.change)
			got := s.do(t, tt.r)
			checkUserResponse(t, tt.r, got, 500, httpx.CodeInternal)
			if want := `{"code":"INTERNAL_ERROR","message":"internal server error"}` + "\n"; string(got.body) != want {
				t.Errorf("body = %s, want %s", got.body, want)
			}
			if !strings.Contains(s.logs.String(), "connection refused") {
				t.Errorf("the cause was not logged:\n%s", s.logs.String())
			}
		})
	}
}

func TestMountUsersPanics(t *testing.T) {
	store := memstore.New()
	for name, opts := range map[string]users.Options{
		"no users":    {Accounts: store},
		"no store":    {Users: &user.Service{}, Accounts: store},
		"no accounts": {Users: user.NewService(store)},
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Error("MountUsers did not panic")
				}
			}()
			users.Mount(http.NewServeMux(), opts)
		})
	}
}

func ExampleMount() {
	// A store with one community and a service account holding one key.
	store := memstore.New()
	key, hash := auth.NewAPIKey()
	if err := store.AddServiceAccount(auth.ServiceAccount{ID: "sa-demo", Community: "demo", Keys: []auth.Key{{Hash: hash, Active: true}}}); err != nil {
		panic(err)
	}
	mux := http.NewServeMux()
	users.Mount(mux, users.Options{Users: user.NewService(store), Accounts: store})
	srv := httptest.NewServer(mux)
	defer srv.Close()

	send := func(method, path, body string) {
		r, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		r.Header.Set("Service-Account-ID", "sa-demo")
		r.Header.Set("Service-API-Key", key)
		if body != "" {
			r.Header.Set("Content-Type", "application/json; charset=utf-8")
		}
		resp, err := srv.Client().Do(r)
		if err != nil {
			panic(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		fmt.Print(resp.StatusCode, " ", string(b))
	}
	// The pre-check, then a create, then an update.
	send("GET", "/v1/users/username/jdoe", "")
	send("POST", "/v1/users", `{"id":"hr-1","username":"jdoe","roles":[{"code":"BUYER"}]}`)
	send("PUT", "/v1/users", `{"id":"hr-1","username":"JDoe","enabled":false}`)
	// Output:
	// 404 {"code":"USER_NOT_FOUND","message":"user not found"}
	// 200 {"id":"hr-1","username":"jdoe","enabled":true,"roles":[{"code":"BUYER"}]}
	// 200 {"id":"hr-1","username":"JDoe","enabled":false,"roles":[{"code":"BUYER"}]}
}

// userOr returns s, or def when s is empty.
func userOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// The served document passes the lint of every served document: it stands
// on its own for a tool given its URL (apitest.LintDocument).
func TestOpenAPIDocumentValid(t *testing.T) {
	for _, p := range apitest.LintDocument(t, "users.json", users.OpenAPI()) {
		t.Error(p)
	}
}
