package scim_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/procurekit/procure/auth"
	"github.com/procurekit/procure/datafile"
	"github.com/procurekit/procure/httpapi/internal/apitest"
	"github.com/procurekit/procure/httpapi/internal/httpx"
	"github.com/procurekit/procure/httpapi/scim"
	"github.com/procurekit/procure/httpapi/users"
	"github.com/procurekit/procure/internal/syncbuf"
	"github.com/procurekit/procure/memstore"
	"github.com/procurekit/procure/user"
)

// The served documents, for the validating proxy.
var (
	scimAPI = apitest.Document("scim.json", scim.OpenAPI())
	userAPI = apitest.Document("users.json", users.OpenAPI())
)

// scimServer is a real HTTP server with the SCIM endpoint and the user
// API over one store.
type scimServer struct {
	*httptest.Server
	store user.Store
	logs  *syncbuf.Buffer
}

// scimAccounts is what the SCIM endpoint needs of a credential store.
type scimAccounts interface {
	auth.KeyStore
	auth.KeyHashStore
}

// scimFixture is userFixture with an external id on alice.
func scimFixture() *datafile.File {
	f := apitest.UserFixture()
	f.Communities[0].Users[0].ExternalID = "E-1"
	return f
}

// newSCIMServer serves the SCIM endpoint and /v1/users over a memstore
// holding scimFixture.
func newSCIMServer(tb testing.TB) *scimServer {
	tb.Helper()
	store, err := memstore.LoadReader(scimFixture().Reader())
	if err != nil {
		tb.Fatal(err)
	}
	return serveSCIM(tb, store, store)
}

