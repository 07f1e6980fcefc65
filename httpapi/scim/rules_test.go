package scim_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/procurekit/procure/memstore"
	"github.com/procurekit/procure/user"
)

// The SCIM rules of issue 19 (items 1, 8, 11, 14 and 16; 13 in
// unchanged_test.go): what a
// strict client and the two validators expect of the endpoint.

const scimExt = "urn:procurekit:params:scim:schemas:extension:procure:2.0:User"

// countingUsers is a user.Store that counts the calls that read or write
// one user, to show that a request was refused before the store.
type countingUsers struct {
	user.Store
	calls atomic.Int64
}

func (c *countingUsers) UserByID(ctx context.Context, community, id string) (user.User, error) {
	c.calls.Add(1)
	return c.Store.UserByID(ctx, community, id)
}

func (c *countingUsers) UpdateUser(ctx context.Context, community, id string, apply func(*user.User) error) (user.User, error) {
	c.calls.Add(1)
	return c.Store.UpdateUser(ctx, community, id, apply)
}

func (c *countingUsers) CreateUser(ctx context.Context, community string, u user.User) (user.User, error) {
	c.calls.Add(1)
	return c.Store.CreateUser(ctx, community, u)
}

// patchBody is a PatchOp of the operations given.
func patchBody(ops string) string {
	return `{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":` + ops + `}`
}

// codesJSON is n distinct codes, prefix0 to prefix(n-1), as a JSON array.
func codesJSON(prefix string, n int) string {
	var b strings.Builder
	b.WriteByte('[')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"code":"` + prefix + strconv.Itoa(i) + `"}`)
	}
	b.WriteByte(']')
	return b.String()
}

// Item 1 for POST and PUT: a list over the limit is refused before the
// store is called, naming the list.
func TestSCIMBodyListLimit(t *testing.T) {
	store, err := memstore.LoadReader(scimFixture().Reader())
	if err != nil {
		t.Fatal(err)
	}
	counted := &countingUsers{Store: store}
	s := serveSCIM(t, counted, store)
	before := s.storedUser(t, "community-a", "a-0001")
	over := user.MaxListEntries + 1
	for _, tt := range []struct {
		method, path, list, body string
	}{
		{http.MethodPut, "/scim/v2/Users/a-0001", "roleCodes", `"roleCodes":` + codeStrings(over)},
		{http.MethodPut, "/scim/v2/Users/a-0001", "roleCodes", `"roles":` + codesJSON("R", over)},
		{http.MethodPut, "/scim/v2/Users/a-0001", "buyerGroups", `"buyerGroups":` + codeStrings(70000)},
		{http.MethodPost, "/scim/v2/Users", "approverGroups", `"approverGroups":` + codesJSON("A", over)},
		{http.MethodPost, "/scim/v2/Users", "attributes", `"attributes":[` + strings.Repeat(`{"name":"n","value":"v"},`, over-1) + `{"name":"n","value":"v"}]`},
	} {
		t.Run(tt.method+" "+tt.list, func(t *testing.T) {
			counted.calls.Store(0)
			r := scimReq{method: tt.method, path: tt.path, body: `{"userName":"Alice.Smith","` + scimExt + `":{` + tt.body + `}}`}
			got := s.do(t, r)
			r.check(t, got, 400, "invalidValue")
			if !strings.Contains(string(got.body), tt.list+": at most 1000 entries") {
				t.Errorf("the error does not name %s and the limit: %s", tt.list, got.body)
			}
			if n := counted.calls.Load(); n != 0 {
				t.Errorf("the store was called %d times; want the request refused before it", n)
			}
		})
	}
	if diff := cmp.Diff(before, s.storedUser(t, "community-a", "a-0001")); diff != "" {
		t.Errorf("a refused PUT changed the user (-before +after):\n%s", diff)
	}
}

// codeStrings is n distinct codes as a JSON array of strings, the
// densest form a PATCH can send.
func codeStrings(n int) string {
	var b strings.Builder
	b.WriteByte('[')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"` + strconv.Itoa(i) + `"`)
	}
	b.WriteByte(']')
	return b.String()
}

