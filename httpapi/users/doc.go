// Package users serves the user synchronisation API, Interface B
// (docs: users.md): Mount on a ServeMux under /v1, or Handler under any
// prefix and router, over a user.Service and an auth.KeyStore. Callers
// present a service account id and API key (auth.ServiceKey), from an
// address the account's allowlist admits. Updates honour If-Match and
// reads If-None-Match on the user's version. The API serves its OpenAPI
// 3.1 document at openapi.json (OpenAPI).
package users
