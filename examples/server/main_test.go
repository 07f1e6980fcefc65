package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/procurekit/procure/auth"
	"github.com/procurekit/procure/datafile"
	"github.com/procurekit/procure/internal/syncbuf"
	"github.com/procurekit/procure/memstore"
	"github.com/procurekit/procure/supplier"
)

// The embedded demo data parses, validates and loads (docs: errors.md "Data
// files"; issue 2 part 8).
func TestDemoDataLoads(t *testing.T) {
	f, err := datafile.Parse(bytes.NewReader(demoData))
	if err != nil {
		t.Fatalf("demo.json: %v", err)
	}
	if _, err := memstore.LoadReader(f.Reader()); err != nil {
		t.Fatalf("demo.json does not load: %v", err)
	}
}

// The demo data shows what the API can carry: two communities in different
// regions, about fifty varied suppliers, every enum value, credentials of
// every kind.
func TestDemoDataVariety(t *testing.T) {
	f, err := datafile.Parse(bytes.NewReader(demoData))
	if err != nil {
		t.Fatal(err)
	}
	regions := map[datafile.Region]bool{}
	total := 0
	var names []string
	profiles := map[supplier.ProfileType]int{}
	for _, c := range f.Communities {
		regions[c.Region] = true
		total += len(c.Suppliers)
		var contacts, addresses, banks, emails, settings, keywords int
		for _, s := range c.Suppliers {
			profiles[s.ProfileType]++
			if s.ProfileType == supplier.ProfileIndividual && (s.FirstName.String() == "" || s.LastName.String() == "") {
				t.Errorf("%s/%s: an INDIVIDUAL without first and last name", c.ID, s.ID)
			}
			if s.Name.String() != "" {
				names = append(names, s.Name.String())
			}
			if len(s.Contacts) > 4 || len(s.RemittanceAddresses) > 3 {
				t.Errorf("%s/%s: %d contacts and %d addresses; want at most 4 and 3", c.ID, s.Name, len(s.Contacts), len(s.RemittanceAddresses))
			}
			contacts += min(len(s.Contacts), 1)
			addresses += min(len(s.RemittanceAddresses), 1)
			if s.BankAccount != nil {
				banks++
			}
			if s.Emails != nil {
				emails++
			}
			if s.Settings != nil {
				settings++
			}
			if len(s.Keywords) > 0 {
				keywords++
			}
		}
		for what, n := range map[string]int{"contacts": contacts, "remittance addresses": addresses, "bank accounts": banks, "emails": emails, "settings": settings, "keywords": keywords} {
			if n == 0 || n == len(c.Suppliers) {
				t.Errorf("%s: %d of %d suppliers have %s; want some with and some without", c.ID, n, len(c.Suppliers), what)
			}
		}
	}
	if len(f.Communities) < 2 || len(regions) < 2 {
		t.Errorf("%d communities in %d regions; want at least two regions", len(f.Communities), len(regions))
	}
	if total < 45 || total > 60 {
		t.Errorf("%d suppliers; want about 50", total)
	}
	if profiles[supplier.ProfileCompany] == 0 || profiles[supplier.ProfileIndividual] == 0 {
		t.Errorf("profile types %v; want both", profiles)
	}
	var unicode, sameButCase bool
	lower := map[string]string{}
	for _, n := range names {
		if utf8.RuneCountInString(n) != len(n) {
			unicode = true
		}
		if o, ok := lower[strings.ToLower(n)]; ok && o != n {
			sameButCase = true
		}
		lower[strings.ToLower(n)] = n
	}
	if !unicode || !sameButCase {
		t.Errorf("want non-ASCII names (%v) and names that differ only in case (%v)", unicode, sameButCase)
	}
}

// Every value of every enum appears at least once, and some optional
// fields are null or absent.
func TestDemoDataEnums(t *testing.T) {
	var doc any
	if err := json.Unmarshal(demoData, &doc); err != nil {
		t.Fatal(err)
	}
	seen := map[string]map[string]bool{}
	nulls := 0
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, e := range v {
				switch e := e.(type) {
				case string:
					if seen[k] == nil {
						seen[k] = map[string]bool{}
					}
					seen[k][e] = true
				case nil:
					nulls++
				default:
					walk(e)
				}
			}
		case []any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	walk(doc)
	enums := map[string][]string{
		"profileType":           supplier.ProfileType("").Allowed(),
		"taxIdentificationType": supplier.TaxIdentificationType("").Allowed(),
		"tinVerificationStatus": supplier.TinVerificationStatus("").Allowed(),
		"connectionState":       supplier.ConnectionState("").Allowed(),
		"managedBy":             supplier.TenantType("").Allowed(),
		"bankAccountType":       supplier.BankAccountType("").Allowed(),
		"depositFormat":         supplier.DepositFormat("").Allowed(),
		"termType":              supplier.TermType("").Allowed(),
	}
	for field, allowed := range enums {
		var got []string
		for v := range seen[field] {
			got = append(got, v)
		}
		sort.Strings(got)
		want := slices.Clone(allowed)
		sort.Strings(want)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s values (-all +demo):\n%s", field, diff)
		}
	}
	if nulls < 10 {
		t.Errorf("%d explicit nulls; want some", nulls)
	}
}