// Item 1: a PATCH whose lists pass the limit (docs: limits.md "Lists") is
// refused before the store is called; one that reaches it only by merging
// is refused as soon as the list passes it, and stores nothing.
func TestSCIMPatchListLimit(t *testing.T) {
	store, err := memstore.LoadReader(scimFixture().Reader())
	if err != nil {
		t.Fatal(err)
	}
	counted := &countingUsers{Store: store}
	s := serveSCIM(t, counted, store)
	before := s.storedUser(t, "community-a", "a-0001")
	over := user.MaxListEntries + 1
	for _, tt := range []struct {
		name, ops   string
		beforeStore bool // refused without a store call
	}{
		{"add over the limit", `[{"op":"add","path":"` + scimExt + `:roleCodes","value":` + codesJSON("R", over) + `}]`, true},
		{"replace over the limit, former name", `[{"op":"replace","path":"` + scimExt + `:roles","value":` + codesJSON("R", over) + `}]`, true},
		{"the extension without a path", `[{"op":"replace","value":{"` + scimExt + `":{"buyerGroups":` + codesJSON("B", over) + `}}}]`, true},
		{"the extension as a path", `[{"op":"add","path":"` + scimExt + `","value":{"approverGroups":` + codesJSON("A", over) + `}}]`, true},
		{"attributes", `[{"op":"add","path":"` + scimExt + `:attributes","value":[` + strings.Repeat(`{"name":"n","value":"v"},`, over-1) + `{"name":"n","value":"v"}]}]`, true},
		{"worst case: 70,000 codes", `[{"op":"add","path":"` + scimExt + `:roleCodes","value":` + codeStrings(70000) + `}]`, true},
		{"two adds, each under the limit", `[{"op":"add","path":"` + scimExt + `:roleCodes","value":` + codesJSON("X", 600) +
			`},{"op":"add","path":"` + scimExt + `:roleCodes","value":` + codesJSON("Y", 600) + `}]`, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			counted.calls.Store(0)
			r := scimReq{method: http.MethodPatch, path: "/scim/v2/Users/a-0001", body: patchBody(tt.ops)}
			got := s.do(t, r)
			r.check(t, got, 400, "invalidValue")
			if !strings.Contains(string(got.body), "at most 1000 entries") {
				t.Errorf("the error does not name the limit: %s", got.body)
			}
			if n := counted.calls.Load(); tt.beforeStore && n != 0 {
				t.Errorf("the store was called %d times; want the PATCH refused before it", n)
			}
			if diff := cmp.Diff(before, s.storedUser(t, "community-a", "a-0001")); diff != "" {
				t.Errorf("a refused PATCH changed the user (-before +after):\n%s", diff)
			}
		})
	}
	// Up to the limit is fine, and a merge keeps the codes it already has
	// once (a set, not a scan, but the same result). (The counting store
	// hides the auto-roles.)
	r := scimReq{method: http.MethodPatch, path: "/scim/v2/Users/a-0001", body: patchBody(`[{"op":"add","path":"` + scimExt +
		`:roleCodes","value":` + codesJSON("R", user.MaxListEntries-1) + `},{"op":"add","path":"` + scimExt + `:roleCodes","value":[{"code":"BUYER"},{"code":"R0"},"R1"]}]`)}
	got := s.do(t, r)
	r.check(t, got, 200, "")
	roles := decodeSCIMUser(t, got.body).Extension.Roles
	if len(roles) != user.MaxListEntries || roles[0].Code != "BUYER" || roles[1].Code != "R0" || roles[len(roles)-1].Code != "R998" {
		t.Errorf("%d roles, starting %v; want %d: BUYER, R0 ... R998", len(roles), roles[:min(3, len(roles))], user.MaxListEntries)
	}
}

// Item 8: invalid UTF-8 is refused as /v1/users refuses it, on every SCIM
// write, and nothing is stored (encoding/json would have stored U+FFFD).
func TestSCIMInvalidUTF8(t *testing.T) {
	s := newSCIMServer(t)
	before := s.storedUser(t, "community-a", "a-0001")
	for _, r := range []scimReq{
		{method: http.MethodPost, path: "/scim/v2/Users", body: "{\"userName\":\"bad\xffname\"}"},
		{method: http.MethodPost, path: "/scim/v2/Users", body: "{\"userName\":\"ok\",\"displayName\":\"\xc3\x28\"}"},
		{method: http.MethodPut, path: "/scim/v2/Users/a-0001", body: "{\"userName\":\"Alice.Smith\",\"displayName\":\"\xed\xa0\x80\"}"},
		{method: http.MethodPatch, path: "/scim/v2/Users/a-0001", body: patchBody("[{\"op\":\"replace\",\"path\":\"displayName\",\"value\":\"x\xfe\"}]")},
	} {
		got := s.do(t, r)
		r.check(t, got, 400, "invalidSyntax")
		if !strings.Contains(string(got.body), "UTF-8") {
			t.Errorf("%s: the error does not name UTF-8: %s", r.method, got.body)
		}
	}
	if diff := cmp.Diff(before, s.storedUser(t, "community-a", "a-0001")); diff != "" {
		t.Errorf("a refused write changed the user (-before +after):\n%s", diff)
	}
	l := decodeSCIMList(t, s.do(t, scimReq{method: http.MethodGet, path: "/scim/v2/Users"}).body)
	if l.TotalResults != 2 {
		t.Errorf("%d users after refused creates; want 2", l.TotalResults)
	}
}

