package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/procurekit/procure/datafile"
	"github.com/procurekit/procure/httpapi"
	"github.com/procurekit/procure/memstore"
	"github.com/procurekit/procure/user"
)

// Test fixtures, not real secrets.
const (
	testAccount = "sa-usersync"
	testKey     = "fixture-usersync-key"
	community   = "demo"
)

// api is the real user API over a memstore, with a hook that may answer a
// request itself (to inject failures) and counters of what it received.
type api struct {
	*httptest.Server
	store *memstore.Store

	mu     sync.Mutex
	counts map[string]int // by method
	hook   func(w http.ResponseWriter, r *http.Request) bool
}

func (a *api) count(method string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.counts[method]
}

func newAPI(t *testing.T, autoRoles ...string) *api {
	t.Helper()
	return newAPIWith(t, true, autoRoles...)
}

// newAPIWith is newAPI with the SCIM endpoint beside the user API, as
// examples/server serves it, or without (another implementation).
func newAPIWith(t *testing.T, withSCIM bool, autoRoles ...string) *api {
	t.Helper()
	store, err := memstore.LoadReader((&datafile.File{Communities: []datafile.Community{{
		ID: community, Region: datafile.DEMO, AutoRoles: autoRoles,
		ServiceAccounts: []datafile.ServiceAccount{{ID: testAccount, Keys: []datafile.Key{{Key: testKey, Active: true}}}},
	}}}).Reader())
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	httpapi.MountUsers(mux, httpapi.UserOptions{Users: user.NewService(store), Accounts: store, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if withSCIM {
		httpapi.MountSCIM(mux, httpapi.SCIMOptions{Users: user.NewService(store), Accounts: store, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	}
	a := &api{store: store, counts: map[string]int{}}
	a.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		a.counts[r.Method]++
		hook := a.hook
		a.mu.Unlock()
		if hook != nil && hook(w, r) {
			return
		}
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(a.Close)
	return a
}

// writeFile writes content to name in a new temporary directory.
func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// runSync runs the program with the key in the environment and fast
// retries; it returns the exit status, stdout and stderr.
func runSync(t *testing.T, a *api, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	getenv := func(k string) string {
		if k == apiKeyEnv {
			return testKey
		}
		return ""
	}
	base := []string{"-url", a.URL, "-account", testAccount, "-retry-wait", "1ms", "-timeout", "10s"}
	code := run(context.Background(), append(base, args...), getenv, strings.NewReader(""), &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

func stored(t *testing.T, a *api, username string) user.User {
	t.Helper()
	u, err := a.store.UserByUsername(context.Background(), community, username)
	if err != nil {
		t.Fatalf("user %q: %v", username, err)
	}
	return u
}

const exportCSV = `username,id,firstName,email,enabled,roles,buyerGroups,attributes
ann@example.com,hr-1,Ann,ann@example.com,true,BUYER;APPROVER,BG-1,costCentre=CC1;grade=7
ben@example.com,,Ben,ben@example.com,,BUYER,,
cat@example.com,hr-3,Cat,,false,,BG-1;BG-2,grade=5
`

func TestCreatesThenUnchangedThenUpdates(t *testing.T) {
	a := newAPI(t, "EMPLOYEE")
	file := writeFile(t, "users.csv", exportCSV)

	code, out, errOut := runSync(t, a, "-file", file, "-auto-roles", "EMPLOYEE")
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	if !strings.Contains(out, "created 3, updated 0, unchanged 0, failed 0 (of 3 users)") {
		t.Errorf("summary: %s", out)
	}
	want := user.User{ID: "hr-1", Username: "ann@example.com", FirstName: "Ann", Email: "ann@example.com", Enabled: true,
		Roles: user.Codes("BUYER", "APPROVER", "EMPLOYEE"), BuyerGroups: user.Codes("BG-1"),
		Attributes: []user.Attribute{{Name: "costCentre", Value: "CC1"}, {Name: "grade", Value: "7"}}}
	if diff := cmp.Diff(want, stored(t, a, "ann@example.com"), cmpopts.EquateEmpty(), cmpopts.IgnoreFields(user.User{}, "Version")); diff != "" {
		t.Errorf("ann (-want +got):\n%s", diff)
	}
	if ben := stored(t, a, "ben@example.com"); ben.ID == "" || !ben.Enabled {
		t.Errorf("ben = %+v; want a generated id, enabled by default", ben)
	}
	if cat := stored(t, a, "cat@example.com"); cat.Enabled || len(cat.BuyerGroups) != 2 {
		t.Errorf("cat = %+v", cat)
	}

	// A second run writes nothing.
	posts, puts := a.count(http.MethodPost), a.count(http.MethodPut)
	code, out, _ = runSync(t, a, "-file", file, "-auto-roles", "EMPLOYEE")
	if code != 0 || !strings.Contains(out, "created 0, updated 0, unchanged 3, failed 0") {
		t.Errorf("second run: exit %d, %s", code, out)
	}
	if a.count(http.MethodPost) != posts || a.count(http.MethodPut) != puts {
		t.Error("the second run wrote")
	}

	// One changed row is one update; an empty cell clears the field.
	changed := strings.Replace(exportCSV, "ann@example.com,hr-1,Ann,ann@example.com,true", "ann@example.com,hr-1,Annie,,true", 1)
	code, out, _ = runSync(t, a, "-file", writeFile(t, "users.csv", changed), "-auto-roles", "EMPLOYEE", "-v")
	if code != 0 || !strings.Contains(out, "created 0, updated 1, unchanged 2, failed 0") || !strings.Contains(out, ":2: ann@example.com: updated") {
		t.Errorf("third run: exit %d, %s", code, out)
	}
	if ann := stored(t, a, "ann@example.com"); ann.FirstName != "Annie" || ann.Email != "" {
		t.Errorf("ann after update = %+v", ann)
	}
}

// A dry run writes nothing and says, per user, what a run would do. A
// row whose username is unknown but whose id is given is settled by
// asking the server for the id (the SCIM endpoint): an update that
// renames the user, or a create; a server without the endpoint leaves it
// open.
func TestDryRunWritesNothing(t *testing.T) {
	const export = exportCSV + "dan.new@example.com,hr-4,Dan,,,,,\n"
	for _, tc := range []struct {
		name     string
		scim     bool
		want     []string
		requests int // GETs: a pre-check per row, and the id lookups
	}{
		{"with the server's lookup by id", true, []string{
			"users.csv:2: ann@example.com: would update (firstName)",
			"users.csv:3: ben@example.com: would create (username, firstName, email, roles, buyerGroups, attributes)",
			"users.csv:4: cat@example.com: would create (id, username, firstName, email, enabled, roles, buyerGroups, attributes)",
			`users.csv:5: dan.new@example.com: would update user hr-4, renaming "dan@example.com" (username, firstName)`,
			"dry run, nothing written: would be created 2, updated 2, unchanged 0, failed 0 (of 4 users)",
		}, 4 + 2 + 1}, // the pre-checks, two ids asked for, the renamed user read
		{"without it", false, []string{
			"users.csv:2: ann@example.com: would update (firstName)",
			"users.csv:4: cat@example.com: would update id hr-3 to this username, or create it if the id is unknown (username, firstName, email, enabled, roles, buyerGroups, attributes)",
			"users.csv:5: dan.new@example.com: would update id hr-4 to this username, or create it if the id is unknown (username, firstName, email, roles, buyerGroups, attributes)",
			"dry run, nothing written: would be created 1, updated 1, created or updated by id 2 (the server has no lookup by id: no SCIM endpoint at /scim/v2), unchanged 0, failed 0 (of 4 users)",
		}, 4 + 1}, // the pre-checks and the one lookup that found no endpoint
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := newAPIWith(t, tc.scim)
			for _, u := range []user.User{
				{ID: "hr-1", Username: "ann@example.com", FirstName: "Old", Email: "ann@example.com", Enabled: true,
					Roles: user.Codes("BUYER", "APPROVER"), BuyerGroups: user.Codes("BG-1"), Attributes: []user.Attribute{{Name: "costCentre", Value: "CC1"}, {Name: "grade", Value: "7"}}},
				{ID: "hr-4", Username: "dan@example.com", FirstName: "Daniel", Enabled: true},
			} {
				if _, err := a.store.CreateUser(context.Background(), community, u); err != nil {
					t.Fatal(err)
				}
			}
			// One row at a time: the requests are then counted exactly.
			code, out, errOut := runSync(t, a, "-file", writeFile(t, "users.csv", export), "-dry-run", "-concurrency", "1")
			if code != 0 {
				t.Fatalf("exit %d: %s %s", code, out, errOut)
			}
			for _, want := range tc.want {
				if !strings.Contains(out, want) {
					t.Errorf("output lacks %q:\n%s", want, out)
				}
			}
			if a.count(http.MethodPost)+a.count(http.MethodPut) != 0 {
				t.Error("a dry run wrote")
			}
			if got := a.count(http.MethodGet); got != tc.requests {
				t.Errorf("%d GET requests, want %d", got, tc.requests)
			}
		})
	}
}

func TestBadRowsSyncNothing(t *testing.T) {
	a := newAPI(t)
	bad := `username,email,enabled,roles,attributes
ok@example.com,ok@example.com,true,BUYER,
,nobody@example.com,,,
bad@example.com,not-an-email,maybe,A;A,grade
OK@EXAMPLE.COM,,,,
long@example.com,,,` + strings.Repeat("R", 256) + `,name=` + strings.Repeat("v", 21) + `
`
	code, out, errOut := runSync(t, a, "-file", writeFile(t, "users.csv", bad))
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s\n%s", code, out, errOut)
	}
	want := []string{
		"users.csv:3: username: is required",
		`users.csv:4: enabled: must be true, false or empty (got "maybe")`,
		`users.csv:4: attributes: must be name=value pairs separated by ";" (got "grade")`,
		// Every problem of the row, not only its bad cells.
		"users.csv:4: email: must be a valid email address",
		`users.csv:4: roles[1].code: entries must be unique by code: "A" is already at roles[0]`,
		`users.csv:5: username: "OK@EXAMPLE.COM" is also on line 2 (usernames compare case-insensitively)`,
		"users.csv:6: roles[0].code: must be at most 255 characters",
		"users.csv:6: attributes[0].value: must be at most 20 characters",
		"users.csv has 8 problem(s); nothing was synced",
	}
	for _, w := range want {
		if !strings.Contains(errOut, w) {
			t.Errorf("stderr lacks %q:\n%s", w, errOut)
		}
	}
	if n := a.count(http.MethodGet) + a.count(http.MethodPost) + a.count(http.MethodPut); n != 0 {
		t.Errorf("%d requests were sent for a file with bad rows", n)
	}

	t.Run("every problem of each row, in every format", func(t *testing.T) {
		for _, tc := range []struct {
			name, content string
			want          []string // every line of standard error, in order
		}{
			{"u.csv", "username,email,enabled\n" +
				"dup@example.com,not-an-email,yes\n" +
				"DUP@example.com,also bad,\n" +
				"short\n" +
				"fine@example.com,,true\n", []string{
				`u.csv:2: enabled: must be true, false or empty (got "yes")`,
				"u.csv:2: email: must be a valid email address",
				"u.csv:3: email: must be a valid email address",
				`u.csv:3: username: "DUP@example.com" is also on line 2 (usernames compare case-insensitively)`,
				"u.csv:4: malformed CSV: wrong number of fields: 1, the header has 3",
				"usersync: u.csv has 5 problem(s); nothing was synced"}},
			{"u.jsonl", `{"username": "a@example.com", "enabled": "yes", "roles": "BUYER", "email": "nope"}` + "\n" +
				`{"username": "A@example.com", "id": 7}` + "\n" +
				`{"username": "c@example.com", "organisationUnits": [{"code": "X"}], "organisationsUnits": [{"code": "Y"}]}` + "\n" +
				`{"username": ` + "\n", []string{
				"u.jsonl:1: enabled: has the wrong JSON type (string)",
				"u.jsonl:1: roles: has the wrong JSON type (string)",
				"u.jsonl:1: email: must be a valid email address",
				"u.jsonl:2: id: has the wrong JSON type (number)",
				`u.jsonl:2: username: "A@example.com" is also on line 1 (usernames compare case-insensitively)`,
				"u.jsonl:3: organisationsUnits: must hold the same codes as organisationUnits",
				"u.jsonl:4: malformed JSON",
				"usersync: u.jsonl has 7 problem(s); nothing was synced"}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				dir := t.TempDir()
				file := filepath.Join(dir, tc.name)
				if err := os.WriteFile(file, []byte(tc.content), 0o600); err != nil {
					t.Fatal(err)
				}
				code, _, errOut := runSync(t, a, "-file", file)
				lines := strings.Split(strings.TrimSuffix(strings.ReplaceAll(errOut, dir+string(filepath.Separator), ""), "\n"), "\n")
				if code != 1 || len(lines) != len(tc.want) {
					t.Fatalf("exit %d, %d lines; want 1 and %d:\n%s", code, len(lines), len(tc.want), strings.Join(lines, "\n"))
				}
				for i, w := range tc.want {
					if !strings.HasPrefix(lines[i], w) {
						t.Errorf("line %d: %q, want it to start with %q", i+1, lines[i], w)
					}
				}
			})
		}
	})

	t.Run("cell errors and rule errors of one row", func(t *testing.T) {
		// A row whose cells decode is checked by the user rules.
		code, _, errOut := runSync(t, a, "-file", writeFile(t, "u.csv", "username,email,roles\nx@example.com,nope,A;A\n"))
		if code != 1 || !strings.Contains(errOut, "u.csv:2: email: must be a valid email address") ||
			!strings.Contains(errOut, `u.csv:2: roles[1].code: entries must be unique by code: "A" is already at roles[0]`) {
			t.Errorf("exit %d: %s", code, errOut)
		}
	})
}

func TestHeaderAndFileErrors(t *testing.T) {
	a := newAPI(t)
	tests := []struct {
		name, file, content string
		args                []string
		code                int
		want                string
	}{
		{"unknown column", "u.csv", "username,emial\nx,y\n", nil, 1, `u.csv:1: column 2 "emial": not a User field`},
		{"no username column", "u.csv", "email\nx@example.com\n", nil, 1, "u.csv:1: no username column"},
		{"repeated column", "u.csv", "username,roles,Roles\nx,A,B\n", nil, 1, `u.csv:1: column 3 "Roles": the field roles is already column 2`},
		{"malformed CSV", "u.csv", "username,email\nx,\"unterminated\n", nil, 1, "u.csv:2: malformed CSV"},
		{"wrong field count", "u.csv", "username,email\nx\n", nil, 1, "u.csv:2: malformed CSV: wrong number of fields"},
		{"empty file", "u.csv", "", nil, 1, "u.csv:1: the file is empty"},
		{"unknown extension", "u.txt", "x", nil, 2, "give -format csv or -format jsonl"},
		{"bad JSON line", "u.jsonl", "{\"username\":\"a\"}\n\n{\"username\":\n{\"username\":\"b\",\"enabled\":\"yes\"}\n[1]\n", nil, 1, "u.jsonl:3: malformed JSON"},
		{"JSON type error", "u.jsonl", "{\"username\":\"b\",\"enabled\":\"yes\"}\n", nil, 1, "u.jsonl:1: enabled: has the wrong JSON type (string)"},
		{"JSON not an object", "u.jsonl", "[1]\n", nil, 1, "u.jsonl:1: must be a JSON object (a User), not array"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"-file", writeFile(t, tt.file, tt.content)}, tt.args...)
			code, _, errOut := runSync(t, a, args...)
			if code != tt.code || !strings.Contains(errOut, tt.want) {
				t.Errorf("exit %d, want %d; stderr lacks %q:\n%s", code, tt.code, tt.want, errOut)
			}
		})
	}
	if n := a.count(http.MethodGet); n != 0 {
		t.Errorf("%d requests sent", n)
	}
}

