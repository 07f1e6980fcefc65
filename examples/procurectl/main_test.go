package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/procurekit/procure/auth"
	"github.com/procurekit/procure/datafile"
	"github.com/procurekit/procure/httpapi"
	"github.com/procurekit/procure/internal/maintest"
	"github.com/procurekit/procure/internal/pgtest"
	"github.com/procurekit/procure/internal/syncbuf"
	"github.com/procurekit/procure/memstore"
	"github.com/procurekit/procure/pgstore"
	"github.com/procurekit/procure/user"
)

const adminToken = "test-admin-token-0123456789"

// testServer is a procure server in-process: the admin API on one
// listener, the supplier and user APIs on another, over one store, as
// examples/server runs them.
type testServer struct {
	admin    *httptest.Server
	public   *httptest.Server
	log      *syncbuf.Buffer
	requests atomic.Int64 // admin requests served
}

// backend is what the test server serves from: memstore and pgstore.
type backend interface {
	httpapi.AdminStore
	auth.TokenStore
	auth.KeyStore
	user.Store
}

// newTestServer is a server over a new memstore, with an importer when
// withImport.
func newTestServer(t *testing.T, withImport bool) *testServer {
	t.Helper()
	store := memstore.New()
	var imp httpapi.ImportFunc
	if withImport {
		imp = memImport(store)
	}
	return newTestServerOn(t, store, imp)
}

// newPGTestServer is a server over pgstore on a new database, with its
// upsert import.
func newPGTestServer(t *testing.T) *testServer {
	t.Helper()
	pg, err := pgstore.Open(context.Background(), pgtest.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pg.Close)
	return newTestServerOn(t, pg, func(ctx context.Context, r io.Reader) (datafile.ImportCounts, error) {
		return pg.ImportStream(pgstore.WithoutStatementTimeout(ctx), r)
	})
}

// forStores runs f on a server over each store: memstore, and pgstore on
// a throwaway PostgreSQL.
func forStores(t *testing.T, f func(t *testing.T, ts *testServer)) {
	t.Run("memstore", func(t *testing.T) { f(t, newTestServer(t, true)) })
	t.Run("pgstore", func(t *testing.T) { f(t, newPGTestServer(t)) })
}

func newTestServerOn(t *testing.T, store backend, imp httpapi.ImportFunc) *testServer {
	t.Helper()
	ts := &testServer{log: &syncbuf.Buffer{}}
	log := slog.New(slog.NewJSONHandler(ts.log, nil))
	opts := httpapi.AdminOptions{Token: adminToken, Store: store, Logger: log, Import: imp}
	amux := http.NewServeMux()
	httpapi.MountAdmin(amux, opts)
	ts.admin = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ts.requests.Add(1)
		httpapi.RequestLog(log, amux).ServeHTTP(w, r)
	}))
	t.Cleanup(ts.admin.Close)
	pmux := http.NewServeMux()
	httpapi.MountSuppliers(pmux, httpapi.SupplierOptions{Store: store, Tokens: store, Logger: log})
	httpapi.MountUsers(pmux, httpapi.UserOptions{Users: user.NewService(store), Accounts: store, Logger: log})
	ts.public = httptest.NewServer(httpapi.RequestLog(log, pmux))
	t.Cleanup(ts.public.Close)
	return ts
}

// memImport is the memstore's own upsert import.
func memImport(s *memstore.Store) httpapi.ImportFunc { return s.ImportStream }

// result is what one run of the command did.
type result struct {
	code           int
	stdout, stderr string
}

// run runs procurectl in-process against ts with the admin token set,
// stdin as standard input.
func (ts *testServer) run(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	return ts.runEnv(t, map[string]string{envToken: adminToken, envURL: ts.admin.URL}, stdin, args...)
}

func (ts *testServer) runEnv(t *testing.T, environ map[string]string, stdin string, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, func(k string) string { return environ[k] }, strings.NewReader(stdin), &out, &errb)
	return result{code: code, stdout: out.String(), stderr: errb.String()}
}

// ok runs the command and fails t unless it succeeds.
func (ts *testServer) ok(t *testing.T, stdin string, args ...string) string {
	t.Helper()
	r := ts.run(t, stdin, args...)
	if r.code != exitOK {
		t.Fatalf("procurectl %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
	}
	return r.stdout
}

// fails runs the command and fails t unless it exits with code and its
// standard error matches every pattern.
func (ts *testServer) fails(t *testing.T, code int, stdin string, args []string, patterns ...string) result {
	t.Helper()
	r := ts.run(t, stdin, args...)
	if r.code != code {
		t.Fatalf("procurectl %s: exit %d, want %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), r.code, code, r.stdout, r.stderr)
	}
	for _, p := range patterns {
		if !regexp.MustCompile(p).MatchString(r.stderr) {
			t.Errorf("procurectl %s: stderr does not match %q:\n%s", strings.Join(args, " "), p, r.stderr)
		}
	}
	return r
}

// publicGet calls the public API with the given header pairs.
func (ts *testServer) publicGet(t *testing.T, path string, header ...string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, ts.public.URL+path, nil)
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

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func decode(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("not a JSON object: %v\n%s", err, s)
	}
	return m
}

// setup creates the community acme-au.
func (ts *testServer) setup(t *testing.T) {
	t.Helper()
	ts.ok(t, "", "community", "put", "-name", "Acme", "-region", "AU", "acme-au")
}

// Every command and the command itself answer -h with their usage on
// standard error and exit 0, without calling the server or needing the
// token.
func TestHelp(t *testing.T) {
	ts := newTestServer(t, true)
	env := map[string]string{envURL: ts.admin.URL} // no token
	for _, c := range commands {
		t.Run(c.title(), func(t *testing.T) {
			args := append(strings.Fields(c.title()), "-h")
			r := ts.runEnv(t, env, "", args...)
			if r.code != exitOK {
				t.Errorf("exit %d, want 0; stderr: %s", r.code, r.stderr)
			}
			if !strings.HasPrefix(r.stderr, "usage: procurectl "+c.title()) || !strings.Contains(r.stderr, c.summary[:min(20, len(c.summary))]) {
				t.Errorf("stderr is not the usage of %s:\n%s", c.title(), r.stderr)
			}
			for _, f := range c.need {
				if !strings.Contains(r.stderr, "-"+f+" ") {
					t.Errorf("usage does not show the required -%s:\n%s", f, r.stderr)
				}
			}
		})
	}
	r := ts.runEnv(t, env, "", "-h")
	if r.code != exitOK || !strings.Contains(r.stderr, "usage: procurectl [-server URL]") || !strings.Contains(r.stderr, "key deactivate") {
		t.Errorf("procurectl -h: exit %d\n%s", r.code, r.stderr)
	}
	// The list shows each command's first line: a whole sentence, never
	// one cut mid-way.
	for _, line := range strings.Split(r.stderr, "\n") {
		for _, c := range commands {
			if rest, ok := strings.CutPrefix(line, "  "+c.title()+" "); ok && !strings.HasSuffix(strings.TrimSpace(rest), ".") {
				t.Errorf("procurectl -h lists %s with a cut sentence: %q", c.title(), line)
			}
		}
	}
	if n := ts.requests.Load(); n != 0 {
		t.Errorf("-h made %d requests", n)
	}
}

// Usage errors exit 2 and say what is wrong.
func TestUsageErrors(t *testing.T) {
	ts := newTestServer(t, true)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "a command is required"},
		{[]string{"frobnicate"}, `unknown command "frobnicate"`},
		{[]string{"token"}, "token: a subcommand is required: issue, list, revoke"},
		{[]string{"token", "burn"}, `token: unknown subcommand "burn"`},
		{[]string{"token", "list"}, "-c is required"},
		{[]string{"supplier", "delete", "-c", "acme-au"}, `want 1 arguments \(ID\), got 0`},
		{[]string{"key", "deactivate", "-c", "acme-au", "erp"}, `want 2 arguments`},
		{[]string{"supplier", "put", "-c", "x", "a.json", "b.json"}, `want 0 or 1 arguments`},
		{[]string{"community", "put", "acme"}, "-region is required"},
		{[]string{"token", "list", "-c", "x", "-nope"}, "flag provided but not defined: -nope"},
	} {
		ts.fails(t, exitUsage, "", tc.args, tc.want)
	}
	if n := ts.requests.Load(); n != 0 {
		t.Errorf("usage errors made %d requests", n)
	}
}