// Credentials of every kind, looking like what they are: demo secrets.
func TestDemoDataCredentials(t *testing.T) {
	f, err := datafile.Parse(bytes.NewReader(demoData))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	var noScope, revoked, expired, allowlist, autoRoles int
	for _, c := range f.Communities {
		read := 0
		for _, tk := range c.Tokens {
			if !strings.HasPrefix(tk.Token, "demo-") {
				t.Errorf("%s: token %q... does not look like a demo token", c.ID, tk.Token[:min(5, len(tk.Token))])
			}
			usable := !tk.Revoked && (tk.Expires == nil || now.Before(*tk.Expires))
			switch {
			case tk.Revoked:
				revoked++
			case tk.Expires != nil && !now.Before(*tk.Expires):
				expired++
			case !slices.Contains(tk.Scopes, auth.ScopeSuppliersRead):
				noScope++
			case usable:
				read++
			}
		}
		if read == 0 {
			t.Errorf("%s: no usable token with %s", c.ID, auth.ScopeSuppliersRead)
		}
		if len(c.ServiceAccounts) == 0 {
			t.Errorf("%s: no service account", c.ID)
		}
		for _, a := range c.ServiceAccounts {
			var active, inactive int
			for _, k := range a.Keys {
				if !strings.HasPrefix(k.Key, "pk_demo_") {
					t.Errorf("%s: a key of %s does not start with pk_demo_", c.ID, a.ID)
				}
				if k.Active {
					active++
				} else {
					inactive++
				}
			}
			if active == 0 || inactive == 0 {
				t.Errorf("%s: %d active and %d inactive keys; want both", a.ID, active, inactive)
			}
			if len(a.AllowedIPs) > 0 {
				allowlist++
				if !slices.Contains(a.AllowedIPs, "127.0.0.1") || !slices.Contains(a.AllowedIPs, "::1") {
					t.Errorf("%s: the allowlist %v shuts out a local demo", a.ID, a.AllowedIPs)
				}
			}
		}
		if len(c.AutoRoles) > 0 {
			autoRoles++
		}
		var enabled, disabled int
		for _, u := range c.Users {
			if u.Enabled {
				enabled++
			} else {
				disabled++
			}
		}
		if enabled == 0 || disabled == 0 {
			t.Errorf("%s: %d enabled and %d disabled users; want both", c.ID, enabled, disabled)
		}
		if n := len(c.Budgets); n < 10 || n > 20 {
			t.Errorf("%s: %d budget accounts; want 10 to 20", c.ID, n)
		}
		if !slices.ContainsFunc(c.Budgets, func(b datafile.Budget) bool { return b.Budget.IsNegative() }) {
			t.Errorf("%s: no negative budget", c.ID)
		}
	}
	if noScope == 0 || revoked == 0 || expired == 0 || allowlist == 0 || autoRoles == 0 {
		t.Errorf("want a token without the scope (%d), a revoked (%d) and an expired one (%d), an allowlist (%d) and auto-roles (%d)",
			noScope, revoked, expired, allowlist, autoRoles)
	}
}

// running is a server started by run, with what it printed.
type running struct {
	base   string
	lines  chan string
	cancel context.CancelFunc
	done   chan struct{} // closed when run has returned
	err    error         // what run returned; read after done
	// stderr is the server's log. The server writes it from its log
	// writer's flush goroutine (every 100 ms), so a test reads it only
	// through a syncbuf.Buffer, and a line it expects may come a flush
	// late: use logLine to wait for one.
	stderr *syncbuf.Buffer
}

