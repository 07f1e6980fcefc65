package pgstore_test

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/procurekit/procure/httpapi"
	"github.com/procurekit/procure/user"
)

// node is one service node: its own store (and connection pool) on the
// shared database, and its own HTTP server.
func node(tb testing.TB, d database) *httptest.Server {
	tb.Helper()
	s := d.open(tb)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	mux := http.NewServeMux()
	httpapi.MountUsers(mux, httpapi.UserOptions{Users: user.NewService(s), Accounts: s, Logger: quiet})
	httpapi.MountSuppliers(mux, httpapi.SupplierOptions{Store: s, Tokens: s, Logger: quiet})
	srv := httptest.NewServer(mux)
	tb.Cleanup(srv.Close)
	return srv
}

type apiResponse struct {
	status int
	body   []byte
}

func call(tb testing.TB, srv *httptest.Server, method, path string, body any) apiResponse {
	tb.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			tb.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, srv.URL+path, rd)
	if err != nil {
		tb.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json; charset=utf-8")
	}
	req.Header.Set("Service-Account-ID", "sa-c1")
	req.Header.Set("Service-API-Key", "demo-key-new")
	req.Header.Set("Authorization", "Bearer demo-token-c1")
	resp, err := srv.Client().Do(req)
	if err != nil {
		tb.Error(err) // Error, not Fatal: call runs in goroutines too
		return apiResponse{}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Error(err)
	}
	return apiResponse{resp.StatusCode, b}
}

// Two nodes on one database: of 50 concurrent creates of one new username,
// spread across both, exactly one succeeds and the others are 400
// DUPLICATE_USERNAME (docs: users.md: concurrent requests never
// produce two users with one username); a rename on one node is visible on
// the other at once.
// Not with a replica: there another node sees a write within the bound,
// not at once (the two-node tests of the cache and the poll cover it).
func TestMultiNode(t *testing.T) { inSetups(t, testMultiNode, "direct", "pgbouncer") }

func testMultiNode(t *testing.T, su setup) {
	f := fixture()
	// The test clients call from the loopback address.
	f.Communities[0].ServiceAccounts[0].AllowedIPs = append(f.Communities[0].ServiceAccounts[0].AllowedIPs, "127.0.0.1")
	_, d := openIn(t, su, f)
	nodes := []*httptest.Server{node(t, d), node(t, d)}

	const creates = 50
	results := make([]apiResponse, creates)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range creates {
		wg.Go(func() {
			<-start
			results[i] = call(t, nodes[i%2], http.MethodPost, "/v1/users", map[string]any{"username": "Race.User", "firstName": "Racer"})
		})
	}
	close(start)
	wg.Wait()

	var created user.User
	ok, dup := 0, 0
	for i, r := range results {
		switch r.status {
		case http.StatusOK:
			ok++
			if err := json.Unmarshal(r.body, &created); err != nil {
				t.Fatalf("create %d: body %s: %v", i, r.body, err)
			}
		case http.StatusBadRequest:
			var e httpapi.ErrorBody
			if err := json.Unmarshal(r.body, &e); err != nil || e.Code != httpapi.CodeDuplicateUsername {
				t.Errorf("create %d: 400 with body %s; want code %s", i, r.body, httpapi.CodeDuplicateUsername)
			}
			dup++
		default:
			t.Errorf("create %d: status %d, body %s", i, r.status, r.body)
		}
	}
	if ok != 1 || dup != creates-1 {
		t.Fatalf("%d created and %d duplicates; want 1 and %d", ok, dup, creates-1)
	}

	// Both nodes see the one user, case-insensitively.
	for i, n := range nodes {
		r := call(t, n, http.MethodGet, "/v1/users/username/race.user", nil)
		var got user.User
		if r.status != http.StatusOK || json.Unmarshal(r.body, &got) != nil || got.ID != created.ID {
			t.Fatalf("node %d: GET race.user = %d %s; want 200 with id %s", i, r.status, r.body, created.ID)
		}
	}

	// Rename on node 0, read on node 1 at once.
	r := call(t, nodes[0], http.MethodPut, "/v1/users", map[string]any{"id": created.ID, "username": "renamed.user"})
	if r.status != http.StatusOK {
		t.Fatalf("rename: %d %s", r.status, r.body)
	}
	if r := call(t, nodes[1], http.MethodGet, "/v1/users/username/Renamed.User", nil); r.status != http.StatusOK {
		t.Fatalf("node 1: new username: %d %s; want 200", r.status, r.body)
	} else {
		var got user.User
		if err := json.Unmarshal(r.body, &got); err != nil || got.ID != created.ID || got.FirstName != "Racer" {
			t.Fatalf("node 1: new username: %s; want id %s with firstName Racer", r.body, created.ID)
		}
	}
	if r := call(t, nodes[1], http.MethodGet, "/v1/users/username/race.user", nil); r.status != http.StatusNotFound {
		t.Fatalf("node 1: old username: %d %s; want 404", r.status, r.body)
	}

	// The supplier API answers the same on both nodes.
	a := call(t, nodes[0], http.MethodGet, "/public/community/suppliers?sort=name,desc", nil)
	b := call(t, nodes[1], http.MethodGet, "/public/community/suppliers?sort=name,desc", nil)
	if a.status != http.StatusOK || b.status != http.StatusOK || !bytes.Equal(a.body, b.body) {
		t.Fatalf("suppliers differ between nodes:\n%d %s\n%d %s", a.status, a.body, b.status, b.body)
	}
}