// The admin token comes only from the environment: without it nothing is
// sent; a wrong one is the server's 401, reported with its status.
func TestToken(t *testing.T) {
	ts := newTestServer(t, true)
	r := ts.runEnv(t, map[string]string{envURL: ts.admin.URL}, "", "community", "get", "acme-au")
	if r.code != exitFailure || !strings.Contains(r.stderr, "PROCURE_ADMIN_TOKEN is not set") {
		t.Errorf("without a token: exit %d, stderr %q", r.code, r.stderr)
	}
	if n := ts.requests.Load(); n != 0 {
		t.Errorf("without a token, %d requests were sent", n)
	}
	r = ts.runEnv(t, map[string]string{envURL: ts.admin.URL, envToken: "wrong"}, "", "community", "get", "acme-au")
	if r.code != exitFailure || !strings.Contains(r.stderr, "GET /admin/v1/communities/acme-au: 401 Unauthorized (UNAUTHORIZED)") {
		t.Errorf("with a wrong token: exit %d, stderr %q", r.code, r.stderr)
	}
	// There is no flag for it.
	r = ts.run(t, "", "-token", adminToken, "community", "get", "acme-au")
	if r.code != exitUsage {
		t.Errorf("-token: exit %d, want 2", r.code)
	}
	// -server wins over the environment; /admin/v1 is optional in it.
	r = ts.runEnv(t, map[string]string{envURL: "http://127.0.0.1:1", envToken: adminToken}, "", "-server", ts.admin.URL+"/admin/v1/", "community", "get", "acme-au")
	if r.code != exitFailure || !strings.Contains(r.stderr, "404 Not Found (COMMUNITY_NOT_FOUND)") {
		t.Errorf("-server: exit %d, stderr %q", r.code, r.stderr)
	}
	if strings.Contains(ts.log.String(), adminToken) {
		t.Error("the admin token is in the server's log")
	}
}

func TestCommunity(t *testing.T) {
	forStores(t, func(t *testing.T, ts *testServer) {
		out := ts.ok(t, "", "community", "put", "-name", "Acme", "-region", "AU", "-auto-roles", "EMPLOYEE, BUYER", "acme-au")
		m := decode(t, out)
		if m["id"] != "acme-au" || m["region"] != "AU" || len(m["autoRoles"].([]any)) != 2 {
			t.Errorf("put answered %s", out)
		}
		if got := ts.ok(t, "", "community", "get", "acme-au"); got != out {
			t.Errorf("get answered\n%s\nput answered\n%s", got, out)
		}
		if got := ts.ok(t, "", "community", "get", "-o", "name", "acme-au"); got != "Acme\n" {
			t.Errorf("-o name printed %q", got)
		}
		ts.fails(t, exitFailure, "", []string{"community", "put", "-region", "EU", "x"},
			`PUT /admin/v1/communities/x: 400 Bad Request \(INVALID_FIELD\): region: must be one of AU, NZ, US, DEMO`)
		ts.fails(t, exitFailure, "", []string{"community", "get", "nope"}, `404 Not Found \(COMMUNITY_NOT_FOUND\): community not found`)
		ts.fails(t, exitFailure, "", []string{"community", "get", "-o", "nope", "acme-au"}, `-o nope: the answer has no "nope" \(it has autoRoles, id, name, region\)`)
	})
}

// community list: a table of a page of the communities by id, with where
// the page stands; -json and -o print the answer; a bad page is the
// server's 400.
func TestCommunityList(t *testing.T) {
	forStores(t, func(t *testing.T, ts *testServer) {
		if got := ts.ok(t, "", "community", "list"); got != "no communities\n" {
			t.Errorf("an empty server: %q", got)
		}
		ts.ok(t, "", "community", "put", "-name", "Acme", "-region", "AU", "-auto-roles", "EMPLOYEE,BUYER", "acme-au")
		ts.ok(t, "", "community", "put", "-name", "Kiwi Health", "-region", "NZ", "kiwi-nz")
		ts.ok(t, "", "community", "put", "-region", "DEMO", "Zed")
		for _, tc := range []struct {
			args []string
			want string
		}{
			{nil, "" +
				"ID       NAME         REGION  AUTO-ROLES\n" +
				"Zed      -            DEMO    -\n" +
				"acme-au  Acme         AU      EMPLOYEE,BUYER\n" +
				"kiwi-nz  Kiwi Health  NZ      -\n" +
				"page 1 of 1 (3 communities, 20 a page)\n"},
			{[]string{"-size", "2"}, "" +
				"ID       NAME  REGION  AUTO-ROLES\n" +
				"Zed      -     DEMO    -\n" +
				"acme-au  Acme  AU      EMPLOYEE,BUYER\n" +
				"page 1 of 2 (3 communities, 2 a page); the next: -page 1\n"},
			{[]string{"-size", "2", "-page", "1"}, "" +
				"ID       NAME         REGION  AUTO-ROLES\n" +
				"kiwi-nz  Kiwi Health  NZ      -\n" +
				"page 2 of 2 (3 communities, 2 a page)\n"},
			{[]string{"-page", "4"}, "page 4 is past the end (3 communities, 20 a page: the last is -page 0)\n"},
			{[]string{"-o", "content.1.id"}, "acme-au\n"},
			{[]string{"-o", "page.totalElements"}, "3\n"},
		} {
			if got := ts.ok(t, "", append([]string{"community", "list"}, tc.args...)...); got != tc.want {
				t.Errorf("community list %s printed\n%s\nwant\n%s", strings.Join(tc.args, " "), got, tc.want)
			}
		}
		if m := decode(t, ts.ok(t, "", "community", "list", "-json")); len(m["content"].([]any)) != 3 {
			t.Errorf("-json printed %v", m)
		}
		ts.fails(t, exitFailure, "", []string{"community", "list", "-size", "0"},
			`GET /admin/v1/communities: 400 Bad Request \(INVALID_PARAMETER\): size: must be from 1 to 100 \(got 0\)`)
	})
}

