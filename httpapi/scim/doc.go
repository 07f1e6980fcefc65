// Package scim serves SCIM 2.0 provisioning (RFC 7643, RFC 7644) over the
// users of Interface B (docs: scim.md), what Okta's and Microsoft Entra
// ID's provisioning send: Mount on a ServeMux under /scim/v2, or Handler
// under any prefix and router. Callers present an API key of a service
// account as a bearer token; the key alone names the account. Errors are
// SCIM error bodies. The endpoint serves its OpenAPI 3.1 document at
// openapi.json (OpenAPI); scim.go lists where it deviates from RFC 7644.
package scim