func TestUsage(t *testing.T) {
	a := newAPI(t)
	file := writeFile(t, "u.csv", "username\nx\n")
	var stdout, stderr bytes.Buffer
	noKey := func(string) string { return "" }
	if code := run(context.Background(), []string{"-url", a.URL, "-account", testAccount, "-file", file}, noKey, nil, &stdout, &stderr); code != 2 ||
		!strings.Contains(stderr.String(), "PROCURE_API_KEY") {
		t.Errorf("without the key: exit %d, %s", code, stderr.String())
	}
	for _, args := range [][]string{
		{"-account", testAccount, "-file", file, "-key", testKey}, // the key is never a flag
		{"-file", file},
		{"-account", testAccount},
		{"-account", testAccount, "-file", file, "-concurrency", "0"},
		{"-account", testAccount, "-file", file, "-format", "xml"},
		{"-account", testAccount, "-file", file, "extra"},
	} {
		stderr.Reset()
		if code := run(context.Background(), args, func(string) string { return testKey }, nil, &stdout, &stderr); code != 2 {
			t.Errorf("run(%q) = %d, want 2 (%s)", args, code, stderr.String())
		}
	}
}

func TestRetries(t *testing.T) {
	file := writeFile(t, "u.csv", "username,firstName\nann@example.com,Ann\n")
	t.Run("503 then success", func(t *testing.T) {
		a := newAPI(t)
		var posts int
		a.hook = func(w http.ResponseWriter, r *http.Request) bool {
			if r.Method != http.MethodPost {
				return false
			}
			posts++
			if posts <= 2 {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusServiceUnavailable)
				io.WriteString(w, `{"code":"UNAVAILABLE","message":"try again"}`)
				return true
			}
			return false
		}
		code, out, errOut := runSync(t, a, "-file", file)
		if code != 0 || !strings.Contains(out, "created 1") {
			t.Fatalf("exit %d: %s %s", code, out, errOut)
		}
		if posts != 3 {
			t.Errorf("%d POSTs, want 3 (two 503s, then success)", posts)
		}
		stored(t, a, "ann@example.com")
	})
	t.Run("gives up after -retries", func(t *testing.T) {
		a := newAPI(t)
		a.hook = func(w http.ResponseWriter, r *http.Request) bool {
			w.WriteHeader(http.StatusBadGateway)
			return true
		}
		code, out, _ := runSync(t, a, "-file", file, "-retries", "2")
		if code != 1 || !strings.Contains(out, "u.csv:2: ann@example.com: user API: 502: Bad Gateway (after 3 attempts)") {
			t.Errorf("exit %d: %s", code, out)
		}
		if n := a.count(http.MethodGet); n != 3 {
			t.Errorf("%d attempts, want 3", n)
		}
	})
	t.Run("no retry on 400", func(t *testing.T) {
		a := newAPI(t)
		a.hook = func(w http.ResponseWriter, r *http.Request) bool {
			if r.Method != http.MethodPost {
				return false
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, `{"code":"INVALID_FIELD","message":"firstName: refused"}`)
			return true
		}
		code, out, _ := runSync(t, a, "-file", file)
		if code != 1 || !strings.Contains(out, "failed 1") || !strings.Contains(out, "INVALID_FIELD: firstName: refused") {
			t.Errorf("exit %d: %s", code, out)
		}
		if n := a.count(http.MethodPost); n != 1 {
			t.Errorf("%d POSTs, want exactly 1", n)
		}
	})
}