// supplier get prints the supplier as the supplier API serves it;
// supplier list a table of a page of the community's suppliers, with the
// supplier API's filters and order.
func TestSupplierGetAndList(t *testing.T) {
	forStores(t, func(t *testing.T, ts *testServer) {
		ts.setup(t)
		ts.ok(t, "", "community", "put", "-region", "NZ", "other")
		token := ts.ok(t, "", "token", "issue", "-c", "acme-au", "-o", "token")
		const id, secondID = "cf3d1382-edea-543d-9969-c5468d5c62a0", "0b5c1ad2-0000-4000-8000-000000000002"
		if got := ts.ok(t, "", "supplier", "list", "-c", "acme-au"); got != "no suppliers\n" {
			t.Errorf("a community without suppliers: %q", got)
		}
		put := ts.ok(t, "", "supplier", "put", "-c", "acme-au", "testdata/supplier.json")
		data, err := os.ReadFile("testdata/supplier.json")
		if err != nil {
			t.Fatal(err)
		}
		second := strings.NewReplacer(id, secondID, `"Brightline Cleaning Services"`, `"Acme Paper"`, `"Brightline Cleaning Services Pty Ltd"`, `"Acme Paper Ltd"`, `"SUP-0103"`, `"SUP-0200"`).Replace(string(data))
		ts.ok(t, second, "supplier", "put", "-c", "acme-au")

		got := ts.ok(t, "", "supplier", "get", "-c", "acme-au", id)
		status, body := ts.publicGet(t, "/public/community/suppliers/"+id, "Authorization", "Bearer "+strings.TrimSpace(token))
		var want bytes.Buffer
		if status != http.StatusOK || json.Indent(&want, body, "", "  ") != nil || got != want.String()+"\n" || got != put {
			t.Errorf("supplier get printed\n%s\nthe supplier API serves (%d)\n%s\nput printed\n%s", got, status, body, put)
		}
		if got := ts.ok(t, "", "supplier", "get", "-c", "acme-au", "-o", "name", secondID); got != "Acme Paper\n" {
			t.Errorf("supplier get -o name printed %q", got)
		}

		row := func(id, name, supplierID string) string {
			return `(?m)^` + id + ` +` + name + ` +` + supplierID + ` +PENDING +\d{4}-\d\d-\d\dT[0-9:.]+Z$`
		}
		for _, tc := range []struct {
			args  []string
			lines []string // patterns of the lines, in order
		}{
			{nil, []string{`^ID +NAME +SUPPLIER ID +CONNECTION +MODIFIED$`, row(secondID, "Acme Paper", "SUP-0200"),
				row(id, "Brightline Cleaning Services", "SUP-0103"), `^page 1 of 1 \(2 suppliers, 20 a page\)$`}},
			{[]string{"-sort", "name,desc"}, []string{`^ID`, row(id, "Brightline Cleaning Services", "SUP-0103"), row(secondID, "Acme Paper", "SUP-0200"), `^page 1 of 1`}},
			{[]string{"-query", "bright"}, []string{`^ID`, row(id, "Brightline Cleaning Services", "SUP-0103"), `^page 1 of 1 \(1 supplier, 20 a page\)$`}},
			{[]string{"-query", "SUP-02"}, []string{`^ID`, row(secondID, "Acme Paper", "SUP-0200"), `^page 1 of 1 \(1 supplier,`}},
			{[]string{"-size", "1"}, []string{`^ID`, row(secondID, "Acme Paper", "SUP-0200"), `^page 1 of 2 \(2 suppliers, 1 a page\); the next: -page 1$`}},
			{[]string{"-size", "1", "-page", "1"}, []string{`^ID`, row(id, "Brightline Cleaning Services", "SUP-0103"), `^page 2 of 2 \(2 suppliers, 1 a page\)$`}},
			{[]string{"-modified-since", "2999-01-01"}, []string{`^no suppliers$`}},
			{[]string{"-o", "content.0.name"}, []string{`^Acme Paper$`}},
		} {
			out := ts.ok(t, "", append([]string{"supplier", "list", "-c", "acme-au"}, tc.args...)...)
			lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
			if len(lines) != len(tc.lines) {
				t.Errorf("supplier list %s printed %d lines, want %d:\n%s", strings.Join(tc.args, " "), len(lines), len(tc.lines), out)
				continue
			}
			for i, p := range tc.lines {
				if !regexp.MustCompile(p).MatchString(lines[i]) {
					t.Errorf("supplier list %s: line %d %q does not match %q", strings.Join(tc.args, " "), i+1, lines[i], p)
				}
			}
		}
		if m := decode(t, ts.ok(t, "", "supplier", "list", "-c", "acme-au", "-json")); m["page"].(map[string]any)["totalElements"] != 2.0 {
			t.Errorf("-json printed %v", m)
		}
		if got := ts.ok(t, "", "supplier", "list", "-c", "other"); got != "no suppliers\n" {
			t.Errorf("another community's list: %q", got)
		}

		ts.fails(t, exitFailure, "", []string{"supplier", "list", "-c", "nope"}, `GET /admin/v1/communities/nope/suppliers: 404 Not Found \(COMMUNITY_NOT_FOUND\)`)
		ts.fails(t, exitFailure, "", []string{"supplier", "list", "-c", "acme-au", "-sort", "colour"}, `400 Bad Request \(INVALID_PARAMETER\): sort: field must be one of name, createdDate, modifiedDate`)
		ts.fails(t, exitFailure, "", []string{"supplier", "get", "-c", "other", id}, `GET /admin/v1/communities/other/suppliers/`+id+`: 404 Not Found \(SUPPLIER_NOT_FOUND\)`)
		ts.fails(t, exitFailure, "", []string{"supplier", "get", "-c", "acme-au", "not-a-uuid"}, `400 Bad Request \(INVALID_PARAMETER\): id: must be a UUID`)
		ts.fails(t, exitUsage, "", []string{"supplier", "get", id}, `-c is required`)
		ts.fails(t, exitUsage, "", []string{"supplier", "list", "-c", "acme-au", "extra"}, `want no arguments`)
	})
}