// logLine waits (up to five seconds) for a line of the server's log for
// which match is true and returns it; it fails the test when none comes.
func (r *running) logLine(t *testing.T, what string, match func(line string) bool) string {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		for line := range strings.SplitSeq(r.stderr.String(), "\n") {
			if match(line) {
				return line
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s in the server's log:\n%s", what, r.stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// start runs the server with args on a free port and waits for its
// banner.
func start(t *testing.T, args ...string) *running {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	r := &running{lines: make(chan string, 100), cancel: cancel, done: make(chan struct{}), stderr: &syncbuf.Buffer{}}
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			select {
			case r.lines <- sc.Text():
			default:
			}
		}
	}()
	go func() {
		// No collector headroom unless a test asks (gc_test.go): the
		// test process would otherwise grow its heap by up to 1 GiB.
		err := run(ctx, append([]string{"-addr", "127.0.0.1:0", "-gc-headroom", "0"}, args...), pw, r.stderr)
		pw.Close()
		r.err = err
		close(r.done)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-r.done:
		case <-time.After(15 * time.Second):
			t.Error("the server did not stop")
		}
	})
	addr := regexp.MustCompile(`^procure example server on (http://\S+)$`)
	timeout := time.After(10 * time.Second)
	for {
		select {
		case line := <-r.lines:
			if m := addr.FindStringSubmatch(line); m != nil {
				r.base = m[1]
				return r
			}
		case <-r.done:
			t.Fatalf("run returned before serving: %v", r.err)
		case <-timeout:
			t.Fatal("no banner")
		}
	}
}

func get(t *testing.T, url, token string) (int, []byte) {
	t.Helper()
	var header []string
	if token != "" {
		header = []string{"Authorization", "Bearer " + token}
	}
	return send(t, http.MethodGet, url, "", header...)
}

// send makes one request with the header name/value pairs given (and body,
// when not empty) and returns the status and the whole body.
func send(t *testing.T, method, url, body string, header ...string) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
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

