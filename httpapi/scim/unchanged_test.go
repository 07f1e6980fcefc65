package scim_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Item 13: a write that changes nothing keeps the version (and ETag), so
// an identity provider's retry does not break another client's If-Match.
// On both stores.
func TestSCIMUnchangedWritesKeepTheVersion(t *testing.T) {
	scimStores(t, func(t *testing.T, s *scimServer) {
		// A first write gives both users the community's auto-role and a
		// display name; bob (a-0002) stays disabled.
		for _, id := range []string{"a-0001", "a-0002"} {
			r := scimReq{method: http.MethodPatch, path: "/scim/v2/Users/" + id, body: patchBody(`[{"op":"replace","path":"displayName","value":"Shown"}]`)}
			r.check(t, s.do(t, r), 200, "")
		}
		for _, tt := range []struct {
			name string
			r    scimReq
		}{
			{"DELETE of a disabled user", scimReq{method: http.MethodDelete, path: "/scim/v2/Users/a-0002"}},
			{"PATCH active false on a disabled user", scimReq{method: http.MethodPatch, path: "/scim/v2/Users/a-0002",
				body: patchBody(`[{"op":"replace","path":"active","value":"False"}]`)}},
			{"Okta's PATCH active false on a disabled user", scimReq{method: http.MethodPatch, path: "/scim/v2/Users/a-0002",
				body: patchBody(`[{"op":"replace","value":{"active":false}}]`)}},
			{"PATCH with the stored values", scimReq{method: http.MethodPatch, path: "/scim/v2/Users/a-0001",
				body: patchBody(`[{"op":"replace","path":"userName","value":"Alice.Smith"},{"op":"replace","path":"name.givenName","value":"Alice"},` +
					`{"op":"add","path":"` + scimExt + `:roleCodes","value":["BUYER","EMPLOYEE"]}]`)}},
			{"PATCH of an attribute not held", scimReq{method: http.MethodPatch, path: "/scim/v2/Users/a-0001",
				body: patchBody(`[{"op":"replace","path":"title","value":"Boss"}]`)}},
			{"PUT with the stored values", scimReq{method: http.MethodPut, path: "/scim/v2/Users/a-0001",
				body: `{"userName":"Alice.Smith","externalId":"E-1","name":{"givenName":"Alice"},"displayName":"Shown","emails":[{"value":"alice@example.com","primary":true}],"active":true}`}},
		} {
			t.Run(tt.name, func(t *testing.T) {
				id := strings.TrimPrefix(tt.r.path, "/scim/v2/Users/")
				before := s.storedUser(t, "community-a", id)
				got := s.do(t, tt.r)
				want := 200
				if tt.r.method == http.MethodDelete {
					want = 204
				}
				tt.r.check(t, got, want, "")
				after := s.storedUser(t, "community-a", id)
				if diff := cmp.Diff(before, after); diff != "" {
					t.Errorf("an unchanging write changed the user (-before +after):\n%s", diff)
				}
				if etag := got.header.Get("ETag"); etag != `W/"`+strconv.FormatInt(before.Version, 10)+`"` {
					t.Errorf("ETag %q; want the version kept, %d", etag, before.Version)
				}
			})
		}
	})
}

// Issue 19 item 13 through SCIM, which updates through the same Service:
// DELETE (disable) of a disabled user and a PATCH or PUT with the stored
// values keep meta.version and the ETag.
func TestSCIMNoOpWritesKeepETag(t *testing.T) {
	s := newSCIMServer(t)
	const path = "/scim/v2/Users/a-0001"
	etag := func(r scimReq) string {
		t.Helper()
		res := s.do(t, r)
		if res.status != http.StatusOK && res.status != http.StatusNoContent {
			t.Fatalf("%s %s = %d %s", r.method, r.path, res.status, res.body)
		}
		return res.header.Get("ETag")
	}
	first := etag(scimReq{method: http.MethodDelete, path: path})
	if first != `W/"2"` {
		t.Fatalf("first DELETE ETag = %q; want W/\"2\"", first)
	}
	for _, r := range []scimReq{
		{method: http.MethodDelete, path: path},
		{method: http.MethodPatch, path: path, body: `{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[{"op":"replace","path":"active","value":false}]}`},
		{method: http.MethodGet, path: path},
	} {
		if got := etag(r); got != first {
			t.Errorf("%s %s: ETag = %q; want %q (nothing changed)", r.method, r.path, got, first)
		}
	}
	if u := s.storedUser(t, "community-a", "a-0001"); u.Enabled || u.Version != 2 {
		t.Errorf("stored enabled %v version %d; want false, 2", u.Enabled, u.Version)
	}
}
