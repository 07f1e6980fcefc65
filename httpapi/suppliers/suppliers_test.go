package suppliers_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/procurekit/procure/auth"
	"github.com/procurekit/procure/datafile"
	"github.com/procurekit/procure/httpapi/internal/apitest"
	"github.com/procurekit/procure/httpapi/internal/httpx"
	"github.com/procurekit/procure/httpapi/suppliers"
	"github.com/procurekit/procure/internal/syncbuf"
	"github.com/procurekit/procure/memstore"
	"github.com/procurekit/procure/paging"
	"github.com/procurekit/procure/supplier"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// testNow is the clock of every test server: test-alpha-expired expires
// exactly now (so it is rejected), test-alpha-expiring a microsecond later.
var testNow = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

// Ids of the test data (testdata/suppliers.json).
const (
	acmeOffice = "a1000000-0000-4000-8000-000000000001"
	acmeLabs   = "a1000000-0000-4000-8000-000000000002"
	boltFreigh = "a1000000-0000-4000-8000-000000000003"
	zoeNgata   = "a1000000-0000-4000-8000-000000000004" // INDIVIDUAL, no name
	cafeMuller = "a1000000-0000-4000-8000-000000000005"
	betaOnly   = "b2000000-0000-4000-8000-000000000001"

	alphaToken = "test-alpha-read"
	betaToken  = "test-beta-read"
)

const base = suppliers.BasePath

// supplierAPI is the served document, for the validating proxy.
var supplierAPI = apitest.Document("suppliers.json", suppliers.OpenAPI())

// testServer is the supplier API mounted on a fresh mux, with what it logs;
// handler is the mux behind the validating proxy (apitest.ValidatedBy).
type testServer struct {
	mux     *http.ServeMux
	handler http.Handler
	log     *syncbuf.Buffer
}