// `go run ./examples/server` serves the demo data and prints the address
// and the demo tokens; it stops cleanly when its context ends (as on
// SIGINT or SIGTERM).
func TestRunServesDemoData(t *testing.T) {
	r := start(t)
	var banner []string
	for len(banner) == 0 || !strings.Contains(banner[len(banner)-1], "curl -H 'Service-Account-ID") {
		select {
		case l := <-r.lines:
			banner = append(banner, l)
		case <-time.After(5 * time.Second):
			t.Fatalf("banner cut short: %q", banner)
		}
	}
	text := strings.Join(banner, "\n")
	// Issue 3: the server prints a demo service account id and key; the
	// retired (inactive) keys are never offered.
	for _, want := range []string{"demo-acme-read-token", "demo-globex-read-token", "demo-acme-noscope-token", "answers 403", "curl -H 'Authorization: Bearer demo-acme-read-token'",
		"acme-au-hris   pk_demo_acme_hris_2026_Qm7vX2", "/v1/users", "POST " + r.base + "/demo/checkout",
		"curl -H 'Service-Account-ID: acme-au-hris' -H 'Service-API-Key: pk_demo_acme_hris_2026_Qm7vX2'"} {
		if !strings.Contains(text, want) {
			t.Errorf("the banner lacks %q:\n%s", want, text)
		}
	}
	for _, never := range []string{"revoked-token", "expired-token", "_retired"} {
		if strings.Contains(text, never) {
			t.Errorf("the banner offers %q:\n%s", never, text)
		}
	}

	status, body := get(t, r.base+"/public/community/suppliers?size=100", "demo-acme-read-token")
	if status != http.StatusOK {
		t.Fatalf("status %d: %s", status, body)
	}
	var page struct {
		Page struct{ TotalElements int } `json:"page"`
	}
	if err := json.Unmarshal(body, &page); err != nil {
		t.Fatal(err)
	}
	f, err := datafile.Parse(bytes.NewReader(demoData))
	if err != nil {
		t.Fatal(err)
	}
	if want := len(f.Communities[0].Suppliers); page.Page.TotalElements != want {
		t.Errorf("totalElements %d, want %d (acme-au's suppliers)", page.Page.TotalElements, want)
	}
	if status, _ := get(t, r.base+"/public/community/suppliers", "demo-acme-noscope-token"); status != http.StatusForbidden {
		t.Errorf("the token without the scope: status %d, want 403", status)
	}
	if status, _ := get(t, r.base+"/public/community/openapi.json", ""); status != http.StatusOK {
		t.Errorf("openapi.json: status %d, want 200", status)
	}

	r.cancel()
	select {
	case <-r.done:
		if r.err != nil {
			t.Errorf("run after shutdown: %v", r.err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("no shutdown")
	}
}

// With -data the server serves that file and does not print its secrets.
func TestRunServesDataFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mine.json")
	writeFile(t, path, `{"communities": [{"id": "mine", "name": "Mine", "region": "NZ",
		"tokens": [{"token": "my-secret-token", "scopes": ["suppliers:read"]}],
		"suppliers": [{"id": "0f0f0f0f-0000-4000-8000-000000000001", "name": "Kōwhai Print", "profileType": "COMPANY",
			"modifiedDate": "2026-01-01T00:00:00Z", "createdDate": "2026-01-01T00:00:00Z"}]}]}`)
	r := start(t, "-data", path)
	status, body := get(t, r.base+"/public/community/suppliers/0f0f0f0f-0000-4000-8000-000000000001", "my-secret-token")
	if status != http.StatusOK || !strings.Contains(string(body), "Kōwhai Print") {
		t.Errorf("status %d: %s", status, body)
	}
	if status, _ := get(t, r.base+"/public/community/suppliers", "demo-acme-read-token"); status != http.StatusUnauthorized {
		t.Errorf("a demo token against -data: status %d, want 401", status)
	}
	var printed []string
	for len(r.lines) > 0 {
		printed = append(printed, <-r.lines)
	}
	if text := strings.Join(printed, "\n"); strings.Contains(text, "my-secret-token") {
		t.Errorf("the secret of a -data file was printed:\n%s", text)
	}
}

// A bad -data file stops the server with an error naming the file and the
// offending entry (issue 2 part 8); main exits non-zero on any error.
func TestRunRejectsBadData(t *testing.T) {
	dir := t.TempDir()
	supplierJSON := func(i int, extra string) string {
		return `{"id": "0f0f0f0f-0000-4000-8000-00000000000` + string(rune('0'+i)) + `", "name": "S", "profileType": "COMPANY",
			"modifiedDate": "2026-01-01T00:00:00Z", "createdDate": "2026-01-01T00:00:00Z"` + extra + `}`
	}
	tests := []struct {
		name, body, want string
	}{
		{"invalid email", `{"communities": [{"id": "c", "name": "C", "region": "AU", "suppliers": [` +
			supplierJSON(0, "") + `,` + supplierJSON(1, "") + `,` + supplierJSON(2, "") + `,` +
			supplierJSON(3, `, "emails": {"ordersEmailAddress": "orders at example"}`) + `]}]}`,
			"communities[0].suppliers[3].emails.ordersEmailAddress: must be a valid email address"},
		{"malformed JSON", "{\"communities\": [\n  {\"id\": \"c\",,}\n]}", "line 2:15: malformed JSON"},
		{"unknown enum", `{"communities": [{"id": "c", "name": "C", "region": "AU", "suppliers": [` +
			supplierJSON(0, `, "connectionState": "ONLINE"`) + `]}]}`,
			`communities[0].suppliers[0].connectionState: must be one of CONNECTED, PENDING, DISCONNECTED (got "ONLINE")`},
		{"unknown region", `{"communities": [{"id": "c", "name": "C", "region": "EU"}]}`,
			`communities[0].region: must be one of AU, NZ, US, DEMO (got "EU")`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "-")+".json")
			writeFile(t, path, tt.body)
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), []string{"-addr", "127.0.0.1:0", "-data", path}, &stdout, &stderr)
			if err == nil {
				t.Fatal("run accepted the file")
			}
			if !strings.HasPrefix(err.Error(), path+": ") || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q\nwant it to start with %q and hold %q", err, path+": ", tt.want)
			}
			if stdout.Len() != 0 {
				t.Errorf("printed a banner for a bad file: %s", stdout.String())
			}
		})
	}
	missing := filepath.Join(dir, "missing.json")
	if err := run(context.Background(), []string{"-data", missing}, io.Discard, io.Discard); err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("a missing file: error %v, want one naming %s", err, missing)
	}
}

func TestRunFlags(t *testing.T) {
	tests := []struct {
		args []string
		want error
	}{
		{[]string{"-nope"}, errUsage},
		{[]string{"extra"}, errUsage},
		{[]string{"-h"}, flag.ErrHelp},
		{[]string{"-log-format", "xml"}, errUsage},
		{[]string{"-log-level", "loud"}, errUsage},
		{[]string{"-addr", "127.0.0.1:8080", "-admin-addr", "127.0.0.1:8080"}, errUsage},
		{[]string{"-postgres-migrate", "postgres://db/x"}, errUsage},
		{[]string{"-postgres-read", "postgres://replica/x"}, errUsage},
	}
	for _, tt := range tests {
		var stderr bytes.Buffer
		err := run(context.Background(), tt.args, io.Discard, &stderr)
		if !errors.Is(err, tt.want) {
			t.Errorf("%v: error %v, want %v", tt.args, err, tt.want)
		}
		if !strings.Contains(stderr.String(), "usage: server") {
			t.Errorf("%v: no usage on stderr: %s", tt.args, stderr.String())
		}
	}
	// An address in use is an error, not a hang.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if err := run(context.Background(), []string{"-addr", ln.Addr().String()}, io.Discard, io.Discard); err == nil {
		t.Error("listening on a taken address succeeded")
	}
}

