package admin_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/procurekit/procure"
	"github.com/procurekit/procure/auth"
	"github.com/procurekit/procure/datafile"
	"github.com/procurekit/procure/httpapi/admin"
	"github.com/procurekit/procure/httpapi/internal/apitest"
	"github.com/procurekit/procure/httpapi/internal/httpx"
	"github.com/procurekit/procure/httpapi/suppliers"
	"github.com/procurekit/procure/httpapi/users"
	"github.com/procurekit/procure/internal/pgtest"
	"github.com/procurekit/procure/internal/syncbuf"
	"github.com/procurekit/procure/memstore"
	"github.com/procurekit/procure/pgstore"
	"github.com/procurekit/procure/user"
)

// The admin API (docs: admin.md) over real HTTP on memstore and
// on pgstore.
// Every answer is validated against the served document, openapi.json: the
// documented response of the route and status it belongs to (a status
// the document does not list for the operation fails the test).

// TestMain stops the PostgreSQL server pgtest starts for the tests on
// pgstore.
func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// The served documents, for the validating proxy.
var (
	adminAPI    = apitest.Document("admin.json", admin.OpenAPI())
	supplierAPI = apitest.Document("suppliers.json", suppliers.OpenAPI())
	userAPI     = apitest.Document("users.json", users.OpenAPI())
)

const adminTestToken = "admin-test-token-0123456789abcdef" // a test fixture

const (
	adminSupplierID = "cf3d1382-edea-543d-9969-c5468d5c62a0" // testdata/admin-supplier.json
	otherUUID       = "8a4f4d1e-0000-4000-8000-000000000001"
)

// adminEnv is a server as examples/server runs one: the admin API on its
// own listener, the supplier and user APIs on another, one memstore, one
// captured log. Every secret the tests see is searched for in the log
// when the test ends.
type adminEnv struct {
	store   adminBackend
	admin   *httptest.Server
	public  *httptest.Server
	log     *syncbuf.Buffer
	mu      sync.Mutex
	secrets []string
}

// adminBackend is what the server serves from: memstore and pgstore.
type adminBackend interface {
	admin.Store
	auth.TokenStore
	auth.KeyStore
	user.Store
}

// newAdminEnv serves opts over a new memstore.
func newAdminEnv(t *testing.T, opts admin.Options) *adminEnv {
	t.Helper()
	return newAdminEnvOn(t, memstore.New(), opts)
}

// forAdminStores runs f on a server over each store: memstore, and
// pgstore on a throwaway PostgreSQL.
func forAdminStores(t *testing.T, f func(t *testing.T, e *adminEnv)) {
	t.Run("memstore", func(t *testing.T) { f(t, newAdminEnv(t, admin.Options{})) })
	t.Run("pgstore", func(t *testing.T) {
		pg, err := pgstore.Open(context.Background(), pgtest.NewDatabase(t))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(pg.Close)
		f(t, newAdminEnvOn(t, pg, admin.Options{}))
	})
}

func newAdminEnvOn(t *testing.T, store adminBackend, opts admin.Options) *adminEnv {
	t.Helper()
	e := &adminEnv{store: store, log: &syncbuf.Buffer{}}
	log := slog.New(slog.NewJSONHandler(e.log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	if opts.Token == "" {
		opts.Token = adminTestToken
	}
	opts.Store, opts.Logger = e.store, log
	e.secrets = append(e.secrets, opts.Token)
	amux := http.NewServeMux()
	admin.Mount(amux, opts)
	e.admin = httptest.NewServer(apitest.ValidatedBy(t, httpx.RequestLog(log, amux), adminAPI))
	pmux := http.NewServeMux()
	suppliers.Mount(pmux, suppliers.Options{Store: e.store, Tokens: e.store, Logger: log})
	users.Mount(pmux, users.Options{Users: user.NewService(e.store), Accounts: e.store, Logger: log})
	e.public = httptest.NewServer(apitest.ValidatedBy(t, httpx.RequestLog(log, pmux), supplierAPI, userAPI))
	t.Cleanup(func() {
		e.admin.Close()
		e.public.Close()
		logged := e.log.String()
		e.mu.Lock()
		defer e.mu.Unlock()
		for _, s := range e.secrets {
			if strings.Contains(logged, s) {
				t.Errorf("a secret (%.14s...) is in the log", s)
			}
			if h := sha256.Sum256([]byte(s)); strings.Contains(logged, hex.EncodeToString(h[:])) {
				t.Errorf("the hash of a secret (%.14s...) is in the log", s)
			}
		}
	})
	return e
}

// secret records a secret the log must never hold.
func (e *adminEnv) secret(s string) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.secrets = append(e.secrets, s)
	return s
}

type adminAnswer struct {
	status int
	header http.Header
	body   []byte
}

func (a adminAnswer) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(a.body, &m); err != nil {
		t.Fatalf("status %d: body is not a JSON object: %v\n%s", a.status, err, a.body)
	}
	return m
}

// want fails t unless the answer has the status and, for an error, the
// code and a message matching msg (a regular expression; "" for any).
func (a adminAnswer) want(t *testing.T, status int, code, msg string) {
	t.Helper()
	if a.status != status {
		t.Fatalf("status %d, want %d: %s", a.status, status, a.body)
	}
	if code == "" {
		return
	}
	var eb httpx.ErrorBody
	if err := json.Unmarshal(a.body, &eb); err != nil {
		t.Fatalf("error body: %v: %s", err, a.body)
	}
	if eb.Code != code || !regexp.MustCompile(msg).MatchString(eb.Message) {
		t.Errorf("error %s %q, want %s matching %q", eb.Code, eb.Message, code, msg)
	}
}

// call sends an admin request with the admin token (and a JSON body when
// body is not empty) and validates the answer against the document.
func (e *adminEnv) call(t *testing.T, method, path, body string) adminAnswer {
	t.Helper()
	h := map[string]string{"Authorization": "Bearer " + adminTestToken}
	if body != "" {
		h["Content-Type"] = "application/json"
	}
	return e.send(t, method, path, body, h)
}

// send is call with exactly the headers given.
func (e *adminEnv) send(t *testing.T, method, path, body string, header map[string]string) adminAnswer {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, e.admin.URL+admin.BasePath+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	a := adminAnswer{status: res.StatusCode, header: res.Header, body: b}
	checkAdminAnswer(t, method, path, a)
	return a
}

// public calls the public listener with header pairs.
func (e *adminEnv) publicGet(t *testing.T, path string, header ...string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, e.public.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, b
}

// community creates community c (region AU).
func (e *adminEnv) community(t *testing.T, c string) {
	t.Helper()
	e.call(t, http.MethodPut, "/communities/"+c, `{"name": "Community `+c+`", "region": "AU"}`).want(t, http.StatusOK, "", "")
}

// token issues a suppliers:read token of c and returns its secret.
func (e *adminEnv) token(t *testing.T, c string) string {
	t.Helper()
	a := e.call(t, http.MethodPost, "/communities/"+c+"/tokens", `{"name": "t", "scopes": ["suppliers:read"]}`)
	a.want(t, http.StatusCreated, "", "")
	return e.secret(a.json(t)["token"].(string))
}

