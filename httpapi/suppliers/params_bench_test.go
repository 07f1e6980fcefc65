package suppliers

import (
	"net/url"
	"testing"
)

// BenchmarkParseListQuery measures reading the supplier list's parameters
// from a raw query string (url.ParseQuery, then the rules), for the
// requests of the load test and one that breaks every rule.
func BenchmarkParseListQuery(b *testing.B) {
	for _, tc := range []struct {
		name, raw string
		ok        bool
	}{
		{"none", "", true},
		{"query", "query=tit", true},
		{"modifiedSince-date", "modifiedSince=2025-11-28", true},
		{"modifiedSince-offset", "modifiedSince=2026-05-01T09:30:00.123456%2B12:00", true},
		{"page", "page=1000", true},
		{"everything", "query=supplier+0&modifiedSince=2026-04-30T10:00:00Z&page=1&size=50&sort=modifiedDate,desc", true},
		{"invalid", "query=a&query=b&modifiedSince=yesterday&page=-1&size=0&sort=colour", false},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var q url.Values
				if tc.raw != "" {
					var err error
					if q, err = url.ParseQuery(tc.raw); err != nil {
						b.Fatal(err)
					}
				}
				if _, err := ParseListQuery(q); (err == nil) != tc.ok {
					b.Fatalf("ParseListQuery(%q) error %v", tc.raw, err)
				}
			}
		})
	}
}

// BenchmarkParseModifiedSince is the date-time rule alone.
func BenchmarkParseModifiedSince(b *testing.B) {
	for _, v := range []string{"2025-11-28", "2026-05-01T09:30:00Z", "2026-05-01T09:30:00.123456+12:00"} {
		b.Run(v, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, rule := parseModifiedSince(v); rule != "" {
					b.Fatal(rule)
				}
			}
		})
	}
}
