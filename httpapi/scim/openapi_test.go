package scim_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/procurekit/procure"
	"github.com/procurekit/procure/auth"
	"github.com/procurekit/procure/httpapi/internal/apitest"
	"github.com/procurekit/procure/httpapi/scim"
	"github.com/procurekit/procure/memstore"
	"github.com/procurekit/procure/user"
)

// The SCIM OpenAPI document: 3.1.0, every schema compiles, every
// operation of the endpoint is described with the statuses every
// authenticated operation can answer.
func TestSCIMOpenAPIDocument(t *testing.T) {
	doc := scim.OpenAPI()
	var d struct {
		OpenAPI    string                                       `json:"openapi"`
		Paths      map[string]map[string]json.RawMessage        `json:"paths"`
		Components struct{ Schemas map[string]json.RawMessage } `json:"components"`
	}
	if err := json.Unmarshal(doc, &d); err != nil {
		t.Fatal(err)
	}
	if d.OpenAPI != "3.1.0" {
		t.Errorf("openapi %q", d.OpenAPI)
	}
	for name := range d.Components.Schemas {
		apitest.CompileSchema(t, doc, "#/components/schemas/"+name)
	}
	for _, op := range []struct{ path, method string }{
		{"/scim/v2/Users", "get"}, {"/scim/v2/Users", "post"}, {"/scim/v2/Users/{id}", "get"},
		{"/scim/v2/Users/{id}", "put"}, {"/scim/v2/Users/{id}", "patch"}, {"/scim/v2/Users/{id}", "delete"},
	} {
		for _, status := range []int{401, 500, 503} {
			scimResponseSchema(t, op.path, op.method, status) // fails when absent
		}
	}
	// The document is served as embedded, and SCIMOpenAPI hands out a copy.
	s := newSCIMServer(t)
	res := s.do(t, scimReq{method: http.MethodGet, path: "/scim/v2/openapi.json", key: "-"})
	if res.status != 200 || string(res.body) != string(doc) {
		t.Errorf("served document differs (status %d)", res.status)
	}
	doc[0] = 'X'
	if scim.OpenAPI()[0] != '{' {
		t.Error("SCIMOpenAPI does not return a copy")
	}
}

// onlyKeys is a KeyStore that cannot find accounts by key hash.
type onlyKeys struct{}

func (onlyKeys) ServiceAccount(context.Context, string) (auth.ServiceAccount, error) {
	return auth.ServiceAccount{}, auth.ErrUnknown
}

func TestMountSCIMPanics(t *testing.T) {
	store := memstore.New()
	svc := user.NewService(store)
	for name, f := range map[string]func(){
		"nil mux":           func() { scim.Mount(nil, scim.Options{Users: svc, Accounts: store}) },
		"nil users":         func() { scim.Mount(http.NewServeMux(), scim.Options{Accounts: store}) },
		"nil accounts":      func() { scim.Mount(http.NewServeMux(), scim.Options{Users: svc}) },
		"no lookup by hash": func() { scim.Mount(http.NewServeMux(), scim.Options{Users: svc, Accounts: onlyKeys{}}) },
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Error("no panic")
				}
			}()
			f()
		})
	}
}

// downUsers is a user store whose backend is down, or broken.
type downUsers struct {
	user.Store
	err error
}

func (d downUsers) UserByID(context.Context, string, string) (user.User, error) {
	return user.User{}, d.err
}

// A backend that is unavailable is a SCIM 503 with Retry-After; any other
// failure a 500 that shows nothing internal.
func TestSCIMBackendFailures(t *testing.T) {
	for _, tt := range []struct {
		name   string
		err    error
		status int
	}{
		{"unavailable", fmt.Errorf("pool: %w", procure.ErrUnavailable), 503},
		{"broken", errors.New("secret internal detail"), 500},
	} {
		t.Run(tt.name, func(t *testing.T) {
			store, err := memstore.LoadReader(scimFixture().Reader())
			if err != nil {
				t.Fatal(err)
			}
			s := serveSCIM(t, downUsers{Store: store, err: tt.err}, store)
			r := scimReq{method: http.MethodGet, path: "/scim/v2/Users/a-0001"}
			got := s.do(t, r)
			r.check(t, got, tt.status, "")
			if tt.status == 503 && got.header.Get("Retry-After") == "" {
				t.Error("503 without Retry-After")
			}
			if strings.Contains(string(got.body), "secret") {
				t.Errorf("the body shows the cause: %s", got.body)
			}
		})
	}
}

// The served document passes the lint of every served document: it stands
// on its own for a tool given its URL (apitest.LintDocument).
func TestOpenAPIDocumentValid(t *testing.T) {
	for _, p := range apitest.LintDocument(t, "scim.json", scim.OpenAPI()) {
		t.Error(p)
	}
}
