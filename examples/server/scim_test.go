package main

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/procurekit/procure/internal/pgtest"
)

// Issue 13: the server mounts SCIM 2.0 beside /v1/users, over the same
// users, on memstore and on PostgreSQL, with the demo service account's
// key as the bearer token (README "Provisioning from Okta or Entra").
func TestSCIMMounted(t *testing.T) {
	for _, tt := range []struct {
		name string
		args func(t *testing.T) []string
	}{
		{"memstore", func(*testing.T) []string { return nil }},
		{"postgres", func(t *testing.T) []string { return []string{"-postgres", pgtest.NewDatabase(t)} }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := start(t, tt.args(t)...)
			const key = "pk_demo_acme_hris_2026_Qm7vX2"
			bearer := []string{"Authorization", "Bearer " + key, "Content-Type", "application/scim+json"}
			status, body := send(t, http.MethodPost, r.base+"/scim/v2/Users",
				`{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"userName":"okta.user@acme.example","name":{"givenName":"Okta"},"active":true}`, bearer...)
			if status != http.StatusCreated {
				t.Fatalf("POST /scim/v2/Users = %d %s", status, body)
			}
			status, body = send(t, http.MethodGet, r.base+"/scim/v2/Users?filter="+url.QueryEscape(`userName eq "OKTA.USER@acme.example"`), "", bearer...)
			if status != http.StatusOK || !strings.Contains(string(body), `"totalResults":1`) {
				t.Fatalf("filter = %d %s", status, body)
			}
			// The same user through the user API.
			status, body = send(t, http.MethodGet, r.base+"/v1/users/username/okta.user@acme.example", "",
				"Service-Account-ID", "acme-au-hris", "Service-API-Key", key)
			if status != http.StatusOK || !strings.Contains(string(body), `"firstName":"Okta"`) {
				t.Fatalf("/v1/users = %d %s", status, body)
			}
			// The retired key is refused.
			status, _ = send(t, http.MethodGet, r.base+"/scim/v2/Users", "", "Authorization", "Bearer pk_demo_acme_hris_2025_retired")
			if status != http.StatusUnauthorized {
				t.Fatalf("retired key: %d; want 401", status)
			}
		})
	}
}