// Item 11: a PATCH path is checked against the schemas: a name in none
// is invalidPath, a read-only attribute mutability; nothing is stored and
// the version stays. Attributes of RFC 7643's User (and the enterprise
// extension) that a user does not hold are ignored, as on create.
func TestSCIMPatchPaths(t *testing.T) {
	for _, tt := range []struct {
		name, ops string
		status    int
		scimType  string
	}{
		{"no such attribute", `[{"op":"replace","path":"nosuchattr","value":"x"}]`, 400, "invalidPath"},
		{"no such attribute, add", `[{"op":"add","path":"nosuchattr","value":"x"}]`, 400, "invalidPath"},
		{"no such attribute, remove", `[{"op":"remove","path":"nosuchattr"}]`, 400, "invalidPath"},
		{"no such attribute without a path", `[{"op":"replace","value":{"active":false,"nosuchattr":"x"}}]`, 400, "invalidPath"},
		{"no such sub-attribute", `[{"op":"replace","path":"name.nickname","value":"x"}]`, 400, "invalidPath"},
		{"no such sub-attribute of emails", `[{"op":"replace","path":"emails[type eq \"work\"].nosuch","value":"x"}]`, 400, "invalidPath"},
		{"no such schema", `[{"op":"replace","path":"urn:example:params:scim:schemas:extension:acme:2.0:User:level","value":"x"}]`, 400, "invalidPath"},
		{"no such enterprise attribute", `[{"op":"replace","path":"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:nosuch","value":"x"}]`, 400, "invalidPath"},
		{"no such extension attribute", `[{"op":"add","path":"` + scimExt + `:nosuch","value":["x"]}]`, 400, "invalidPath"},
		{"no such extension attribute in its object", `[{"op":"add","path":"` + scimExt + `","value":{"nosuch":["x"]}}]`, 400, "invalidPath"},
		{"id", `[{"op":"replace","path":"id","value":"a-0009"}]`, 400, "mutability"},
		{"id, remove", `[{"op":"remove","path":"id"}]`, 400, "mutability"},
		{"meta.version", `[{"op":"replace","path":"meta.version","value":"W/\"9\""}]`, 400, "mutability"},
		{"meta", `[{"op":"replace","path":"meta","value":{"version":"W/\"9\""}}]`, 400, "mutability"},
		{"another id without a path", `[{"op":"replace","value":{"id":"a-0009","active":false}}]`, 400, "mutability"},
		{"the core schema's URN as a path", `[{"op":"replace","path":"urn:ietf:params:scim:schemas:core:2.0:User","value":{"displayName":"D"}}]`, 200, ""},
		{"the core schema's URN without a path", `[{"op":"replace","value":{"urn:ietf:params:scim:schemas:core:2.0:User":{"displayName":"D","nosuchattr":1}}}]`, 400, "invalidPath"},
		{"the core schema's URN in itself", `[{"op":"replace","path":"urn:ietf:params:scim:schemas:core:2.0:User","value":{"urn:ietf:params:scim:schemas:core:2.0:User":{"displayName":"D"}}}]`, 400, "invalidPath"},
		{"remove the core schema's URN", `[{"op":"remove","path":"urn:ietf:params:scim:schemas:core:2.0:User"}]`, 400, "invalidPath"},
		{"its own id and meta without a path", `[{"op":"replace","value":{"id":"a-0001","meta":{"version":"W/\"1\""},"displayName":"D"}}]`, 200, ""},
		{"held, not held, and the enterprise extension", `[{"op":"replace","path":"title","value":"Boss"},{"op":"add","path":"locale","value":"en-NZ"},` +
			`{"op":"add","path":"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:manager.value","value":"m-1"},{"op":"replace","path":"displayName","value":"D"}]`, 200, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := newSCIMServer(t)
			before := s.storedUser(t, "community-a", "a-0001")
			r := scimReq{method: http.MethodPatch, path: "/scim/v2/Users/a-0001", body: patchBody(tt.ops)}
			got := s.do(t, r)
			r.check(t, got, tt.status, tt.scimType)
			after := s.storedUser(t, "community-a", "a-0001")
			if tt.status != 200 {
				if diff := cmp.Diff(before, after); diff != "" {
					t.Errorf("a refused PATCH changed the user (-before +after):\n%s", diff)
				}
				return
			}
			if after.DisplayName != "D" || after.Version != before.Version+1 {
				t.Errorf("after the PATCH: display name %q, version %d; want D at %d", after.DisplayName, after.Version, before.Version+1)
			}
		})
	}
}