func TestAuthenticationFailureStopsTheRun(t *testing.T) {
	a := newAPI(t)
	var rows strings.Builder
	rows.WriteString("username\n")
	for i := range 50 {
		rows.WriteString("user" + string(rune('a'+i%26)) + strings.Repeat("x", i) + "\n")
	}
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"-url", a.URL, "-account", testAccount, "-file", writeFile(t, "u.csv", rows.String()), "-concurrency", "2"},
		func(string) string { return "fixture-wrong-key" }, nil, &stdout, &stderr)
	out := stdout.String()
	if code != 1 || !strings.Contains(out, "authentication failed: check -account and PROCURE_API_KEY") || !strings.Contains(out, "failed 50") {
		t.Errorf("exit %d: %s", code, out)
	}
	if n := a.count(http.MethodGet); n > 4 {
		t.Errorf("%d requests after authentication failed; the run should stop", n)
	}
	if strings.Contains(out+stderr.String(), "fixture-wrong-key") {
		t.Error("the output holds the key")
	}
}

func TestExampleExports(t *testing.T) {
	// The example exports sync, in either format, to the same users.
	for _, name := range []string{"users.csv", "users.jsonl"} {
		t.Run(name, func(t *testing.T) {
			a := newAPI(t, "EMPLOYEE")
			code, out, errOut := runSync(t, a, "-file", filepath.Join("testdata", name), "-concurrency", "3")
			if code != 0 || !strings.Contains(out, "created 4, updated 0, unchanged 0, failed 0") {
				t.Fatalf("exit %d: %s %s", code, out, errOut)
			}
			code, out, _ = runSync(t, a, "-file", filepath.Join("testdata", name), "-auto-roles", "EMPLOYEE")
			if code != 0 || !strings.Contains(out, "unchanged 4") {
				t.Errorf("second run: exit %d: %s", code, out)
			}
			other := map[string]string{"users.csv": "users.jsonl", "users.jsonl": "users.csv"}[name]
			code, out, _ = runSync(t, a, "-file", filepath.Join("testdata", other), "-auto-roles", "EMPLOYEE")
			if code != 0 || !strings.Contains(out, "unchanged 4") {
				t.Errorf("the %s export differs from %s: exit %d: %s", other, name, code, out)
			}
			if tom := stored(t, a, "tom.baker@example.com"); tom.Enabled || tom.DisplayName != "Baker, Tom (OU-OPS)" {
				t.Errorf("tom = %+v", tom)
			}
		})
	}
}

func TestBackoff(t *testing.T) {
	for n := 1; n <= 20; n++ {
		d := backoff(100*time.Millisecond, n)
		full := min(100*time.Millisecond<<(n-1), 30*time.Second)
		if d < full/2 || d > full {
			t.Errorf("backoff(100ms, %d) = %v, want within [%v, %v]", n, d, full/2, full)
		}
	}
}