// supplier put: from a file or standard input, answered exactly as the
// public API then serves the supplier; its contacts and addresses, when
// in the file, follow.
func TestSupplier(t *testing.T) {
	forStores(t, func(t *testing.T, ts *testServer) {
		ts.setup(t)
		token := ts.ok(t, "", "token", "issue", "-c", "acme-au", "-o", "token")
		bearer := []string{"Authorization", "Bearer " + strings.TrimSpace(token)}
		const id = "cf3d1382-edea-543d-9969-c5468d5c62a0"

		out := ts.ok(t, "", "supplier", "put", "-c", "acme-au", "testdata/supplier.json")
		status, body := ts.publicGet(t, "/public/community/suppliers/"+id, bearer...)
		if status != http.StatusOK {
			t.Fatalf("GET the supplier: %d %s", status, body)
		}
		var want bytes.Buffer
		if err := json.Indent(&want, body, "", "  "); err != nil {
			t.Fatal(err)
		}
		if out != want.String()+"\n" {
			t.Errorf("put printed\n%s\nthe public API serves\n%s", out, want.String())
		}
		// From standard input, with -id; unchanged, so the same answer.
		data, err := os.ReadFile("testdata/supplier.json")
		if err != nil {
			t.Fatal(err)
		}
		if got := ts.ok(t, string(data), "supplier", "put", "-c", "acme-au", "-id", id); got != out {
			t.Errorf("put from stdin printed\n%s\nwant\n%s", got, out)
		}
		if got := ts.ok(t, string(data), "supplier", "put", "-c", "acme-au", "-o", "name", "-"); got != "Brightline Cleaning Services\n" {
			t.Errorf("put - -o name printed %q", got)
		}

		// A file with contacts and addresses puts them too.
		r := ts.run(t, "", "supplier", "put", "-c", "acme-au", "testdata/supplier-with-children.json")
		if r.code != exitOK || !strings.Contains(r.stderr, "put 3 contacts of supplier "+id) || !strings.Contains(r.stderr, "put 1 remittance addresses") {
			t.Fatalf("put with children: exit %d\n%s", r.code, r.stderr)
		}
		status, body = ts.publicGet(t, "/public/community/suppliers/"+id+"/contacts", bearer...)
		if status != http.StatusOK || !bytes.Contains(body, []byte(`"totalElements":3`)) {
			t.Errorf("contacts after the put: %d %s", status, body)
		}

		// Errors.
		ts.fails(t, exitFailure, "", []string{"supplier", "put", "-c", "nope", "testdata/supplier.json"},
			`PUT /admin/v1/communities/nope/suppliers/`+id+`: 404 Not Found \(COMMUNITY_NOT_FOUND\)`)
		ts.fails(t, exitFailure, "", []string{"supplier", "put", "-c", "acme-au", "-id", "8a4f4d1e-0000-4000-8000-000000000001", "testdata/supplier.json"},
			`testdata/supplier.json:2:9: id: cf3d1382-edea-543d-9969-c5468d5c62a0 differs from -id 8a4f4d1e-0000-4000-8000-000000000001`)
		ts.fails(t, exitFailure, "", []string{"supplier", "put", "-c", "acme-au", "testdata/missing.json"}, `open testdata/missing.json: no such file`)
		ts.fails(t, exitFailure, `{"name": "x"}`, []string{"supplier", "put", "-c", "acme-au"}, `^procurectl: stdin:1:1: id: give the id in the file or with -id\n$`)

		ts.ok(t, "", "supplier", "delete", "-c", "acme-au", id)
		if status, _ := ts.publicGet(t, "/public/community/suppliers/"+id, bearer...); status != http.StatusNotFound {
			t.Errorf("GET after delete: %d, want 404", status)
		}
		ts.fails(t, exitFailure, "", []string{"supplier", "delete", "-c", "acme-au", id}, `404 Not Found \(SUPPLIER_NOT_FOUND\): supplier not found`)
		ts.fails(t, exitFailure, "", []string{"supplier", "delete", "-c", "acme-au", "not-a-uuid"}, `400 Bad Request \(INVALID_PARAMETER\)`)
	})
}

// Bad input is reported by file, line and column: a JSON syntax error
// where the decoder stopped, a field the server refused where it is in the
// file.
func TestSupplierBadInput(t *testing.T) {
	forStores(t, func(t *testing.T, ts *testServer) {
		ts.setup(t)
		for _, tc := range []struct {
			name, content, want string
		}{
			{"syntax", "{\n  \"id\": \"cf3d1382-edea-543d-9969-c5468d5c62a0\",\n  \"name\": \"x\"\n  \"profileType\": \"COMPANY\"\n}\n",
				`syntax.json:4:3: invalid character '"' after object key:value pair`},
			{"truncated", "{\n  \"id\": \"cf3d1382-edea-543d-9969-c5468d5c62a0\",\n", `truncated.json:3:1: unexpected end of JSON input`},
			{"array", "\n  [1, 2]", `array.json:2:3: want a JSON object, got an array`},
			{"two", "{\"id\": \"cf3d1382-edea-543d-9969-c5468d5c62a0\"}\n{}", `two.json:2:1: unexpected data after the JSON object`},
			{"empty", "", `empty.json: empty: want a JSON object`},
			{"refused", "{\n  \"id\": \"cf3d1382-edea-543d-9969-c5468d5c62a0\",\n  \"name\": \"Brightline\",\n  \"profileType\": \"COMPANY\",\n  \"emails\": {\n    \"ordersEmailAddress\": \"not an address\"\n  }\n}\n",
				`refused.json:6:27: PUT /admin/v1/communities/acme-au/suppliers/cf3d1382-edea-543d-9969-c5468d5c62a0: 400 Bad Request \(INVALID_FIELD\): emails.ordersEmailAddress: `},
			{"wrongtype", "{\n  \"id\": \"cf3d1382-edea-543d-9969-c5468d5c62a0\",\n  \"name\": 12\n}\n",
				`wrongtype.json:3:11: PUT .*: 400 Bad Request \(MALFORMED_REQUEST\): name: must be a string`},
		} {
			t.Run(tc.name, func(t *testing.T) {
				p := writeFile(t, tc.name+".json", tc.content)
				r := ts.fails(t, exitFailure, "", []string{"supplier", "put", "-c", "acme-au", p})
				if !regexp.MustCompile(regexp.QuoteMeta(filepath.Dir(p)+"/") + tc.want).MatchString(r.stderr) {
					t.Errorf("stderr:\n%s\nwant it to match %s", r.stderr, tc.want)
				}
			})
		}
	})
}