// serveSCIM mounts SCIM and /v1/users over store and accounts.
func serveSCIM(tb testing.TB, store user.Store, accounts scimAccounts) *scimServer {
	tb.Helper()
	logs := &syncbuf.Buffer{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	svc := user.NewService(store)
	mux := http.NewServeMux()
	scim.Mount(mux, scim.Options{Users: svc, Accounts: accounts, Logger: log})
	users.Mount(mux, users.Options{Users: svc, Accounts: accounts, Logger: log})
	srv := httptest.NewServer(apitest.ValidatedBy(tb, mux, scimAPI, userAPI))
	tb.Cleanup(srv.Close)
	return &scimServer{Server: srv, store: store, logs: logs}
}

// scimReq is a SCIM request; zero fields take defaults.
type scimReq struct {
	method, path, body string
	contentType        string // default application/scim+json when body is set; "-" for none
	key                string // default apitest.KeyA; "-" for no Authorization header
	header             map[string]string
}

type scimResp struct {
	status int
	header http.Header
	body   []byte
}

func (s *scimServer) do(tb testing.TB, r scimReq) scimResp {
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
		hr.Header.Set("Content-Type", "application/scim+json; charset=utf-8")
	}
	switch r.key {
	case "-":
	case "":
		hr.Header.Set("Authorization", "Bearer "+apitest.KeyA)
	default:
		hr.Header.Set("Authorization", "Bearer "+r.key)
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
	return scimResp{status: resp.StatusCode, header: resp.Header, body: b}
}

// v1 sends a request to /v1/users, the user API mounted beside SCIM over
// the same store, as apitest.AccountA, and fails tb unless the answer has
// status and, for an error, code. It returns the answer's ETag and, for a
// 200, the user.
func (s *scimServer) v1(tb testing.TB, method, body string, header map[string]string, status int, code string) (string, user.User) {
	tb.Helper()
	hr, err := http.NewRequest(method, s.URL+"/v1/users", strings.NewReader(body))
	if err != nil {
		tb.Fatal(err)
	}
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set(auth.HeaderAccountID, apitest.AccountA)
	hr.Header.Set(auth.HeaderAPIKey, apitest.KeyA)
	for k, v := range header {
		hr.Header.Set(k, v)
	}
	resp, err := s.Client().Do(hr)
	if err != nil {
		tb.Fatalf("%s /v1/users: %v", method, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatal(err)
	}
	if resp.StatusCode != status {
		tb.Fatalf("%s /v1/users = %d %s; want %d", method, resp.StatusCode, b, status)
	}
	var u user.User
	if status == http.StatusOK {
		err = json.Unmarshal(b, &u)
	} else {
		var e httpx.ErrorBody
		if err = json.Unmarshal(b, &e); err == nil && e.Code != code {
			tb.Errorf("%s /v1/users: code %q (%s); want %q", method, e.Code, e.Message, code)
		}
	}
	if err != nil {
		tb.Fatalf("%s /v1/users: %v: %s", method, err, b)
	}
	return resp.Header.Get("ETag"), u
}

// scimOperationPath maps a request path to its template in scim.json.
func scimOperationPath(path string) string {
	path, _, _ = strings.Cut(path, "?")
	switch {
	case strings.HasPrefix(path, "/scim/v2/Users/"):
		return "/scim/v2/Users/{id}"
	case strings.HasPrefix(path, "/scim/v2/ResourceTypes/"):
		return "/scim/v2/ResourceTypes/{name}"
	case strings.HasPrefix(path, "/scim/v2/Schemas/"):
		return "/scim/v2/Schemas/{id}"
	}
	return path
}

// scimResponseSchema is the pointer to the schema of an operation's
// response in scim.json; it fails tb when the status is not documented.
func scimResponseSchema(tb testing.TB, path, method string, status int) string {
	tb.Helper()
	var d struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(scim.OpenAPI(), &d); err != nil {
		tb.Fatal(err)
	}
	var op struct {
		Responses map[string]struct {
			Ref string `json:"$ref"`
		} `json:"responses"`
	}
	raw, ok := d.Paths[path][method]
	if !ok {
		tb.Fatalf("scim.json has no operation %s %s", method, path)
	}
	if err := json.Unmarshal(raw, &op); err != nil {
		tb.Fatal(err)
	}
	code := strconv.Itoa(status)
	resp, ok := op.Responses[code]
	if !ok {
		tb.Fatalf("scim.json has no response %d for %s %s", status, method, path)
	}
	base := "#/paths/" + apitest.EscapePointer(path) + "/" + method + "/responses/" + code
	if resp.Ref != "" {
		base = resp.Ref
	}
	return base + "/content/application~1scim+json/schema"
}

// scimHasOperation reports whether scim.json describes the operation; a
// 501 for a method it does not is checked against the shared
// NotImplemented response.
func scimHasOperation(tb testing.TB, path, method string) bool {
	tb.Helper()
	var d struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(scim.OpenAPI(), &d); err != nil {
		tb.Fatal(err)
	}
	_, ok := d.Paths[path][method]
	return ok
}

// check fails tb unless the response has the status, is SCIM JSON (but a
// 204), matches scim.json, and for an error carries scimType.
func (r scimReq) check(tb testing.TB, got scimResp, status int, scimType string) {
	tb.Helper()
	if got.status != status {
		tb.Fatalf("%s %s = %d %s; want %d", r.method, r.path, got.status, got.body, status)
	}
	if status == http.StatusNoContent || r.method == http.MethodHead {
		return
	}
	if ct := got.header.Get("Content-Type"); ct != "application/scim+json" {
		tb.Errorf("%s %s: Content-Type %q; want application/scim+json", r.method, r.path, ct)
	}
	pointer := "#/components/responses/NotImplemented/content/application~1scim+json/schema"
	if status != http.StatusNotImplemented || scimHasOperation(tb, scimOperationPath(r.path), strings.ToLower(r.method)) {
		pointer = scimResponseSchema(tb, scimOperationPath(r.path), strings.ToLower(r.method), status)
	}
	apitest.CheckSchema(tb, scim.OpenAPI(), pointer, got.body)
	if status >= 400 {
		var e struct {
			Status   string `json:"status"`
			ScimType string `json:"scimType"`
		}
		if err := json.Unmarshal(got.body, &e); err != nil {
			tb.Fatal(err)
		}
		if e.Status != strconv.Itoa(status) || e.ScimType != scimType {
			tb.Errorf("%s %s: error status %q scimType %q; want %q, %q (%s)", r.method, r.path, e.Status, e.ScimType, strconv.Itoa(status), scimType, got.body)
		}
	}
}

// scimUser is the part of a SCIM User the tests read.
type scimUserBody struct {
	Schemas    []string `json:"schemas"`
	ID         string   `json:"id"`
	ExternalID string   `json:"externalId"`
	UserName   string   `json:"userName"`
	Name       *struct {
		GivenName  string `json:"givenName"`
		FamilyName string `json:"familyName"`
	} `json:"name"`
	DisplayName string `json:"displayName"`
	Active      bool   `json:"active"`
	Emails      []struct {
		Value   string `json:"value"`
		Type    string `json:"type"`
		Primary bool   `json:"primary"`
	} `json:"emails"`
	PhoneNumbers []struct {
		Value string `json:"value"`
	} `json:"phoneNumbers"`
	Extension *struct {
		OrganisationUnits []user.Code      `json:"organisationUnits"`
		Roles             []user.Code      `json:"roleCodes"`
		BuyerGroups       []user.Code      `json:"buyerGroups"`
		ApproverGroups    []user.Code      `json:"approverGroups"`
		Attributes        []user.Attribute `json:"attributes"`
	} `json:"urn:procurekit:params:scim:schemas:extension:procure:2.0:User"`
	Meta struct {
		ResourceType string `json:"resourceType"`
		Location     string `json:"location"`
		Version      string `json:"version"`
	} `json:"meta"`
}

func decodeSCIMUser(tb testing.TB, body []byte) scimUserBody {
	tb.Helper()
	var u scimUserBody
	if err := json.Unmarshal(body, &u); err != nil {
		tb.Fatalf("SCIM user: %v: %s", err, body)
	}
	return u
}

type scimList struct {
	TotalResults int            `json:"totalResults"`
	StartIndex   int            `json:"startIndex"`
	ItemsPerPage int            `json:"itemsPerPage"`
	Resources    []scimUserBody `json:"Resources"`
}

func decodeSCIMList(tb testing.TB, body []byte) scimList {
	tb.Helper()
	var l scimList
	if err := json.Unmarshal(body, &l); err != nil {
		tb.Fatalf("SCIM list: %v: %s", err, body)
	}
	return l
}

// storedUser reads a user straight from the store.
func (s *scimServer) storedUser(tb testing.TB, community, id string) user.User {
	tb.Helper()
	u, err := s.store.UserByID(tb.Context(), community, id)
	if err != nil {
		tb.Fatalf("UserByID(%s): %v", id, err)
	}
	return u
}

// Authentication: the bearer key alone names the account; every failure
// is one and the same 401 (docs: users.md "Authentication").
func TestSCIMAuthentication(t *testing.T) {
	s := newSCIMServer(t)
	var first []byte
	for _, tt := range []struct {
		name   string
		header map[string]string
		key    string
	}{
		{"no header", nil, "-"},
		{"other scheme", map[string]string{"Authorization": "Basic " + apitest.KeyA}, "-"},
		{"empty key", map[string]string{"Authorization": "Bearer "}, "-"},
		{"unknown key", nil, "not-a-key"},
		{"deactivated key", nil, apitest.KeyAOld},
		{"account id instead of key", nil, apitest.AccountA},
		{"allowlist: client outside", nil, apitest.KeyLocked},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := scimReq{method: http.MethodGet, path: "/scim/v2/Users", key: tt.key, header: tt.header}
			got := s.do(t, r)
			r.check(t, got, 401, "")
			if got.header.Get("WWW-Authenticate") == "" {
				t.Error("no WWW-Authenticate header")
			}
			if first == nil {
				first = got.body
			} else if string(got.body) != string(first) {
				t.Errorf("401 body %s differs from %s", got.body, first)
			}
		})
	}
	if strings.Contains(s.logs.String(), apitest.KeyAOld) || strings.Contains(s.logs.String(), apitest.KeyLocked) {
		t.Error("a key appears in the log")
	}
	// The key's account scopes the data: B's key sees B's users only.
	r := scimReq{method: http.MethodGet, path: "/scim/v2/Users", key: apitest.KeyB}
	got := s.do(t, r)
	r.check(t, got, 200, "")
	l := decodeSCIMList(t, got.body)
	if l.TotalResults != 1 || l.Resources[0].UserName != "carol" {
		t.Errorf("community B sees %+v; want carol only", l)
	}
	// Discovery needs no credentials.
	r = scimReq{method: http.MethodGet, path: "/scim/v2/ServiceProviderConfig", key: "-"}
	r.check(t, s.do(t, r), 200, "")
}

