package memstore_test

import (
	"context"
	"fmt"
	"log"
	"strings"

	"github.com/procurekit/procure/memstore"
)

// Stream a data file into a store: LoadReader (or LoadFile for a path)
// never holds the whole file, and keeps the decoded suppliers as they are.
// Errors name the entry and its line.
func ExampleLoadReader() {
	const data = `{"communities": [{
		"suppliers": [
			{"id": "6f1c1a52-6a5e-4c55-9d37-1f7d6c0a0001", "name": "Kiwi Plumbing", "profileType": "COMPANY",
			 "modifiedDate": "2026-04-02T09:00:00+12:00", "createdDate": "2025-01-10T00:00:00Z"}
		],
		"id": "acme-nz", "name": "Acme NZ", "region": "NZ"
	}]}`
	store, err := memstore.LoadReader(strings.NewReader(data))
	if err != nil {
		log.Fatal(err)
	}
	page, err := store.ListSuppliers(context.Background(), "acme-nz", supplierQuery("kiwi"))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(page.Content[0].Name, page.Content[0].ModifiedDate)

	_, err = memstore.LoadReader(strings.NewReader(strings.Replace(data, `"COMPANY"`, `"COMPANY_LTD"`, 1)))
	fmt.Println(err)
	// Output:
	// Kiwi Plumbing 2026-04-01 21:00:00 +0000 UTC
	// line 3:91: communities[0].suppliers[0].profileType: must be one of COMPANY, INDIVIDUAL (got "COMPANY_LTD")
}
