package userapi_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/procurekit/procure"
	"github.com/procurekit/procure/auth"
	"github.com/procurekit/procure/datafile"
	"github.com/procurekit/procure/httpapi"
	"github.com/procurekit/procure/memstore"
	"github.com/procurekit/procure/user"
	"github.com/procurekit/procure/userapi"
)

// Test fixtures, not real secrets.
const (
	testAccount = "sa-test"
	testKey     = "fixture-userapi-key"
)

// server is the real user API over a memstore, counting the writes it
// receives.
type server struct {
	*httptest.Server
	store *memstore.Store

	mu     sync.Mutex
	writes int
	before func(r *http.Request) // runs before each request, when set
	// stripAutoRoles makes the server behave as one that does not
	// announce its auto-roles (another implementation of the spec).
	stripAutoRoles bool
	// noSCIM makes the server one without the SCIM endpoint: a plain 404
	// under /scim/.
	noSCIM bool
}

func (s *server) writeCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.writes
}

func newServer(tb testing.TB, autoRoles ...string) *server {
	tb.Helper()
	s, err := startServer(autoRoles...)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(s.Close)
	return s
}

// startServer starts the server; the caller closes it.
func startServer(autoRoles ...string) (*server, error) {
	store, err := memstore.LoadReader((&datafile.File{Communities: []datafile.Community{{
		ID: "demo", Region: datafile.DEMO, AutoRoles: autoRoles,
		ServiceAccounts: []datafile.ServiceAccount{{ID: testAccount, Keys: []datafile.Key{{Key: testKey, Active: true}}}},
		Users: []user.User{
			{ID: "u-1", Username: "alice", FirstName: "Alice", Email: "alice@example.com", Enabled: true,
				Roles: user.Codes("BUYER", "APPROVER"), Attributes: []user.Attribute{{Name: "cc", Value: "1"}, {Name: "grade", Value: "7"}}},
			{ID: "u-2", Username: "bob/ops+1@example.com", Enabled: false},
		},
	}}}).Reader())
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	httpapi.MountUsers(mux, httpapi.UserOptions{
		Users: user.NewService(store), Accounts: store,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	httpapi.MountSCIM(mux, httpapi.SCIMOptions{
		Users: user.NewService(store), Accounts: store,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	s := &server{store: store}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		if r.Method == http.MethodPost || r.Method == http.MethodPut {
			s.writes++
		}
		before, strip, noSCIM := s.before, s.stripAutoRoles, s.noSCIM
		s.mu.Unlock()
		if before != nil {
			before(r)
		}
		if noSCIM && strings.HasPrefix(r.URL.Path, "/scim/") {
			http.NotFound(w, r)
			return
		}
		if strip {
			w = stripHeader{w, httpapi.HeaderAutoRoles}
		}
		mux.ServeHTTP(w, r)
	}))
	return s, nil
}

// stripHeader drops one header from a response.
type stripHeader struct {
	http.ResponseWriter
	name string
}

func (s stripHeader) WriteHeader(code int) {
	s.Header().Del(s.name)
	s.ResponseWriter.WriteHeader(code)
}

func newClient(tb testing.TB, s *server, opts ...userapi.Option) *userapi.Client {
	tb.Helper()
	c, err := userapi.New(s.URL, testAccount, testKey, append([]userapi.Option{userapi.WithHTTPClient(s.Client())}, opts...)...)
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

var equateEmpty = cmp.Options{cmpopts.EquateEmpty(), cmpopts.IgnoreFields(user.User{}, "Version")} // versions are the store's: not compared here

func TestNew(t *testing.T) {
	for _, tt := range []struct{ base, account, key string }{
		{"ftp://example.com", "a", "k"},
		{"example.com", "a", "k"},
		{"https://", "a", "k"},
		{"https://example.com/?x=1", "a", "k"},
		{"https://user:pw@example.com", "a", "k"},
		{"https://example.com", " ", "k"},
		{"https://example.com", "a", ""},
		{"%zz", "a", "k"},
	} {
		_, err := userapi.New(tt.base, tt.account, tt.key)
		if err == nil {
			t.Errorf("New(%q, %q, %q) succeeded", tt.base, tt.account, tt.key)
		}
	}
	if _, err := userapi.New("https://example.com/", "a", "secret-fixture"); err != nil {
		t.Errorf("New with a trailing slash: %v", err)
	}
}

func TestCalls(t *testing.T) {
	s := newServer(t, "EMPLOYEE")
	c := newClient(t, s)
	ctx := context.Background()

	u, err := c.GetByUsername(ctx, "ALICE")
	if err != nil || u.ID != "u-1" || u.Email != "alice@example.com" {
		t.Fatalf("GetByUsername = %+v, %v", u, err)
	}
	// The username is escaped as one path segment.
	if u, err := c.GetByUsername(ctx, "bob/ops+1@example.com"); err != nil || u.ID != "u-2" {
		t.Fatalf("GetByUsername with a slash = %+v, %v", u, err)
	}

	_, err = c.GetByUsername(ctx, "nobody")
	var ae *userapi.Error
	if !errors.As(err, &ae) || ae.Status != 404 || ae.Code != userapi.CodeUserNotFound || !errors.Is(err, user.ErrNotFound) || !userapi.IsNotFound(err) {
		t.Fatalf("GetByUsername of nobody = %v; want a 404 USER_NOT_FOUND matching user.ErrNotFound", err)
	}
	if _, err := c.GetByUsername(ctx, " "); !errors.Is(err, procure.ErrInvalid) {
		t.Errorf("GetByUsername(blank) = %v, want a local validation error", err)
	}

	created, err := c.Create(ctx, user.Input{Username: new("carol"), Roles: &[]user.Code{{Code: "BUYER"}}})
	if err != nil {
		t.Fatal(err)
	}
	want := user.User{ID: created.ID, Username: "carol", Enabled: true, Roles: user.Codes("BUYER", "EMPLOYEE")}
	if diff := cmp.Diff(want, created, equateEmpty); diff != "" {
		t.Errorf("Create (-want +got):\n%s", diff)
	}
	updated, err := c.Update(ctx, user.Input{ID: &created.ID, Username: new("carol"), Enabled: new(false)})
	if err != nil || updated.Enabled {
		t.Fatalf("Update = %+v, %v", updated, err)
	}

	errs := []struct {
		name   string
		call   func() error
		target error
		status int
	}{
		{"duplicate username", func() error { _, err := c.Create(ctx, user.Input{Username: new("CAROL")}); return err }, user.ErrDuplicateUsername, 400},
		{"duplicate id", func() error { _, err := c.Create(ctx, user.Input{ID: new("u-1"), Username: new("x")}); return err }, user.ErrDuplicateID, 400},
		{"unknown id", func() error { _, err := c.Update(ctx, user.Input{ID: new("nope"), Username: new("x")}); return err }, user.ErrNotFound, 404},
		{"invalid", func() error { _, err := c.Update(ctx, user.Input{Username: new("x")}); return err }, procure.ErrInvalid, 400},
	}
	for _, tt := range errs {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call()
			var ae *userapi.Error
			if !errors.Is(err, tt.target) || !errors.As(err, &ae) || ae.Status != tt.status || ae.Message == "" {
				t.Errorf("error = %v; want status %d matching %v", err, tt.status, tt.target)
			}
			if userapi.Retryable(err) {
				t.Errorf("Retryable(%v) = true", err)
			}
		})
	}
}