// loadTestStore loads testdata/suppliers.json into a memstore.
func loadTestStore(tb testing.TB) *memstore.Store {
	tb.Helper()
	f, err := datafile.ReadFile(filepath.Join("testdata", "suppliers.json"))
	if err != nil {
		tb.Fatal(err)
	}
	s, err := memstore.LoadReader(f.Reader())
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// newServer mounts the API over store and tokens (the test data's memstore
// when nil).
func newServer(tb testing.TB, store supplier.Store, tokens auth.TokenStore) *testServer {
	tb.Helper()
	if store == nil || tokens == nil {
		ms := loadTestStore(tb)
		if store == nil {
			store = ms
		}
		if tokens == nil {
			tokens = ms
		}
	}
	ts := &testServer{mux: http.NewServeMux(), log: &syncbuf.Buffer{}}
	suppliers.Mount(ts.mux, suppliers.Options{
		Store:  store,
		Tokens: tokens,
		Logger: slog.New(slog.NewJSONHandler(ts.log, nil)),
		Now:    func() time.Time { return testNow },
	})
	ts.handler = apitest.ValidatedBy(tb, ts.mux, supplierAPI)
	return ts
}

// response is what a request got.
type response struct {
	status int
	header http.Header
	body   []byte
}

// do sends a request with the given Authorization header value (none when
// empty) through the validating proxy, which checks an operation's answer
// against the OpenAPI document, and checks what holds for every response
// of the API beyond it: a JSON content type, and the Error schema for
// answers outside the operations (404 of an unknown route, 405).
func (ts *testServer) do(tb testing.TB, method, target, authorization string) response {
	tb.Helper()
	req := httptest.NewRequest(method, target, nil)
	if authorization != "" {
		req.Header.Set("Authorization", authorization)
	}
	rec := httptest.NewRecorder()
	ts.handler.ServeHTTP(rec, req)
	res := response{status: rec.Code, header: rec.Header(), body: rec.Body.Bytes()}
	if ct := res.header.Get("Content-Type"); ct != "application/json" {
		tb.Errorf("%s %s: Content-Type %q, want application/json", method, target, ct)
	}
	if method == http.MethodHead {
		if len(res.body) != 0 {
			tb.Errorf("HEAD %s: a body of %d bytes", target, len(res.body))
		}
		return res
	}
	if operationPath(req.URL.Path) == "" || method != http.MethodGet {
		apitest.CheckSchema(tb, suppliers.OpenAPI(), "Error", res.body)
	}
	return res
}

// get is do for GET with a bearer token (none when token is empty).
func (ts *testServer) get(tb testing.TB, target, token string) response {
	tb.Helper()
	authz := ""
	if token != "" {
		authz = "Bearer " + token
	}
	return ts.do(tb, http.MethodGet, target, authz)
}

// operationPath maps a request path to the OpenAPI path of the operation
// it addresses, or "" when it addresses none.
func operationPath(p string) string {
	rest, ok := strings.CutPrefix(p, base)
	if !ok {
		return ""
	}
	parts := strings.Split(strings.TrimPrefix(rest, "/"), "/")
	switch {
	case rest == "/suppliers":
		return "/suppliers"
	case rest == "/openapi.json":
		return "/openapi.json"
	case len(parts) == 2 && parts[0] == "suppliers" && parts[1] != "":
		return "/suppliers/{id}"
	case len(parts) == 3 && parts[0] == "suppliers" && parts[1] != "" && parts[2] == "contacts":
		return "/suppliers/{supplierId}/contacts"
	case len(parts) == 3 && parts[0] == "suppliers" && parts[1] != "" && parts[2] == "remittance-addresses":
		return "/suppliers/{supplierId}/remittance-addresses"
	}
	return ""
}

// errorBody decodes an error response.
func errorBody(tb testing.TB, r response) httpx.ErrorBody {
	tb.Helper()
	var e httpx.ErrorBody
	if err := json.Unmarshal(r.body, &e); err != nil {
		tb.Fatalf("error body %s: %v", r.body, err)
	}
	return e
}

// page is a list response with items decoded as generic objects.
type page struct {
	Content []map[string]any `json:"content"`
	Page    paging.Metadata  `json:"page"`
}

func decodePage(tb testing.TB, r response) page {
	tb.Helper()
	if r.status != http.StatusOK {
		tb.Fatalf("status %d, want 200: %s", r.status, r.body)
	}
	var p page
	if err := json.Unmarshal(r.body, &p); err != nil {
		tb.Fatalf("page %s: %v", r.body, err)
	}
	return p
}

// ids lists the ids of a page's items in order.
func (p page) ids() []string {
	out := make([]string, len(p.Content))
	for i, c := range p.Content {
		out[i], _ = c["id"].(string)
	}
	return out
}

// The four API routes, with an id of the alpha community where they take
// one.
var apiRoutes = []string{
	base + "/suppliers",
	base + "/suppliers/" + acmeOffice,
	base + "/suppliers/" + acmeOffice + "/contacts",
	base + "/suppliers/" + acmeOffice + "/remittance-addresses",
}

// docs: suppliers.md "Authentication": missing header, other scheme,
// empty, unknown, revoked or expired token is a 401 with
// `WWW-Authenticate: Bearer`; "Tenancy": a token without suppliers:read is
// a 403; the scheme word is case-insensitive.
func TestAuthentication(t *testing.T) {
	ts := newServer(t, nil, nil)
	tests := []struct {
		name          string
		authorization string
		status        int
		code          string
		wwwAuth       string
	}{
		{"no header", "", 401, httpx.CodeUnauthorized, "Bearer"},
		{"other scheme", "Basic dGVzdDp0ZXN0", 401, httpx.CodeUnauthorized, "Bearer"},
		{"token without scheme", alphaToken, 401, httpx.CodeUnauthorized, "Bearer"},
		{"empty token", "Bearer ", 401, httpx.CodeUnauthorized, "Bearer"},
		{"scheme only", "Bearer", 401, httpx.CodeUnauthorized, "Bearer"},
		{"unknown token", "Bearer test-alpha-unknown", 401, httpx.CodeUnauthorized, "Bearer"},
		{"token with a different case", "Bearer TEST-ALPHA-READ", 401, httpx.CodeUnauthorized, "Bearer"},
		{"revoked token", "Bearer test-alpha-revoked", 401, httpx.CodeUnauthorized, "Bearer"},
		{"token expiring exactly now", "Bearer test-alpha-expired", 401, httpx.CodeUnauthorized, "Bearer"},
		{"token without the scope", "Bearer test-alpha-noscope", 403, httpx.CodeForbidden,
			`Bearer error="insufficient_scope", scope="suppliers:read"`},
		{"valid token", "Bearer " + alphaToken, 200, "", ""},
		{"lower-case scheme", "bearer " + alphaToken, 200, "", ""},
		{"upper-case scheme", "BEARER " + alphaToken, 200, "", ""},
		{"token expiring a microsecond from now", "Bearer test-alpha-expiring", 200, "", ""},
	}
	for _, route := range apiRoutes {
		for _, tt := range tests {
			t.Run(operationPath(route)+"/"+tt.name, func(t *testing.T) {
				res := ts.do(t, http.MethodGet, route, tt.authorization)
				if res.status != tt.status {
					t.Fatalf("status %d, want %d: %s", res.status, tt.status, res.body)
				}
				if got := res.header.Get("WWW-Authenticate"); got != tt.wwwAuth {
					t.Errorf("WWW-Authenticate %q, want %q", got, tt.wwwAuth)
				}
				if tt.code == "" {
					return
				}
				want := httpx.ErrorBody{Code: tt.code, Message: "authentication failed"}
				if tt.status == http.StatusForbidden {
					want.Message = "access denied: the credential lacks the scope suppliers:read"
				}
				if diff := cmp.Diff(want, errorBody(t, res)); diff != "" {
					t.Errorf("error body (-want +got):\n%s", diff)
				}
			})
		}
	}
	// A secret is never logged, whatever happened to it.
	if strings.Contains(ts.log.String(), "test-alpha") {
		t.Errorf("the log holds a token: %s", ts.log)
	}
}

// docs: tenancy.md: a token sees only its community; a supplier of
// another community (or its contacts and addresses) is a 404, never a 403.
func TestTenancy(t *testing.T) {
	ts := newServer(t, nil, nil)

	if got := decodePage(t, ts.get(t, base+"/suppliers", betaToken)).ids(); !cmp.Equal(got, []string{betaOnly}) {
		t.Errorf("beta's list: %v, want only %s", got, betaOnly)
	}
	for _, suffix := range []string{"", "/contacts", "/remittance-addresses"} {
		for _, c := range []struct{ token, id string }{{betaToken, acmeOffice}, {alphaToken, betaOnly}} {
			target := base + "/suppliers/" + c.id + suffix
			res := ts.get(t, target, c.token)
			want := httpx.ErrorBody{Code: httpx.CodeSupplierNotFound, Message: "supplier not found"}
			if res.status != http.StatusNotFound {
				t.Errorf("GET %s with %s: status %d, want 404", target, c.token, res.status)
			} else if diff := cmp.Diff(want, errorBody(t, res)); diff != "" {
				t.Errorf("GET %s: error body (-want +got):\n%s", target, diff)
			}
		}
	}
}

// docs: suppliers.md "Endpoints" and docs: paging.md: default order by name, ascending,
// case-insensitively, nameless suppliers last in both directions; page and
// size; a page past the end is 200 with empty content and the true totals.
func TestListSuppliers(t *testing.T) {
	ts := newServer(t, nil, nil)
	tests := []struct {
		name  string
		query string
		ids   []string
		meta  paging.Metadata
	}{
		{"default order is name ascending, case-insensitive, nameless last", "",
			[]string{acmeLabs, acmeOffice, boltFreigh, cafeMuller, zoeNgata}, paging.Metadata{Size: 20, Number: 0, TotalElements: 5, TotalPages: 1}},
		{"name descending keeps nameless last", "?sort=name,desc",
			[]string{cafeMuller, boltFreigh, acmeOffice, acmeLabs, zoeNgata}, paging.Metadata{Size: 20, TotalElements: 5, TotalPages: 1}},
		{"direction is case-insensitive", "?sort=name,DESC",
			[]string{cafeMuller, boltFreigh, acmeOffice, acmeLabs, zoeNgata}, paging.Metadata{Size: 20, TotalElements: 5, TotalPages: 1}},
		{"explicit asc", "?sort=name,asc",
			[]string{acmeLabs, acmeOffice, boltFreigh, cafeMuller, zoeNgata}, paging.Metadata{Size: 20, TotalElements: 5, TotalPages: 1}},
		{"modifiedDate", "?sort=modifiedDate",
			[]string{zoeNgata, boltFreigh, acmeOffice, cafeMuller, acmeLabs}, paging.Metadata{Size: 20, TotalElements: 5, TotalPages: 1}},
		{"createdDate descending", "?sort=createdDate,desc",
			[]string{zoeNgata, acmeLabs, acmeOffice, boltFreigh, cafeMuller}, paging.Metadata{Size: 20, TotalElements: 5, TotalPages: 1}},
		{"first page of two", "?size=2",
			[]string{acmeLabs, acmeOffice}, paging.Metadata{Size: 2, Number: 0, TotalElements: 5, TotalPages: 3}},
		{"middle page", "?size=2&page=1",
			[]string{boltFreigh, cafeMuller}, paging.Metadata{Size: 2, Number: 1, TotalElements: 5, TotalPages: 3}},
		{"last, partial page", "?size=2&page=2",
			[]string{zoeNgata}, paging.Metadata{Size: 2, Number: 2, TotalElements: 5, TotalPages: 3}},
		{"page past the end", "?size=2&page=3",
			[]string{}, paging.Metadata{Size: 2, Number: 3, TotalElements: 5, TotalPages: 3}},
		{"page far past the end", "?page=9223372036854775807",
			[]string{}, paging.Metadata{Size: 20, Number: 9223372036854775807, TotalElements: 5, TotalPages: 1}},
		{"size 100", "?size=100",
			[]string{acmeLabs, acmeOffice, boltFreigh, cafeMuller, zoeNgata}, paging.Metadata{Size: 100, TotalElements: 5, TotalPages: 1}},
		{"unknown parameters are ignored", "?colour=blue",
			[]string{acmeLabs, acmeOffice, boltFreigh, cafeMuller, zoeNgata}, paging.Metadata{Size: 20, TotalElements: 5, TotalPages: 1}},

		// docs: filters.md: query is a case-insensitive starts-with on
		// name, legal business name, keywords or supplierId.
		{"query on name, any case", "?query=ACME",
			[]string{acmeLabs, acmeOffice}, paging.Metadata{Size: 20, TotalElements: 2, TotalPages: 1}},
		{"query on legal business name", "?query=thunder",
			[]string{boltFreigh}, paging.Metadata{Size: 20, TotalElements: 1, TotalPages: 1}},
		{"query on a keyword", "?query=cour",
			[]string{boltFreigh}, paging.Metadata{Size: 20, TotalElements: 1, TotalPages: 1}},
		{"query on supplierId", "?query=ind-",
			[]string{zoeNgata}, paging.Metadata{Size: 20, TotalElements: 1, TotalPages: 1}},
		{"query with non-ASCII letters", "?query=caf%C3%89",
			[]string{cafeMuller}, paging.Metadata{Size: 20, TotalElements: 1, TotalPages: 1}},
		{"query is starts-with, not contains", "?query=office",
			[]string{}, paging.Metadata{Size: 20, TotalElements: 0, TotalPages: 0}},
		{"empty query is no filter", "?query=",
			[]string{acmeLabs, acmeOffice, boltFreigh, cafeMuller, zoeNgata}, paging.Metadata{Size: 20, TotalElements: 5, TotalPages: 1}},
		{"query and paging", "?query=a&size=1&page=1",
			[]string{acmeOffice}, paging.Metadata{Size: 1, Number: 1, TotalElements: 2, TotalPages: 2}},

		// modifiedSince is inclusive; a date means 00:00 UTC; a space is
		// read as the offset's +.
		{"modifiedSince a date is inclusive at 00:00 UTC", "?modifiedSince=2026-05-01",
			[]string{acmeLabs}, paging.Metadata{Size: 20, TotalElements: 1, TotalPages: 1}},
		{"modifiedSince with an offset", "?modifiedSince=2026-05-01T09:30:00%2B12:00",
			[]string{acmeLabs, cafeMuller}, paging.Metadata{Size: 20, TotalElements: 2, TotalPages: 1}},
		{"modifiedSince with an unencoded +", "?modifiedSince=2026-05-01T09:30:00+12:00",
			[]string{acmeLabs, cafeMuller}, paging.Metadata{Size: 20, TotalElements: 2, TotalPages: 1}},
		{"modifiedSince one microsecond later", "?modifiedSince=2026-04-30T21:30:00.000001Z",
			[]string{acmeLabs}, paging.Metadata{Size: 20, TotalElements: 1, TotalPages: 1}},
		{"modifiedSince at microsecond precision, inclusive", "?modifiedSince=2026-04-30T10:00:00.123456Z",
			[]string{acmeLabs, acmeOffice, cafeMuller}, paging.Metadata{Size: 20, TotalElements: 3, TotalPages: 1}},
		{"modifiedSince with a negative offset", "?modifiedSince=2026-04-30T05:00:01-05:00",
			[]string{acmeLabs, cafeMuller}, paging.Metadata{Size: 20, TotalElements: 2, TotalPages: 1}},
		{"modifiedSince and query", "?modifiedSince=2026-01-01&query=acme&sort=modifiedDate,desc",
			[]string{acmeLabs, acmeOffice}, paging.Metadata{Size: 20, TotalElements: 2, TotalPages: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := decodePage(t, ts.get(t, base+"/suppliers"+tt.query, alphaToken))
			if diff := cmp.Diff(tt.ids, p.ids()); diff != "" {
				t.Errorf("ids (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.meta, p.Page); diff != "" {
				t.Errorf("page (-want +got):\n%s", diff)
			}
		})
	}
}

// Paging through a list with every sort meets every supplier exactly once
// (docs: paging.md: ties break on id).
func TestListSuppliersPagingMeetsEachOnce(t *testing.T) {
	ts := newServer(t, nil, nil)
	for _, sort := range []string{"name", "name,desc", "createdDate", "createdDate,desc", "modifiedDate", "modifiedDate,desc"} {
		var seen []string
		for pg := 0; ; pg++ {
			p := decodePage(t, ts.get(t, base+"/suppliers?size=2&sort="+sort+"&page="+itoa(pg), alphaToken))
			seen = append(seen, p.ids()...)
			// docs: suppliers.md "Endpoints": stop when page.number + 1 >= page.totalPages.
			if p.Page.Number+1 >= p.Page.TotalPages {
				break
			}
		}
		if len(seen) != 5 || len(unique(seen)) != 5 {
			t.Errorf("sort=%s: paging met %v, want each of the 5 suppliers once", sort, seen)
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

func unique(s []string) map[string]bool {
	m := map[string]bool{}
	for _, v := range s {
		m[v] = true
	}
	return m
}

// The contacts list: ordered by name, case-insensitively (docs: paging.md); no sort, query or modifiedSince parameter (docs: suppliers.md "Endpoints"), so those
// are ignored rather than rejected.
func TestListContacts(t *testing.T) {
	ts := newServer(t, nil, nil)
	const c1, c2, c3 = "a1000000-0000-4000-8000-0000000000c1", "a1000000-0000-4000-8000-0000000000c2", "a1000000-0000-4000-8000-0000000000c3"
	tests := []struct {
		name  string
		query string
		ids   []string
		meta  paging.Metadata
	}{
		{"by name, case-insensitive", "", []string{c1, c2, c3}, paging.Metadata{Size: 20, TotalElements: 3, TotalPages: 1}},
		{"second page", "?size=2&page=1", []string{c3}, paging.Metadata{Size: 2, Number: 1, TotalElements: 3, TotalPages: 2}},
		{"past the end", "?page=1", []string{}, paging.Metadata{Size: 20, Number: 1, TotalElements: 3, TotalPages: 1}},
		{"sort is not a parameter of contacts", "?sort=bogus,sideways", []string{c1, c2, c3}, paging.Metadata{Size: 20, TotalElements: 3, TotalPages: 1}},
		{"nor modifiedSince or query", "?modifiedSince=junk&query=zzz", []string{c1, c2, c3}, paging.Metadata{Size: 20, TotalElements: 3, TotalPages: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := decodePage(t, ts.get(t, base+"/suppliers/"+acmeOffice+"/contacts"+tt.query, alphaToken))
			if diff := cmp.Diff(tt.ids, p.ids()); diff != "" {
				t.Errorf("ids (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.meta, p.Page); diff != "" {
				t.Errorf("page (-want +got):\n%s", diff)
			}
		})
	}
	// A supplier without contacts has an empty first page, not a 404.
	p := decodePage(t, ts.get(t, base+"/suppliers/"+acmeLabs+"/contacts", alphaToken))
	if diff := cmp.Diff(page{Content: []map[string]any{}, Page: paging.Metadata{Size: 20}}, p); diff != "" {
		t.Errorf("empty contacts (-want +got):\n%s", diff)
	}
}

// The remittance-address list: default order companyName ascending,
// nameless last; sort on companyName or modifiedDate; modifiedSince.
func TestListRemittanceAddresses(t *testing.T) {
	ts := newServer(t, nil, nil)
	const a1, a2, a3 = "a1000000-0000-4000-8000-0000000000a1", "a1000000-0000-4000-8000-0000000000a2", "a1000000-0000-4000-8000-0000000000a3"
	tests := []struct {
		name  string
		query string
		ids   []string
		meta  paging.Metadata
	}{
		{"by companyName, case-insensitive, nameless last", "", []string{a1, a2, a3}, paging.Metadata{Size: 20, TotalElements: 3, TotalPages: 1}},
		{"companyName descending, nameless still last", "?sort=companyName,desc", []string{a2, a1, a3}, paging.Metadata{Size: 20, TotalElements: 3, TotalPages: 1}},
		{"modifiedDate descending", "?sort=modifiedDate,desc", []string{a3, a2, a1}, paging.Metadata{Size: 20, TotalElements: 3, TotalPages: 1}},
		{"modifiedSince, inclusive", "?modifiedSince=2026-04-01T00:00:00Z", []string{a2, a3}, paging.Metadata{Size: 20, TotalElements: 2, TotalPages: 1}},
		{"modifiedSince and paging", "?modifiedSince=2026-01-01&size=1&page=1&sort=modifiedDate", []string{a2}, paging.Metadata{Size: 1, Number: 1, TotalElements: 3, TotalPages: 3}},
		{"query is not a parameter of addresses", "?query=zzz", []string{a1, a2, a3}, paging.Metadata{Size: 20, TotalElements: 3, TotalPages: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := decodePage(t, ts.get(t, base+"/suppliers/"+acmeOffice+"/remittance-addresses"+tt.query, alphaToken))
			if diff := cmp.Diff(tt.ids, p.ids()); diff != "" {
				t.Errorf("ids (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.meta, p.Page); diff != "" {
				t.Errorf("page (-want +got):\n%s", diff)
			}
		})
	}
}

// Every rule a parameter breaks is a 400 INVALID_PARAMETER whose message
// names the parameter and the rule (docs: paging.md, "Filters").
func TestParameterErrors(t *testing.T) {
	ts := newServer(t, nil, nil)
	list := base + "/suppliers"
	one := base + "/suppliers/"
	contacts := base + "/suppliers/" + acmeOffice + "/contacts"
	addresses := base + "/suppliers/" + acmeOffice + "/remittance-addresses"
	long := strings.Repeat("é", 256)
	tests := []struct {
		name    string
		target  string
		message string
	}{
		{"size 0", list + "?size=0", "size: must be from 1 to 100 (got 0)"},
		{"size over 100", list + "?size=101", "size: must be from 1 to 100 (got 101)"},
		{"size not a number", list + "?size=ten", `size: must be an integer from 1 to 100 (got "ten")`},
		{"size empty", list + "?size=", `size: must be an integer from 1 to 100 (got "")`},
		{"size twice", list + "?size=10&size=20", "size: must be given at most once"},
		{"negative page", list + "?page=-1", "page: must be >= 0 (got -1)"},
		{"fractional page", list + "?page=1.5", `page: must be an integer >= 0 (got "1.5")`},
		{"page and size both wrong", list + "?page=-1&size=0", "page: must be >= 0 (got -1); size: must be from 1 to 100 (got 0)"},
		{"unknown sort field", list + "?sort=companyName", `sort: field must be one of name, createdDate, modifiedDate (got "companyName")`},
		{"unknown sort direction", list + "?sort=name,up", `sort: direction must be asc or desc (got "up")`},
		{"sort twice", list + "?sort=name&sort=createdDate", "sort: must be given at most once"},
		{"query over 255 characters", list + "?query=" + long, "query: must be at most 255 characters (got 256)"},
		{"query twice", list + "?query=a&query=b", "query: must be given at most once"},
		{"query not UTF-8", list + "?query=%FF", "query: must be valid UTF-8 text"},
		{"modifiedSince without offset", list + "?modifiedSince=2026-05-01T09:30:00",
			`modifiedSince: must include a UTC offset: Z or +hh:mm or -hh:mm (got "2026-05-01T09:30:00")`},
		{"modifiedSince not a date", list + "?modifiedSince=yesterday",
			`modifiedSince: must be an RFC 3339 date-time with a UTC offset (2026-05-01T09:30:00+12:00 or 2026-05-01T09:30:00Z) or a date (2026-05-01) (got "yesterday")`},
		{"modifiedSince twice", list + "?modifiedSince=2026-05-01&modifiedSince=2026-05-02", "modifiedSince: must be given at most once"},
		{"every wrong parameter at once", list + "?query=" + long + "&modifiedSince=2026-13-01&page=x&size=0&sort=id",
			`query: must be at most 255 characters (got 256); ` +
				`modifiedSince: must be an RFC 3339 date-time with a UTC offset (2026-05-01T09:30:00+12:00 or 2026-05-01T09:30:00Z) or a date (2026-05-01) (got "2026-13-01"); ` +
				`page: must be an integer >= 0 (got "x"); size: must be from 1 to 100 (got 0); ` +
				`sort: field must be one of name, createdDate, modifiedDate (got "id")`},
		{"malformed query string", list + "?size=%zz", `malformed query string: invalid URL escape "%zz"`},
		{"semicolon separator", list + "?size=1;page=2", "malformed query string: invalid semicolon separator in query"},

		{"id not a UUID", one + "acme", `id: must be a UUID such as 3f2b8a4e-1c2d-4e5f-8a9b-0c1d2e3f4a5b (got "acme")`},
		{"id in braces", one + "{" + acmeOffice + "}", `id: must be a UUID such as 3f2b8a4e-1c2d-4e5f-8a9b-0c1d2e3f4a5b (got "{` + acmeOffice + `}")`},
		{"id as a URN", one + "urn:uuid:" + acmeOffice, `id: must be a UUID such as 3f2b8a4e-1c2d-4e5f-8a9b-0c1d2e3f4a5b (got "urn:uuid:` + acmeOffice + `")`},
		{"id without dashes", one + strings.ReplaceAll(acmeOffice, "-", ""),
			`id: must be a UUID such as 3f2b8a4e-1c2d-4e5f-8a9b-0c1d2e3f4a5b (got "a100000000004000800000000000000` + `1")`},
		{"id with an encoded slash", one + "a%2Fb", `id: must be a UUID such as 3f2b8a4e-1c2d-4e5f-8a9b-0c1d2e3f4a5b (got "a/b")`},
		{"contacts supplierId not a UUID", base + "/suppliers/42/contacts", `supplierId: must be a UUID such as 3f2b8a4e-1c2d-4e5f-8a9b-0c1d2e3f4a5b (got "42")`},
		{"addresses supplierId not a UUID", base + "/suppliers/42/remittance-addresses", `supplierId: must be a UUID such as 3f2b8a4e-1c2d-4e5f-8a9b-0c1d2e3f4a5b (got "42")`},
		{"a long bad id is cut short", one + strings.Repeat("x", 100), `id: must be a UUID such as 3f2b8a4e-1c2d-4e5f-8a9b-0c1d2e3f4a5b (got "` + strings.Repeat("x", 64) + `"...)`},

		{"contacts size", contacts + "?size=500", "size: must be from 1 to 100 (got 500)"},
		{"contacts page", contacts + "?page=-3", "page: must be >= 0 (got -3)"},
		{"addresses sort on a supplier field", addresses + "?sort=name", `sort: field must be one of companyName, modifiedDate (got "name")`},
		{"addresses modifiedSince", addresses + "?modifiedSince=2026-02-30", `modifiedSince: must be an RFC 3339 date-time with a UTC offset (2026-05-01T09:30:00+12:00 or 2026-05-01T09:30:00Z) or a date (2026-05-01) (got "2026-02-30")`},
		{"addresses size and sort", addresses + "?size=0&sort=companyName,sideways", `size: must be from 1 to 100 (got 0); sort: direction must be asc or desc (got "sideways")`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := ts.get(t, tt.target, alphaToken)
			if res.status != http.StatusBadRequest {
				t.Fatalf("status %d, want 400: %s", res.status, res.body)
			}
			want := httpx.ErrorBody{Code: httpx.CodeInvalidParameter, Message: tt.message}
			if diff := cmp.Diff(want, errorBody(t, res)); diff != "" {
				t.Errorf("error body (-want +got):\n%s", diff)
			}
		})
	}
}

// Authentication comes before parameter checks: an anonymous caller learns
// nothing about which parameters are wrong.
func TestAuthenticationBeforeParameters(t *testing.T) {
	ts := newServer(t, nil, nil)
	for _, target := range []string{base + "/suppliers?size=0", base + "/suppliers/not-a-uuid", base + "/suppliers/" + betaOnly} {
		if res := ts.get(t, target, ""); res.status != http.StatusUnauthorized {
			t.Errorf("GET %s without a token: status %d, want 401", target, res.status)
		}
		if res := ts.get(t, target, "test-alpha-noscope"); res.status != http.StatusForbidden {
			t.Errorf("GET %s without the scope: status %d, want 403", target, res.status)
		}
	}
}

// Path ids: the 36-character form is accepted in either case of hex digit.
func TestUpperCaseIDIsAccepted(t *testing.T) {
	ts := newServer(t, nil, nil)
	res := ts.get(t, base+"/suppliers/"+strings.ToUpper(acmeOffice), alphaToken)
	if res.status != http.StatusOK {
		t.Fatalf("status %d, want 200: %s", res.status, res.body)
	}
	var d map[string]any
	if err := json.Unmarshal(res.body, &d); err != nil {
		t.Fatal(err)
	}
	if d["id"] != acmeOffice {
		t.Errorf("id %v, want %s (canonical, lower case)", d["id"], acmeOffice)
	}
}

func TestUnknownSupplier(t *testing.T) {
	ts := newServer(t, nil, nil)
	unknown := uuid.NewString()
	for _, suffix := range []string{"", "/contacts", "/remittance-addresses"} {
		res := ts.get(t, base+"/suppliers/"+unknown+suffix, alphaToken)
		if res.status != http.StatusNotFound {
			t.Fatalf("GET .../%s%s: status %d, want 404", unknown, suffix, res.status)
		}
		if diff := cmp.Diff(httpx.ErrorBody{Code: httpx.CodeSupplierNotFound, Message: "supplier not found"}, errorBody(t, res)); diff != "" {
			t.Errorf("error body (-want +got):\n%s", diff)
		}
	}
}

// docs: routes.md: any other method on a known path is a 405 with an
// Allow header and the JSON error body; a path that is no route is a JSON
// 404.
func TestMethodsAndRoutes(t *testing.T) {
	ts := newServer(t, nil, nil)
	paths := append(append([]string{}, apiRoutes...), base+"/openapi.json")
	for _, p := range paths {
		for _, m := range []string{http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodOptions} {
			res := ts.do(t, m, p, "Bearer "+alphaToken)
			if res.status != http.StatusMethodNotAllowed {
				t.Errorf("%s %s: status %d, want 405", m, p, res.status)
				continue
			}
			if got := res.header.Get("Allow"); got != "GET, HEAD" {
				t.Errorf("%s %s: Allow %q, want \"GET, HEAD\"", m, p, got)
			}
			if code := errorBody(t, res).Code; code != httpx.CodeMethodNotAllowed {
				t.Errorf("%s %s: code %s, want %s", m, p, code, httpx.CodeMethodNotAllowed)
			}
		}
	}
	for _, p := range []string{
		base, base + "/", base + "/supplier", base + "/suppliers/", base + "/suppliers/" + acmeOffice + "/",
		base + "/suppliers/" + acmeOffice + "/bank-accounts", base + "/suppliers/" + acmeOffice + "/contacts/x",
	} {
		res := ts.get(t, p, alphaToken)
		if res.status != http.StatusNotFound {
			t.Errorf("GET %s: status %d, want 404", p, res.status)
			continue
		}
		want := httpx.ErrorBody{Code: httpx.CodeNotFound, Message: "no route for " + p}
		if diff := cmp.Diff(want, errorBody(t, res)); diff != "" {
			t.Errorf("GET %s: error body (-want +got):\n%s", p, diff)
		}
	}
}

// HEAD answers like GET without a body, with the same headers (through a
// real server: a recorder keeps what a handler writes even for HEAD).
func TestHead(t *testing.T) {
	ts := newServer(t, nil, nil)
	srv := httptest.NewServer(ts.handler)
	t.Cleanup(srv.Close)
	for _, p := range append(append([]string{}, apiRoutes...), base+"/suppliers?size=0", base+"/openapi.json") {
		get := ts.get(t, p, alphaToken)
		req, err := http.NewRequest(http.MethodHead, srv.URL+p, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+alphaToken)
		res, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if res.StatusCode != get.status {
			t.Errorf("HEAD %s: status %d, GET gave %d", p, res.StatusCode, get.status)
		}
		if len(body) != 0 {
			t.Errorf("HEAD %s: a body of %d bytes", p, len(body))
		}
		if got, want := res.Header.Get("Content-Length"), itoa(len(get.body)); got != want {
			t.Errorf("HEAD %s: Content-Length %s, want %s", p, got, want)
		}
		if got, want := res.Header.Get("Content-Type"), "application/json"; got != want {
			t.Errorf("HEAD %s: Content-Type %q, want %q", p, got, want)
		}
	}
}

// Response headers of the API: JSON (checked by do for every response),
// no caching of supplier data, no content sniffing.
func TestResponseHeaders(t *testing.T) {
	ts := newServer(t, nil, nil)
	for _, p := range apiRoutes {
		for _, token := range []string{alphaToken, ""} {
			res := ts.get(t, p, token)
			if got := res.header.Get("Cache-Control"); got != "no-store" {
				t.Errorf("GET %s (token %q): Cache-Control %q, want no-store", p, token, got)
			}
			if got := res.header.Get("X-Content-Type-Options"); got != "nosniff" {
				t.Errorf("GET %s: X-Content-Type-Options %q, want nosniff", p, got)
			}
			if got, want := res.header.Get("Content-Length"), itoa(len(res.body)); got != want {
				t.Errorf("GET %s: Content-Length %s, want %s", p, got, want)
			}
		}
	}
}

// failingStore fails every call with err, or panics when panicking is set.
type failingStore struct {
	err      error
	panicked bool
}

func (f failingStore) fail() error {
	if f.panicked {
		panic("store exploded: dsn=postgres://app:s3cret@db")
	}
	return f.err
}

func (f failingStore) ListSuppliers(context.Context, string, supplier.ListQuery) (paging.Page[supplier.Summary], error) {
	return paging.Page[supplier.Summary]{}, f.fail()
}

func (f failingStore) Supplier(context.Context, string, uuid.UUID) (supplier.Detail, error) {
	return supplier.Detail{}, f.fail()
}

func (f failingStore) ListContacts(context.Context, string, uuid.UUID, paging.Request) (paging.Page[supplier.Contact], error) {
	return paging.Page[supplier.Contact]{}, f.fail()
}

func (f failingStore) ListRemittanceAddresses(context.Context, string, uuid.UUID, supplier.AddressQuery) (paging.Page[supplier.RemittanceAddress], error) {
	return paging.Page[supplier.RemittanceAddress]{}, f.fail()
}

func (f failingStore) TokenByHash(context.Context, auth.Hash) (auth.Token, error) {
	return auth.Token{}, f.fail()
}

// docs: errors.md: a 500 never shows internals; the cause goes to
// slog. Store failures, store panics and token-store failures (which must
// not pass for a bad token) all end the same way.
func TestInternalErrors(t *testing.T) {
	cause := errors.New("connection refused: dsn=postgres://app:s3cret@db")
	tests := []struct {
		name     string
		store    supplier.Store
		tokens   auth.TokenStore
		routes   []string
		inLog    string
		logField string
	}{
		{"store fails", failingStore{err: fmtErr(cause)}, nil, apiRoutes, "connection refused", "err"},
		{"store panics", failingStore{panicked: true}, nil, apiRoutes, "store exploded", "panic"},
		{"token store fails", nil, failingStore{err: cause}, apiRoutes, "connection refused", "err"},
		{"token store panics", nil, failingStore{panicked: true}, apiRoutes, "store exploded", "panic"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ms := loadTestStore(t)
			store, tokens := tt.store, tt.tokens
			if store == nil {
				store = ms
			}
			if tokens == nil {
				tokens = ms
			}
			ts := newServer(t, store, tokens)
			for _, p := range tt.routes {
				res := ts.get(t, p, alphaToken)
				if res.status != http.StatusInternalServerError {
					t.Errorf("GET %s: status %d, want 500", p, res.status)
					continue
				}
				want := `{"code":"INTERNAL_ERROR","message":"internal server error"}` + "\n"
				if string(res.body) != want {
					t.Errorf("GET %s: body %s, want %s", p, res.body, want)
				}
			}
			logged := ts.log.String()
			if strings.Count(logged, tt.inLog) != len(tt.routes) {
				t.Errorf("the log should record the cause once per request:\n%s", logged)
			}
			if !strings.Contains(logged, `"`+tt.logField+`":`) {
				t.Errorf("the log should carry the cause under %q:\n%s", tt.logField, logged)
			}
			if strings.Contains(logged, alphaToken) {
				t.Errorf("the log holds the bearer token:\n%s", logged)
			}
		})
	}
}

func fmtErr(err error) error { return &wrapped{err} }

type wrapped struct{ err error }

func (w *wrapped) Error() string { return "list: " + w.err.Error() }
func (w *wrapped) Unwrap() error { return w.err }

// recordingStore records the queries the handlers pass and answers with
// empty pages.
type recordingStore struct {
	mu      sync.Mutex
	list    []supplier.ListQuery
	address []supplier.AddressQuery
}

func (r *recordingStore) ListSuppliers(_ context.Context, _ string, q supplier.ListQuery) (paging.Page[supplier.Summary], error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.list = append(r.list, q)
	return paging.NewPage[supplier.Summary](nil, 0, q.Page), nil
}

func (r *recordingStore) Supplier(context.Context, string, uuid.UUID) (supplier.Detail, error) {
	return supplier.Detail{}, supplier.ErrNotFound
}

func (r *recordingStore) ListContacts(_ context.Context, _ string, _ uuid.UUID, p paging.Request) (paging.Page[supplier.Contact], error) {
	return paging.NewPage[supplier.Contact](nil, 0, p), nil
}

func (r *recordingStore) ListRemittanceAddresses(_ context.Context, _ string, _ uuid.UUID, q supplier.AddressQuery) (paging.Page[supplier.RemittanceAddress], error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.address = append(r.address, q)
	return paging.NewPage[supplier.RemittanceAddress](nil, 0, q.Page), nil
}

// docs: filters.md: the exact instant modifiedSince stands for, and
// the RFC 3339 grammar it must follow.
func TestModifiedSinceParsing(t *testing.T) {
	rec := &recordingStore{}
	ts := newServer(t, rec, nil)
	utc := func(s string) time.Time {
		t.Helper()
		v, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		return v.UTC()
	}
	good := []struct {
		value string
		want  time.Time
	}{
		{"2026-05-01", utc("2026-05-01T00:00:00Z")},
		{"2026-05-01T09:30:00Z", utc("2026-05-01T09:30:00Z")},
		{"2026-05-01t09:30:00z", utc("2026-05-01T09:30:00Z")},
		{"2026-05-01T09:30:00%2B12:00", utc("2026-04-30T21:30:00Z")},
		{"2026-05-01T09:30:00+12:00", utc("2026-04-30T21:30:00Z")}, // + decodes to a space
		{"2026-05-01T09:30:00%2012:00", utc("2026-04-30T21:30:00Z")},
		{"2026-05-01T09:30:00-09:30", utc("2026-05-01T19:00:00Z")},
		{"2026-05-01T09:30:00-00:00", utc("2026-05-01T09:30:00Z")},
		{"2026-05-01T09:30:00.5Z", utc("2026-05-01T09:30:00.5Z")},
		{"2026-05-01T09:30:00.123456789Z", utc("2026-05-01T09:30:00.123456789Z")},
		// Beyond nanoseconds the instant rounds up, so >= stays exact.
		{"2026-05-01T09:30:00.1234567891Z", utc("2026-05-01T09:30:00.123456790Z")},
		{"2026-05-01T09:30:00.1234567890000Z", utc("2026-05-01T09:30:00.123456789Z")},
		{"2026-05-01T23:59:59.9999999999Z", utc("2026-05-02T00:00:00Z")},
		{"2024-02-29", utc("2024-02-29T00:00:00Z")},
		{"0001-01-01T00:00:00Z", utc("0001-01-01T00:00:00Z")},
	}
	for _, g := range good {
		for _, route := range []string{"/suppliers", "/suppliers/" + acmeOffice + "/remittance-addresses"} {
			res := ts.get(t, base+route+"?modifiedSince="+g.value, alphaToken)
			if res.status != http.StatusOK {
				t.Errorf("modifiedSince=%s on %s: status %d: %s", g.value, route, res.status, res.body)
			}
		}
		rec.mu.Lock()
		var gotList, gotAddr time.Time
		if n := len(rec.list); n > 0 {
			gotList = rec.list[n-1].ModifiedSince
		}
		if n := len(rec.address); n > 0 {
			gotAddr = rec.address[n-1].ModifiedSince
		}
		rec.mu.Unlock()
		if !gotList.Equal(g.want) || !gotAddr.Equal(g.want) {
			t.Errorf("modifiedSince=%s: store got %v and %v, want %v", g.value, gotList, gotAddr, g.want)
		}
	}

	bad := []string{
		"2026-05-01T09:30:00", "2026-05-01T09:30", "2026-05-01T09:30Z", "2026-5-01", "2026-05-1", "20260501",
		"2026-05-01T9:30:00Z", "2026-05-01 09:30:00Z", "2026-05-01T09:30:00+1200", "2026-05-01T09:30:00+12",
		"2026-05-01T09:30:00+24:00", "2026-05-01T09:30:00+12:60", "2026-05-01T24:00:00Z", "2026-05-01T23:60:00Z",
		"2026-05-01T23:59:60Z", "2026-02-29", "2026-04-31", "2026-00-10", "2026-05-00", "2026-05-01T09:30:00.Z",
		"2026-05-01T09:30:00,5Z", "2026-05-01TZ", "+2026-05-01", "2026-05-01Z", "1746091800", "", "now",
		"2026-05-01T09:30:00Z%20", "%202026-05-01", "2026-05-01T09:30:00%2B12:00:00", "２０２６-05-01",
	}
	for _, v := range bad {
		res := ts.get(t, base+"/suppliers?modifiedSince="+strings.ReplaceAll(v, " ", "%20"), alphaToken)
		if res.status != http.StatusBadRequest {
			t.Errorf("modifiedSince=%s: status %d, want 400", v, res.status)
			continue
		}
		if msg := errorBody(t, res).Message; !strings.HasPrefix(msg, "modifiedSince: must ") {
			t.Errorf("modifiedSince=%s: message %q does not name the parameter", v, msg)
		}
	}
}

// The handlers pass the parsed paging and query to the store unchanged.
func TestListQueryPassedToStore(t *testing.T) {
	rec := &recordingStore{}
	ts := newServer(t, rec, nil)
	ts.get(t, base+"/suppliers?query=Caf%C3%A9+M&page=3&size=7&sort=modifiedDate,DESC", alphaToken)
	ts.get(t, base+"/suppliers", alphaToken)
	want := []supplier.ListQuery{
		{Query: "Café M", Page: paging.Request{Page: 3, Size: 7, Sort: paging.Sort{Field: "modifiedDate", Desc: true}}},
		{Page: paging.Request{Page: 0, Size: 20, Sort: paging.Sort{Field: "name"}}},
	}
	if diff := cmp.Diff(want, rec.list); diff != "" {
		t.Errorf("queries (-want +got):\n%s", diff)
	}
}

// Full bodies of a few responses, compared byte for byte with golden files
// (go test ./httpapi/suppliers -run TestGolden -update rewrites them).
func TestGolden(t *testing.T) {
	ts := newServer(t, nil, nil)
	tests := []struct {
		file   string
		target string
		status int
	}{
		{"list_default.json", base + "/suppliers", 200},
		{"list_query_page.json", base + "/suppliers?query=a&size=1&page=1", 200},
		{"list_past_end.json", base + "/suppliers?page=5&size=2", 200},
		{"detail_full.json", base + "/suppliers/" + acmeOffice, 200},
		{"detail_minimal.json", base + "/suppliers/" + acmeLabs, 200},
		{"detail_individual.json", base + "/suppliers/" + zoeNgata, 200},
		{"contacts.json", base + "/suppliers/" + acmeOffice + "/contacts", 200},
		{"remittance_addresses.json", base + "/suppliers/" + acmeOffice + "/remittance-addresses?sort=companyName,desc", 200},
		{"error_parameters.json", base + "/suppliers?size=0&sort=name,up", 400},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			res := ts.get(t, tt.target, alphaToken)
			if res.status != tt.status {
				t.Fatalf("status %d, want %d: %s", res.status, tt.status, res.body)
			}
			golden(t, tt.file, res.body)
		})
	}
}

// golden compares got with testdata/golden/name, or rewrites the file
// with -update. The file holds the body indented, for reading; the
// comparison is of the compact bytes, so indentation cannot hide a
// difference in order or spelling.
func golden(tb testing.TB, name string, got []byte) {
	tb.Helper()
	path := filepath.Join("testdata", "golden", name)
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, got, "", "  "); err != nil {
		tb.Fatalf("response is not JSON: %v", err)
	}
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(path, pretty.Bytes(), 0o644); err != nil {
			tb.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		tb.Fatalf("%v (run with -update to create it)", err)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, want); err != nil {
		tb.Fatalf("%s: %v", path, err)
	}
	compact.WriteByte('\n')
	if diff := cmp.Diff(compact.String(), string(got)); diff != "" {
		tb.Errorf("%s differs (-want +got):\n%s", path, diff)
	}
}

// discard keeps the benchmarks' logs out of the output.
var discard = slog.New(slog.NewTextHandler(io.Discard, nil))

// farFutureStore answers with a date RFC 3339 cannot carry (year 10000).
type farFutureStore struct{ recordingStore }

func (*farFutureStore) Supplier(_ context.Context, _ string, id uuid.UUID) (supplier.Detail, error) {
	far := time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)
	return supplier.Detail{Summary: supplier.Summary{ID: id, ProfileType: supplier.ProfileCompany, ModifiedDate: far, CreatedDate: far}}, nil
}

// A response that cannot be encoded is a clean 500 (nothing half-written),
// with the cause logged.
func TestUnencodableResponse(t *testing.T) {
	ts := newServer(t, &farFutureStore{}, nil)
	res := ts.get(t, base+"/suppliers/"+acmeOffice, alphaToken)
	if res.status != http.StatusInternalServerError {
		t.Fatalf("status %d, want 500: %s", res.status, res.body)
	}
	if want := `{"code":"INTERNAL_ERROR","message":"internal server error"}` + "\n"; string(res.body) != want {
		t.Errorf("body %s, want %s", res.body, want)
	}
	if !strings.Contains(ts.log.String(), "year outside of range") {
		t.Errorf("the cause is not logged: %s", ts.log)
	}
}