func adminSupplier(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("testdata/admin-supplier.json")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// --- validation against admin.json -----------------------------------------

var (
	adminDocOnce  sync.Once
	adminDocPaths []string
	adminSchemas  sync.Map // pointer -> *jsonschema.Schema
)

const adminDocURL = "https://procurekit.test/admin/v1/openapi.json"

// compileAdminSchema compiles the schema at pointer of admin.json, which
// refers only within itself.
func compileAdminSchema(tb testing.TB, pointer string) *jsonschema.Schema {
	tb.Helper()
	if s, ok := adminSchemas.Load(pointer); ok {
		return s.(*jsonschema.Schema)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	parsed, err := jsonschema.UnmarshalJSON(bytes.NewReader(admin.OpenAPI()))
	if err != nil {
		tb.Fatalf("admin.json: %v", err)
	}
	if err := c.AddResource(adminDocURL, parsed); err != nil {
		tb.Fatalf("admin.json: %v", err)
	}
	s, err := c.Compile(adminDocURL + pointer)
	if err != nil {
		tb.Fatalf("compile %s: %v", pointer, err)
	}
	adminSchemas.Store(pointer, s)
	return s
}

// adminRoute is the document's path template that path matches, or "".
func adminRoute(tb testing.TB, path string) string {
	adminDocOnce.Do(func() {
		var d struct {
			Paths map[string]json.RawMessage `json:"paths"`
		}
		if err := json.Unmarshal(admin.OpenAPI(), &d); err != nil {
			panic(err)
		}
		for p := range d.Paths {
			adminDocPaths = append(adminDocPaths, p)
		}
	})
	path, _, _ = strings.Cut(path, "?")
	segs := strings.Split(path, "/")
	for _, p := range adminDocPaths {
		tpl := strings.Split(p, "/")
		if len(tpl) != len(segs) {
			continue
		}
		match := true
		for i := range tpl {
			if !strings.HasPrefix(tpl[i], "{") && tpl[i] != segs[i] {
				match = false
				break
			}
		}
		if match {
			return p
		}
	}
	return ""
}

// checkAdminAnswer validates an answer against the response the document
// gives for its route, method and status; the headers the document
// promises (WWW-Authenticate on 401, Allow on 405) are checked too.
func checkAdminAnswer(t *testing.T, method, path string, a adminAnswer) {
	t.Helper()
	route := adminRoute(t, path)
	if route == "" || (a.status == http.StatusMethodNotAllowed && route != "") {
		// No route (a 404), or a method the route lacks: the document's
		// operations do not cover it; the body is still an Error.
		if a.status != http.StatusNotFound && a.status != http.StatusMethodNotAllowed {
			t.Errorf("%s %s: status %d on a path the document lacks", method, path, a.status)
		}
		validateAdmin(t, "#/components/schemas/Error", a.body)
		return
	}
	if a.status == http.StatusNoContent {
		if len(a.body) != 0 {
			t.Errorf("%s %s: 204 with a body: %s", method, path, a.body)
		}
		adminResponseSchema(t, route, strings.ToLower(method), a.status) // documented?
		return
	}
	if ct := a.header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("%s %s: Content-Type %q", method, path, ct)
	}
	validateAdmin(t, adminResponseSchema(t, route, strings.ToLower(method), a.status), a.body)
	switch a.status {
	case http.StatusUnauthorized:
		if got := a.header.Get("WWW-Authenticate"); got != `Bearer realm="admin"` {
			t.Errorf("%s %s: 401 with WWW-Authenticate %q", method, path, got)
		}
	case http.StatusCreated, http.StatusOK:
		if got := a.header.Get("Cache-Control"); got != "no-store" && route != "/openapi.json" {
			t.Errorf("%s %s: Cache-Control %q, want no-store", method, path, got)
		}
	}
}

// adminResponseSchema is responseSchema for admin.json, whose path items
// carry their parameters beside the operations.
func adminResponseSchema(t *testing.T, route, method string, status int) string {
	t.Helper()
	var d struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(admin.OpenAPI(), &d); err != nil {
		t.Fatalf("admin.json: %v", err)
	}
	var op struct {
		Responses map[string]struct {
			Ref string `json:"$ref"`
		} `json:"responses"`
	}
	raw, ok := d.Paths[route][method]
	if !ok {
		t.Fatalf("admin.json has no operation %s %s", method, route)
	}
	if err := json.Unmarshal(raw, &op); err != nil {
		t.Fatalf("admin.json %s %s: %v", method, route, err)
	}
	code := strconv.Itoa(status)
	resp, ok := op.Responses[code]
	if !ok {
		t.Fatalf("admin.json has no response %d for %s %s", status, method, route)
	}
	if resp.Ref != "" {
		return resp.Ref + "/content/application~1json/schema"
	}
	return "#/paths/" + apitest.EscapePointer(route) + "/" + method + "/responses/" + code + "/content/application~1json/schema"
}

func validateAdmin(t *testing.T, pointer string, body []byte) {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		t.Errorf("body is not JSON (%v): %s", err, body)
		return
	}
	if err := compileAdminSchema(t, pointer).Validate(v); err != nil {
		t.Errorf("body does not match %s:\n%v\nbody: %s", pointer, err, body)
	}
}

// --- tests -----------------------------------------------------------------------

