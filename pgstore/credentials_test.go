package pgstore_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/procurekit/procure"
	"github.com/procurekit/procure/auth"
	"github.com/procurekit/procure/auth/authtest"
	"github.com/procurekit/procure/datafile"
	"github.com/procurekit/procure/httpapi"
	"github.com/procurekit/procure/internal/pgtest"
	"github.com/procurekit/procure/internal/syncbuf"
	"github.com/procurekit/procure/pgstore"
	"github.com/procurekit/procure/user"
)

// usageCounter is installed by countUsageWrites: statement-level triggers
// count every UPDATE of lastUsedAt (one that changes no row included), so
// the count is what the database was asked to write, whatever the code
// that asked.
const usageCounter = `
CREATE TABLE usage_writes (n bigint NOT NULL);
INSERT INTO usage_writes VALUES (0);
CREATE FUNCTION count_usage_write() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN UPDATE usage_writes SET n = n + 1; RETURN NULL; END $$;
CREATE TRIGGER count_token_usage AFTER UPDATE OF last_used_at ON tokens
    FOR EACH STATEMENT EXECUTE FUNCTION count_usage_write();
CREATE TRIGGER count_key_usage AFTER UPDATE OF last_used_at ON service_account_keys
    FOR EACH STATEMENT EXECUTE FUNCTION count_usage_write();
`

// credStore is a store under the suite, with the database it is on.
type credStore struct {
	*pgstore.Store
	dsn string
	db  database
}

func openCredStore(t *testing.T, opts ...pgstore.Option) *credStore {
	t.Helper()
	return openCredStoreIn(t, setupNamed("direct"), opts...)
}

func openCredStoreIn(t *testing.T, su setup, opts ...pgstore.Option) *credStore {
	t.Helper()
	s, d := openIn(t, su, nil, opts...)
	if _, err := connect(t, d.direct).Exec(context.Background(), usageCounter); err != nil {
		t.Fatal(err)
	}
	return &credStore{s, d.direct, d}
}

// The write side of communities, credentials and budgets passes the
// conformance suite, with a second Store on the same database as the
// other node, and lastUsedAt writes counted in the database.
func TestCredentialConformance(t *testing.T) { runCredentialSuite(t, 0, nil) }

// With the credential cache on both nodes, the suite passes unchanged but
// for the peer's lag: a write reaches the other node within one second
// (docs: live-data.md), and the node that made it at once.
func TestCredentialConformanceCached(t *testing.T) {
	// Through PgBouncer the cache changes no statement: not run there.
	runCredentialSuite(t, time.Second, []string{"direct", "replica"}, pgstore.WithCredentialCache())
}

// runCredentialSuite runs authtest on stores opened with opts, in the
// set-ups named by only (nil: every one), the peer allowed lag to see a
// change.
func runCredentialSuite(t *testing.T, lag time.Duration, only []string, opts ...pgstore.Option) {
	inSetups(t, func(t *testing.T, su setup) {
		authtest.Run(t, authtest.Config{
			New: func(t *testing.T) authtest.Store { return openCredStoreIn(t, su, opts...) },
			Peer: func(t *testing.T, s authtest.Store) authtest.Store {
				return s.(*credStore).db.open(t, opts...)
			},
			PeerLag: max(lag, su.lag),
			UsageWrites: func(t *testing.T, s authtest.Store) int {
				return queryInt(t, connect(t, s.(*credStore).dsn), `SELECT n FROM usage_writes`)
			},
		})
	}, only...)
}

