// Package apitest is what the tests of the API packages share: a
// validating proxy that checks every exchange of a test server against the
// served OpenAPI documents (ValidatedBy), schema checks of response bodies
// (CheckSchema), the lint every served document passes (LintDocument), and
// the fixtures of the user API's tests, which the SCIM tests use too.
//
// It imports no API package, so that any API package's tests may use it.
package apitest