// Every operation refuses a missing, wrong or differently-schemed token
// with one 401 and the admin challenge; the document is served without
// one.
func TestAdminAuth(t *testing.T) {
	// Every failure here is deliberate: the failed-attempt limit
	// (TestAdminFailedAttempts) is off.
	e := newAdminEnv(t, admin.Options{Import: memImport(memstore.New()), FailedAuthBurst: -1})
	e.community(t, "acme-au")
	ops := []struct{ method, path string }{
		{"GET", "/communities"}, {"GET", "/communities/acme-au"}, {"PUT", "/communities/acme-au"},
		{"GET", "/communities/acme-au/suppliers"}, {"GET", "/communities/acme-au/suppliers/" + adminSupplierID},
		{"PUT", "/communities/acme-au/suppliers/" + adminSupplierID}, {"DELETE", "/communities/acme-au/suppliers/" + adminSupplierID},
		{"PUT", "/communities/acme-au/suppliers/" + adminSupplierID + "/contacts/" + otherUUID},
		{"DELETE", "/communities/acme-au/suppliers/" + adminSupplierID + "/contacts/" + otherUUID},
		{"PUT", "/communities/acme-au/suppliers/" + adminSupplierID + "/remittance-addresses/" + otherUUID},
		{"DELETE", "/communities/acme-au/suppliers/" + adminSupplierID + "/remittance-addresses/" + otherUUID},
		{"GET", "/communities/acme-au/tokens"}, {"POST", "/communities/acme-au/tokens"}, {"DELETE", "/communities/acme-au/tokens/x"},
		{"GET", "/communities/acme-au/service-accounts/erp"}, {"PUT", "/communities/acme-au/service-accounts/erp"},
		{"POST", "/communities/acme-au/service-accounts/erp/keys"}, {"PATCH", "/communities/acme-au/service-accounts/erp/keys/k"},
		{"PUT", "/communities/acme-au/budgets/6100"}, {"DELETE", "/communities/acme-au/budgets/6100"},
		{"POST", "/import"},
	}
	for _, op := range ops {
		for _, h := range map[string]map[string]string{
			"none":        {},
			"wrong":       {"Authorization": "Bearer " + adminTestToken + "x"},
			"prefix":      {"Authorization": "Bearer " + adminTestToken[:10]},
			"basic":       {"Authorization": "Basic " + adminTestToken},
			"empty":       {"Authorization": "Bearer "},
			"token alone": {"Authorization": adminTestToken},
		} {
			h["Content-Type"] = "application/json"
			e.send(t, op.method, op.path, `{}`, h).want(t, http.StatusUnauthorized, "UNAUTHORIZED", "")
		}
	}
	// The scheme word is case-insensitive.
	e.send(t, "GET", "/communities/acme-au", "", map[string]string{"Authorization": "bEaReR " + adminTestToken}).want(t, http.StatusOK, "", "")

	a := e.send(t, "GET", "/openapi.json", "", nil)
	a.want(t, http.StatusOK, "", "")
	if !bytes.Equal(a.body, admin.OpenAPI()) {
		t.Error("GET /admin/v1/openapi.json is not the embedded document")
	}
	var doc struct {
		OpenAPI string `json:"openapi"`
	}
	if err := json.Unmarshal(a.body, &doc); err != nil || doc.OpenAPI != "3.1.0" {
		t.Errorf("openapi %q (%v)", doc.OpenAPI, err)
	}
	e.send(t, "POST", "/openapi.json", "", nil).want(t, http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED", "")
	e.call(t, "GET", "/nothing/here", "").want(t, http.StatusNotFound, "NOT_FOUND", "")
	if !strings.Contains(e.log.String(), "admin API authentication failed") {
		t.Error("failed authentications are not logged")
	}
}

// A method a path does not have: 405 with Allow and the JSON error.
func TestAdminMethodNotAllowed(t *testing.T) {
	e := newAdminEnv(t, admin.Options{})
	for _, tc := range []struct{ method, path, allow string }{
		{"PUT", "/communities", "GET"},
		{"DELETE", "/communities/acme-au", "GET, PUT"},
		{"POST", "/communities/acme-au/suppliers", "GET"},
		{"POST", "/communities/acme-au/suppliers/" + adminSupplierID, "DELETE, GET, PUT"},
		{"POST", "/communities/acme-au/suppliers/" + adminSupplierID + "/contacts/" + otherUUID, "DELETE, PUT"},
		{"PUT", "/communities/acme-au/tokens", "GET, POST"},
		{"GET", "/communities/acme-au/tokens/x", "DELETE"},
		{"DELETE", "/communities/acme-au/service-accounts/erp", "GET, PUT"},
		{"GET", "/communities/acme-au/service-accounts/erp/keys", "POST"},
		{"DELETE", "/communities/acme-au/service-accounts/erp/keys/k", "PATCH"},
		{"GET", "/communities/acme-au/budgets/6100", "DELETE, PUT"},
		{"GET", "/import", "POST"},
	} {
		a := e.call(t, tc.method, tc.path, "")
		a.want(t, http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED", "")
		if got := a.header.Get("Allow"); !sameMethods(got, tc.allow) {
			t.Errorf("%s %s: Allow %q, want %q", tc.method, tc.path, got, tc.allow)
		}
	}
}

// sameMethods compares two Allow lists whatever their order (HEAD, which
// comes with GET, aside).
func sameMethods(got, want string) bool {
	set := func(s string) map[string]bool {
		m := map[string]bool{}
		for _, p := range strings.Split(s, ",") {
			if p = strings.TrimSpace(p); p != "" && p != "HEAD" {
				m[p] = true
			}
		}
		return m
	}
	g, w := set(got), set(want)
	if len(g) != len(w) {
		return false
	}
	for k := range w {
		if !g[k] {
			return false
		}
	}
	return true
}

func TestAdminCommunities(t *testing.T) {
	forAdminStores(t, func(t *testing.T, e *adminEnv) {
		a := e.call(t, "PUT", "/communities/acme-au", `{"name": "Acme", "region": "AU", "autoRoles": ["EMPLOYEE"]}`)
		a.want(t, http.StatusOK, "", "")
		want := `{"id":"acme-au","name":"Acme","region":"AU","autoRoles":["EMPLOYEE"]}`
		if strings.TrimSpace(string(a.body)) != want {
			t.Errorf("PUT answered %s, want %s", a.body, want)
		}
		g := e.call(t, "GET", "/communities/acme-au", "")
		g.want(t, http.StatusOK, "", "")
		if !bytes.Equal(g.body, a.body) {
			t.Errorf("GET answered %s, PUT %s", g.body, a.body)
		}
		// Replace: the new name and roles.
		a = e.call(t, "PUT", "/communities/acme-au", `{"name": "Acme Corp", "region": "AU"}`)
		if m := a.json(t); m["name"] != "Acme Corp" || len(m["autoRoles"].([]any)) != 0 {
			t.Errorf("replace answered %s", a.body)
		}
		e.call(t, "GET", "/communities/nope", "").want(t, http.StatusNotFound, "COMMUNITY_NOT_FOUND", "community not found")

		for _, tc := range []struct{ name, path, body, code, msg string }{
			{"region", "/communities/x", `{"region": "EU"}`, "INVALID_FIELD", `^region: must be one of AU, NZ, US, DEMO$`},
			{"no region", "/communities/x", `{"name": "x"}`, "INVALID_FIELD", `^region: must be one of`},
			{"long name", "/communities/x", `{"region": "AU", "name": "` + strings.Repeat("n", 256) + `"}`, "INVALID_FIELD", `^name: must be at most 255 characters$`},
			{"duplicate role", "/communities/x", `{"region": "AU", "autoRoles": ["A", "A"]}`, "INVALID_FIELD", `^autoRoles\[1\]: must be unique`},
			{"empty role", "/communities/x", `{"region": "AU", "autoRoles": [" "]}`, "INVALID_FIELD", `^autoRoles\[0\]: is required`},
			{"bad id", "/communities/a%20b", `{"region": "AU"}`, "", `^id: must be valid UTF-8 without white space`},
			{"long id", "/communities/" + strings.Repeat("c", 101), `{"region": "AU"}`, "", `^id: must be at most 100 characters$`},
			{"syntax", "/communities/x", "{\n \"region\": \"AU\",\n}", "MALFORMED_REQUEST", `not valid JSON: .*\(at line 3, column 1\)`},
			{"type", "/communities/x", `{"region": 7}`, "MALFORMED_REQUEST", `^region: must be a string \(got number\)$`},
			{"empty body", "/communities/x", " ", "MALFORMED_REQUEST", `the request body is empty`},
			{"not an object", "/communities/x", `[1]`, "MALFORMED_REQUEST", ``},
		} {
			t.Run(tc.name, func(t *testing.T) {
				a := e.call(t, "PUT", tc.path, tc.body)
				if tc.code == "" {
					// A bad id in the path: the document's 400, whichever code names it.
					a.want(t, http.StatusBadRequest, a.json(t)["code"].(string), tc.msg)
					return
				}
				a.want(t, http.StatusBadRequest, tc.code, tc.msg)
			})
		}
		e.call(t, "GET", "/communities/x", "").want(t, http.StatusNotFound, "COMMUNITY_NOT_FOUND", "")

		// 415 and 413.
		e.send(t, "PUT", "/communities/x", `{"region": "AU"}`, map[string]string{"Authorization": "Bearer " + adminTestToken, "Content-Type": "text/plain"}).
			want(t, http.StatusUnsupportedMediaType, "UNSUPPORTED_MEDIA_TYPE", "must be JSON")
		e.send(t, "PUT", "/communities/x", `{"region": "AU"}`, map[string]string{"Authorization": "Bearer " + adminTestToken}).
			want(t, http.StatusUnsupportedMediaType, "UNSUPPORTED_MEDIA_TYPE", "")
		big := `{"region": "AU", "name": "` + strings.Repeat("x", admin.MaxBodyBytes) + `"}`
		e.call(t, "PUT", "/communities/x", big).want(t, http.StatusRequestEntityTooLarge, "PAYLOAD_TOO_LARGE", "larger than 1048576 bytes")
	})
}

// GET /admin/v1/communities pages through every community by id, with
// the paging rules of every list.
func TestAdminListCommunities(t *testing.T) {
	forAdminStores(t, func(t *testing.T, e *adminEnv) {
		a := e.call(t, "GET", "/communities", "")
		a.want(t, http.StatusOK, "", "")
		if got, want := strings.TrimSpace(string(a.body)), `{"content":[],"page":{"size":20,"number":0,"totalElements":0,"totalPages":0}}`; got != want {
			t.Errorf("an empty store: %s, want %s", got, want)
		}
		for _, c := range []string{"kiwi-nz", "acme-au", "Zeta", "bravo"} {
			e.community(t, c)
		}
		e.call(t, "PUT", "/communities/acme-au", `{"name": "Acme", "region": "AU", "autoRoles": ["EMPLOYEE"]}`).want(t, http.StatusOK, "", "")
		for _, tc := range []struct{ query, want string }{
			{"", `{"content":[{"id":"Zeta","name":"Community Zeta","region":"AU","autoRoles":[]},` +
				`{"id":"acme-au","name":"Acme","region":"AU","autoRoles":["EMPLOYEE"]},` +
				`{"id":"bravo","name":"Community bravo","region":"AU","autoRoles":[]},` +
				`{"id":"kiwi-nz","name":"Community kiwi-nz","region":"AU","autoRoles":[]}],` +
				`"page":{"size":20,"number":0,"totalElements":4,"totalPages":1}}`},
			{"?size=3&page=1", `{"content":[{"id":"kiwi-nz","name":"Community kiwi-nz","region":"AU","autoRoles":[]}],` +
				`"page":{"size":3,"number":1,"totalElements":4,"totalPages":2}}`},
			{"?page=9&sort=name,desc", `{"content":[],"page":{"size":20,"number":9,"totalElements":4,"totalPages":1}}`},
		} {
			a := e.call(t, "GET", "/communities"+tc.query, "")
			a.want(t, http.StatusOK, "", "")
			if got := strings.TrimSpace(string(a.body)); got != tc.want {
				t.Errorf("GET /communities%s:\n%s\nwant\n%s", tc.query, got, tc.want)
			}
		}
		e.call(t, "GET", "/communities?size=101", "").want(t, http.StatusBadRequest, "INVALID_PARAMETER", `^size: must be from 1 to 100 \(got 101\)$`)
		e.call(t, "GET", "/communities?page=-1&size=x", "").want(t, http.StatusBadRequest, "INVALID_PARAMETER", `^page: must be >= 0 \(got -1\); size: must be an integer`)
		e.call(t, "GET", "/communities?page=%zz", "").want(t, http.StatusBadRequest, "INVALID_PARAMETER", `malformed query string`)
	})
}

// PUT of a supplier answers exactly what the supplier API then serves;
// writes under an unknown community or to another community's supplier
// are 404; an id in the body must equal the path's.
func TestAdminSuppliers(t *testing.T) {
	forAdminStores(t, func(t *testing.T, e *adminEnv) {
		e.community(t, "acme-au")
		e.community(t, "globex")
		token := e.token(t, "acme-au")
		sup := adminSupplier(t)
		path := "/communities/acme-au/suppliers/" + adminSupplierID

		a := e.call(t, "PUT", path, sup)
		a.want(t, http.StatusOK, "", "")
		status, pub := e.publicGet(t, "/public/community/suppliers/"+adminSupplierID, "Authorization", "Bearer "+token)
		if status != http.StatusOK || !bytes.Equal(bytes.TrimSpace(a.body), bytes.TrimSpace(pub)) {
			t.Errorf("PUT answered\n%s\nthe supplier API serves (%d)\n%s", a.body, status, pub)
		}
		m := a.json(t)
		if m["modifiedDate"] == "2022-06-01T15:09:45Z" || m["createdDate"] == "2021-05-13T15:22:55Z" {
			t.Errorf("the body's dates were kept: %v %v", m["modifiedDate"], m["createdDate"])
		}
		// The same content again changes nothing, dates included.
		again := e.call(t, "PUT", path, sup)
		if !bytes.Equal(again.body, a.body) {
			t.Errorf("an unchanged PUT answered\n%s\nafter\n%s", again.body, a.body)
		}
		// Without an id in the body, the path's.
		noID := strings.Replace(sup, `"id": "`+adminSupplierID+`",`, "", 1)
		e.call(t, "PUT", path, noID).want(t, http.StatusOK, "", "")

		for _, tc := range []struct {
			name, path, body string
			status           int
			code, msg        string
		}{
			{"unknown community", "/communities/nope/suppliers/" + adminSupplierID, sup, 404, "COMMUNITY_NOT_FOUND", ""},
			{"id mismatch", "/communities/acme-au/suppliers/" + otherUUID, sup, 400, "INVALID_FIELD", `^id: must equal the id in the path \(` + otherUUID + `\) or be absent$`},
			{"bad path id", "/communities/acme-au/suppliers/nope", sup, 400, "INVALID_PARAMETER", `^id: must be a UUID`},
			{"missing profile type", path, `{"name": "x"}`, 400, "INVALID_FIELD", `^profileType: must be one of COMPANY, INDIVIDUAL`},
			{"bad email", path, strings.Replace(sup, `"hello@brightline`, `"hello at brightline`, 1), 400, "INVALID_FIELD", `defaultEmailAddress: must be a valid email address`},
			{"wrong type", path, `{"name": 7}`, 400, "MALFORMED_REQUEST", `^name: must be a string \(got number\)$`},
			{"nested wrong type", path, `{"name": "x", "bankAccount": {"country": 7}}`, 400, "MALFORMED_REQUEST", `^bankAccount.country: must be a string`},
			{"bad enum", path, `{"name": "x", "profileType": "ROBOT"}`, 400, "", `profileType`},
			{"contacts", path, strings.Replace(sup, `"keywords"`, `"contacts": [{"id": "`+otherUUID+`", "name": "A"}], "keywords"`, 1), 400, "INVALID_FIELD", `contacts: must be absent`},
			// docs: values.md "Text": the same 400 from every store.
			{"NUL in a name", path, `{"name": "a\u0000b", "profileType": "COMPANY"}`, 400, "INVALID_FIELD", `^name: must be valid UTF-8 without NUL characters$`},
		} {
			t.Run(tc.name, func(t *testing.T) {
				a := e.call(t, "PUT", tc.path, tc.body)
				code := tc.code
				if code == "" && a.status == tc.status {
					code = a.json(t)["code"].(string)
				}
				a.want(t, tc.status, code, tc.msg)
			})
		}

		// Another community's supplier is not found, to write or to delete.
		e.call(t, "DELETE", "/communities/globex/suppliers/"+adminSupplierID, "").want(t, http.StatusNotFound, "SUPPLIER_NOT_FOUND", "")
		e.call(t, "PUT", "/communities/globex/suppliers/"+adminSupplierID+"/contacts/"+otherUUID, `{"name": "A"}`).want(t, http.StatusNotFound, "SUPPLIER_NOT_FOUND", "")

		e.call(t, "DELETE", path, "").want(t, http.StatusNoContent, "", "")
		if status, _ := e.publicGet(t, "/public/community/suppliers/"+adminSupplierID, "Authorization", "Bearer "+token); status != http.StatusNotFound {
			t.Errorf("GET after DELETE: %d, want 404", status)
		}
		e.call(t, "DELETE", path, "").want(t, http.StatusNotFound, "SUPPLIER_NOT_FOUND", "supplier not found")
		e.call(t, "DELETE", "/communities/nope/suppliers/"+adminSupplierID, "").want(t, http.StatusNotFound, "COMMUNITY_NOT_FOUND", "")
	})
}

// The admin API reads a community's suppliers as the supplier API does,
// without a token of the community: the same list (parameters, rules,
// bytes) and the same supplier; an unknown community is a 404.
func TestAdminReadSuppliers(t *testing.T) {
	forAdminStores(t, func(t *testing.T, e *adminEnv) {
		e.community(t, "acme-au")
		e.community(t, "globex")
		token := e.token(t, "acme-au")
		sup := adminSupplier(t)
		const secondID = "0b5c1ad2-0000-4000-8000-000000000002"
		second := strings.NewReplacer(adminSupplierID, secondID, `"Brightline Cleaning Services"`, `"Acme Paper"`, `"SUP-0103"`, `"SUP-0200"`).Replace(sup)
		put := e.call(t, "PUT", "/communities/acme-au/suppliers/"+adminSupplierID, sup)
		put.want(t, http.StatusOK, "", "")
		e.call(t, "PUT", "/communities/acme-au/suppliers/"+secondID, second).want(t, http.StatusOK, "", "")

		for _, query := range []string{"", "?size=1", "?size=1&page=1", "?sort=name,desc", "?query=acme", "?query=SUP-01", "?modifiedSince=2999-01-01", "?page=7"} {
			a := e.call(t, "GET", "/communities/acme-au/suppliers"+query, "")
			a.want(t, http.StatusOK, "", "")
			status, pub := e.publicGet(t, "/public/community/suppliers"+query, "Authorization", "Bearer "+token)
			if status != http.StatusOK || !bytes.Equal(a.body, pub) {
				t.Errorf("GET suppliers%s: the admin API answered\n%s\nthe supplier API (%d)\n%s", query, a.body, status, pub)
			}
		}
		var page struct {
			Content []struct{ ID, Name string }
			Page    struct{ TotalElements int }
		}
		if err := json.Unmarshal(e.call(t, "GET", "/communities/acme-au/suppliers", "").body, &page); err != nil {
			t.Fatal(err)
		}
		if len(page.Content) != 2 || page.Content[0].Name != "Acme Paper" || page.Content[1].ID != adminSupplierID || page.Page.TotalElements != 2 {
			t.Errorf("the list: %+v; want Acme Paper, then Brightline, of 2", page)
		}
		if a := e.call(t, "GET", "/communities/globex/suppliers", ""); a.status != http.StatusOK || !strings.Contains(string(a.body), `"totalElements":0`) {
			t.Errorf("another community's list: %d %s; want it empty", a.status, a.body)
		}

		g := e.call(t, "GET", "/communities/acme-au/suppliers/"+adminSupplierID, "")
		g.want(t, http.StatusOK, "", "")
		status, pub := e.publicGet(t, "/public/community/suppliers/"+adminSupplierID, "Authorization", "Bearer "+token)
		if status != http.StatusOK || !bytes.Equal(g.body, pub) || !bytes.Equal(g.body, put.body) {
			t.Errorf("GET supplier: the admin API answered\n%s\nthe supplier API (%d)\n%s\nthe PUT\n%s", g.body, status, pub, put.body)
		}

		for _, tc := range []struct {
			name, path    string
			status        int
			code, message string
		}{
			{"list of an unknown community", "/communities/nope/suppliers", 404, "COMMUNITY_NOT_FOUND", "community not found"},
			{"supplier of an unknown community", "/communities/nope/suppliers/" + adminSupplierID, 404, "COMMUNITY_NOT_FOUND", ""},
			{"another community's supplier", "/communities/globex/suppliers/" + adminSupplierID, 404, "SUPPLIER_NOT_FOUND", "supplier not found"},
			{"an unknown supplier", "/communities/acme-au/suppliers/" + otherUUID, 404, "SUPPLIER_NOT_FOUND", ""},
			{"a path id that is not a UUID", "/communities/acme-au/suppliers/nope", 400, "INVALID_PARAMETER", `^id: must be a UUID`},
			{"size out of range", "/communities/acme-au/suppliers?size=0", 400, "INVALID_PARAMETER", `^size: must be from 1 to 100 \(got 0\)$`},
			{"every broken rule", "/communities/acme-au/suppliers?sort=colour&modifiedSince=yesterday", 400, "INVALID_PARAMETER", `^modifiedSince: must be an RFC 3339 date-time.*; sort: field must be one of name, createdDate, modifiedDate`},
			{"long query", "/communities/acme-au/suppliers?query=" + strings.Repeat("q", 256), 400, "INVALID_PARAMETER", `^query: must be at most 255 characters`},
		} {
			t.Run(tc.name, func(t *testing.T) {
				e.call(t, "GET", tc.path, "").want(t, tc.status, tc.code, tc.message)
			})
		}
	})
}

func TestAdminContactsAndAddresses(t *testing.T) {
	forAdminStores(t, func(t *testing.T, e *adminEnv) {
		e.community(t, "acme-au")
		e.community(t, "globex")
		token := e.token(t, "acme-au")
		e.call(t, "PUT", "/communities/acme-au/suppliers/"+adminSupplierID, adminSupplier(t)).want(t, http.StatusOK, "", "")
		before := e.call(t, "PUT", "/communities/acme-au/suppliers/"+adminSupplierID, adminSupplier(t)).json(t)["modifiedDate"]

		for _, tc := range []struct {
			route, body, bad, badMsg string
		}{
			{"contacts", `{"name": "Oliver Patel", "email": "oliver@example.com", "phone": {"prefix": "+61", "number": "8 2030 4978"}}`,
				`{"name": "Oliver", "email": "not an address"}`, `^email: must be a valid email address`},
			{"remittance-addresses", `{"code": "MAIN", "companyName": "Brightline", "address": {"line1": "1 Main St", "city": "Melbourne", "postcode": "3000", "country": "Australia"}}`,
				`{"code": "` + strings.Repeat("c", 300) + `"}`, `code: must be at most`},
		} {
			t.Run(tc.route, func(t *testing.T) {
				p := "/communities/acme-au/suppliers/" + adminSupplierID + "/" + tc.route + "/" + otherUUID
				a := e.call(t, "PUT", p, tc.body)
				a.want(t, http.StatusOK, "", "")
				if a.json(t)["id"] != otherUUID {
					t.Errorf("PUT answered %s", a.body)
				}
				status, list := e.publicGet(t, "/public/community/suppliers/"+adminSupplierID+"/"+tc.route, "Authorization", "Bearer "+token)
				if status != http.StatusOK || !bytes.Contains(list, bytes.TrimSpace(a.body)) {
					t.Errorf("the public list (%d) does not hold the PUT's answer:\n%s\n%s", status, list, a.body)
				}
				// The supplier's modifiedDate moved on.
				status, sup := e.publicGet(t, "/public/community/suppliers/"+adminSupplierID, "Authorization", "Bearer "+token)
				var s map[string]any
				if status != http.StatusOK || json.Unmarshal(sup, &s) != nil || s["modifiedDate"] == before {
					t.Errorf("the supplier's modifiedDate did not move: %v", s["modifiedDate"])
				}
				e.call(t, "PUT", "/communities/acme-au/suppliers/"+adminSupplierID+"/"+tc.route+"/"+adminSupplierID, `{"id": "`+otherUUID+`"}`).
					want(t, http.StatusBadRequest, "INVALID_FIELD", `^id: must equal the id in the path`)
				e.call(t, "PUT", p, tc.bad).want(t, http.StatusBadRequest, "INVALID_FIELD", tc.badMsg)
				e.call(t, "PUT", "/communities/acme-au/suppliers/"+otherUUID+"/"+tc.route+"/"+otherUUID, tc.body).want(t, http.StatusNotFound, "SUPPLIER_NOT_FOUND", "")
				e.call(t, "PUT", "/communities/nope/suppliers/"+adminSupplierID+"/"+tc.route+"/"+otherUUID, tc.body).want(t, http.StatusNotFound, "COMMUNITY_NOT_FOUND", "")
				e.call(t, "DELETE", "/communities/globex/suppliers/"+adminSupplierID+"/"+tc.route+"/"+otherUUID, "").want(t, http.StatusNotFound, "SUPPLIER_NOT_FOUND", "")
				e.call(t, "DELETE", p, "").want(t, http.StatusNoContent, "", "")
				e.call(t, "DELETE", p, "").want(t, http.StatusNotFound, "SUPPLIER_NOT_FOUND", "")
			})
		}
	})
}

// A token's secret is in the 201 only; lists show neither it nor its
// hash; a revoked token is refused by the supplier API at once.
func TestAdminTokens(t *testing.T) {
	forAdminStores(t, func(t *testing.T, e *adminEnv) {
		e.community(t, "acme-au")
		e.community(t, "globex")
		a := e.call(t, "POST", "/communities/acme-au/tokens", `{"name": "erp", "scopes": ["suppliers:read"], "expires": "2099-01-01T00:00:00Z"}`)
		a.want(t, http.StatusCreated, "", "")
		m := a.json(t)
		secret, id := e.secret(m["token"].(string)), m["id"].(string)
		if m["name"] != "erp" || m["expires"] != "2099-01-01T00:00:00Z" {
			t.Errorf("POST answered %s", a.body)
		}
		// A second token without expiry: expires null.
		b := e.call(t, "POST", "/communities/acme-au/tokens", `{"scopes": ["suppliers:read"]}`)
		b.want(t, http.StatusCreated, "", "")
		e.secret(b.json(t)["token"].(string))
		if b.json(t)["expires"] != nil || b.json(t)["token"] == secret {
			t.Errorf("second token: %s", b.body)
		}

		list := e.call(t, "GET", "/communities/acme-au/tokens", "")
		list.want(t, http.StatusOK, "", "")
		hash := sha256.Sum256([]byte(secret))
		if bytes.Contains(list.body, []byte(secret)) || bytes.Contains(list.body, []byte(hex.EncodeToString(hash[:]))) || bytes.Contains(list.body, []byte(`"token"`)) {
			t.Errorf("the list shows a secret or a hash: %s", list.body)
		}
		var l struct {
			Content []map[string]any `json:"content"`
		}
		if err := json.Unmarshal(list.body, &l); err != nil || len(l.Content) != 2 || l.Content[0]["id"] != id || l.Content[0]["lastUsedAt"] != nil {
			t.Fatalf("list: %s", list.body)
		}
		// Use it: lastUsedAt is set, to the minute.
		if status, body := e.publicGet(t, "/public/community/suppliers", "Authorization", "Bearer "+secret); status != http.StatusOK {
			t.Fatalf("the token on the supplier API: %d %s", status, body)
		}
		list = e.call(t, "GET", "/communities/acme-au/tokens", "")
		if err := json.Unmarshal(list.body, &l); err != nil || !regexp.MustCompile(`^20\d\d-\d\d-\d\dT\d\d:\d\d:00Z$`).MatchString(asString(l.Content[0]["lastUsedAt"])) {
			t.Errorf("lastUsedAt after a use: %s", list.body)
		}
		// Other communities see none of it.
		if g := e.call(t, "GET", "/communities/globex/tokens", ""); strings.TrimSpace(string(g.body)) != `{"content":[]}` {
			t.Errorf("globex lists %s", g.body)
		}
		e.call(t, "DELETE", "/communities/globex/tokens/"+id, "").want(t, http.StatusNotFound, "CREDENTIAL_NOT_FOUND", "")

		e.call(t, "DELETE", "/communities/acme-au/tokens/"+id, "").want(t, http.StatusNoContent, "", "")
		if status, _ := e.publicGet(t, "/public/community/suppliers", "Authorization", "Bearer "+secret); status != http.StatusUnauthorized {
			t.Errorf("the revoked token: %d, want 401", status)
		}
		list = e.call(t, "GET", "/communities/acme-au/tokens", "")
		if err := json.Unmarshal(list.body, &l); err != nil || l.Content[0]["revoked"] != true || l.Content[1]["revoked"] != false {
			t.Errorf("list after revoke: %s", list.body)
		}
		e.call(t, "DELETE", "/communities/acme-au/tokens/"+id, "").want(t, http.StatusNoContent, "", "") // again: still revoked
		e.call(t, "DELETE", "/communities/acme-au/tokens/no-such", "").want(t, http.StatusNotFound, "CREDENTIAL_NOT_FOUND", "")
		e.call(t, "GET", "/communities/nope/tokens", "").want(t, http.StatusNotFound, "COMMUNITY_NOT_FOUND", "")
		e.call(t, "POST", "/communities/nope/tokens", `{"scopes": ["suppliers:read"]}`).want(t, http.StatusNotFound, "COMMUNITY_NOT_FOUND", "")

		for _, tc := range []struct{ body, msg string }{
			{`{"name": "x"}`, `^scopes: is required`},
			{`{"scopes": [""]}`, `^scopes\[0\]: must be 1 to 100 printable ASCII`},
			{`{"scopes": ["a b"]}`, `^scopes\[0\]: must be 1 to 100 printable ASCII`},
			{`{"scopes": ["suppliers:read"], "expires": "2001-01-01T00:00:00Z"}`, `^expires: must be in the future$`},
			{`{"scopes": ["suppliers:read"], "name": "` + strings.Repeat("n", 256) + `"}`, `^name: must be valid text of at most 255 characters$`},
		} {
			e.call(t, "POST", "/communities/acme-au/tokens", tc.body).want(t, http.StatusBadRequest, "INVALID_FIELD", tc.msg)
		}
		e.call(t, "POST", "/communities/acme-au/tokens", `{"scopes": "suppliers:read"}`).want(t, http.StatusBadRequest, "MALFORMED_REQUEST", `^scopes: must be an array`)
	})
}

func asString(v any) string {
	s, _ := v.(string)
	return s
}

// Service accounts and keys: the rotation the spec advises, end to end.
func TestAdminServiceAccounts(t *testing.T) {
	forAdminStores(t, func(t *testing.T, e *adminEnv) {
		e.community(t, "acme-au")
		e.community(t, "globex")
		base := "/communities/acme-au/service-accounts/erp"

		a := e.call(t, "PUT", base, `{"allowedIPs": ["127.0.0.1", "10.0.0.0/8", "::1"]}`)
		a.want(t, http.StatusOK, "", "")
		if got := strings.TrimSpace(string(a.body)); got != `{"id":"erp","community":"acme-au","allowedIPs":["127.0.0.1/32","10.0.0.0/8","::1/128"],"keys":[]}` {
			t.Errorf("PUT answered %s", got)
		}
		k1 := e.call(t, "POST", base+"/keys", "")
		k1.want(t, http.StatusCreated, "", "")
		k2 := e.call(t, "POST", base+"/keys", "{}")
		k2.want(t, http.StatusCreated, "", "")
		old, oldID := e.secret(k1.json(t)["key"].(string)), k1.json(t)["id"].(string)
		neu, newID := e.secret(k2.json(t)["key"].(string)), k2.json(t)["id"].(string)
		e.call(t, "POST", base+"/keys", `{"id": "mine"}`).want(t, http.StatusBadRequest, "INVALID_FIELD", `^id: is not a field of this body: the server makes the key and its id; send no body or \{\}$`)

		use := func(key string) int {
			status, _ := e.publicGet(t, "/v1/users/username/nobody", "Service-Account-ID", "erp", "Service-API-Key", key)
			return status
		}
		// Authenticated, no such user: 404.
		if s := use(old); s != http.StatusNotFound {
			t.Fatalf("the first key: %d, want 404", s)
		}
		g := e.call(t, "GET", base, "")
		g.want(t, http.StatusOK, "", "")
		if bytes.Contains(g.body, []byte(old)) || bytes.Contains(g.body, []byte(neu)) || bytes.Contains(g.body, []byte(`"key"`)) {
			t.Errorf("GET shows a secret: %s", g.body)
		}
		var acc struct {
			Keys []map[string]any `json:"keys"`
		}
		if err := json.Unmarshal(g.body, &acc); err != nil || len(acc.Keys) != 2 || acc.Keys[0]["id"] != oldID || acc.Keys[1]["id"] != newID {
			t.Fatalf("GET: %s", g.body)
		}
		if !regexp.MustCompile(`^20\d\d-\d\d-\d\dT\d\d:\d\d:00Z$`).MatchString(asString(acc.Keys[0]["lastUsedAt"])) || acc.Keys[1]["lastUsedAt"] != nil {
			t.Errorf("lastUsedAt: used key %v, unused key %v", acc.Keys[0]["lastUsedAt"], acc.Keys[1]["lastUsedAt"])
		}
		// Callers move to the new key; the old one is deactivated: refused.
		if s := use(neu); s != http.StatusNotFound {
			t.Errorf("the second key: %d", s)
		}
		p := e.call(t, "PATCH", base+"/keys/"+oldID, `{"active": false}`)
		p.want(t, http.StatusOK, "", "")
		if p.json(t)["active"] != false || p.json(t)["id"] != oldID {
			t.Errorf("PATCH answered %s", p.body)
		}
		if s := use(old); s != http.StatusUnauthorized {
			t.Errorf("the deactivated key: %d, want 401", s)
		}
		if s := use(neu); s != http.StatusNotFound {
			t.Errorf("the active key after the other's deactivation: %d", s)
		}
		e.call(t, "PATCH", base+"/keys/"+oldID, `{"active": true}`).want(t, http.StatusOK, "", "")
		if s := use(old); s != http.StatusNotFound {
			t.Errorf("the reactivated key: %d", s)
		}
		// The allowlist is enforced: without the caller's address, 401.
		e.call(t, "PUT", base, `{"allowedIPs": ["203.0.113.0/24"]}`).want(t, http.StatusOK, "", "")
		if s := use(neu); s != http.StatusUnauthorized {
			t.Errorf("a key from outside the allowlist: %d, want 401", s)
		}
		if g := e.call(t, "GET", base, ""); !bytes.Contains(g.body, []byte(newID)) {
			t.Errorf("the keys were not kept when the allowlist changed: %s", g.body)
		}
		e.call(t, "PUT", base, "").want(t, http.StatusOK, "", "") // no body: no allowlist
		if s := use(neu); s != http.StatusNotFound {
			t.Errorf("no allowlist: %d", s)
		}

		e.call(t, "PUT", "/communities/globex/service-accounts/erp", `{}`).want(t, http.StatusConflict, "CONFLICT", `^conflict: `)
		e.call(t, "GET", "/communities/globex/service-accounts/erp", "").want(t, http.StatusNotFound, "CREDENTIAL_NOT_FOUND", "")
		e.call(t, "POST", "/communities/globex/service-accounts/erp/keys", "").want(t, http.StatusNotFound, "CREDENTIAL_NOT_FOUND", "")
		e.call(t, "PATCH", "/communities/globex/service-accounts/erp/keys/"+oldID, `{"active": false}`).want(t, http.StatusNotFound, "CREDENTIAL_NOT_FOUND", "")
		e.call(t, "PATCH", base+"/keys/no-such", `{"active": false}`).want(t, http.StatusNotFound, "CREDENTIAL_NOT_FOUND", "")
		e.call(t, "PATCH", base+"/keys/"+oldID, `{}`).want(t, http.StatusBadRequest, "INVALID_FIELD", `^active: is required`)
		e.call(t, "PATCH", base+"/keys/"+oldID, `{"active": "no"}`).want(t, http.StatusBadRequest, "MALFORMED_REQUEST", `^active: must be a boolean`)
		e.call(t, "PUT", base, `{"allowedIPs": ["300.1.1.1"]}`).want(t, http.StatusBadRequest, "INVALID_FIELD", `^allowedIPs\[0\]: must be an IP address or a CIDR`)
		e.call(t, "PUT", "/communities/acme-au/service-accounts/a%20b", `{}`).want(t, http.StatusBadRequest, "", "")
		e.call(t, "PUT", "/communities/nope/service-accounts/x", `{}`).want(t, http.StatusNotFound, "COMMUNITY_NOT_FOUND", "")
		e.call(t, "GET", "/communities/acme-au/service-accounts/nobody", "").want(t, http.StatusNotFound, "CREDENTIAL_NOT_FOUND", "")
	})
}

func TestAdminBudgets(t *testing.T) {
	forAdminStores(t, func(t *testing.T, e *adminEnv) {
		e.community(t, "acme-au")
		p := "/communities/acme-au/budgets/6100-100"
		for _, tc := range []struct{ body, want string }{
			{`{"budget": "1250.50"}`, `{"account":"6100-100","budget":"1250.5"}`},
			{`{"budget": 99.95}`, `{"account":"6100-100","budget":"99.95"}`},
			{`{"budget": "-20"}`, `{"account":"6100-100","budget":"-20"}`},
		} {
			a := e.call(t, "PUT", p, tc.body)
			a.want(t, http.StatusOK, "", "")
			if got := strings.TrimSpace(string(a.body)); got != tc.want {
				t.Errorf("PUT %s answered %s, want %s", tc.body, got, tc.want)
			}
		}
		for _, tc := range []struct{ body, code, msg string }{
			{`{}`, "INVALID_FIELD", `^budget: is required`},
			{`{"budget": null}`, "INVALID_FIELD", `^budget: is required`},
			{`{"budget": "lots"}`, "INVALID_FIELD", `^budget: must be a decimal number such as 1250.00 \(got "lots"\)$`},
			{`{"budget": true}`, "INVALID_FIELD", `^budget: must be a decimal number`},
		} {
			e.call(t, "PUT", p, tc.body).want(t, http.StatusBadRequest, tc.code, tc.msg)
		}
		e.call(t, "PUT", "/communities/nope/budgets/6100", `{"budget": "1"}`).want(t, http.StatusNotFound, "COMMUNITY_NOT_FOUND", "")
		e.call(t, "DELETE", p, "").want(t, http.StatusNoContent, "", "")
		e.call(t, "DELETE", p, "").want(t, http.StatusNotFound, "BUDGET_NOT_FOUND", "")
		e.call(t, "DELETE", "/communities/nope/budgets/6100", "").want(t, http.StatusNotFound, "COMMUNITY_NOT_FOUND", "")
	})
}

// memImport is an ImportFunc over a memstore's loader: it streams the
// file in, adding the communities it does not hold yet (one it holds is
// the store's refusal), and counts them as created.
func memImport(s *memstore.Store) admin.ImportFunc {
	return func(_ context.Context, r io.Reader) (datafile.ImportCounts, error) {
		c := &importCounter{Handler: s.Loader(), counts: datafile.NewImportCounts()}
		if err := datafile.Stream(r, c); err != nil {
			return nil, err
		}
		return c.counts, nil
	}
}

type importCounter struct {
	datafile.Handler
	counts datafile.ImportCounts
}

func (c *importCounter) Community(i int, com *datafile.Community, n int) error {
	if err := c.Handler.Community(i, com, n); err != nil {
		return err
	}
	c.counts.Add(datafile.KindCommunities, datafile.Outcome{Created: 1})
	c.counts.Add(datafile.KindSuppliers, datafile.Outcome{Created: n})
	return nil
}

// The import's answer counts, kind by kind, what the file held (at the
// top level, as it always has) and what the import did with it: on both
// stores, a second import of the same file finds everything unchanged.
func TestAdminImportCounts(t *testing.T) {
	stores := map[string]func(t *testing.T) adminBackend{
		"memstore": func(t *testing.T) adminBackend { return memstore.New() },
		"pgstore": func(t *testing.T) adminBackend {
			pg, err := pgstore.Open(context.Background(), pgtest.NewDatabase(t))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(pg.Close)
			return pg
		},
	}
	for name, open := range stores {
		t.Run(name, func(t *testing.T) {
			store := open(t)
			im := store.(interface {
				ImportStream(ctx context.Context, r io.Reader) (datafile.ImportCounts, error)
			})
			e := newAdminEnvOn(t, store, admin.Options{Import: im.ImportStream})
			file := `{"communities": [{"id": "imported", "name": "Imported", "region": "NZ",
				"tokens": [{"token": "fixture-import-token", "scopes": ["suppliers:read"]}],
				"budgets": [{"account": "6100", "budget": "10"}],
				"suppliers": [` + adminSupplier(t) + `]}]}`
			e.secret("fixture-import-token")
			for _, tc := range []struct {
				name, file, want string
			}{
				{"first", file, `{"budgets":1,"changes":{` +
					`"budgets":{"created":1,"updated":0,"unchanged":0},` +
					`"communities":{"created":1,"updated":0,"unchanged":0},` +
					`"contacts":{"created":0,"updated":0,"unchanged":0},` +
					`"remittanceAddresses":{"created":0,"updated":0,"unchanged":0},` +
					`"serviceAccounts":{"created":0,"updated":0,"unchanged":0},` +
					`"suppliers":{"created":1,"updated":0,"unchanged":0},` +
					`"tokens":{"created":1,"updated":0,"unchanged":0},` +
					`"users":{"created":0,"updated":0,"unchanged":0}},` +
					`"communities":1,"contacts":0,"remittanceAddresses":0,"serviceAccounts":0,"suppliers":1,"tokens":1,"users":0}`},
				{"again", file, `{"budgets":1,"changes":{` +
					`"budgets":{"created":0,"updated":0,"unchanged":1},` +
					`"communities":{"created":0,"updated":0,"unchanged":1},` +
					`"contacts":{"created":0,"updated":0,"unchanged":0},` +
					`"remittanceAddresses":{"created":0,"updated":0,"unchanged":0},` +
					`"serviceAccounts":{"created":0,"updated":0,"unchanged":0},` +
					`"suppliers":{"created":0,"updated":0,"unchanged":1},` +
					`"tokens":{"created":0,"updated":0,"unchanged":1},` +
					`"users":{"created":0,"updated":0,"unchanged":0}},` +
					`"communities":1,"contacts":0,"remittanceAddresses":0,"serviceAccounts":0,"suppliers":1,"tokens":1,"users":0}`},
				{"changed", strings.Replace(strings.Replace(file, `"Imported"`, `"Imported Ltd"`, 1), `"10"`, `"11"`, 1), `"changes":{` +
					`"budgets":{"created":0,"updated":1,"unchanged":0},` +
					`"communities":{"created":0,"updated":1,"unchanged":0},`},
			} {
				a := e.call(t, "POST", "/import", tc.file)
				a.want(t, http.StatusOK, "", "")
				if got := strings.TrimSpace(string(a.body)); !strings.Contains(got, tc.want) {
					t.Errorf("%s import answered\n%s\nwant\n%s", tc.name, got, tc.want)
				}
			}
		})
	}
}

func TestAdminImport(t *testing.T) {
	into := memstore.New()
	e := newAdminEnv(t, admin.Options{Import: memImport(into), MaxImportBytes: 64 << 10})
	file := `{"communities": [{"id": "imported", "name": "Imported", "region": "NZ", "suppliers": [` + adminSupplier(t) + `]}]}`
	a := e.call(t, "POST", "/import", file)
	a.want(t, http.StatusOK, "", "")
	if m := a.json(t); m["communities"] != 1.0 || m["suppliers"] != 1.0 || m["users"] != 0.0 {
		t.Errorf("import answered %s", a.body)
	}
	if _, err := into.Community(context.Background(), "imported"); err != nil {
		t.Errorf("the community was not imported: %v", err)
	}
	// No Content-Type is taken as JSON (curl --data-binary @file sends
	// its own, which is refused below).
	e.send(t, "POST", "/import", strings.ReplaceAll(file, `"imported"`, `"second"`), map[string]string{"Authorization": "Bearer " + adminTestToken}).want(t, http.StatusOK, "", "")
	e.send(t, "POST", "/import", file, map[string]string{"Authorization": "Bearer " + adminTestToken, "Content-Type": "application/x-www-form-urlencoded"}).
		want(t, http.StatusUnsupportedMediaType, "UNSUPPORTED_MEDIA_TYPE", "")

	for _, tc := range []struct{ name, body, code, msg string }{
		{"syntax", "{\"communities\": [\n {\"id\": \"x\",, }]}", "MALFORMED_REQUEST", `^line 2:14: malformed JSON`},
		{"rule", "{\"communities\": [\n {\"id\": \"x\", \"region\": \"EU\"}]}", "INVALID_FIELD", `^communities\[0\]\.region: must be one of`},
		{"supplier", "{\"communities\": [\n {\"id\": \"x\", \"region\": \"AU\", \"suppliers\": [\n  {\"id\": \"" + otherUUID + "\"}]}]}", "INVALID_FIELD", `^communities\[0\]\.suppliers\[0\]\.profileType: must be one of`},
		{"type", "{\"communities\": [\n {\"id\": \"x\", \"region\": \"AU\", \"suppliers\": [\n  {\"name\": 7}]}]}", "MALFORMED_REQUEST", `^line 3:\d+: communities\[0\]\.suppliers\[0\]\.name: must be a JSON string`},
		{"empty", "", "MALFORMED_REQUEST", `^line 1:1: `},
		{"no community", `{"communities": []}`, "INVALID_FIELD", `communities: must hold at least one community`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e.call(t, "POST", "/import", tc.body).want(t, http.StatusBadRequest, tc.code, tc.msg)
		})
	}
	// The store's own refusal (the community exists in this store): not
	// the file's fault, not a 400.
	if a := e.call(t, "POST", "/import", file); a.status/100 == 2 || a.status == http.StatusBadRequest {
		t.Errorf("importing a community memstore holds already: %d %s", a.status, a.body)
	}
	big := `{"communities": [{"id": "big", "region": "AU", "name": "` + strings.Repeat("x", 70<<10) + `"}]}`
	e.call(t, "POST", "/import", big).want(t, http.StatusRequestEntityTooLarge, "PAYLOAD_TOO_LARGE", "larger than 65536 bytes")

	without := newAdminEnv(t, admin.Options{})
	without.call(t, "POST", "/import", file).want(t, http.StatusNotImplemented, "NOT_IMPLEMENTED", "does not import")

	// An ImportFunc that names some kinds only: the answer has them all.
	partial := newAdminEnv(t, admin.Options{Import: func(_ context.Context, r io.Reader) (datafile.ImportCounts, error) {
		_, _ = io.Copy(io.Discard, r)
		return datafile.ImportCounts{datafile.KindSuppliers: {Created: 2, Unchanged: 1}}, nil
	}})
	a = partial.call(t, "POST", "/import", file)
	a.want(t, http.StatusOK, "", "")
	if m := a.json(t); m["suppliers"] != 3.0 || m["users"] != 0.0 || len(m["changes"].(map[string]any)) != len(datafile.Kinds) {
		t.Errorf("the answer of a partial ImportFunc: %s", a.body)
	}

	// An importer's refusals keep their statuses: a conflict is a 409, a
	// backend that is down a 503, anything else a 500 that shows nothing.
	for _, tc := range []struct {
		err    error
		status int
		code   string
	}{
		{fmt.Errorf("communities[0].id: community %q exists: %w", "x", procure.ErrConflict), http.StatusConflict, "CONFLICT"},
		{fmt.Errorf("pgstore: import: %w", procure.ErrUnavailable), http.StatusServiceUnavailable, "UNAVAILABLE"},
		{errors.New("disk on fire"), http.StatusInternalServerError, "INTERNAL_ERROR"},
	} {
		failing := newAdminEnv(t, admin.Options{Import: func(_ context.Context, r io.Reader) (datafile.ImportCounts, error) {
			_, _ = io.Copy(io.Discard, r)
			return nil, tc.err
		}})
		a := failing.call(t, "POST", "/import", file)
		a.want(t, tc.status, tc.code, "")
		if bytes.Contains(a.body, []byte("disk on fire")) {
			t.Errorf("a 500 shows its cause: %s", a.body)
		}
	}
}

// Writes through the admin API reach the supplier API at once; the
// request log names routes, never a secret.
func TestAdminRequestLog(t *testing.T) {
	forAdminStores(t, func(t *testing.T, e *adminEnv) {
		e.community(t, "acme-au")
		secret := e.token(t, "acme-au")
		e.publicGet(t, "/public/community/suppliers", "Authorization", "Bearer "+secret)
		logged := e.log.String()
		for _, want := range []string{
			`"method":"PUT","route":"/admin/v1/communities/{c}","status":200`,
			`"method":"POST","route":"/admin/v1/communities/{c}/tokens","status":201`,
			`"community":"acme-au"`,
		} {
			if !strings.Contains(logged, want) {
				t.Errorf("the log lacks %s:\n%s", want, logged)
			}
		}
	})
}

// MountAdmin refuses a configuration it cannot serve safely.
func TestMountAdminPanics(t *testing.T) {
	for name, opts := range map[string]admin.Options{
		"no token":    {Store: memstore.New()},
		"short token": {Store: memstore.New(), Token: strings.Repeat("x", admin.MinTokenBytes-1)},
		"no store":    {Token: adminTestToken},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			admin.Mount(http.NewServeMux(), opts)
		}()
	}
}

