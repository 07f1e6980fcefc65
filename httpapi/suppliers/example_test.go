package suppliers_test

import (
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/procurekit/procure/httpapi/suppliers"
	"github.com/procurekit/procure/memstore"
)

// Mount the supplier read API on your own mux, over the in-memory store
// loaded from a data file. Any supplier.Store and auth.TokenStore will do.
func ExampleMount() {
	store, err := memstore.LoadReader(strings.NewReader(`{"communities": [{
		"id": "acme", "name": "Acme", "region": "AU",
		"tokens": [{"token": "demo-acme-read-token", "scopes": ["suppliers:read"]}],
		"suppliers": [{
			"id": "5b0e3c2a-8f1d-4c6e-9a7b-1d2e3f4a5b6c", "name": "Café Müller",
			"profileType": "COMPANY", "connectionState": "CONNECTED",
			"modifiedDate": "2026-04-30T09:30:00Z", "createdDate": "2024-01-15T00:00:00Z"}]}]}`))
	if err != nil {
		log.Fatal(err)
	}

	mux := http.NewServeMux()
	suppliers.Mount(mux, suppliers.Options{Store: store, Tokens: store})
	// http.ListenAndServe(":8080", mux) would serve it; here one request:

	req := httptest.NewRequest("GET", "/public/community/suppliers?size=5", nil)
	req.Header.Set("Authorization", "Bearer demo-acme-read-token")
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, req)
	fmt.Println(rec.Code, rec.Header().Get("Content-Type"))
	fmt.Print(rec.Body.String())
	// Output:
	// 200 application/json
	// {"content":[{"id":"5b0e3c2a-8f1d-4c6e-9a7b-1d2e3f4a5b6c","name":"Café Müller","profileType":"COMPANY","connectionState":"CONNECTED","modifiedDate":"2026-04-30T09:30:00Z","createdDate":"2024-01-15T00:00:00Z"}],"page":{"size":5,"number":0,"totalElements":1,"totalPages":1}}
}
