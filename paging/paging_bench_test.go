package paging_test

import (
	"net/url"
	"testing"

	"github.com/procurekit/procure/paging"
)

// BenchmarkParse measures reading page, size and sort from a parsed query
// string, for the forms a client sends: nothing, page and size, all three
// with a direction, and a request that breaks every rule (the 400 path).
func BenchmarkParse(b *testing.B) {
	spec := paging.Spec{SortFields: []string{"name", "createdDate", "modifiedDate"}, DefaultSort: paging.Sort{Field: "name"}}
	for _, tc := range []struct {
		name, query string
		ok          bool
	}{
		{"defaults", "", true},
		{"page-size", "page=1000&size=20", true},
		{"page-size-sort", "page=3&size=50&sort=modifiedDate,DESC", true},
		{"invalid", "page=-1&size=101&sort=colour,up", false},
	} {
		q, err := url.ParseQuery(tc.query)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := paging.Parse(q, spec); (err == nil) != tc.ok {
					b.Fatalf("Parse(%q) error %v", tc.query, err)
				}
			}
		})
	}
}

// BenchmarkParseSort is the sort parameter alone.
func BenchmarkParseSort(b *testing.B) {
	allowed := []string{"name", "createdDate", "modifiedDate"}
	b.ReportAllocs()
	for b.Loop() {
		if _, rule := paging.ParseSort("modifiedDate,desc", allowed); rule != "" {
			b.Fatal(rule)
		}
	}
}
