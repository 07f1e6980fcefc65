package scim_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/procurekit/procure/internal/pgtest"
	"github.com/procurekit/procure/pgstore"
)

// The request sequences of the SCIM validators of Okta (its SCIM 2.0 test
// suite for app integrations) and of Microsoft Entra ID (its SCIM
// validator and provisioning service), replayed over real HTTP against
// each store. Each step checks the status, the body against scim.json
// and against RFC 7643's schemas (conformSCIM), and what the validator
// itself asserts.

// replayStep is one request of a validator; {id} in path or body is the
// id of the user the sequence created.
type replayStep struct {
	name, method, path, body string
	status                   int
	scimType                 string
	check                    func(t *testing.T, got scimResp)
}

// scimStores runs f on a server over each store: memstore, and
// PostgreSQL (skipped when pgtest finds none).
func scimStores(t *testing.T, f func(t *testing.T, s *scimServer)) {
	t.Run("memstore", func(t *testing.T) {
		f(t, newSCIMServer(t))
	})
	t.Run("postgres", func(t *testing.T) {
		dsn := pgtest.NewDatabase(t)
		store, err := pgstore.Open(context.Background(), dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(store.Close)
		if err := store.Import(context.Background(), scimFixture()); err != nil {
			t.Fatal(err)
		}
		f(t, serveSCIM(t, store, store))
	})
}

func replay(t *testing.T, s *scimServer, steps []replayStep) {
	t.Helper()
	id := ""
	for _, st := range steps {
		path, body := strings.ReplaceAll(st.path, "{id}", id), strings.ReplaceAll(st.body, "{id}", id)
		r := scimReq{method: st.method, path: path, body: body}
		got := s.do(t, r)
		r.check(t, got, st.status, st.scimType)
		conformSCIM(t, s, st.method, path, got) // conformance_test.go
		if t.Failed() {
			t.Fatalf("step %q failed", st.name)
		}
		if st.method == http.MethodPost && st.status == 201 {
			id = decodeSCIMUser(t, got.body).ID
		}
		if st.check != nil {
			st.check(t, got)
		}
		if t.Failed() {
			t.Fatalf("step %q failed", st.name)
		}
	}
}

// Checks shared by the sequences.
func wantTotal(n int) func(t *testing.T, got scimResp) {
	return func(t *testing.T, got scimResp) {
		t.Helper()
		if l := decodeSCIMList(t, got.body); l.TotalResults != n || len(l.Resources) != n {
			t.Errorf("totalResults %d with %d resources; want %d", l.TotalResults, len(l.Resources), n)
		}
	}
}

func wantUserWith(f func(u scimUserBody) bool, what string) func(t *testing.T, got scimResp) {
	return func(t *testing.T, got scimResp) {
		t.Helper()
		if u := decodeSCIMUser(t, got.body); !f(u) {
			t.Errorf("want %s; got %s", what, got.body)
		}
	}
}

func wantListedUser(f func(u scimUserBody) bool, what string) func(t *testing.T, got scimResp) {
	return func(t *testing.T, got scimResp) {
		t.Helper()
		l := decodeSCIMList(t, got.body)
		if l.TotalResults != 1 || len(l.Resources) != 1 || !f(l.Resources[0]) {
			t.Errorf("want one user, %s; got %s", what, got.body)
		}
	}
}

func TestSCIMOktaValidator(t *testing.T) {
	const create = `{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"userName":"Runscope.User1@atko.com",
		"name":{"givenName":"Runscope","familyName":"User1"},"emails":[{"primary":true,"value":"runscope.user1@atko.com","type":"work"}],
		"displayName":"Runscope User1","locale":"en-US","externalId":"00ujl29u0le5T6Aj10h7","groups":[],"password":"1mz050nq","active":true}`
	steps := []replayStep{
		{name: "list, one per page", method: http.MethodGet, path: "/scim/v2/Users?count=1&startIndex=1", status: 200,
			check: func(t *testing.T, got scimResp) {
				if l := decodeSCIMList(t, got.body); l.TotalResults != 2 || len(l.Resources) != 1 || l.ItemsPerPage != 1 || l.StartIndex != 1 {
					t.Errorf("paged list: %s", got.body)
				}
			}},
		{name: "filter on a userName that does not exist", method: http.MethodGet,
			path: "/scim/v2/Users?filter=" + q(`userName eq "Runscope.User1@atko.com"`) + "&startIndex=1&count=100", status: 200, check: wantTotal(0)},
		{name: "create", method: http.MethodPost, path: "/scim/v2/Users", body: create, status: 201,
			check: wantUserWith(func(u scimUserBody) bool {
				return u.Active && u.UserName == "Runscope.User1@atko.com" && u.Name.GivenName == "Runscope" && u.ID != "" && u.Meta.ResourceType == "User"
			}, "the created user, active")},
		{name: "get by id", method: http.MethodGet, path: "/scim/v2/Users/{id}", status: 200,
			check: wantUserWith(func(u scimUserBody) bool { return u.Emails[0].Value == "runscope.user1@atko.com" }, "its e-mail")},
		{name: "filter on its userName", method: http.MethodGet, path: "/scim/v2/Users?filter=" + q(`userName eq "Runscope.User1@atko.com"`) + "&startIndex=1&count=100",
			status: 200, check: wantListedUser(func(u scimUserBody) bool { return u.ExternalID == "00ujl29u0le5T6Aj10h7" }, "the created user")},
		{name: "filter on its userName in another case", method: http.MethodGet, path: "/scim/v2/Users?filter=" + q(`userName eq "runscope.user1@ATKO.com"`),
			status: 200, check: wantTotal(1)},
		{name: "create again: duplicate", method: http.MethodPost, path: "/scim/v2/Users", body: create, status: 409, scimType: "uniqueness"},
		{name: "replace (update profile)", method: http.MethodPut, path: "/scim/v2/Users/{id}", status: 200,
			body: `{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"id":"{id}","userName":"Runscope.User1@atko.com",
				"name":{"givenName":"Another","familyName":"User1"},"emails":[{"primary":true,"value":"runscope.user1@atko.com","type":"work"}],
				"displayName":"Another User1","active":true}`,
			check: wantUserWith(func(u scimUserBody) bool { return u.Name.GivenName == "Another" && u.Active }, "the new first name")},
		{name: "deactivate", method: http.MethodPatch, path: "/scim/v2/Users/{id}", status: 200,
			body:  `{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[{"op":"replace","value":{"active":false}}]}`,
			check: wantUserWith(func(u scimUserBody) bool { return !u.Active }, "inactive")},
		{name: "reactivate", method: http.MethodPatch, path: "/scim/v2/Users/{id}", status: 200,
			body:  `{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[{"op":"replace","value":{"active":true}}]}`,
			check: wantUserWith(func(u scimUserBody) bool { return u.Active }, "active")},
		{name: "rename", method: http.MethodPut, path: "/scim/v2/Users/{id}", status: 200,
			body: `{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"userName":"Runscope.Renamed@atko.com",
				"name":{"givenName":"Another","familyName":"User1"},"active":true}`,
			check: wantUserWith(func(u scimUserBody) bool {
				return u.UserName == "Runscope.Renamed@atko.com" && u.Meta.Version == `W/"5"`
			}, "the new userName at version 5")},
		{name: "old userName is gone", method: http.MethodGet, path: "/scim/v2/Users?filter=" + q(`userName eq "Runscope.User1@atko.com"`), status: 200, check: wantTotal(0)},
		{name: "unknown id", method: http.MethodGet, path: "/scim/v2/Users/010101010101010101", status: 404},
	}
	scimStores(t, func(t *testing.T, s *scimServer) { replay(t, s, steps) })
}

func TestSCIMEntraValidator(t *testing.T) {
	const create = `{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User","urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"],
		"externalId":"ext-6e1d","userName":"Test_User_ab6490ee@contoso.com","active":true,
		"emails":[{"primary":true,"type":"work","value":"Test_User_fd0ea19b@contoso.com"}],
		"meta":{"resourceType":"User"},"name":{"formatted":"givenName familyName","familyName":"familyName","givenName":"givenName"},
		"roles":[],"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User":{"employeeNumber":"1","department":"sales"}}`
	steps := []replayStep{
		{name: "match on userName: none", method: http.MethodGet, path: "/scim/v2/Users?filter=" + q(`userName eq "Test_User_ab6490ee@contoso.com"`), status: 200, check: wantTotal(0)},
		{name: "create", method: http.MethodPost, path: "/scim/v2/Users", body: create, status: 201,
			check: wantUserWith(func(u scimUserBody) bool { return u.Active && u.ExternalID == "ext-6e1d" }, "the created user")},
		{name: "match on userName", method: http.MethodGet, path: "/scim/v2/Users?filter=" + q(`userName eq "Test_User_ab6490ee@contoso.com"`), status: 200, check: wantTotal(1)},
		{name: "match on externalId", method: http.MethodGet, path: "/scim/v2/Users?filter=" + q(`externalId eq "ext-6e1d"`), status: 200,
			check: wantListedUser(func(u scimUserBody) bool { return u.UserName == "Test_User_ab6490ee@contoso.com" }, "the created user")},
		{name: "get by id", method: http.MethodGet, path: "/scim/v2/Users/{id}", status: 200},
		{name: "update attributes", method: http.MethodPatch, path: "/scim/v2/Users/{id}", status: 200,
			body: `{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[
				{"op":"Replace","path":"displayName","value":"Test User"},
				{"op":"Add","path":"emails[type eq \"work\"].value","value":"updatedEmail@contoso.com"},
				{"op":"Replace","path":"name.familyName","value":"updatedFamilyName"},
				{"op":"Add","path":"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:employeeNumber","value":"2"},
				{"op":"Replace","path":"externalId","value":"ext-6e1d"}]}`,
			check: wantUserWith(func(u scimUserBody) bool {
				return u.DisplayName == "Test User" && u.Emails[0].Value == "updatedEmail@contoso.com" && u.Name.FamilyName == "updatedFamilyName"
			}, "the patched attributes")},
		{name: "rename", method: http.MethodPatch, path: "/scim/v2/Users/{id}", status: 200,
			body:  `{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[{"op":"Replace","path":"userName","value":"Test_User_renamed@contoso.com"}]}`,
			check: wantUserWith(func(u scimUserBody) bool { return u.UserName == "Test_User_renamed@contoso.com" }, "the new userName")},
		{name: "disable", method: http.MethodPatch, path: "/scim/v2/Users/{id}", status: 200,
			body:  `{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[{"op":"Replace","path":"active","value":"False"}]}`,
			check: wantUserWith(func(u scimUserBody) bool { return !u.Active }, "inactive")},
		{name: "enable", method: http.MethodPatch, path: "/scim/v2/Users/{id}", status: 200,
			body:  `{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[{"op":"Replace","path":"active","value":"True"}]}`,
			check: wantUserWith(func(u scimUserBody) bool { return u.Active }, "active")},
		{name: "remove an attribute", method: http.MethodPatch, path: "/scim/v2/Users/{id}", status: 200,
			body: `{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[{"op":"Remove","path":"name.familyName"}]}`,
			check: wantUserWith(func(u scimUserBody) bool {
				return u.Name != nil && u.Name.FamilyName == "" && u.Name.GivenName == "givenName"
			}, "no family name")},
		{name: "create a duplicate", method: http.MethodPost, path: "/scim/v2/Users", status: 409, scimType: "uniqueness",
			body: `{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"userName":"test_user_RENAMED@contoso.com","active":true}`},
		{name: "get an unknown id", method: http.MethodGet, path: "/scim/v2/Users/6bf0ee3a-7a2a-4f1c-9d6b-000000000000", status: 404},
		{name: "delete", method: http.MethodDelete, path: "/scim/v2/Users/{id}", status: 204},
		{name: "deleted means disabled", method: http.MethodGet, path: "/scim/v2/Users?filter=" + q(`userName eq "Test_User_renamed@contoso.com"`), status: 200,
			check: wantListedUser(func(u scimUserBody) bool { return !u.Active }, "the user kept, inactive")},
	}
	scimStores(t, func(t *testing.T, s *scimServer) { replay(t, s, steps) })
}

// q escapes a query value.
func q(s string) string { return url.QueryEscape(s) }