// Two nodes each write lastUsedAt at most once a minute per credential:
// a burst of requests over HTTP, spread across both, costs at most one
// UPDATE per node, and only one of them changes the row.
func TestLastUsedAtAcrossNodes(t *testing.T) {
	ctx := context.Background()
	s1 := openCredStore(t)
	s2, err := pgstore.Open(ctx, s1.dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s2.Close)
	if _, err := s1.PutCommunity(ctx, procure.Community{ID: "c1", Region: "AU"}); err != nil {
		t.Fatal(err)
	}
	secret, hash := auth.NewBearerToken()
	tok, err := s1.AddToken(ctx, auth.Token{Hash: hash, Community: "c1", Scopes: []string{auth.ScopeSuppliersRead}})
	if err != nil {
		t.Fatal(err)
	}
	conn := connect(t, s1.dsn)
	nodes := []*httptest.Server{supplierNode(t, s1.Store), supplierNode(t, s2)}
	first := time.Now().UTC().Truncate(time.Minute)
	for i := range 40 {
		if status := getSuppliers(t, nodes[i%2], secret); status != http.StatusOK {
			t.Fatalf("request %d: status %d", i, status)
		}
	}
	last := time.Now().UTC().Truncate(time.Minute)
	// One write per node and minute at most; the burst may straddle two
	// minutes.
	most := 2
	if !last.Equal(first) {
		most = 4
	}
	if n := queryInt(t, conn, `SELECT n FROM usage_writes`); n < 1 || n > most {
		t.Errorf("40 requests on two nodes: %d lastUsedAt writes, want 1 to %d", n, most)
	}
	list, err := s2.Tokens(ctx, "c1")
	if err != nil || len(list) != 1 || list[0].ID != tok.ID {
		t.Fatalf("Tokens = %v, %v", list, err)
	}
	if got := list[0].LastUsedAt; !got.Equal(last) && !got.Equal(first) {
		t.Errorf("lastUsedAt %v, want the minute of the requests (%v)", got, last)
	}
}

