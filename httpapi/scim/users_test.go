package scim_test

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/procurekit/procure/user"
)

// A full SCIM user, with attributes a user cannot hold (ignored).
const scimFullUser = `{
	"schemas": ["urn:ietf:params:scim:schemas:core:2.0:User", "urn:procurekit:params:scim:schemas:extension:procure:2.0:User",
		"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"],
	"userName": "  dana.lee@example.com ",
	"externalId": "00u1",
	"name": {"givenName": "Dana", "familyName": "Lee", "formatted": "Dana Lee", "middleName": "X"},
	"displayName": "Dana Lee",
	"title": "Buyer",
	"locale": "en-NZ",
	"password": "secret-never-kept",
	"emails": [{"value": "dana@home.example", "type": "home"}, {"value": "dana@example.com", "type": "work"}],
	"phoneNumbers": [{"value": "+64 4 555 0199", "type": "mobile"}, {"value": "+64 4 555 0100", "type": "work"}],
	"addresses": [{"streetAddress": "1 Main St"}],
	"groups": [],
	"active": true,
	"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User": {"employeeNumber": "42"},
	"urn:procurekit:params:scim:schemas:extension:procure:2.0:User": {
		"organisationUnits": [{"code": "OU-1"}],
		"roles": ["BUYER"],
		"buyerGroups": [{"code": "BG-1"}, {"code": "BG-2"}],
		"approverGroups": [{"code": "AG-1"}],
		"attributes": [{"name": "costCentre", "value": "CC-9"}]
	}
}`