func TestDisplayAddr(t *testing.T) {
	tests := map[string]string{
		"0.0.0.0:8080":   "localhost:8080",
		"[::]:8080":      "localhost:8080",
		"127.0.0.1:8080": "127.0.0.1:8080",
		"[::1]:9000":     "[::1]:9000",
	}
	for in, want := range tests {
		a, err := net.ResolveTCPAddr("tcp", in)
		if err != nil {
			t.Fatal(err)
		}
		if got := displayAddr(a); got != want {
			t.Errorf("displayAddr(%s) = %s, want %s", in, got, want)
		}
	}
}

func writeFile(tb testing.TB, path, body string) {
	tb.Helper()
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		tb.Fatal(err)
	}
}

// The README's curl examples use tokens and supplier ids of the demo data,
// and their queries find something: the README cannot drift from it.
func TestReadmeMatchesDemoData(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tok := range regexp.MustCompile(`demo-[a-z]+-[a-z]+-token`).FindAllString(string(readme), -1) {
		if !bytes.Contains(demoData, []byte(`"`+tok+`"`)) {
			t.Errorf("README token %s is not in demo.json", tok)
		}
	}
	ids := regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`).FindAllString(string(readme), -1)
	if len(ids) == 0 {
		t.Fatal("no supplier id in the README")
	}
	for _, id := range ids {
		if !bytes.Contains(demoData, []byte(`"id": "`+id+`"`)) {
			t.Errorf("README id %s is not in demo.json", id)
		}
	}
	r := start(t)
	examples := regexp.MustCompile(`curl -H "\$AUTH" "\$BASE(/[^"]+)"`).FindAllStringSubmatch(string(readme), -1)
	if len(examples) < 10 {
		t.Fatalf("found %d curl examples in the README; the pattern is broken", len(examples))
	}
	for _, m := range examples {
		status, body := get(t, r.base+"/public/community"+m[1], "demo-acme-read-token")
		want := http.StatusOK
		if strings.Contains(m[1], "size=500") {
			want = http.StatusBadRequest
		}
		if status != want {
			t.Errorf("README example %s: status %d, want %d: %s", m[1], status, want, body)
			continue
		}
		if status == http.StatusOK && bytes.Contains(body, []byte(`"content":[]`)) {
			t.Errorf("README example %s finds nothing", m[1])
		}
	}
}

// The banner's user API example works: the demo service account reads a
// user (case-insensitively), and the retired key of the same account is
// refused (docs: users.md "Authentication").
func TestRunServesUserAPI(t *testing.T) {
	r := start(t)
	do := func(key string) (int, []byte) {
		t.Helper()
		return send(t, http.MethodGet, r.base+"/v1/users/username/JSMITH", "",
			"Service-Account-ID", "acme-au-hris", "Service-API-Key", key)
	}
	status, body := do("pk_demo_acme_hris_2026_Qm7vX2")
	if status != http.StatusOK || !bytes.Contains(body, []byte(`"username":"jsmith"`)) {
		t.Errorf("active key: status %d, body %s", status, body)
	}
	status, body = do("pk_demo_acme_hris_2025_retired")
	if status != http.StatusUnauthorized || !bytes.Contains(body, []byte(`"code":"UNAUTHORIZED"`)) {
		t.Errorf("retired key: status %d, body %s", status, body)
	}
}

// The demo checkout route is mounted: an account absent from the demo
// budgets is a hard stop (docs: suppliers.md "Enumerations": absent accounts are Invalid).
func TestRunServesCheckoutDemo(t *testing.T) {
	r := start(t)
	status, body := send(t, http.MethodPost, r.base+"/demo/checkout",
		`{"lines":[{"lineNumber":1,"account":"9999-999","amount":"1.00"}]}`,
		"Authorization", "Bearer demo-acme-read-token", "Content-Type", "application/json")
	if status != http.StatusOK || !bytes.Contains(body, []byte(`"decision":"hard_stop"`)) || !bytes.Contains(body, []byte(`"status":"Invalid"`)) {
		t.Errorf("status %d, body %s", status, body)
	}
}