func ExampleMount() {
	store := memstore.New()
	mux := http.NewServeMux()
	admin.Mount(mux, admin.Options{Token: "example-admin-token", Store: store, Logger: slog.New(slog.DiscardHandler)})
	// Serve it on a listener of its own, never the public one.
	srv := httptest.NewServer(mux)
	defer srv.Close()

	req, _ := http.NewRequest(http.MethodPut, srv.URL+"/admin/v1/communities/acme-au",
		strings.NewReader(`{"name": "Acme", "region": "AU", "autoRoles": ["EMPLOYEE"]}`))
	req.Header.Set("Authorization", "Bearer example-admin-token")
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		panic(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	os.Stdout.WriteString(res.Status + " " + string(body))

	req, _ = http.NewRequest(http.MethodGet, srv.URL+"/admin/v1/communities/acme-au", nil) // no token
	res, err = http.DefaultClient.Do(req)
	if err != nil {
		panic(err)
	}
	body, _ = io.ReadAll(res.Body)
	res.Body.Close()
	os.Stdout.WriteString(res.Status + " " + res.Header.Get("WWW-Authenticate") + " " + string(body))
	// Output:
	// 200 OK {"id":"acme-au","name":"Acme","region":"AU","autoRoles":["EMPLOYEE"]}
	// 401 Unauthorized Bearer realm="admin" {"code":"UNAUTHORIZED","message":"authentication failed"}
}

// The validation above can fail: the document refuses what the API must
// never send.
func TestAdminSchemasReject(t *testing.T) {
	for _, tc := range []struct{ pointer, body string }{
		{"#/components/schemas/Token", `{"id":"x","name":"","scopes":[],"expires":null,"revoked":false,"createdAt":"2026-01-01T00:00:00Z","lastUsedAt":null,"hash":"ab"}`},
		{"#/components/schemas/Token", `{"id":"x","name":"","scopes":[],"expires":null,"revoked":false,"createdAt":"2026-01-01T00:00:00Z","lastUsedAt":null,"token":"procure_bt_x"}`},
		{"#/components/schemas/IssuedToken", `{"id":"x","name":"","token":"secret","scopes":[],"expires":null,"createdAt":"2026-01-01T00:00:00Z"}`},
		{"#/components/schemas/Key", `{"id":"x","active":true,"createdAt":"2026-01-01T00:00:00Z","lastUsedAt":null,"key":"procure_sk_x"}`},
		{"#/components/schemas/Community", `{"id":"x","name":"","region":"EU","autoRoles":[]}`},
		{"#/components/schemas/SupplierDetail", `{"id":"not-a-uuid"}`},
	} {
		v, err := jsonschema.UnmarshalJSON(strings.NewReader(tc.body))
		if err != nil {
			t.Fatal(err)
		}
		if compileAdminSchema(t, tc.pointer).Validate(v) == nil {
			t.Errorf("%s accepts %s", tc.pointer, tc.body)
		}
	}
}
