package memstore_test

import (
	"context"
	"fmt"
	"log"
	"strings"

	"github.com/google/uuid"

	"github.com/procurekit/procure"
	"github.com/procurekit/procure/memstore"
	"github.com/procurekit/procure/paging"
	"github.com/procurekit/procure/supplier"
)

// Load a data file and list a community's suppliers whose name, legal
// name, supplierId or keyword starts with "kiwi", newest first.
func Example() {
	const data = `{"communities": [{
		"id": "acme-nz", "name": "Acme NZ", "region": "NZ",
		"tokens": [{"token": "demo-token", "scopes": ["suppliers:read"]}],
		"suppliers": [
			{"id": "6f1c1a52-6a5e-4c55-9d37-1f7d6c0a0001", "name": "Kiwi Plumbing", "profileType": "COMPANY",
			 "modifiedDate": "2026-04-02T09:00:00+12:00", "createdDate": "2025-01-10T00:00:00Z"},
			{"id": "6f1c1a52-6a5e-4c55-9d37-1f7d6c0a0002", "name": "Harbour Freight", "profileType": "COMPANY",
			 "keywords": ["kiwifruit", "logistics"],
			 "modifiedDate": "2026-04-05T09:00:00Z", "createdDate": "2025-02-10T00:00:00Z"},
			{"id": "6f1c1a52-6a5e-4c55-9d37-1f7d6c0a0003", "name": "Totara Timber", "profileType": "COMPANY",
			 "modifiedDate": "2026-04-06T09:00:00Z", "createdDate": "2025-03-10T00:00:00Z"}
		]
	}]}`
	store, err := memstore.LoadReader(strings.NewReader(data))
	if err != nil {
		log.Fatal(err)
	}
	page, err := store.ListSuppliers(context.Background(), "acme-nz", supplier.ListQuery{
		Query: "KIWI",
		Page:  paging.Request{Page: 0, Size: 20, Sort: paging.Sort{Field: "modifiedDate", Desc: true}},
	})
	if err != nil {
		log.Fatal(err)
	}
	for _, s := range page.Content {
		fmt.Println(s.Name, s.ModifiedDate.Format("2006-01-02T15:04:05Z07:00"))
	}
	fmt.Printf("%d of %d, page %d of %d\n", len(page.Content), page.Page.TotalElements, page.Page.Number+1, page.Page.TotalPages)
	// Output:
	// Harbour Freight 2026-04-05T09:00:00Z
	// Kiwi Plumbing 2026-04-01T21:00:00Z
	// 2 of 2, page 1 of 1
}

// A test builds a store in a few lines: a community, then one supplier
// per call. The store stamps the dates.
func ExampleStore_PutSupplier() {
	ctx := context.Background()
	store := memstore.New()
	if _, err := store.PutCommunity(ctx, procure.Community{ID: "acme-nz", Name: "Acme NZ", Region: "NZ"}); err != nil {
		log.Fatal(err)
	}
	var r supplier.Record
	r.ID = uuid.MustParse("6f1c1a52-6a5e-4c55-9d37-1f7d6c0a0001")
	r.Name, r.ProfileType = supplier.NewText("Kiwi Plumbing"), supplier.ProfileCompany
	r.Keywords = []string{"pipes"}
	d, err := store.PutSupplier(ctx, "acme-nz", r)
	if err != nil {
		log.Fatal(err)
	}
	page, err := store.ListSuppliers(ctx, "acme-nz", supplier.ListQuery{Query: "pipe", Page: paging.Request{Size: 20}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(page.Page.TotalElements, page.Content[0].Name, d.CreatedDate.Equal(d.ModifiedDate))
	// Output:
	// 1 Kiwi Plumbing true
}
