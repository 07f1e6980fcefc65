package httpapi_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/procurekit/procure/datafile"
	"github.com/procurekit/procure/httpapi"
	"github.com/procurekit/procure/httpapi/internal/apitest"
	"github.com/procurekit/procure/internal/syncbuf"
	"github.com/procurekit/procure/memstore"
	"github.com/procurekit/procure/user"
)

// Package httpapi's names, the aliases of the API packages' (httpapi.go),
// mount every API at once: each Handler behind a prefix, one request log.

// Fixtures of the supplier API's tests (suppliers/testdata/suppliers.json).
const (
	alphaToken = "test-alpha-read"
	acmeOffice = "a1000000-0000-4000-8000-000000000001"
)

// The served documents, for the validating proxy.
var (
	supplierAPI = apitest.Document("suppliers.json", httpapi.SupplierOpenAPI())
	userAPI     = apitest.Document("users.json", httpapi.UserOpenAPI())
	scimAPI     = apitest.Document("scim.json", httpapi.SCIMOpenAPI())
	adminAPI    = apitest.Document("admin.json", httpapi.AdminOpenAPI())
)

// serversURL is the URL of the one server an OpenAPI document lists.
func serversURL(tb testing.TB, body []byte) string {
	tb.Helper()
	var doc struct {
		Servers []struct {
			URL string `json:"url"`
		} `json:"servers"`
	}
	if err := json.Unmarshal(body, &doc); err != nil || len(doc.Servers) != 1 {
		tb.Fatalf("document servers: %v, %d servers", err, len(doc.Servers))
	}
	return doc.Servers[0].URL
}

// TestHandlersUnderAnyPrefix: each API's Handler works behind
// http.StripPrefix on any router and prefix, answers its own 404 and 405,
// serves its document with the prefix as the server, and RequestLog names
// the full route (issue: "Embedding in any router").
func TestHandlersUnderAnyPrefix(t *testing.T) {
	data, err := datafile.ReadFile(filepath.Join("suppliers", "testdata", "suppliers.json"))
	if err != nil {
		t.Fatal(err)
	}
	store, err := memstore.LoadReader(data.Reader())
	if err != nil {
		t.Fatal(err)
	}
	users, err := memstore.LoadReader(apitest.UserFixture().Reader())
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncbuf.Buffer{}
	quiet := slog.New(slog.NewTextHandler(logs, nil))
	mux := http.NewServeMux()
	mux.Handle("/procurement/", http.StripPrefix("/procurement", httpapi.SupplierHandler(httpapi.SupplierOptions{Store: store, Tokens: store, Logger: quiet})))
	mux.Handle("/hr/", http.StripPrefix("/hr", httpapi.UserHandler(httpapi.UserOptions{Users: user.NewService(users), Accounts: users, Logger: quiet})))
	mux.Handle("/idp/", http.StripPrefix("/idp", httpapi.SCIMHandler(httpapi.SCIMOptions{Users: user.NewService(users), Accounts: users, Logger: quiet})))
	root := http.NewServeMux() // the supplier API at a host's root
	root.Handle("/", httpapi.SupplierHandler(httpapi.SupplierOptions{Store: store, Tokens: store, Logger: quiet}))
	srv := httptest.NewServer(apitest.ValidatedBy(t, httpapi.RequestLog(slog.New(slog.NewJSONHandler(logs, nil)), mux),
		apitest.Under("/procurement", supplierAPI), apitest.Under("/hr", userAPI), apitest.Under("/idp", scimAPI)))
	t.Cleanup(srv.Close)
	rootSrv := httptest.NewServer(apitest.ValidatedBy(t, root, apitest.Under("/", supplierAPI)))
	t.Cleanup(rootSrv.Close)

	get := func(base, path string, header ...string) (int, http.Header, []byte) {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, base+path, nil)
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
		body, err := io.ReadAll(res.Body)
		if err != nil {
			t.Fatal(err)
		}
		return res.StatusCode, res.Header, body
	}

	bearer := []string{"Authorization", "Bearer " + alphaToken}
	if st, _, body := get(srv.URL, "/procurement/suppliers?size=2", bearer...); st != 200 || len(decodeBody[struct{ Content []any }](t, body).Content) != 2 {
		t.Errorf("GET /procurement/suppliers: %d %s; want 200 with 2 suppliers", st, body)
	}
	if st, _, body := get(srv.URL, "/procurement/suppliers/"+acmeOffice+"/contacts", bearer...); st != 200 {
		t.Errorf("GET contacts: %d %s", st, body)
	}
	if st, _, body := get(srv.URL, "/procurement/openapi.json"); st != 200 || serversURL(t, body) != "/procurement" {
		t.Errorf("GET /procurement/openapi.json: %d, servers %q; want 200, /procurement", st, serversURL(t, body))
	}
	if st, _, body := get(rootSrv.URL, "/openapi.json"); st != 200 || serversURL(t, body) != "/" {
		t.Errorf("GET /openapi.json at the root: %d, servers %q; want 200, /", st, serversURL(t, body))
	}
	if st, _, body := get(rootSrv.URL, "/suppliers", bearer...); st != 200 {
		t.Errorf("GET /suppliers at the root: %d %s", st, body)
	}
	if st, _, body := get(srv.URL, "/hr/v1/openapi.json"); st != 200 || serversURL(t, body) != "/hr" {
		t.Errorf("GET /hr/v1/openapi.json: %d, servers %q; want 200, /hr", st, serversURL(t, body))
	}
	if st, _, body := get(srv.URL, "/hr/v1/users/username/jdoe"); st != 401 || errorCode(t, body) != httpapi.CodeUnauthorized {
		t.Errorf("GET /hr/v1/users/username/jdoe without a key: %d %s; want 401", st, body)
	}
	if st, _, body := get(srv.URL, "/idp/scim/v2/openapi.json"); st != 200 || serversURL(t, body) != "/idp" {
		t.Errorf("GET /idp/scim/v2/openapi.json: %d, servers %q; want 200, /idp", st, serversURL(t, body))
	}
	if st, _, body := get(srv.URL, "/idp/scim/v2/ServiceProviderConfig"); st != 200 || !strings.Contains(string(body), "ServiceProviderConfig") {
		t.Errorf("GET /idp/scim/v2/ServiceProviderConfig: %d %s", st, body)
	}
	if st, _, body := get(srv.URL, "/idp/scim/v2/Users", "Authorization", "Bearer "+apitest.KeyA); st != 200 || !strings.Contains(string(body), "ListResponse") {
		t.Errorf("GET /idp/scim/v2/Users with a key: %d %s", st, body)
	}
	if st, _, body := get(srv.URL, "/procurement/nowhere", bearer...); st != 404 || errorCode(t, body) != httpapi.CodeNotFound {
		t.Errorf("GET /procurement/nowhere: %d %s; want a JSON 404", st, body)
	}
	req, _ := http.NewRequest(http.MethodDelete, srv.URL+"/procurement/suppliers", nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 405 || res.Header.Get("Allow") != "GET, HEAD" {
		t.Errorf("DELETE /procurement/suppliers: %d, Allow %q; want 405, GET, HEAD", res.StatusCode, res.Header.Get("Allow"))
	}
	for _, route := range []string{`"method":"GET","route":"/procurement/suppliers"`, `"route":"/procurement/suppliers/{supplierId}/contacts"`, `"route":"/hr/v1/openapi.json"`, `"method":"DELETE","route":"/procurement/suppliers","status":405`, `"route":"/idp/scim/v2/Users"`} {
		if !strings.Contains(logs.String(), route) {
			t.Errorf("the request log has no %s:\n%s", route, logs.String())
		}
	}
	// The document served under MountSuppliers is unchanged.
	plain := http.NewServeMux()
	httpapi.MountSuppliers(plain, httpapi.SupplierOptions{Store: store, Tokens: store, Logger: quiet})
	rec := httptest.NewRecorder()
	plain.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, httpapi.SupplierBasePath+"/openapi.json", nil))
	if got := serversURL(t, rec.Body.Bytes()); got != "/public/community" {
		t.Errorf("MountSuppliers' document lists server %q; want /public/community", got)
	}
}

