package paging_test

import (
	"errors"
	"net/url"
	"slices"
	"strconv"
	"testing"

	"github.com/procurekit/procure"
	"github.com/procurekit/procure/paging"
)

// FuzzParse feeds raw query strings to Parse (issue 11). Run it with
//
//	go test -run='^$' -fuzz='^FuzzParse$' -fuzztime=2m -parallel=1 ./paging/
func FuzzParse(f *testing.F) {
	for _, s := range []string{"", "page=2&size=10&sort=modifiedDate,desc", "page=-1", "size=0", "size=101", "page=9223372036854775807",
		"page=9223372036854775808", "page=1e3", "page=+1", "page=%201", "sort=name,ASC", "sort=name,up", "sort=Name", "sort=name&sort=name",
		"page=1&page=1", "sort=name,desc,x", "size=%00", "sort=%ff"} {
		f.Add(s)
	}
	spec := paging.Spec{SortFields: []string{"name", "modifiedDate"}, DefaultSort: paging.Sort{Field: "name"}}
	fields := []string{"page", "size", "sort"}
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := url.ParseQuery(raw)
		if err != nil {
			return // net/http would have refused it too
		}
		r, err := paging.Parse(q, spec)
		if err != nil {
			var ve *procure.ValidationError
			if !errors.As(err, &ve) || ve.Source != procure.SourceQuery || len(ve.Fields) == 0 {
				t.Fatalf("Parse(%q) error %v; want a query ValidationError", raw, err)
			}
			for _, fe := range ve.Fields {
				if !slices.Contains(fields, fe.Field) || fe.Rule == "" {
					t.Fatalf("Parse(%q): field error %q: %q; want page, size or sort with a rule", raw, fe.Field, fe.Rule)
				}
			}
			return
		}
		if r.Page < 0 || r.Size < 1 || r.Size > paging.MaxSize || !slices.Contains(spec.SortFields, r.Sort.Field) {
			t.Fatalf("Parse(%q) = %+v: out of range", raw, r)
		}
		if off := r.Offset(); off < 0 || off+r.Size < off {
			t.Fatalf("Parse(%q): offset %d overflows", raw, off)
		}
		// Accepted input round-trips: the request written back as a
		// query parses to the same request.
		dir := "asc"
		if r.Sort.Desc {
			dir = "desc"
		}
		back := url.Values{"page": {strconv.Itoa(r.Page)}, "size": {strconv.Itoa(r.Size)}, "sort": {r.Sort.Field + "," + dir}}
		r2, err := paging.Parse(back, spec)
		if err != nil || r2 != r {
			t.Fatalf("Parse(%q) = %+v; written back as %s it parses to %+v, %v", raw, r, back.Encode(), r2, err)
		}
	})
}
