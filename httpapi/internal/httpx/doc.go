// Package httpx is what the API packages of httpapi share: the error body
// and the one mapping of domain errors to statuses and codes (Classify),
// reading a JSON request body, writing a JSON answer, the request log,
// routing with JSON 404s and 405s, the served OpenAPI documents, and
// entity tags of user versions.
package httpx