// Item 14: GET /Users/{id} with If-None-Match naming the current version
// is a 304 without a body; an older version gets the user. On both
// stores.
func TestSCIMNotModified(t *testing.T) {
	scimStores(t, func(t *testing.T, s *scimServer) {
		get := func(inm string) scimResp {
			return s.do(t, scimReq{method: http.MethodGet, path: "/scim/v2/Users/a-0001", header: map[string]string{"If-None-Match": inm}})
		}
		for _, inm := range []string{`W/"1"`, `"1"`, `*`, `W/"7", W/"1"`} {
			got := get(inm)
			if got.status != http.StatusNotModified || len(got.body) != 0 || got.header.Get("ETag") != `W/"1"` {
				t.Errorf("If-None-Match %s: %d, ETag %q, body %q; want 304, W/\"1\", none", inm, got.status, got.header.Get("ETag"), got.body)
			}
		}
		p := scimReq{method: http.MethodPatch, path: "/scim/v2/Users/a-0001", body: patchBody(`[{"op":"replace","path":"displayName","value":"New"}]`)}
		p.check(t, s.do(t, p), 200, "")
		r := scimReq{method: http.MethodGet, path: "/scim/v2/Users/a-0001", header: map[string]string{"If-None-Match": `W/"1"`}}
		got := s.do(t, r)
		r.check(t, got, 200, "")
		if u := decodeSCIMUser(t, got.body); u.DisplayName != "New" || got.header.Get("ETag") != `W/"2"` {
			t.Errorf("after a change, If-None-Match of the old version: %s, ETag %q", got.body, got.header.Get("ETag"))
		}
		// Another community's user is still a 404, whatever the header says.
		r = scimReq{method: http.MethodGet, path: "/scim/v2/Users/b-0001", header: map[string]string{"If-None-Match": `*`}}
		r.check(t, s.do(t, r), 404, "")
	})
}

// Item 16: the extension's role codes are roleCodes (RFC 7643 3.3: an
// extension does not redefine a core attribute's name); the former name
// roles is still accepted on input. The schema gives the canonical types
// of e-mail addresses and phone numbers.
func TestSCIMRoleCodes(t *testing.T) {
	s := newSCIMServer(t)
	for _, body := range []string{
		`{"userName":"old.client","` + scimExt + `":{"roles":[{"code":"BUYER"}]}}`,
		`{"userName":"new.client","` + scimExt + `":{"roleCodes":["BUYER"]}}`,
		`{"userName":"both.names","` + scimExt + `":{"roles":["BUYER"],"roleCodes":[{"code":"BUYER"}]}}`,
	} {
		r := scimReq{method: http.MethodPost, path: "/scim/v2/Users", body: body}
		got := s.do(t, r)
		r.check(t, got, 201, "")
		var raw map[string]json.RawMessage
		var ext map[string]json.RawMessage
		if err := json.Unmarshal(got.body, &raw); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(raw[scimExt], &ext); err != nil {
			t.Fatal(err)
		}
		if _, old := ext["roles"]; old || string(ext["roleCodes"]) != `[{"code":"BUYER"},{"code":"EMPLOYEE"}]` {
			t.Errorf("%s: extension %s; want roleCodes BUYER, EMPLOYEE and no roles", body, got.body)
		}
	}
	for _, path := range []string{scimExt + ":roles", scimExt + ":roleCodes"} {
		r := scimReq{method: http.MethodPatch, path: "/scim/v2/Users/a-0001", body: patchBody(`[{"op":"add","path":"` + path + `","value":["APPROVER"]}]`)}
		got := s.do(t, r)
		r.check(t, got, 200, "")
		if roles := decodeSCIMUser(t, got.body).Extension.Roles; !cmp.Equal(roles, user.Codes("BUYER", "APPROVER", "EMPLOYEE")) {
			t.Errorf("PATCH add %s: roles %v", path, roles)
		}
	}
	// Discovery: the extension declares roleCodes, not roles; types have
	// their canonical values.
	var schemas struct {
		Resources []struct {
			ID         string `json:"id"`
			Attributes []struct {
				Name          string `json:"name"`
				SubAttributes []struct {
					Name            string   `json:"name"`
					CanonicalValues []string `json:"canonicalValues"`
				} `json:"subAttributes"`
			} `json:"attributes"`
		} `json:"Resources"`
	}
	if err := json.Unmarshal(s.do(t, scimReq{method: http.MethodGet, path: "/scim/v2/Schemas"}).body, &schemas); err != nil {
		t.Fatal(err)
	}
	canonical := map[string][]string{}
	var extNames []string
	for _, sc := range schemas.Resources {
		for _, a := range sc.Attributes {
			if sc.ID == scimExt {
				extNames = append(extNames, a.Name)
			}
			for _, sub := range a.SubAttributes {
				if sub.Name == "type" {
					canonical[a.Name] = sub.CanonicalValues
				}
			}
		}
	}
	if !cmp.Equal(extNames, []string{"organisationUnits", "roleCodes", "buyerGroups", "approverGroups", "attributes"}) {
		t.Errorf("extension attributes %v", extNames)
	}
	if !cmp.Equal(canonical, map[string][]string{"emails": {"work", "home", "other"}, "phoneNumbers": {"work", "home", "mobile", "fax", "pager", "other"}}) {
		t.Errorf("canonical values of type: %v", canonical)
	}
}