// supplierNode serves the supplier API over s.
func supplierNode(t *testing.T, s *pgstore.Store) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	httpapi.MountSuppliers(mux, httpapi.SupplierOptions{Store: s, Tokens: s, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func getSuppliers(t *testing.T, srv *httptest.Server, token string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, srv.URL+"/public/community/suppliers", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode
}

// Over HTTP on two nodes: a token issued on node 1 is a 200 on node 2 and,
// once revoked on node 1, a 401 on node 2 at the next request; the same for
// a service-account key deactivated on node 2, on the user API of node 1.
func TestRevocationAcrossNodesOverHTTP(t *testing.T) {
	ctx := context.Background()
	s1 := openCredStore(t)
	s2, err := pgstore.Open(ctx, s1.dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s2.Close)
	if _, err := s1.PutCommunity(ctx, procure.Community{ID: "c1", Region: "AU"}); err != nil {
		t.Fatal(err)
	}
	n1, n2 := userNode(t, s1.Store), userNode(t, s2)

	secret, hash := auth.NewBearerToken()
	tok, err := s1.AddToken(ctx, auth.Token{Hash: hash, Community: "c1", Scopes: []string{auth.ScopeSuppliersRead}})
	if err != nil {
		t.Fatal(err)
	}
	if status := getSuppliers(t, n2, secret); status != http.StatusOK {
		t.Fatalf("a token issued on node 1, on node 2: status %d, want 200", status)
	}
	if err := s1.RevokeToken(ctx, "c1", tok.ID); err != nil {
		t.Fatal(err)
	}
	if status := getSuppliers(t, n2, secret); status != http.StatusUnauthorized {
		t.Errorf("a token revoked on node 1, on node 2: status %d, want 401", status)
	}

	if _, err := s1.PutServiceAccount(ctx, "c1", "sa-1", nil); err != nil {
		t.Fatal(err)
	}
	key, kh := auth.NewAPIKey()
	k, err := s1.AddKey(ctx, "c1", "sa-1", auth.Key{Hash: kh, Active: true})
	if err != nil {
		t.Fatal(err)
	}
	if status := getUser(t, n2, "sa-1", key); status != http.StatusNotFound {
		t.Fatalf("a key added on node 1, on node 2: status %d, want 404 (authenticated; no such user)", status)
	}
	if _, err := s2.SetKeyActive(ctx, "c1", "sa-1", k.ID, false); err != nil {
		t.Fatal(err)
	}
	if status := getUser(t, n1, "sa-1", key); status != http.StatusUnauthorized {
		t.Errorf("a key deactivated on node 2, on node 1: status %d, want 401", status)
	}
}

// userNode serves the supplier and user APIs over s.
func userNode(t *testing.T, s *pgstore.Store) *httptest.Server {
	t.Helper()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	mux := http.NewServeMux()
	httpapi.MountSuppliers(mux, httpapi.SupplierOptions{Store: s, Tokens: s, Logger: quiet})
	httpapi.MountUsers(mux, httpapi.UserOptions{Users: user.NewService(s), Accounts: s, Logger: quiet})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func getUser(t *testing.T, srv *httptest.Server, account, key string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, srv.URL+"/v1/users/username/nobody", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set(auth.HeaderAccountID, account)
	req.Header.Set(auth.HeaderAPIKey, key)
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode
}

// Credentials of a data file have no id in the database (the import knows
// only the secret): they are listed with auth.TokenID / auth.KeyID of
// their hash, as memstore lists them, and can be revoked and deactivated
// by it. A key the import replaces at its position is a new key.
func TestImportedCredentialIDs(t *testing.T) {
	ctx := context.Background()
	f := &datafile.File{Communities: []datafile.Community{{
		ID: "c1", Name: "One", Region: "AU",
		Tokens:          []datafile.Token{{Token: "file-token", Scopes: []string{auth.ScopeSuppliersRead}}},
		ServiceAccounts: []datafile.ServiceAccount{{ID: "sa-1", Keys: []datafile.Key{{Key: "file-key-1", Active: true}}}},
	}}}
	s, dsn := openStore(t, f)
	conn := connect(t, dsn)
	if n := queryInt(t, conn, `SELECT count(*) FROM tokens WHERE id IS NULL`); n != 1 {
		t.Fatalf("%d imported tokens without an id, want 1 (the case under test)", n)
	}
	tokens, err := s.Tokens(ctx, "c1")
	if err != nil || len(tokens) != 1 || tokens[0].ID != auth.TokenID(auth.HashSecret("file-token")) {
		t.Fatalf("Tokens = %+v, %v; want the file's token with its derived id", tokens, err)
	}
	if tokens[0].CreatedAt.IsZero() {
		t.Error("an imported token has no creation time")
	}
	if err := s.RevokeToken(ctx, "c1", tokens[0].ID); err != nil {
		t.Fatalf("revoking an imported token by its derived id: %v", err)
	}
	if _, err := (&auth.Bearer{Tokens: s}).Authenticate(ctx, "Bearer file-token"); err == nil {
		t.Error("a revoked imported token still authenticates")
	}
	if n := queryInt(t, conn, `SELECT count(*) FROM tokens WHERE id IS NULL`); n != 0 {
		t.Errorf("%d tokens still without an id after a revocation filled them", n)
	}

	accounts, err := s.ServiceAccounts(ctx, "c1")
	if err != nil || len(accounts) != 1 || len(accounts[0].Keys) != 1 {
		t.Fatalf("ServiceAccounts = %+v, %v", accounts, err)
	}
	k1 := accounts[0].Keys[0]
	if k1.ID != auth.KeyID(auth.HashSecret("file-key-1")) {
		t.Errorf("imported key id %q, want KeyID of its hash", k1.ID)
	}
	if _, err := s.SetKeyActive(ctx, "c1", "sa-1", k1.ID, false); err != nil {
		t.Fatalf("deactivating an imported key by its derived id: %v", err)
	}
	// Re-importing the same file, which lists the token and the key as
	// live: an import never un-revokes nor reactivates (docs:
	// datafile.md "Import").
	if err := s.Import(ctx, f); err != nil {
		t.Fatal(err)
	}
	if _, err := (&auth.Bearer{Tokens: s}).Authenticate(ctx, "Bearer file-token"); err == nil {
		t.Error("a re-import brought a revoked token back")
	}
	if _, err := (&auth.ServiceKey{Accounts: s}).Authenticate(ctx, "sa-1", "file-key-1", netipLocal); err == nil {
		t.Error("a re-import reactivated a deactivated key")
	}
	// Re-importing with another key: keys are upserted by secret, so the
	// new one is added and the old one kept (still deactivated).
	f.Communities[0].ServiceAccounts[0].Keys[0].Key = "file-key-2"
	if err := s.Import(ctx, f); err != nil {
		t.Fatal(err)
	}
	accounts, err = s.ServiceAccounts(ctx, "c1")
	if err != nil || len(accounts) != 1 || len(accounts[0].Keys) != 2 {
		t.Fatalf("ServiceAccounts after re-import = %+v, %v", accounts, err)
	}
	if old := accounts[0].Keys[0]; old.ID != k1.ID || old.Active {
		t.Errorf("the first key after the re-import = %+v; want %s kept, deactivated", old, k1.ID)
	}
	if k2 := accounts[0].Keys[1]; k2.ID != auth.KeyID(auth.HashSecret("file-key-2")) || !k2.Active || !k2.LastUsedAt.IsZero() || k2.CreatedAt.Before(k1.CreatedAt) {
		t.Errorf("the added key = %+v; want file-key-2's id, active, never used, created after %v", k2, k1.CreatedAt)
	}
	if _, err := (&auth.ServiceKey{Accounts: s}).Authenticate(ctx, "sa-1", "file-key-2", netipLocal); err != nil {
		t.Errorf("the re-imported key: %v", err)
	}
}

// Secrets are stored only as hashes: no column of the credential tables
// holds a secret written through the write API.
func TestCredentialWritesStoreNoSecret(t *testing.T) {
	ctx := context.Background()
	s := openCredStore(t)
	if _, err := s.PutCommunity(ctx, procure.Community{ID: "c1", Region: "AU"}); err != nil {
		t.Fatal(err)
	}
	token, th := auth.NewBearerToken()
	if _, err := s.AddToken(ctx, auth.Token{Name: "n", Hash: th, Community: "c1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutServiceAccount(ctx, "c1", "sa", nil); err != nil {
		t.Fatal(err)
	}
	key, kh := auth.NewAPIKey()
	if _, err := s.AddKey(ctx, "c1", "sa", auth.Key{Hash: kh, Active: true}); err != nil {
		t.Fatal(err)
	}
	var dump string
	err := connect(t, s.dsn).QueryRow(ctx, `SELECT concat_ws(' ',
		(SELECT string_agg(t::text, ' ') FROM tokens t),
		(SELECT string_agg(k::text, ' ') FROM service_account_keys k),
		(SELECT string_agg(a::text, ' ') FROM service_accounts a))`).Scan(&dump)
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{token, key, strings.TrimPrefix(token, auth.BearerTokenPrefix), strings.TrimPrefix(key, auth.APIKeyPrefix)} {
		if strings.Contains(dump, secret) {
			t.Errorf("a secret is stored in the clear: %s...", secret[:14])
		}
	}
	if !strings.Contains(dump, th.String()) || !strings.Contains(dump, kh.String()) {
		t.Error("the hashes are not stored (the check above proves nothing)")
	}
}

var netipLocal = netip.MustParseAddr("127.0.0.1")

// pgstore implements every write the admin API needs.
var _ httpapi.AdminStore = (*pgstore.Store)(nil)

// adminCall sends an admin API request with a JSON body (when not empty)
// and decodes the JSON answer into out (when not nil).
func adminCall(t *testing.T, srv *httptest.Server, method, path, body string, out any) int {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, srv.URL+httpapi.AdminBasePath+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+adminToken)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if out != nil && resp.StatusCode < 300 {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s %s: %v in %s", method, path, err, b)
		}
	}
	return resp.StatusCode
}

const adminToken = "procure_at_test-admin-token"

// adminNode serves the admin, supplier and user APIs over s, as
// examples/server does on two listeners (one mux is enough here), and
// logs into log.
func adminNode(t *testing.T, s *pgstore.Store, log io.Writer) *httptest.Server {
	t.Helper()
	lg := slog.New(slog.NewTextHandler(log, nil))
	mux := http.NewServeMux()
	httpapi.MountAdmin(mux, httpapi.AdminOptions{Token: adminToken, Store: s, Logger: lg})
	httpapi.MountSuppliers(mux, httpapi.SupplierOptions{Store: s, Tokens: s, Logger: lg})
	httpapi.MountUsers(mux, httpapi.UserOptions{Users: user.NewService(s), Accounts: s, Logger: lg})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// The credential lifecycle of docs "Admin API" over HTTP on two nodes of
// one database: a community made on node 1; a token issued on node 2
// answers on node 1, is listed with its lastUsedAt on both, and once
// revoked on node 1 is a 401 on node 2 at the next request; a second key
// added on node 1 for rotation, the old one deactivated on node 2 and
// refused on node 1, the new one still let in; a budget put on node 2 is
// in the table node 1 reads. Unstorable path values are 4xx, and no
// secret reaches a log.
func TestAdminLifecycleAcrossNodes(t *testing.T) {
	ctx := context.Background()
	s1 := openCredStore(t)
	s2, err := pgstore.Open(ctx, s1.dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s2.Close)
	var log1, log2 syncbuf.Buffer
	n1, n2 := adminNode(t, s1.Store, &log1), adminNode(t, s2, &log2)

	if st := adminCall(t, n1, "PUT", "/communities/c1", `{"name": "One", "region": "AU", "autoRoles": ["EMPLOYEE"]}`, nil); st != http.StatusOK {
		t.Fatalf("PUT community: %d", st)
	}
	var issued struct{ ID, Token string }
	if st := adminCall(t, n2, "POST", "/communities/c1/tokens", `{"name": "ci", "scopes": ["suppliers:read"]}`, &issued); st != http.StatusCreated {
		t.Fatalf("POST token on node 2: %d", st)
	}
	if st := getSuppliers(t, n1, issued.Token); st != http.StatusOK {
		t.Fatalf("a token issued on node 2, on node 1: %d, want 200", st)
	}
	var listed struct {
		Content []struct {
			ID         string
			LastUsedAt *time.Time
		}
	}
	if st := adminCall(t, n2, "GET", "/communities/c1/tokens", "", &listed); st != http.StatusOK || len(listed.Content) != 1 {
		t.Fatalf("GET tokens on node 2: %d %+v", st, listed)
	}
	if lu := listed.Content[0].LastUsedAt; listed.Content[0].ID != issued.ID || lu == nil || lu.Second() != 0 {
		t.Errorf("token listed on node 2 after use on node 1: %+v, want its lastUsedAt to the minute", listed.Content[0])
	}
	if st := adminCall(t, n1, "DELETE", "/communities/c1/tokens/"+issued.ID, "", nil); st != http.StatusNoContent {
		t.Fatalf("DELETE token on node 1: %d", st)
	}
	if st := getSuppliers(t, n2, issued.Token); st != http.StatusUnauthorized {
		t.Errorf("a token revoked on node 1, on node 2: %d, want 401", st)
	}

	// Key rotation.
	if st := adminCall(t, n1, "PUT", "/communities/c1/service-accounts/sa-1", `{"allowedIPs": ["127.0.0.1"]}`, nil); st != http.StatusOK {
		t.Fatalf("PUT service account: %d", st)
	}
	var oldKey, newKey struct{ ID, Key string }
	if st := adminCall(t, n1, "POST", "/communities/c1/service-accounts/sa-1/keys", "", &oldKey); st != http.StatusCreated {
		t.Fatalf("POST key: %d", st)
	}
	if st := getUser(t, n2, "sa-1", oldKey.Key); st != http.StatusNotFound {
		t.Fatalf("a key added on node 1, on node 2: %d, want 404 (authenticated, no such user)", st)
	}
	if st := adminCall(t, n1, "POST", "/communities/c1/service-accounts/sa-1/keys", "{}", &newKey); st != http.StatusCreated {
		t.Fatalf("POST second key: %d", st)
	}
	if st := adminCall(t, n2, "PATCH", "/communities/c1/service-accounts/sa-1/keys/"+oldKey.ID, `{"active": false}`, nil); st != http.StatusOK {
		t.Fatalf("PATCH key on node 2: %d", st)
	}
	if st := getUser(t, n1, "sa-1", oldKey.Key); st != http.StatusUnauthorized {
		t.Errorf("a key deactivated on node 2, on node 1: %d, want 401", st)
	}
	if st := getUser(t, n1, "sa-1", newKey.Key); st != http.StatusNotFound {
		t.Errorf("the new key after the old one was deactivated: %d, want 404 (authenticated)", st)
	}
	var account struct {
		Keys []struct {
			ID         string
			Active     bool
			LastUsedAt *time.Time
		}
	}
	if st := adminCall(t, n2, "GET", "/communities/c1/service-accounts/sa-1", "", &account); st != http.StatusOK || len(account.Keys) != 2 {
		t.Fatalf("GET service account: %d %+v", st, account)
	}
	if k := account.Keys[0]; k.ID != oldKey.ID || k.Active || k.LastUsedAt == nil {
		t.Errorf("old key listed as %+v, want inactive with a lastUsedAt", k)
	}

	// Budgets.
	if st := adminCall(t, n2, "PUT", "/communities/c1/budgets/6100", `{"budget": "125.50"}`, nil); st != http.StatusOK {
		t.Fatalf("PUT budget: %d", st)
	}
	tbl, err := s1.BudgetTable(ctx, "c1")
	if err != nil {
		t.Fatal(err)
	}
	if b, ok := tbl.Budget("6100"); !ok || b.String() != "125.5" {
		t.Errorf("budget read on node 1 = %v %v, want 125.50", b, ok)
	}
	if st := adminCall(t, n1, "DELETE", "/communities/c1/budgets/6100", "", nil); st != http.StatusNoContent {
		t.Errorf("DELETE budget: %d", st)
	}
	if st := adminCall(t, n2, "DELETE", "/communities/c1/budgets/6100", "", nil); st != http.StatusNotFound {
		t.Errorf("DELETE an absent budget: %d, want 404", st)
	}

	// Unstorable input is a 4xx, never a 500.
	for _, path := range []string{"/communities/c%00", "/communities/c1/tokens/%00", "/communities/c1/budgets/61%00", "/communities/c1/service-accounts/s%00/keys/k"} {
		for _, method := range []string{"GET", "DELETE", "PATCH"} {
			if st := adminCall(t, n1, method, path, `{"active": true}`, nil); st >= 500 {
				t.Errorf("%s %s: %d, want a 4xx", method, path, st)
			}
		}
	}

	for _, secret := range []string{issued.Token, oldKey.Key, newKey.Key, adminToken} {
		for i, lg := range []*syncbuf.Buffer{&log1, &log2} {
			if strings.Contains(lg.String(), secret) {
				t.Errorf("node %d's log holds a secret", i+1)
			}
		}
	}
}

// A database at schema version 1 holding credentials and budgets migrates
// with them: tokens and keys get their derived ids and a creation time,
// authenticate as before, can be revoked and deactivated by id, and a key
// added afterwards goes after the old ones.
func TestMigrateCredentialsFromVersion1(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.NewDatabase(t)
	conn := connect(t, dsn)
	v1, err := os.ReadFile("migrations/0001_init.sql")
	if err != nil {
		t.Fatal(err)
	}
	th, k1, k2 := auth.HashSecret("old-token"), auth.HashSecret("old-key-1"), auth.HashSecret("old-key-2")
	setup := []struct {
		sql  string
		args []any
	}{
		{string(v1), nil},
		{`CREATE TABLE schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`, nil},
		{`INSERT INTO schema_migrations (version, name) VALUES (1, '0001_init.sql')`, nil},
		{`INSERT INTO communities (id, name, region) VALUES ('c1', 'One', 'NZ')`, nil},
		{`INSERT INTO tokens (hash, community_id, scopes) VALUES ($1, 'c1', '{suppliers:read}')`, []any{th[:]}},
		{`INSERT INTO service_accounts (id, community_id, allowed_ips) VALUES ('sa-1', 'c1', '{10.0.0.0/8}')`, nil},
		{`INSERT INTO service_account_keys (account_id, ord, hash, active) VALUES ('sa-1', 0, $1, false), ('sa-1', 1, $2, true)`, []any{k1[:], k2[:]}},
		{`INSERT INTO budgets (community_id, account, budget) VALUES ('c1', '6100', 12.50)`, nil},
	}
	for _, st := range setup {
		if _, err := conn.Exec(ctx, st.sql, st.args...); err != nil {
			t.Fatalf("%.60s: %v", st.sql, err)
		}
	}
	s, err := pgstore.Open(ctx, dsn)
	if err != nil {
		t.Fatalf("Open on a version-1 database: %v", err)
	}
	t.Cleanup(s.Close)

	tokens, err := s.Tokens(ctx, "c1")
	if err != nil || len(tokens) != 1 {
		t.Fatalf("Tokens = %v, %v", tokens, err)
	}
	if tok := tokens[0]; tok.ID != auth.TokenID(th) || tok.CreatedAt.IsZero() || !tok.LastUsedAt.IsZero() || tok.Name != "" {
		t.Errorf("migrated token = %+v; want its derived id, a creation time, never used, no name", tok)
	}
	if _, err := (&auth.Bearer{Tokens: s}).Authenticate(ctx, "Bearer old-token"); err != nil {
		t.Errorf("a migrated token: %v", err)
	}
	if err := s.RevokeToken(ctx, "c1", auth.TokenID(th)); err != nil {
		t.Errorf("revoking a migrated token by its derived id: %v", err)
	}
	if _, err := (&auth.Bearer{Tokens: s}).Authenticate(ctx, "Bearer old-token"); err == nil {
		t.Error("a revoked migrated token still authenticates")
	}

	sk := &auth.ServiceKey{Accounts: s}
	if _, err := sk.Authenticate(ctx, "sa-1", "old-key-2", netip.MustParseAddr("10.1.1.1")); err != nil {
		t.Errorf("a migrated key: %v", err)
	}
	if _, err := s.SetKeyActive(ctx, "c1", "sa-1", auth.KeyID(k2), false); err != nil {
		t.Errorf("deactivating a migrated key by its derived id: %v", err)
	}
	if _, err := sk.Authenticate(ctx, "sa-1", "old-key-2", netip.MustParseAddr("10.1.1.1")); err == nil {
		t.Error("a deactivated migrated key still authenticates")
	}
	_, nh := auth.NewAPIKey()
	if _, err := s.AddKey(ctx, "c1", "sa-1", auth.Key{ID: "new", Hash: nh, Active: true}); err != nil {
		t.Fatal(err)
	}
	a, err := s.ServiceAccount(ctx, "sa-1")
	if err != nil || len(a.Keys) != 3 || a.Keys[0].Hash != k1 || a.Keys[1].Hash != k2 || a.Keys[2].Hash != nh {
		t.Errorf("keys after adding one to a migrated account = %+v, %v; want the two old ones, then the new one", a.Keys, err)
	}
	if tbl, err := s.BudgetTable(ctx, "c1"); err != nil || tbl.Len() != 1 {
		t.Errorf("migrated budgets = %v, %v", tbl, err)
	}
	if err := s.PutBudget(ctx, "c1", "6100", decimal.RequireFromString("13")); err != nil {
		t.Errorf("PutBudget over a migrated row: %v", err)
	}
}