// The allowlist admits the account's networks (the test client is
// 127.0.0.1, outside the locked account's list: see above); here a
// key whose account allows loopback gets in.
func TestSCIMAllowlistAdmits(t *testing.T) {
	store, err := memstore.LoadReader(scimFixture().Reader())
	if err != nil {
		t.Fatal(err)
	}
	acc, err := store.ServiceAccount(t.Context(), apitest.AccountLock)
	if err != nil {
		t.Fatal(err)
	}
	acc.AllowedIPs = append(acc.AllowedIPs, netip.MustParsePrefix("127.0.0.0/8"))
	if err := store.AddServiceAccount(acc); err != nil {
		t.Fatal(err)
	}
	s := serveSCIM(t, store, store)
	r := scimReq{method: http.MethodGet, path: "/scim/v2/Users", key: apitest.KeyLocked}
	r.check(t, s.do(t, r), 200, "")
}

func TestSCIMDiscovery(t *testing.T) {
	s := newSCIMServer(t)
	for _, path := range []string{"/scim/v2/ServiceProviderConfig", "/scim/v2/ResourceTypes", "/scim/v2/ResourceTypes/User",
		"/scim/v2/Schemas", "/scim/v2/Schemas/urn:ietf:params:scim:schemas:core:2.0:User",
		"/scim/v2/Schemas/" + scim.ExtensionSchema} {
		r := scimReq{method: http.MethodGet, path: path}
		got := s.do(t, r)
		r.check(t, got, 200, "")
		if !strings.Contains(string(got.body), `"location":"`+s.URL+"/scim/v2/") {
			t.Errorf("%s: meta.location is not under %s/scim/v2: %s", path, s.URL, got.body)
		}
	}
	for _, path := range []string{"/scim/v2/ResourceTypes/Group", "/scim/v2/Schemas/urn:nope"} {
		r := scimReq{method: http.MethodGet, path: path}
		r.check(t, s.do(t, r), 404, "")
	}
	// The ServiceProviderConfig documents the DELETE deviation.
	got := s.do(t, scimReq{method: http.MethodGet, path: "/scim/v2/ServiceProviderConfig"})
	if !strings.Contains(string(got.body), "disables the user") {
		t.Errorf("ServiceProviderConfig does not document DELETE disabling: %s", got.body)
	}
	// The OpenAPI document is served, and documents the deviation too.
	res := s.do(t, scimReq{method: http.MethodGet, path: "/scim/v2/openapi.json", key: "-"})
	if res.status != 200 || !strings.Contains(string(res.body), "**disables**") {
		t.Errorf("openapi.json: %d, deviation documented: %v", res.status, strings.Contains(string(res.body), "**disables**"))
	}
}