// The mapping of scim_mapping.go, SCIM to user: every attribute a user
// holds lands in its field, anything else is ignored; and user to SCIM:
// what /v1/users wrote reads back as SCIM.
func TestSCIMMapping(t *testing.T) {
	s := newSCIMServer(t)
	r := scimReq{method: http.MethodPost, path: "/scim/v2/Users", body: scimFullUser}
	got := s.do(t, r)
	r.check(t, got, 201, "")
	created := decodeSCIMUser(t, got.body)
	want := user.User{
		ID: created.ID, Username: "dana.lee@example.com", ExternalID: "00u1", FirstName: "Dana", LastName: "Lee",
		DisplayName: "Dana Lee", Email: "dana@example.com", Phone: "+64 4 555 0199", Enabled: true,
		OrganisationUnits: user.Codes("OU-1"), Roles: user.Codes("BUYER", "EMPLOYEE"), // EMPLOYEE: the auto-role
		BuyerGroups: user.Codes("BG-1", "BG-2"), ApproverGroups: user.Codes("AG-1"),
		Attributes: []user.Attribute{{Name: "costCentre", Value: "CC-9"}},
	}
	stored := s.storedUser(t, "community-a", created.ID)
	if diff := cmp.Diff(want, stored, cmpopts.EquateEmpty(), cmpopts.IgnoreFields(user.User{}, "Version")); diff != "" {
		t.Errorf("stored user (-want +got):\n%s", diff)
	}
	if strings.Contains(string(got.body), "secret-never-kept") || strings.Contains(string(got.body), "employeeNumber") ||
		strings.Contains(string(got.body), "formatted") || strings.Contains(string(got.body), "title") {
		t.Errorf("the response holds an attribute a user cannot hold: %s", got.body)
	}
	if got.header.Get("Location") != s.URL+"/scim/v2/Users/"+created.ID || created.Meta.Location != got.header.Get("Location") {
		t.Errorf("Location %q, meta.location %q; want %s/scim/v2/Users/%s", got.header.Get("Location"), created.Meta.Location, s.URL, created.ID)
	}
	if got.header.Get("ETag") != `W/"1"` || created.Meta.Version != `W/"1"` {
		t.Errorf("ETag %q, meta.version %q; want W/\"1\"", got.header.Get("ETag"), created.Meta.Version)
	}

	// The other way: a user written through /v1/users, read through SCIM.
	_, erin := s.v1(t, http.MethodPost, `{"username":"erin","externalId":"X-1","firstName":"Erin","lastName":"Ng",
		"displayName":"Erin Ng","email":"erin@example.com","phone":"555","enabled":false,"organisationUnits":[{"code":"OU-2"}],
		"attributes":[{"name":"grade","value":"7"}]}`, nil, 200, "")
	id := erin.ID
	r = scimReq{method: http.MethodGet, path: "/scim/v2/Users/" + id}
	got = s.do(t, r)
	r.check(t, got, 200, "")
	u := decodeSCIMUser(t, got.body)
	if u.UserName != "erin" || u.ExternalID != "X-1" || u.Name == nil || u.Name.GivenName != "Erin" || u.Name.FamilyName != "Ng" ||
		u.DisplayName != "Erin Ng" || u.Active || len(u.Emails) != 1 || u.Emails[0].Value != "erin@example.com" ||
		u.Emails[0].Type != "work" || !u.Emails[0].Primary || len(u.PhoneNumbers) != 1 || u.PhoneNumbers[0].Value != "555" ||
		u.Extension == nil || !cmp.Equal(u.Extension.OrganisationUnits, user.Codes("OU-2")) ||
		!cmp.Equal(u.Extension.Roles, user.Codes("EMPLOYEE")) || len(u.Extension.Attributes) != 1 {
		t.Errorf("SCIM view of the /v1/users user: %s", got.body)
	}
	if !cmp.Equal(u.Schemas, []string{"urn:ietf:params:scim:schemas:core:2.0:User", "urn:procurekit:params:scim:schemas:extension:procure:2.0:User"}) {
		t.Errorf("schemas %v", u.Schemas)
	}
	// Text that JSON must escape reads back exactly.
	odd := `Ann "Q" <&> \ é\u2028`
	_, oddUser := s.v1(t, http.MethodPost, `{"username":"odd","displayName":`+jsonString(t, odd)+`,"roles":[{"code":"R\"1"}],"attributes":[{"name":"a<b","value":"\\"}]}`, nil, 200, "")
	r = scimReq{method: http.MethodGet, path: "/scim/v2/Users/" + oddUser.ID}
	got = s.do(t, r)
	r.check(t, got, 200, "")
	if u := decodeSCIMUser(t, got.body); u.DisplayName != odd || u.Extension == nil || u.Extension.Roles[0].Code != `R"1` ||
		u.Extension.Attributes[0] != (user.Attribute{Name: "a<b", Value: `\`}) {
		t.Errorf("escaped text did not read back: %s", got.body)
	}

	// A bare user has no name, emails, phone numbers or extension.
	r = scimReq{method: http.MethodPost, path: "/scim/v2/Users", body: `{"userName":"bare","active":"False"}`}
	got = s.do(t, r)
	r.check(t, got, 201, "")
	for _, absent := range []string{`"name"`, `"emails"`, `"phoneNumbers"`, `"externalId"`, `"displayName"`} {
		if strings.Contains(string(got.body), absent) {
			t.Errorf("bare user has %s: %s", absent, got.body)
		}
	}
	if decodeSCIMUser(t, got.body).Active {
		t.Error(`active "False" created an active user`)
	}
}

func TestSCIMCreateErrors(t *testing.T) {
	s := newSCIMServer(t)
	for _, tt := range []struct {
		name, body, contentType string
		status                  int
		scimType                string
	}{
		{"duplicate userName, another case", `{"userName":"ALICE.SMITH"}`, "", 409, "uniqueness"},
		{"no userName", `{"name":{"givenName":"X"}}`, "", 400, "invalidValue"},
		{"blank userName", `{"userName":"   "}`, "", 400, "invalidValue"},
		{"bad e-mail", `{"userName":"x","emails":[{"value":"not-an-address","primary":true}]}`, "", 400, "invalidValue"},
		{"userName too long", `{"userName":"` + strings.Repeat("x", 256) + `"}`, "", 400, "invalidValue"},
		{"userName not a string", `{"userName":5}`, "", 400, "invalidValue"},
		{"active not a boolean", `{"userName":"x","active":"maybe"}`, "", 400, "invalidValue"},
		{"not JSON", `{"userName":`, "", 400, "invalidSyntax"},
		{"not an object", `[]`, "", 400, "invalidSyntax"},
		{"application/json is accepted", `{"userName":"json.user"}`, "application/json", 201, ""},
		// RFC 7644 3.12 has no 415: a body of another type is unreadable.
		{"text/plain", `{"userName":"x"}`, "text/plain", 400, "invalidSyntax"},
		{"no content type", `{"userName":"x"}`, "-", 400, "invalidSyntax"},
		{"roles under both names, different", `{"userName":"x","urn:procurekit:params:scim:schemas:extension:procure:2.0:User":{"roles":["A"],"roleCodes":["B"]}}`, "", 400, "invalidValue"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := scimReq{method: http.MethodPost, path: "/scim/v2/Users", body: tt.body, contentType: tt.contentType}
			r.check(t, s.do(t, r), tt.status, tt.scimType)
		})
	}
	r := scimReq{method: http.MethodPost, path: "/scim/v2/Users", body: `{"userName":"` + strings.Repeat("x", 2<<20) + `"}`}
	r.check(t, s.do(t, r), 413, "")
}

// PUT replaces the core attributes (see scim.go for active and the
// extension).
func TestSCIMReplace(t *testing.T) {
	s := newSCIMServer(t)
	r := scimReq{method: http.MethodPut, path: "/scim/v2/Users/a-0001",
		body: `{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"id":"ignored","userName":"alice.s@example.com","name":{"givenName":"Alicia"},"emails":[{"value":"alicia@example.com","primary":true}]}`}
	got := s.do(t, r)
	r.check(t, got, 200, "")
	stored := s.storedUser(t, "community-a", "a-0001")
	want := user.User{ID: "a-0001", Username: "alice.s@example.com", FirstName: "Alicia", Email: "alicia@example.com", Enabled: true,
		OrganisationUnits: user.Codes("OU-SCI"), Roles: user.Codes("BUYER", "EMPLOYEE"),
		Attributes: []user.Attribute{{Name: "costCentre", Value: "CC-1"}}, Version: 2}
	if diff := cmp.Diff(want, stored, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("after PUT (-want +got):\n%s", diff)
	}
	if got.header.Get("ETag") != `W/"2"` {
		t.Errorf("ETag %q; want W/\"2\"", got.header.Get("ETag"))
	}
	// With the extension, its lists are replaced.
	r.body = `{"userName":"alice.s@example.com","active":false,"urn:procurekit:params:scim:schemas:extension:procure:2.0:User":{"organisationUnits":[],"roles":[{"code":"APPROVER"}]}}`
	r.check(t, s.do(t, r), 200, "")
	stored = s.storedUser(t, "community-a", "a-0001")
	if stored.Enabled || len(stored.OrganisationUnits) != 0 || !cmp.Equal(stored.Roles, user.Codes("APPROVER", "EMPLOYEE")) || len(stored.Attributes) != 1 {
		t.Errorf("after PUT with the extension: %+v", stored)
	}
	for _, tt := range []struct {
		name, path, body string
		status           int
		scimType         string
	}{
		{"unknown id", "/scim/v2/Users/nope", `{"userName":"x"}`, 404, ""},
		{"another community's user", "/scim/v2/Users/b-0001", `{"userName":"x"}`, 404, ""},
		{"taken userName", "/scim/v2/Users/a-0001", `{"userName":"BOB/OPS+1@example.com"}`, 409, "uniqueness"},
		{"no userName", "/scim/v2/Users/a-0001", `{"displayName":"x"}`, 400, "invalidValue"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := scimReq{method: http.MethodPut, path: tt.path, body: tt.body}
			r.check(t, s.do(t, r), tt.status, tt.scimType)
		})
	}
}

// PATCH as Okta and Entra send it.
func TestSCIMPatch(t *testing.T) {
	for _, tt := range []struct {
		name     string
		ops      string
		status   int
		scimType string
		change   func(u *user.User) // from the fixture's alice (auto-role added)
	}{
		{"Okta: replace without path, active false", `[{"op":"replace","value":{"active":false}}]`, 200, "",
			func(u *user.User) { u.Enabled = false }},
		{"Entra: Replace active \"False\"", `[{"op":"Replace","path":"active","value":"False"}]`, 200, "",
			func(u *user.User) { u.Enabled = false }},
		{"Entra: work e-mail path", `[{"op":"Add","path":"emails[type eq \"work\"].value","value":"new@example.com"}]`, 200, "",
			func(u *user.User) { u.Email = "new@example.com" }},
		{"primary e-mail path", `[{"op":"replace","path":"emails[primary eq true].value","value":"p@example.com"}]`, 200, "",
			func(u *user.User) { u.Email = "p@example.com" }},
		{"home e-mail path: not held, ignored", `[{"op":"add","path":"emails[type eq \"home\"].value","value":"h@example.com"}]`, 200, "",
			func(u *user.User) {}},
		{"emails array", `[{"op":"replace","path":"emails","value":[{"value":"w@example.com","type":"work"}]}]`, 200, "",
			func(u *user.User) { u.Email = "w@example.com" }},
		{"remove e-mail", `[{"op":"remove","path":"emails[type eq \"work\"].value"}]`, 200, "",
			func(u *user.User) { u.Email = "" }},
		{"Entra: several ops, names and rename", `[{"op":"Replace","path":"name.givenName","value":"Al"},{"op":"Replace","path":"name.familyName","value":"Smyth"},{"op":"Replace","path":"userName","value":"al.smyth"},{"op":"Add","path":"externalId","value":"ext-9"},{"op":"Replace","path":"displayName","value":"Al Smyth"}]`, 200, "",
			func(u *user.User) {
				u.FirstName, u.LastName, u.Username, u.ExternalID, u.DisplayName = "Al", "Smyth", "al.smyth", "ext-9", "Al Smyth"
			}},
		{"no path, dotted and URN keys", `[{"op":"replace","value":{"name.familyName":"X","urn:ietf:params:scim:schemas:core:2.0:User:displayName":"D","urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department":"ignored"}}]`, 200, "",
			func(u *user.User) { u.LastName, u.DisplayName = "X", "D" }},
		{"name object", `[{"op":"add","path":"name","value":{"familyName":"F"}}]`, 200, "",
			func(u *user.User) { u.LastName = "F" }},
		{"replace name: sub-attributes not given are kept", `[{"op":"replace","path":"name","value":{"familyName":"G","formatted":"x"}}]`, 200, "",
			func(u *user.User) { u.LastName = "G" }},
		{"phone", `[{"op":"replace","path":"phoneNumbers[type eq \"work\"].value","value":"777"}]`, 200, "",
			func(u *user.User) { u.Phone = "777" }},
		{"unknown attribute ignored", `[{"op":"replace","path":"title","value":"Boss"},{"op":"add","path":"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:manager","value":{"value":"x"}}]`, 200, "",
			func(u *user.User) {}},
		{"extension: add roles", `[{"op":"add","path":"urn:procurekit:params:scim:schemas:extension:procure:2.0:User:roles","value":[{"code":"APPROVER"},{"code":"BUYER"}]}]`, 200, "",
			func(u *user.User) { u.Roles = user.Codes("BUYER", "APPROVER", "EMPLOYEE") }}, // the auto-role is appended after the change
		{"extension: replace buyer groups", `[{"op":"replace","path":"urn:procurekit:params:scim:schemas:extension:procure:2.0:User:buyerGroups","value":["BG-9"]}]`, 200, "",
			func(u *user.User) { u.BuyerGroups = user.Codes("BG-9") }},
		{"extension: remove one unit", `[{"op":"remove","path":"urn:procurekit:params:scim:schemas:extension:procure:2.0:User:organisationUnits[code eq \"OU-SCI\"]"}]`, 200, "",
			func(u *user.User) { u.OrganisationUnits = nil }},
		{"extension: attributes upsert", `[{"op":"add","path":"urn:procurekit:params:scim:schemas:extension:procure:2.0:User:attributes","value":[{"name":"costCentre","value":"CC-2"},{"name":"grade","value":"3"}]}]`, 200, "",
			func(u *user.User) {
				u.Attributes = []user.Attribute{{Name: "costCentre", Value: "CC-2"}, {Name: "grade", Value: "3"}}
			}},
		{"extension object without path", `[{"op":"replace","value":{"urn:procurekit:params:scim:schemas:extension:procure:2.0:User":{"approverGroups":[{"code":"AG-5"}]}}}]`, 200, "",
			func(u *user.User) { u.ApproverGroups = user.Codes("AG-5") }},
		{"remove without path", `[{"op":"remove"}]`, 400, "noTarget", nil},
		{"unknown op", `[{"op":"move","path":"active","value":true}]`, 400, "invalidSyntax", nil},
		{"no operations", `[]`, 400, "invalidSyntax", nil},
		{"active not a boolean", `[{"op":"replace","path":"active","value":"yes"}]`, 400, "invalidValue", nil},
		{"bad path", `[{"op":"replace","path":"emails[type eq].value","value":"x"}]`, 400, "invalidPath", nil},
		{"userName removed", `[{"op":"remove","path":"userName"}]`, 400, "invalidValue", nil},
		{"taken userName", `[{"op":"replace","path":"userName","value":"BOB/ops+1@example.com"}]`, 409, "uniqueness", nil},
		{"one bad op changes nothing", `[{"op":"replace","path":"displayName","value":"kept?"},{"op":"replace","path":"emails[type eq \"work\"].value","value":"not-an-address"}]`, 400, "invalidValue", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := newSCIMServer(t)
			before := s.storedUser(t, "community-a", "a-0001")
			r := scimReq{method: http.MethodPatch, path: "/scim/v2/Users/a-0001",
				body: `{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":` + tt.ops + `}`}
			got := s.do(t, r)
			r.check(t, got, tt.status, tt.scimType)
			after := s.storedUser(t, "community-a", "a-0001")
			if tt.status != 200 {
				if diff := cmp.Diff(before, after); diff != "" {
					t.Errorf("a refused PATCH changed the user (-before +after):\n%s", diff)
				}
				return
			}
			want := before.Clone()
			want.Roles = user.Codes("BUYER", "EMPLOYEE")
			want.ExternalID = "E-1"
			tt.change(&want)
			want.Version = 2
			if diff := cmp.Diff(want, after, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("after PATCH (-want +got):\n%s", diff)
			}
			if res := decodeSCIMUser(t, got.body); res.UserName != after.Username || res.Meta.Version != `W/"2"` {
				t.Errorf("response %s does not show the stored user", got.body)
			}
		})
	}
	s := newSCIMServer(t)
	r := scimReq{method: http.MethodPatch, path: "/scim/v2/Users/nope", body: `{"Operations":[{"op":"replace","path":"active","value":false}]}`}
	r.check(t, s.do(t, r), 404, "")
}

// DELETE disables, never deletes; the user can be enabled again.
func TestSCIMDelete(t *testing.T) {
	s := newSCIMServer(t)
	r := scimReq{method: http.MethodDelete, path: "/scim/v2/Users/a-0001"}
	got := s.do(t, r)
	r.check(t, got, 204, "")
	if len(got.body) != 0 {
		t.Errorf("204 with a body: %s", got.body)
	}
	u := s.storedUser(t, "community-a", "a-0001")
	if u.Enabled || u.Username != "Alice.Smith" {
		t.Errorf("after DELETE: %+v; want the user kept, disabled", u)
	}
	g := scimReq{method: http.MethodGet, path: "/scim/v2/Users/a-0001"}
	got = s.do(t, g)
	g.check(t, got, 200, "")
	if decodeSCIMUser(t, got.body).Active {
		t.Error("GET after DELETE: still active")
	}
	p := scimReq{method: http.MethodPatch, path: "/scim/v2/Users/a-0001", body: `{"Operations":[{"op":"replace","path":"active","value":"True"}]}`}
	p.check(t, s.do(t, p), 200, "")
	if !s.storedUser(t, "community-a", "a-0001").Enabled {
		t.Error("PATCH active True after DELETE did not enable the user")
	}
	r = scimReq{method: http.MethodDelete, path: "/scim/v2/Users/b-0001"}
	r.check(t, s.do(t, r), 404, "")
}

// Optimistic concurrency: PUT, PATCH and DELETE with If-Match of an older
// version are 412 and change nothing; the SCIM and /v1/users versions are
// one.
func TestSCIMIfMatch(t *testing.T) {
	s := newSCIMServer(t)
	patch := func(ifMatch, display string) (scimReq, scimResp) {
		r := scimReq{method: http.MethodPatch, path: "/scim/v2/Users/a-0001",
			body:   `{"Operations":[{"op":"replace","path":"displayName","value":"` + display + `"}]}`,
			header: map[string]string{"If-Match": ifMatch}}
		return r, s.do(t, r)
	}
	r, got := patch(`W/"1"`, "one")
	r.check(t, got, 200, "")
	// An HRIS changes the user through /v1/users meanwhile.
	if etag, _ := s.v1(t, http.MethodPut, `{"id":"a-0001","username":"Alice.Smith","firstName":"HR"}`, nil, 200, ""); etag != `W/"3"` {
		t.Fatalf("/v1/users ETag %q; want W/\"3\"", etag)
	}
	r, got = patch(`W/"2"`, "stale")
	r.check(t, got, 412, "")
	for _, r := range []scimReq{
		{method: http.MethodPut, path: "/scim/v2/Users/a-0001", body: `{"userName":"Alice.Smith"}`, header: map[string]string{"If-Match": `W/"2"`}},
		{method: http.MethodDelete, path: "/scim/v2/Users/a-0001", header: map[string]string{"If-Match": `W/"1"`}},
	} {
		r.check(t, s.do(t, r), 412, "")
	}
	u := s.storedUser(t, "community-a", "a-0001")
	if u.DisplayName != "one" || u.FirstName != "HR" || !u.Enabled || u.Version != 3 {
		t.Errorf("after the refused changes: %+v", u)
	}
	r, got = patch(`W/"3"`, "three")
	r.check(t, got, 200, "")
	if got.header.Get("ETag") != `W/"4"` {
		t.Errorf("ETag %q; want W/\"4\"", got.header.Get("ETag"))
	}
	// And the other way: /v1/users with the SCIM version.
	s.v1(t, http.MethodPut, `{"id":"a-0001","username":"Alice.Smith"}`, map[string]string{"If-Match": `W/"3"`}, 412, "VERSION_MISMATCH")
}

// Concurrent PATCHes with If-Match of one version: the check is inside
// the store's atomic update, so exactly one wins and the others are 412.
func TestSCIMConcurrentIfMatch(t *testing.T) {
	s := newSCIMServer(t)
	const n = 16
	statuses := make([]int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			r := scimReq{method: http.MethodPatch, path: "/scim/v2/Users/a-0001",
				body:   `{"Operations":[{"op":"replace","path":"displayName","value":"writer ` + strconv.Itoa(i) + `"}]}`,
				header: map[string]string{"If-Match": `W/"1"`}}
			statuses[i] = s.do(t, r).status
		})
	}
	wg.Wait()
	won := -1
	for i, st := range statuses {
		switch {
		case st == 200 && won < 0:
			won = i
		case st != 412:
			t.Errorf("request %d: status %d (statuses %v); want one 200 and the rest 412", i, st, statuses)
		}
	}
	if u := s.storedUser(t, "community-a", "a-0001"); won < 0 || u.DisplayName != "writer "+strconv.Itoa(won) || u.Version != 2 {
		t.Errorf("stored display name %q version %d; want the winner's (%d) at version 2", u.DisplayName, u.Version, won)
	}
}

// jsonString encodes s as a JSON string.
func jsonString(tb testing.TB, s string) string {
	tb.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}