func TestUnauthenticated(t *testing.T) {
	s := newServer(t)
	c, err := userapi.New(s.URL, testAccount, "fixture-wrong-key", userapi.WithHTTPClient(s.Client()))
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.GetByUsername(context.Background(), "alice")
	if !errors.Is(err, auth.ErrUnauthenticated) {
		t.Fatalf("error = %v, want auth.ErrUnauthenticated", err)
	}
	if strings.Contains(err.Error(), "fixture-wrong-key") {
		t.Errorf("error holds the key: %v", err)
	}
}

func TestForeignErrorBodies(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Service-API-Key") != "fixture-key" || r.Header.Get("Service-Account-ID") != "acct" {
			t.Errorf("credential headers = %q", r.Header)
		}
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusBadGateway)
		io.WriteString(w, "<html>bad gateway</html>")
	}))
	defer srv.Close()
	c, _ := userapi.New(srv.URL, "acct", "fixture-key")
	_, err := c.GetByUsername(context.Background(), "alice")
	var ae *userapi.Error
	if !errors.As(err, &ae) || ae.Status != 502 || ae.Code != "" || !strings.Contains(ae.Message, "bad gateway") {
		t.Fatalf("error = %#v", err)
	}
	if !userapi.Retryable(err) {
		t.Error("a 502 is not retryable")
	}
}

func TestRetryable(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	c, _ := userapi.New("http://127.0.0.1:1", "a", "fixture-key") // nothing listens on port 1
	_, refused := c.GetByUsername(context.Background(), "x")
	_, cancelled := c.GetByUsername(ctx, "x")
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"connection refused", refused, true},
		{"cancelled", cancelled, false},
		{"500", &userapi.Error{Status: 500}, true},
		{"503", &userapi.Error{Status: 503}, true},
		{"429", &userapi.Error{Status: 429}, true},
		{"400", &userapi.Error{Status: 400, Code: userapi.CodeInvalidField}, false},
		{"404", &userapi.Error{Status: 404, Code: userapi.CodeUserNotFound}, false},
		{"local validation", procure.Invalid(procure.SourceBody, "username", "is required"), false},
		{"id mismatch", fmt.Errorf("x: %w", userapi.ErrIDMismatch), false},
	}
	for _, tt := range tests {
		if got := userapi.Retryable(tt.err); got != tt.want {
			t.Errorf("%s: Retryable(%v) = %v, want %v", tt.name, tt.err, got, tt.want)
		}
	}
	if refused == nil || strings.Contains(refused.Error(), "fixture-key") {
		t.Errorf("network error = %v", refused)
	}
}

func TestErrorCodesMatchServer(t *testing.T) {
	pairs := [][2]string{
		{userapi.CodeInvalidParameter, httpapi.CodeInvalidParameter},
		{userapi.CodeInvalidField, httpapi.CodeInvalidField},
		{userapi.CodeMalformedRequest, httpapi.CodeMalformedRequest},
		{userapi.CodeDuplicateUsername, httpapi.CodeDuplicateUsername},
		{userapi.CodeDuplicateID, httpapi.CodeDuplicateID},
		{userapi.CodeUnauthorized, httpapi.CodeUnauthorized},
		{userapi.CodeUserNotFound, httpapi.CodeUserNotFound},
	}
	for _, p := range pairs {
		if p[0] != p[1] {
			t.Errorf("client code %q != server code %q", p[0], p[1])
		}
	}
}