// An unsupported method is a 501 (RFC 7644 3.12 lists no 405), with the
// SCIM error body and an Allow header.
func TestSCIMRoutes(t *testing.T) {
	s := newSCIMServer(t)
	for _, tt := range []struct {
		method, path string
		status       int
		allow        string
	}{
		{http.MethodDelete, "/scim/v2/Users", 501, "GET, HEAD, POST"},
		{http.MethodPost, "/scim/v2/Users/a-0001", 501, "DELETE, GET, HEAD, PATCH, PUT"},
		{http.MethodPost, "/scim/v2/ServiceProviderConfig", 501, "GET, HEAD"},
		{"PROPFIND", "/scim/v2/Users", 501, "GET, HEAD, POST"},
	} {
		r := scimReq{method: tt.method, path: tt.path, body: "{}"}
		got := s.do(t, r)
		r.check(t, got, tt.status, "")
		if a := got.header.Get("Allow"); a != tt.allow {
			t.Errorf("%s %s: Allow %q; want %q", tt.method, tt.path, a, tt.allow)
		}
	}
	got := s.do(t, scimReq{method: http.MethodGet, path: "/scim/v2/Groups"})
	if got.status != 404 || got.header.Get("Content-Type") != "application/scim+json" {
		t.Errorf("GET /Groups = %d %q; want a SCIM 404", got.status, got.header.Get("Content-Type"))
	}
	apitest.CheckSchema(t, scim.OpenAPI(), "#/components/responses/NotFound/content/application~1scim+json/schema", got.body)
}