func TestContactAndAddress(t *testing.T) {
	forStores(t, func(t *testing.T, ts *testServer) {
		ts.setup(t)
		const sid = "cf3d1382-edea-543d-9969-c5468d5c62a0"
		ts.ok(t, "", "supplier", "put", "-c", "acme-au", "testdata/supplier.json")
		token := strings.TrimSpace(ts.ok(t, "", "token", "issue", "-c", "acme-au", "-o", "token"))

		for _, tc := range []struct{ group, file, route string }{
			{"contact", "testdata/contact.json", "contacts"},
			{"address", "testdata/address.json", "remittance-addresses"},
		} {
			t.Run(tc.group, func(t *testing.T) {
				out := ts.ok(t, "", tc.group, "put", "-c", "acme-au", "-supplier", sid, tc.file)
				id := decode(t, out)["id"].(string)
				status, body := ts.publicGet(t, "/public/community/suppliers/"+sid+"/"+tc.route, "Authorization", "Bearer "+token)
				if status != http.StatusOK || !bytes.Contains(body, []byte(id)) {
					t.Errorf("the public list does not hold %s: %d %s", id, status, body)
				}
				ts.fails(t, exitFailure, "", []string{tc.group, "put", "-c", "acme-au", "-supplier", "8a4f4d1e-0000-4000-8000-000000000001", tc.file},
					`404 Not Found \(SUPPLIER_NOT_FOUND\)`)
				ts.ok(t, "", tc.group, "delete", "-c", "acme-au", "-supplier", sid, id)
				ts.fails(t, exitFailure, "", []string{tc.group, "delete", "-c", "acme-au", "-supplier", sid, id}, `404 Not Found \(SUPPLIER_NOT_FOUND\)`)
				ts.fails(t, exitUsage, "", []string{tc.group, "put", "-c", "acme-au", tc.file}, `-supplier is required`)
			})
		}
	})
}

// token issue prints the secret once; list shows no secret; a revoked
// token is refused by the public API at once.
func TestTokens(t *testing.T) {
	forStores(t, func(t *testing.T, ts *testServer) {
		ts.setup(t)
		r := ts.run(t, "", "token", "issue", "-c", "acme-au", "-name", "erp", "-expires", "720h")
		if r.code != exitOK || !strings.Contains(r.stderr, "shown this once") {
			t.Fatalf("issue: exit %d\n%s", r.code, r.stderr)
		}
		issued := decode(t, r.stdout)
		secret, id := issued["token"].(string), issued["id"].(string)
		if !strings.HasPrefix(secret, "procure_bt_") || issued["expires"] == nil || issued["name"] != "erp" {
			t.Errorf("issue printed %s", r.stdout)
		}
		bearer := []string{"Authorization", "Bearer " + secret}
		if status, body := ts.publicGet(t, "/public/community/suppliers", bearer...); status != http.StatusOK {
			t.Fatalf("the new token: %d %s", status, body)
		}
		list := ts.ok(t, "", "token", "list", "-c", "acme-au")
		if strings.Contains(list, secret) || !regexp.MustCompile(`(?m)^ID +NAME +SCOPES +STATE +CREATED +LAST USED\n`+id+` +erp +suppliers:read +expires 20\d\d-`).MatchString(list) {
			t.Errorf("token list:\n%s", list)
		}
		js := ts.ok(t, "", "token", "list", "-c", "acme-au", "-json")
		if strings.Contains(js, secret) || !strings.Contains(js, `"lastUsedAt": "20`) {
			t.Errorf("token list -json (want lastUsedAt set after a use):\n%s", js)
		}
		if got := ts.ok(t, "", "token", "list", "-c", "acme-au", "-o", "content.0.id"); got != id+"\n" {
			t.Errorf("token list -o content.0.id printed %q, want %s", got, id)
		}
		if got := ts.ok(t, "", "token", "revoke", "-c", "acme-au", id); !strings.Contains(got, "revoked token "+id) {
			t.Errorf("revoke printed %q", got)
		}
		if status, _ := ts.publicGet(t, "/public/community/suppliers", bearer...); status != http.StatusUnauthorized {
			t.Errorf("the revoked token: %d, want 401", status)
		}
		if list := ts.ok(t, "", "token", "list", "-c", "acme-au"); !strings.Contains(list, " revoked ") {
			t.Errorf("token list after revoke:\n%s", list)
		}
		ts.fails(t, exitFailure, "", []string{"token", "revoke", "-c", "acme-au", "no-such-id"}, `404 Not Found \(CREDENTIAL_NOT_FOUND\)`)
		ts.fails(t, exitFailure, "", []string{"token", "issue", "-c", "acme-au", "-scopes", ""}, `400 Bad Request \(INVALID_FIELD\): scopes: is required`)
		ts.fails(t, exitFailure, "", []string{"token", "issue", "-c", "acme-au", "-expires", "soon"}, `-expires "soon": want an RFC 3339 time`)
		ts.fails(t, exitFailure, "", []string{"token", "list", "-c", "nope"}, `404 Not Found \(COMMUNITY_NOT_FOUND\)`)
		if strings.Contains(ts.log.String(), secret) {
			t.Error("the token is in the server's log")
		}
	})
}