// Item 1: the merges of one PATCH share their lookup sets (built once per
// list); a replace or remove in between must leave later adds seeing the
// list as it then is.
func TestSCIMPatchMergeSequences(t *testing.T) {
	roles, attrs := scimExt+":roleCodes", scimExt+":attributes"
	for _, tt := range []struct {
		name, ops string
		roles     []user.Code      // before the auto-role
		attrs     []user.Attribute // nil: as in the fixture
	}{
		{"add, add the same again", `[{"op":"add","path":"` + roles + `","value":["X","Y"]},{"op":"add","path":"` + roles + `","value":["Y","X","Z"]}]`,
			user.Codes("BUYER", "X", "Y", "Z"), nil},
		{"add, replace, add", `[{"op":"add","path":"` + roles + `","value":["X"]},{"op":"replace","path":"` + roles + `","value":["A"]},{"op":"add","path":"` + roles + `","value":["X","A","BUYER"]}]`,
			user.Codes("A", "X", "BUYER"), nil},
		{"add, remove, add", `[{"op":"add","path":"` + roles + `","value":["X"]},{"op":"remove","path":"` + roles + `[code eq \"X\"]"},{"op":"add","path":"` + roles + `","value":["X"]}]`,
			user.Codes("BUYER", "X"), nil},
		{"add under the former name, then the new one", `[{"op":"add","path":"` + scimExt + `:roles","value":["X"]},{"op":"add","path":"` + roles + `","value":["X","Y"]}]`,
			user.Codes("BUYER", "X", "Y"), nil},
		{"remove the whole extension, then add", `[{"op":"add","path":"` + roles + `","value":["X"]},{"op":"remove","path":"` + scimExt + `"},{"op":"add","path":"` + roles + `","value":["BUYER"]},` +
			`{"op":"add","path":"` + attrs + `","value":[{"name":"n","value":"1"}]}]`,
			user.Codes("BUYER"), []user.Attribute{{Name: "n", Value: "1"}}},
		{"attributes: add, remove, add", `[{"op":"add","path":"` + attrs + `","value":[{"name":"a","value":"1"},{"name":"costCentre","value":"CC-2"}]},` +
			`{"op":"remove","path":"` + attrs + `[name eq \"costCentre\"]"},{"op":"add","path":"` + attrs + `","value":[{"name":"costCentre","value":"CC-3"},{"name":"a","value":"2"}]}]`,
			user.Codes("BUYER"), []user.Attribute{{Name: "a", Value: "2"}, {Name: "costCentre", Value: "CC-3"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := newSCIMServer(t)
			r := scimReq{method: http.MethodPatch, path: "/scim/v2/Users/a-0001", body: patchBody(tt.ops)}
			r.check(t, s.do(t, r), 200, "")
			u := s.storedUser(t, "community-a", "a-0001")
			if want := append(tt.roles, user.Code{Code: "EMPLOYEE"}); !cmp.Equal(u.Roles, want) {
				t.Errorf("roles %v; want %v", u.Roles, want)
			}
			if want := tt.attrs; want != nil && !cmp.Equal(u.Attributes, want) {
				t.Errorf("attributes %v; want %v", u.Attributes, want)
			}
		})
	}
}