// GET /Users: filters, paging and the ListResponse.
func TestSCIMListUsers(t *testing.T) {
	s := newSCIMServer(t)
	for _, tt := range []struct {
		name, query string
		status      int
		scimType    string
		want        []string // userNames, in order
		total       int
		start       int
	}{
		{"all", "", 200, "", []string{"Alice.Smith", "bob/ops+1@example.com"}, 2, 1},
		{"userName, another case", `filter=userName eq "alice.smith"`, 200, "", []string{"Alice.Smith"}, 1, 1},
		{"userName, operator and attribute in capitals", `filter=USERNAME EQ "ALICE.SMITH"`, 200, "", []string{"Alice.Smith"}, 1, 1},
		{"userName with the core URN", `filter=urn:ietf:params:scim:schemas:core:2.0:User:userName eq "Alice.Smith"`, 200, "", []string{"Alice.Smith"}, 1, 1},
		{"userName with escapes", `filter=userName eq "bob\/ops+1@example.com"`, 200, "", []string{"bob/ops+1@example.com"}, 1, 1},
		{"userName that does not exist", `filter=userName eq "nobody@example.com"`, 200, "", nil, 0, 1},
		{"userName of another community", `filter=userName eq "carol"`, 200, "", nil, 0, 1},
		{"empty userName", `filter=userName eq ""`, 200, "", nil, 0, 1},
		{"id", `filter=id eq "a-0002"`, 200, "", []string{"bob/ops+1@example.com"}, 1, 1},
		{"id of another community", `filter=id eq "b-0001"`, 200, "", nil, 0, 1},
		{"externalId", `filter=externalId eq "E-1"`, 200, "", []string{"Alice.Smith"}, 1, 1},
		{"externalId is case-exact", `filter=externalId eq "e-1"`, 200, "", nil, 0, 1},
		{"and", `filter=userName eq "alice.smith" and externalId eq "E-1"`, 200, "", []string{"Alice.Smith"}, 1, 1},
		{"and, not matching", `filter=userName eq "alice.smith" and externalId eq "E-2"`, 200, "", nil, 0, 1},
		{"and, contradiction", `filter=id eq "a-0001" and id eq "a-0002"`, 200, "", nil, 0, 1},
		{"count", "count=1", 200, "", []string{"Alice.Smith"}, 2, 1},
		{"startIndex", "startIndex=2&count=10", 200, "", []string{"bob/ops+1@example.com"}, 2, 2},
		{"startIndex below 1", "startIndex=0", 200, "", []string{"Alice.Smith", "bob/ops+1@example.com"}, 2, 1},
		{"count 0", "count=0", 200, "", nil, 2, 1},
		{"startIndex past a single match", `filter=userName eq "alice.smith"&startIndex=2`, 200, "", nil, 1, 2},
		{"count not a number", "count=ten", 400, "invalidValue", nil, 0, 0},
		{"or", `filter=userName eq "a" or userName eq "b"`, 400, "invalidFilter", nil, 0, 0},
		{"not", `filter=not (userName eq "a")`, 400, "invalidFilter", nil, 0, 0},
		{"and binds tighter than or", `filter=id eq "a-0001" and userName eq "Alice.Smith" or id eq "x"`, 400, "invalidFilter", nil, 0, 0},
		{"value path", `filter=emails[type eq "work"]`, 400, "invalidFilter", nil, 0, 0},
		{"unclosed group", `filter=(userName eq "a"`, 400, "invalidFilter", nil, 0, 0},
		{"group nested too deep", `filter=` + strings.Repeat("(", 40) + `id eq "a-0001"` + strings.Repeat(")", 40), 400, "invalidFilter", nil, 0, 0},
		// Item 7 of issue 19: every clause holds, the id lookup's too.
		{"id and another user's userName", `filter=id eq "a-0001" and userName eq "bob/ops+1@example.com"`, 200, "", nil, 0, 1},
		{"id and its userName", `filter=id eq "a-0001" and userName eq "ALICE.smith"`, 200, "", []string{"Alice.Smith"}, 1, 1},
		{"id and another externalId", `filter=id eq "a-0001" and externalId eq "E-2"`, 200, "", nil, 0, 1},
		{"userName and another id", `filter=userName eq "Alice.Smith" and id eq "a-0002"`, 200, "", nil, 0, 1},
		// Item 12: grouping parentheses (RFC 7644 3.4.2.2).
		{"parenthesised", `filter=(userName eq "Alice.Smith")`, 200, "", []string{"Alice.Smith"}, 1, 1},
		{"and with a group", `filter=userName eq "alice.smith" and (id eq "a-0001")`, 200, "", []string{"Alice.Smith"}, 1, 1},
		{"and with a group, not matching", `filter=userName eq "alice.smith" and (id eq "a-0002")`, 200, "", nil, 0, 1},
		{"nested groups", `filter=((externalId eq "E-1") and ((userName eq "Alice.Smith")))`, 200, "", []string{"Alice.Smith"}, 1, 1},
		{"group of externalId, listed", `filter=(externalId eq "E-1")`, 200, "", []string{"Alice.Smith"}, 1, 1},
		{"another operator", `filter=userName sw "a"`, 400, "invalidFilter", nil, 0, 0},
		{"another attribute", `filter=emails.value eq "a@example.com"`, 400, "invalidFilter", nil, 0, 0},
		{"pr", `filter=title pr`, 400, "invalidFilter", nil, 0, 0},
		{"unclosed string", `filter=userName eq "a`, 400, "invalidFilter", nil, 0, 0},
		{"number value", `filter=userName eq 5`, 400, "invalidFilter", nil, 0, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := "/scim/v2/Users"
			if tt.query != "" {
				path += "?" + encodeQuery(tt.query)
			}
			r := scimReq{method: http.MethodGet, path: path}
			got := s.do(t, r)
			r.check(t, got, tt.status, tt.scimType)
			if tt.status != 200 {
				return
			}
			l := decodeSCIMList(t, got.body)
			var names []string
			for _, u := range l.Resources {
				names = append(names, u.UserName)
			}
			if diff := cmp.Diff(tt.want, names); diff != "" || l.TotalResults != tt.total || l.StartIndex != tt.start || l.ItemsPerPage != len(names) {
				t.Errorf("total %d start %d items %d (want %d, %d, %d); userNames (-want +got):\n%s",
					l.TotalResults, l.StartIndex, l.ItemsPerPage, tt.total, tt.start, len(names), diff)
			}
		})
	}
}

// encodeQuery escapes the values of a raw a=b&c=d query.
func encodeQuery(q string) string {
	var parts []string
	for p := range strings.SplitSeq(q, "&") {
		k, v, _ := strings.Cut(p, "=")
		parts = append(parts, k+"="+url.QueryEscape(v))
	}
	return strings.Join(parts, "&")
}