// Key rotation: add a key, use it, watch its last use, deactivate it
// (refused at once), reactivate it.
// The token list's STATE says expired for an expiry in the past, and the
// lists explain that LAST USED is kept to the minute.
func TestTokenAndKeyListStates(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	answer := `{"content": [
		{"id": "t1", "name": "erp", "scopes": ["suppliers:read"], "expires": null, "revoked": false, "createdAt": "2026-01-01T00:00:00Z", "lastUsedAt": "2026-04-30T09:15:00Z"},
		{"id": "t2", "name": "", "scopes": ["suppliers:read"], "expires": "2026-06-01T00:00:00Z", "revoked": false, "createdAt": "2026-01-01T00:00:00Z", "lastUsedAt": null},
		{"id": "t3", "name": "old", "scopes": ["suppliers:read"], "expires": "2026-05-01T11:59:59Z", "revoked": false, "createdAt": "2026-01-01T00:00:00Z", "lastUsedAt": null},
		{"id": "t4", "name": "gone", "scopes": ["a", "b"], "expires": "2020-01-01T00:00:00Z", "revoked": true, "createdAt": "2019-01-01T00:00:00Z", "lastUsedAt": null}]}`
	var b bytes.Buffer
	if err := printTokens(&b, []byte(answer), now); err != nil {
		t.Fatal(err)
	}
	want := "" +
		"ID  NAME  SCOPES          STATE                         CREATED               LAST USED\n" +
		"t1  erp   suppliers:read  active                        2026-01-01T00:00:00Z  2026-04-30T09:15:00Z\n" +
		"t2  -     suppliers:read  expires 2026-06-01T00:00:00Z  2026-01-01T00:00:00Z  never\n" +
		"t3  old   suppliers:read  expired 2026-05-01T11:59:59Z  2026-01-01T00:00:00Z  never\n" +
		"t4  gone  a,b             revoked                       2019-01-01T00:00:00Z  never\n" +
		"LAST USED is kept to the minute: the server records at most one use a minute of each token, so a use can take a minute to show.\n"
	if b.String() != want {
		t.Errorf("printTokens:\n%s\nwant\n%s", b.String(), want)
	}
	b.Reset()
	if err := printTokens(&b, []byte(`{"content": []}`), now); err != nil || b.String() != "no tokens\n" {
		t.Errorf("printTokens of none: %q, %v", b.String(), err)
	}
	b.Reset()
	if err := printKeys(&b, []byte(`{"id": "erp", "allowedIPs": [], "keys": []}`)); err != nil ||
		b.String() != "service account erp, callers from any address\nno keys: procurectl key add makes one\n" {
		t.Errorf("printKeys of none: %q, %v", b.String(), err)
	}

	// Over a server: a token whose expiry has passed (a data file may
	// hold one; the admin API issues only future ones).
	ts := newTestServer(t, true)
	file := writeFile(t, "old.json", `{"communities": [{"id": "old", "region": "NZ", "tokens": [
		{"token": "fixture-expired-token", "scopes": ["suppliers:read"], "expires": "2020-01-01T00:00:00Z"},
		{"token": "fixture-live-token", "scopes": ["suppliers:read"]}]}]}`)
	ts.ok(t, "", "import", file)
	list := ts.ok(t, "", "token", "list", "-c", "old")
	if !regexp.MustCompile(`(?m)^\S+ +- +suppliers:read +expired 2020-01-01T00:00:00Z +\S+ +never$`).MatchString(list) ||
		!regexp.MustCompile(`(?m)^\S+ +- +suppliers:read +active +\S+ +never$`).MatchString(list) ||
		!strings.HasSuffix(list, "\nLAST USED is kept to the minute: the server records at most one use a minute of each token, so a use can take a minute to show.\n") {
		t.Errorf("token list of an expired and a live token:\n%s", list)
	}
	ts.ok(t, "", "account", "put", "-c", "old", "erp")
	ts.ok(t, "", "key", "add", "-c", "old", "erp")
	if list := ts.ok(t, "", "key", "list", "-c", "old", "erp"); !strings.HasSuffix(list, "\nLAST USED is kept to the minute: the server records at most one use a minute of each key, so a use can take a minute to show.\n") {
		t.Errorf("key list:\n%s", list)
	}
}

func TestAccountsAndKeys(t *testing.T) {
	forStores(t, func(t *testing.T, ts *testServer) {
		ts.setup(t)
		out := ts.ok(t, "", "account", "put", "-c", "acme-au", "-allow", "127.0.0.1, 10.0.0.0/8", "erp")
		if m := decode(t, out); m["community"] != "acme-au" || len(m["allowedIPs"].([]any)) != 2 {
			t.Errorf("account put printed %s", out)
		}
		r := ts.run(t, "", "key", "add", "-c", "acme-au", "erp")
		if r.code != exitOK || !strings.Contains(r.stderr, "shown this once") {
			t.Fatalf("key add: exit %d\n%s", r.code, r.stderr)
		}
		k := decode(t, r.stdout)
		secret, id := k["key"].(string), k["id"].(string)
		if !strings.HasPrefix(secret, "procure_sk_") || k["active"] != true {
			t.Errorf("key add printed %s", r.stdout)
		}
		if got := strings.TrimSpace(ts.ok(t, "", "key", "list", "-c", "acme-au", "-o", "keys.0.id", "erp")); got != id {
			t.Errorf("key list -o keys.0.id = %q, want %q", got, id)
		}
		if got := strings.TrimSpace(ts.ok(t, "", "account", "get", "-c", "acme-au", "-o", "keys.0.id", "erp")); got != id {
			t.Errorf("account get -o keys.0.id = %q, want %q", got, id)
		}
		if list := ts.ok(t, "", "key", "list", "-c", "acme-au", "erp"); !regexp.MustCompile(id + ` +active +20\S+ +never\n`).MatchString(list) {
			t.Errorf("key list before use:\n%s", list)
		}
		caller := []string{"Service-Account-ID", "erp", "Service-API-Key", secret}
		if status, body := ts.publicGet(t, "/v1/users/username/nobody", caller...); status != http.StatusNotFound {
			t.Fatalf("the new key: %d %s, want 404 (authenticated, no such user)", status, body)
		}
		list := ts.ok(t, "", "key", "list", "-c", "acme-au", "erp")
		if !regexp.MustCompile(`service account erp, callers from 127.0.0.1/32, 10.0.0.0/8\n`).MatchString(list) ||
			!regexp.MustCompile(id+` +active +\S+ +20\d\d-\d\d-\d\dT\d\d:\d\d:00Z\n`).MatchString(list) || strings.Contains(list, secret) {
			t.Errorf("key list after use (want lastUsedAt to the minute):\n%s", list)
		}
		out = ts.ok(t, "", "key", "deactivate", "-c", "acme-au", "erp", id)
		if decode(t, out)["active"] != false {
			t.Errorf("deactivate printed %s", out)
		}
		if status, _ := ts.publicGet(t, "/v1/users/username/nobody", caller...); status != http.StatusUnauthorized {
			t.Errorf("the deactivated key: %d, want 401", status)
		}
		ts.ok(t, "", "key", "reactivate", "-c", "acme-au", "erp", id)
		if status, _ := ts.publicGet(t, "/v1/users/username/nobody", caller...); status != http.StatusNotFound {
			t.Errorf("the reactivated key: %d, want 404", status)
		}
		if js := ts.ok(t, "", "key", "list", "-c", "acme-au", "-json", "erp"); strings.Contains(js, secret) || !strings.Contains(js, `"keys": [`) {
			t.Errorf("key list -json:\n%s", js)
		}

		// An account id belongs to one community for ever: 409.
		ts.ok(t, "", "community", "put", "-region", "US", "globex")
		ts.fails(t, exitFailure, "", []string{"account", "put", "-c", "globex", "erp"}, `PUT /admin/v1/communities/globex/service-accounts/erp: 409 Conflict \(CONFLICT\): conflict: `)
		ts.fails(t, exitFailure, "", []string{"account", "get", "-c", "globex", "erp"}, `404 Not Found \(CREDENTIAL_NOT_FOUND\)`)
		ts.fails(t, exitFailure, "", []string{"key", "deactivate", "-c", "acme-au", "erp", "no-such-key"}, `404 Not Found \(CREDENTIAL_NOT_FOUND\)`)
		ts.fails(t, exitFailure, "", []string{"key", "add", "-c", "acme-au", "nobody"}, `404 Not Found \(CREDENTIAL_NOT_FOUND\)`)
		ts.fails(t, exitFailure, "", []string{"account", "put", "-c", "acme-au", "-allow", "300.1.1.1", "erp"}, `400 Bad Request \(INVALID_FIELD\): allowedIPs\[0\]: must be an IP address or a CIDR`)
		if strings.Contains(ts.log.String(), secret) {
			t.Error("the key is in the server's log")
		}
	})
}

