package suppliers_test

import (
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/procurekit/procure/httpapi/suppliers"
	"github.com/procurekit/procure/memstore"
)

// Serve the supplier API under a prefix of your own, on any router: every
// router can mount an http.Handler behind http.StripPrefix (with chi,
// r.Mount("/procurement", http.StripPrefix("/procurement", h))). The
// served OpenAPI document names the prefix as its server.
func ExampleHandler() {
	store, err := memstore.LoadReader(strings.NewReader(`{"communities": [{
		"id": "acme", "name": "Acme", "region": "AU",
		"tokens": [{"token": "demo-acme-read-token", "scopes": ["suppliers:read"]}],
		"suppliers": [{
			"id": "5b0e3c2a-8f1d-4c6e-9a7b-1d2e3f4a5b6c", "name": "Café Müller", "profileType": "COMPANY",
			"modifiedDate": "2026-04-30T09:30:00Z", "createdDate": "2024-01-15T00:00:00Z"}]}]}`))
	if err != nil {
		log.Fatal(err)
	}
	h := suppliers.Handler(suppliers.Options{Store: store, Tokens: store})

	mux := http.NewServeMux()
	mux.Handle("/procurement/", http.StripPrefix("/procurement", h))

	req := httptest.NewRequest("GET", "/procurement/suppliers", nil)
	req.Header.Set("Authorization", "Bearer demo-acme-read-token")
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, req)
	fmt.Println(rec.Code, strings.Contains(rec.Body.String(), "Café Müller"))

	rec = httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest("GET", "/procurement/openapi.json", nil))
	var doc struct {
		Servers []struct{ URL string } `json:"servers"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil {
		log.Fatal(err)
	}
	fmt.Println(rec.Code, doc.Servers[0].URL)
	// Output:
	// 200 true
	// 200 /procurement
}