func decodeBody[T any](tb testing.TB, body []byte) T {
	tb.Helper()
	var v T
	if err := json.Unmarshal(body, &v); err != nil {
		tb.Fatalf("decode %s: %v", body, err)
	}
	return v
}

func errorCode(tb testing.TB, body []byte) string {
	return decodeBody[httpapi.ErrorBody](tb, body).Code
}

// TestAdminHandlerUnderAnyPrefix: the admin API's Handler behind
// http.StripPrefix, as for the other APIs.
func TestAdminHandlerUnderAnyPrefix(t *testing.T) {
	store := memstore.New()
	logs := &syncbuf.Buffer{}
	mux := http.NewServeMux()
	mux.Handle("/ops/", http.StripPrefix("/ops", httpapi.AdminHandler(httpapi.AdminOptions{Token: "admin-secret-0123456789", Store: store, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})))
	srv := httptest.NewServer(apitest.ValidatedBy(t, httpapi.RequestLog(slog.New(slog.NewJSONHandler(logs, nil)), mux), apitest.Under("/ops", adminAPI)))
	t.Cleanup(srv.Close)
	do := func(method, path, token, body string) (int, []byte) {
		t.Helper()
		req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, b
	}
	if st, body := do("GET", "/ops/openapi.json", "", ""); st != 200 || serversURL(t, body) != "/ops" {
		t.Errorf("GET /ops/openapi.json: %d, servers %q; want 200, /ops", st, serversURL(t, body))
	}
	if st, body := do("PUT", "/ops/communities/acme", "", `{"name":"Acme","region":"AU"}`); st != 401 {
		t.Errorf("PUT without the admin token: %d %s; want 401", st, body)
	}
	if st, body := do("PUT", "/ops/communities/acme", "admin-secret-0123456789", `{"name":"Acme","region":"AU"}`); st != 200 || !strings.Contains(string(body), `"id":"acme"`) {
		t.Errorf("PUT /ops/communities/acme: %d %s; want 200 with the community", st, body)
	}
	if st, body := do("GET", "/ops/communities/acme", "admin-secret-0123456789", ""); st != 200 {
		t.Errorf("GET /ops/communities/acme: %d %s", st, body)
	}
	if st, body := do("GET", "/ops/nowhere", "admin-secret-0123456789", ""); st != 404 || errorCode(t, body) != httpapi.CodeNotFound {
		t.Errorf("GET /ops/nowhere: %d %s; want a JSON 404", st, body)
	}
	if !strings.Contains(logs.String(), `"method":"PUT","route":"/ops/communities/{c}"`) {
		t.Errorf("the request log has no full admin route:\n%s", logs.String())
	}
}