func TestBudgets(t *testing.T) {
	forStores(t, func(t *testing.T, ts *testServer) {
		ts.setup(t)
		out := ts.ok(t, "", "budget", "put", "-c", "acme-au", "6100-100", "1250.50")
		if m := decode(t, out); m["account"] != "6100-100" || m["budget"] != "1250.5" && m["budget"] != "1250.50" {
			t.Errorf("budget put printed %s", out)
		}
		if got := ts.ok(t, "", "budget", "delete", "-c", "acme-au", "6100-100"); !strings.Contains(got, "deleted the budget of account 6100-100") {
			t.Errorf("delete printed %q", got)
		}
		ts.fails(t, exitFailure, "", []string{"budget", "delete", "-c", "acme-au", "6100-100"}, `404 Not Found \(BUDGET_NOT_FOUND\)`)
		ts.fails(t, exitFailure, "", []string{"budget", "put", "-c", "acme-au", "6100-100", "lots"}, `400 Bad Request \(INVALID_FIELD\): budget: must be a decimal number`)
		ts.fails(t, exitFailure, "", []string{"budget", "put", "-c", "nope", "6100-100", "1"}, `404 Not Found \(COMMUNITY_NOT_FOUND\)`)
	})
}

// import streams a data file and prints a summary; a bad file is refused
// with its line; a server without an importer says so.
func TestImport(t *testing.T) {
	forStores(t, func(t *testing.T, ts *testServer) {
		sup, err := os.ReadFile("testdata/supplier.json")
		if err != nil {
			t.Fatal(err)
		}
		file := `{"communities": [{"id": "imported", "name": "Imported", "region": "NZ",
  "tokens": [{"token": "imported-read-token", "scopes": ["suppliers:read"]}],
  "suppliers": [` + string(sup) + `]}]}`
		p := writeFile(t, "data.json", file)
		r := ts.run(t, "", "import", p)
		if r.code != exitOK {
			t.Fatalf("import: exit %d\n%s", r.code, r.stderr)
		}
		if !regexp.MustCompile(`^imported .*data.json \(\d+\.\d KiB in \S+\): 3 created, 0 updated, 0 unchanged\n` +
			`KIND +CREATED +UPDATED +UNCHANGED\n` +
			`communities +1 +0 +0\n` +
			`suppliers +1 +0 +0\n` +
			`tokens +1 +0 +0\n$`).MatchString(r.stdout) {
			t.Errorf("summary:\n%s", r.stdout)
		}
		if r.stderr != "" {
			t.Errorf("no progress bar when stderr is not a terminal; got %q", r.stderr)
		}
		status, _ := ts.publicGet(t, "/public/community/suppliers/cf3d1382-edea-543d-9969-c5468d5c62a0", "Authorization", "Bearer imported-read-token")
		if status != http.StatusOK {
			t.Errorf("the imported supplier: %d", status)
		}
		// The same file again: nothing changes, and the summary says so.
		if out := ts.ok(t, "", "import", p); !regexp.MustCompile(`^imported .*data.json \(\d+\.\d KiB in \S+\): 0 created, 0 updated, 3 unchanged - nothing changed\n` +
			`KIND +CREATED +UPDATED +UNCHANGED\n` +
			`communities +0 +0 +1\n` +
			`suppliers +0 +0 +1\n` +
			`tokens +0 +0 +1\n$`).MatchString(out) {
			t.Errorf("summary of the second import:\n%s", out)
		}
		// A changed supplier is updated, the rest unchanged.
		changed := writeFile(t, "changed.json", strings.Replace(file, `"Brightline Cleaning Services"`, `"Brightline Cleaning"`, 1))
		if out := ts.ok(t, "", "import", changed); !strings.Contains(out, ": 0 created, 1 updated, 2 unchanged\n") ||
			!regexp.MustCompile(`(?m)^suppliers +0 +1 +0$`).MatchString(out) {
			t.Errorf("summary of a changed file:\n%s", out)
		}
		// From standard input.
		other := strings.ReplaceAll(strings.ReplaceAll(file, "imported", "second"), "cf3d1382", "cf3d1383")
		if out := ts.ok(t, other, "import", "-"); !strings.Contains(out, "imported stdin") {
			t.Errorf("import -: %q", out)
		}

		bad := writeFile(t, "bad.json", "{\"communities\": [\n  {\"id\": \"x\", \"region\": \"AU\",\n   \"suppliers\": [{\"id\": 7}]}\n]}\n")
		ts.fails(t, exitFailure, "", []string{"import", bad}, `import .*bad.json: POST /admin/v1/import: 400 Bad Request .*line 3`)

		ts.fails(t, exitFailure, "", []string{"import", filepath.Join(t.TempDir(), "none.json")}, `no such file`)
		ts.fails(t, exitUsage, "", []string{"import"}, `want 1 arguments`)

		without := newTestServer(t, false)
		without.fails(t, exitFailure, "", []string{"import", p}, `POST /admin/v1/import: 501 Not Implemented \(NOT_IMPLEMENTED\)`)
	})
}

func TestMain(m *testing.M) {
	maintest.Run(main)
	os.Exit(pgtest.Main(m))
}

