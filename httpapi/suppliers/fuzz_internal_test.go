package suppliers

import (
	"errors"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/procurekit/procure"
)

// Fuzz targets of the parsers of the supplier API that read outside input (issue
// 11): the query parameters of the supplier list (the XML of Interface C
// is fuzzed with its codec, internal/acxml). CI runs the seed corpora
// (testdata/fuzz); run one with
//
//	go test -run='^$' -fuzz='^FuzzSupplierListQuery$' -fuzztime=2m -parallel=1 ./httpapi/suppliers/

func FuzzModifiedSince(f *testing.F) {
	for _, s := range []string{"2026-05-01", "2026-05-01T09:30:00+12:00", "2026-05-01T09:30:00Z", "2026-05-01t09:30:00.123456789123z",
		"2026-05-01T09:30:00 12:00", "2026-05-01T09:30:00", "2026-02-29", "2024-02-29", "2026-13-01", "2026-05-01T24:00:00Z",
		"2026-05-01T09:30:60Z", "2026-05-01T09:30:00+24:00", "0000-01-01T00:00:00-23:59", "9999-12-31T23:59:59.9999999999+00:00", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		ts, rule := parseModifiedSince(v)
		if rule != "" {
			if !ts.IsZero() {
				t.Fatalf("parseModifiedSince(%q) = %v with rule %q", v, ts, rule)
			}
			return
		}
		// Accepted input round-trips: the instant written as RFC 3339
		// (and as a date when it is midnight UTC) reads back equal.
		for _, s := range []string{ts.Format(time.RFC3339Nano), ts.In(time.FixedZone("", 12*3600+45*60)).Format(time.RFC3339Nano)} {
			if s[0] == '-' || s[4] != '-' {
				// A year RFC 3339 cannot write: the offset or the
				// rounding up of a fraction beyond nanoseconds (at
				// 9999-12-31T23:59:59.9999999999Z) moved the instant out
				// of 0000-9999. As a filter it is still exact.
				continue
			}
			back, rule := parseModifiedSince(s)
			if rule != "" || !back.Equal(ts) {
				t.Fatalf("parseModifiedSince(%q) = %v; %q reads back as %v (%q)", v, ts, s, back, rule)
			}
		}
		// time.Parse agrees, where it can read the value, up to the
		// rounding: it cuts digits beyond nanoseconds, parseModifiedSince
		// rounds them up (so that modifiedDate >= value stays exact).
		if len(v) > 10 && !strings.ContainsAny(v, " tz") {
			p, err := time.Parse(time.RFC3339Nano, v)
			if d := ts.Sub(p); err == nil && (d < 0 || d > time.Nanosecond) {
				t.Fatalf("parseModifiedSince(%q) = %v; time.Parse says %v", v, ts, p)
			}
		}
	})
}

func FuzzSupplierListQuery(f *testing.F) {
	for _, s := range []string{"", "query=acme&modifiedSince=2026-05-01&page=1&size=50&sort=name,desc", "query=%00", "query=%ff",
		"page=9223372036854775807&query=a", "query=" + strings.Repeat("a", 256), "modifiedSince=2026-05-01T09:30:00+12:00",
		"modifiedSince=2026-05-01T09:30:00%2012:00", "sort=modifiedDate,DESC&sort=name", "size=0&page=-1&sort=x"} {
		f.Add(s)
	}
	fields := []string{"query", "modifiedSince", "page", "size", "sort"}
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		lq, err := ParseListQuery(q)
		if err != nil {
			var ve *procure.ValidationError
			if !errors.As(err, &ve) || ve.Source != procure.SourceQuery || len(ve.Fields) == 0 {
				t.Fatalf("ParseListQuery(%q): %v; want a query ValidationError", raw, err)
			}
			for _, fe := range ve.Fields {
				if !slices.Contains(fields, fe.Field) || fe.Rule == "" {
					t.Fatalf("ParseListQuery(%q): field error %+v", raw, fe)
				}
			}
			return
		}
		if strings.IndexByte(lq.Query, 0) >= 0 || len([]rune(lq.Query)) > 255 {
			t.Fatalf("accepted query %q", lq.Query)
		}
		if lq.Page.Offset()+lq.Page.Size < 0 {
			t.Fatalf("offset overflows: %+v", lq.Page)
		}
		// Accepted input round-trips: the query written back parses to
		// the same ListQuery.
		dir := "asc"
		if lq.Page.Sort.Desc {
			dir = "desc"
		}
		back := url.Values{"page": {strconv.Itoa(lq.Page.Page)}, "size": {strconv.Itoa(lq.Page.Size)}, "sort": {lq.Page.Sort.Field + "," + dir}}
		if lq.Query != "" {
			back.Set("query", lq.Query)
		}
		if !lq.ModifiedSince.IsZero() {
			if ms := lq.ModifiedSince.UTC().Format(time.RFC3339Nano); ms[4] == '-' {
				back.Set("modifiedSince", ms)
			} else {
				return // a year RFC 3339 cannot write (see FuzzModifiedSince)
			}
		}
		lq2, err := ParseListQuery(back)
		if err != nil || lq2.Query != lq.Query || !lq2.ModifiedSince.Equal(lq.ModifiedSince) || lq2.Page != lq.Page {
			t.Fatalf("ParseListQuery(%q) = %+v; written back as %s it parses to %+v, %v", raw, lq, back.Encode(), lq2, err)
		}
	})
}