// -h, on the command, a group of subcommands or a subcommand, prints the
// usage on standard error and exits 0, through main as a shell runs it;
// a command line that is wrong exits 2.
func TestHelpExitStatus(t *testing.T) {
	maintest.ExpectExits(t, "procurectl", []maintest.Exit{
		{Args: []string{"-h"}, Code: 0, Stderr: "usage: procurectl [-server URL]"},
		{Args: []string{"--help"}, Code: 0, Stderr: "usage: procurectl [-server URL]"},
		{Args: []string{"supplier", "-h"}, Code: 0, Stderr: "usage: procurectl supplier SUBCOMMAND [flags] [args]\n\nSubcommands:\n  put     Create or replace a supplier"},
		{Args: []string{"token", "-help"}, Code: 0, Stderr: "  revoke  Revoke a bearer token"},
		{Args: []string{"supplier", "list", "-h"}, Code: 0, Stderr: "usage: procurectl supplier list -c COMMUNITY [flags]"},
		{Args: []string{"import", "-h"}, Code: 0, Stderr: "usage: procurectl import [flags] FILE|-"},
		{Args: []string{"supplier"}, Code: 2, Stderr: "supplier: a subcommand is required: put, delete, get, list"},
		{Args: []string{"supplier", "burn", "-h"}, Code: 2, Stderr: `supplier: unknown subcommand "burn"`},
		{Args: []string{"-nope"}, Code: 2, Stderr: "flag provided but not defined: -nope"},
	}, envToken+"=")
}

func TestRenderBar(t *testing.T) {
	for _, tc := range []struct {
		done, total int64
		secs        float64
		want        string
	}{
		{0, 1 << 30, 0, "[>               ]   0%  0 B of 1.0 GiB  0s   "},
		{1 << 29, 1 << 30, 2, "[========>       ]  50%  512.0 MiB of 1.0 GiB  256.0 MiB/s  2s   "},
		{1 << 30, 1 << 30, 64.5, "[================] 100%  1.0 GiB of 1.0 GiB  15.9 MiB/s  1m4s  server writing   "},
		{1500, -1, 1, "1.5 KiB sent  1.5 KiB/s  1s   "},
	} {
		got := renderBar(tc.done, tc.total, time.Duration(tc.secs*float64(time.Second)))
		if got != tc.want {
			t.Errorf("renderBar(%d, %d, %vs) =\n%q\nwant\n%q", tc.done, tc.total, tc.secs, got, tc.want)
		}
		if len(got) > 80 {
			t.Errorf("a frame of %d columns: %q", len(got), got)
		}
	}
}

// The bar is drawn on a terminal only; progress counts either way.
func TestProgress(t *testing.T) {
	var out bytes.Buffer
	now := time.Unix(0, 0)
	p := newProgress(strings.NewReader(strings.Repeat("x", 1000)), 1000, &out)
	p.now = func() time.Time { now = now.Add(time.Second); return now }
	p.start = now
	if _, err := io.Copy(io.Discard, p); err != nil {
		t.Fatal(err)
	}
	n, _ := p.finish()
	if n != 1000 || !strings.HasPrefix(out.String(), "\r[=") || !regexp.MustCompile(`\r\[=+\] 100%  1000 B of 1000 B  \d+ B/s  \d+s  server writing   \n$`).MatchString(out.String()) {
		t.Errorf("read %d; drew %q", n, out.String())
	}
	if isTerminal(&out) {
		t.Error("a buffer is not a terminal")
	}
	f, err := os.CreateTemp(t.TempDir(), "x")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if isTerminal(f) {
		t.Error("a regular file is not a terminal")
	}
}

func TestPosition(t *testing.T) {
	data := []byte("{\n  \"a\": \"é\",\n\t\"b\": 1\n}")
	for _, tc := range []struct {
		off       int64
		line, col int
	}{{0, 1, 1}, {2, 2, 1}, {4, 2, 3}, {10, 2, 9}, {12, 2, 10}, {int64(len(data)), 4, 2}, {-3, 1, 1}} {
		if l, c := position(data, tc.off); l != tc.line || c != tc.col {
			t.Errorf("position(%d) = %d:%d, want %d:%d", tc.off, l, c, tc.line, tc.col)
		}
	}
}

func TestLocate(t *testing.T) {
	data := []byte(`{"a": {"b": [10, {"c": "x"}]}, "d" : true}`)
	for path, want := range map[string]string{
		"":         `{"a"`,
		"a":        `{"b"`,
		"a.b":      `[10`,
		"a.b[0]":   `10`,
		"a.b[1].c": `"x"`,
		"a.b[1].z": `{"c"`, // absent: the nearest present ancestor
		"a.b[7]":   `[10`,
		"d":        `true`,
	} {
		off, ok := locate(data, path)
		if !ok || !bytes.HasPrefix(data[off:], []byte(want)) {
			t.Errorf("locate(%q) = %d (%q), want the offset of %s", path, off, data[min(off, int64(len(data))):], want)
		}
	}
}

func TestAdminBase(t *testing.T) {
	for in, want := range map[string]string{
		"http://127.0.0.1:8081":            "http://127.0.0.1:8081/admin/v1",
		"http://127.0.0.1:8081/":           "http://127.0.0.1:8081/admin/v1",
		"https://ops.example.com/admin/v1": "https://ops.example.com/admin/v1",
		"http://h/proxy/":                  "http://h/proxy/admin/v1",
	} {
		if got, err := adminBase(in); err != nil || got != want {
			t.Errorf("adminBase(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"127.0.0.1:8081", "ftp://h", "http://user:pw@h"} {
		if _, err := adminBase(in); err == nil {
			t.Errorf("adminBase(%q) accepted", in)
		}
	}
}

// A server that does not tell outcomes apart answers counts only: they
// are printed on one line, as before.
func TestPrintImportOfAnOlderServer(t *testing.T) {
	var b bytes.Buffer
	if err := printImport(&b, []byte(`{"communities": 1, "suppliers": 3, "budgets": 0}`), "imported f"); err != nil {
		t.Fatal(err)
	}
	if got := b.String(); got != "imported f: communities 1, budgets 0, suppliers 3\n" {
		t.Errorf("printImport = %q", got)
	}
	if err := printImport(&b, []byte(`[1]`), "imported f"); err == nil || !strings.Contains(err.Error(), "not an import summary") {
		t.Errorf("printImport of a list: %v", err)
	}
}

func TestSummary(t *testing.T) {
	got := summary(map[string]int{"suppliers": 3, "budgets": 0, "communities": 2})
	if got != "communities 2, budgets 0, suppliers 3" {
		t.Errorf("summary = %q", got)
	}
	if summary(nil) != "nothing" {
		t.Error("empty summary")
	}
}
