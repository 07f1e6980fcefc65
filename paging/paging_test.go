package paging_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/url"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/procurekit/procure"
	"github.com/procurekit/procure/paging"
)

var supplierSpec = paging.Spec{
	SortFields:  []string{"name", "createdDate", "modifiedDate"},
	DefaultSort: paging.Sort{Field: "name"},
}

func TestParse(t *testing.T) {
	// docs: suppliers.md "Endpoints"; limits.md; docs: paging.md: page >= 0, 1 <= size <= 100,
	// defaults page 0 size 20, nothing clamped, sort field[,asc|desc].
	tests := []struct {
		name  string
		query string
		want  paging.Request
	}{
		{"defaults", "", paging.Request{Page: 0, Size: 20, Sort: paging.Sort{Field: "name"}}},
		{"page and size", "page=3&size=7", paging.Request{Page: 3, Size: 7, Sort: paging.Sort{Field: "name"}}},
		{"size bounds low", "size=1", paging.Request{Size: 1, Sort: paging.Sort{Field: "name"}}},
		{"size bounds high", "size=100", paging.Request{Size: 100, Sort: paging.Sort{Field: "name"}}},
		{"sort field only", "sort=createdDate", paging.Request{Size: 20, Sort: paging.Sort{Field: "createdDate"}}},
		{"sort asc", "sort=modifiedDate,asc", paging.Request{Size: 20, Sort: paging.Sort{Field: "modifiedDate"}}},
		{"sort desc", "sort=name,desc", paging.Request{Size: 20, Sort: paging.Sort{Field: "name", Desc: true}}},
		{"direction case-insensitive", "sort=name,DeSc", paging.Request{Size: 20, Sort: paging.Sort{Field: "name", Desc: true}}},
		{"other parameters ignored", "query=ab&modifiedSince=2026-01-01", paging.Request{Size: 20, Sort: paging.Sort{Field: "name"}}},
		{"huge page is past the end, not an error", "page=9000000000000000000", paging.Request{Page: 9000000000000000000, Size: 20, Sort: paging.Sort{Field: "name"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, err := url.ParseQuery(tt.query)
			if err != nil {
				t.Fatal(err)
			}
			got, err := paging.Parse(q, supplierSpec)
			if err != nil {
				t.Fatalf("Parse(%q) error: %v", tt.query, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Parse(%q) mismatch (-want +got):\n%s", tt.query, diff)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	// docs: paging.md: anything out of range is 400 - nothing is
	// clamped; the message names the parameter and the rule.
	tests := []struct {
		name  string
		query string
		want  string
	}{
		{"negative page", "page=-1", `page: must be >= 0 (got -1)`},
		{"page not a number", "page=abc", `page: must be an integer >= 0 (got "abc")`},
		{"page empty", "page=", `page: must be an integer >= 0 (got "")`},
		{"page float", "page=1.5", `page: must be an integer >= 0 (got "1.5")`},
		{"page overflow", "page=99999999999999999999", `page: must be an integer >= 0 (got "99999999999999999999")`},
		{"size zero", "size=0", `size: must be from 1 to 100 (got 0)`},
		{"size over max", "size=101", `size: must be from 1 to 100 (got 101)`},
		{"size not a number", "size=ten", `size: must be an integer from 1 to 100 (got "ten")`},
		{"size exponent", "size=1e1", `size: must be an integer from 1 to 100 (got "1e1")`},
		{"page twice", "page=1&page=2", `page: must be given at most once`},
		{"sort twice", "sort=name&sort=createdDate", `sort: must be given at most once`},
		{"unknown sort field", "sort=id", `sort: field must be one of name, createdDate, modifiedDate (got "id")`},
		{"sort field case matters", "sort=Name", `sort: field must be one of name, createdDate, modifiedDate (got "Name")`},
		{"unknown direction", "sort=name,up", `sort: direction must be asc or desc (got "up")`},
		{"empty direction", "sort=name,", `sort: direction must be asc or desc (got "")`},
		{"two commas", "sort=name,asc,desc", `sort: direction must be asc or desc (got "asc,desc")`},
		{"empty sort", "sort=", `sort: field must be one of name, createdDate, modifiedDate (got "")`},
		{"several at once", "page=-1&size=0", `page: must be >= 0 (got -1); size: must be from 1 to 100 (got 0)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, err := url.ParseQuery(tt.query)
			if err != nil {
				t.Fatal(err)
			}
			_, err = paging.Parse(q, supplierSpec)
			if err == nil {
				t.Fatalf("Parse(%q) succeeded, want error %q", tt.query, tt.want)
			}
			if !errors.Is(err, procure.ErrInvalid) {
				t.Errorf("error %v does not match procure.ErrInvalid", err)
			}
			var verr *procure.ValidationError
			if !errors.As(err, &verr) || verr.Source != procure.SourceQuery {
				t.Errorf("error %#v is not a query ValidationError", err)
			}
			if got := err.Error(); got != tt.want {
				t.Errorf("Parse(%q) error = %q, want %q", tt.query, got, tt.want)
			}
		})
	}
}

func TestParseLongSort(t *testing.T) {
	long := make([]byte, 256)
	for i := range long {
		long[i] = 'a'
	}
	_, err := paging.Parse(url.Values{"sort": {string(long)}}, supplierSpec)
	if err == nil || err.Error() != "sort: must be at most 255 characters" {
		t.Fatalf("error = %v, want the 255-character rule", err)
	}
}

func TestParseNoSortField(t *testing.T) {
	// The contacts list has no sort parameter (docs: suppliers.md "Endpoints"): one sent is
	// ignored like any unknown parameter, and the default order is used.
	spec := paging.Spec{DefaultSort: paging.Sort{Field: "name"}}
	got, err := paging.Parse(url.Values{"sort": {"nonsense,sideways"}}, spec)
	if err != nil {
		t.Fatal(err)
	}
	if got.Sort != (paging.Sort{Field: "name"}) {
		t.Errorf("sort = %v, want the default", got.Sort)
	}
}

func TestNewPage(t *testing.T) {
	// docs: paging.md "Page object" and docs: paging.md: size echoes the requested size,
	// totalPages = ceil(totalElements/size), 0 when there are none.
	tests := []struct {
		name  string
		items []int
		total int
		req   paging.Request
		want  paging.Metadata
	}{
		{"empty", nil, 0, paging.Request{Page: 0, Size: 20}, paging.Metadata{Size: 20, Number: 0, TotalElements: 0, TotalPages: 0}},
		{"exact multiple", []int{1, 2}, 40, paging.Request{Page: 1, Size: 20}, paging.Metadata{Size: 20, Number: 1, TotalElements: 40, TotalPages: 2}},
		{"partial last page", []int{1}, 41, paging.Request{Page: 2, Size: 20}, paging.Metadata{Size: 20, Number: 2, TotalElements: 41, TotalPages: 3}},
		{"past the end", nil, 5, paging.Request{Page: 9, Size: 2}, paging.Metadata{Size: 2, Number: 9, TotalElements: 5, TotalPages: 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := paging.NewPage(tt.items, tt.total, tt.req)
			if diff := cmp.Diff(tt.want, p.Page); diff != "" {
				t.Errorf("metadata mismatch (-want +got):\n%s", diff)
			}
			if p.Content == nil {
				t.Fatal("content is nil; it must encode as []")
			}
		})
	}
}

func TestPageJSON(t *testing.T) {
	b, err := json.Marshal(paging.NewPage[string](nil, 0, paging.Request{Size: 20}))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"content":[],"page":{"size":20,"number":0,"totalElements":0,"totalPages":0}}`
	if string(b) != want {
		t.Errorf("got %s, want %s", b, want)
	}
}

func TestWindow(t *testing.T) {
	tests := []struct {
		name   string
		n      int
		req    paging.Request
		lo, hi int
	}{
		{"first page", 45, paging.Request{Page: 0, Size: 20}, 0, 20},
		{"last partial", 45, paging.Request{Page: 2, Size: 20}, 40, 45},
		{"past end", 45, paging.Request{Page: 3, Size: 20}, 45, 45},
		{"overflowing offset", 45, paging.Request{Page: math.MaxInt / 2, Size: 100}, 45, 45},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lo, hi := paging.Window(tt.n, tt.req)
			if lo != tt.lo || hi != tt.hi {
				t.Errorf("Window(%d, %+v) = [%d,%d), want [%d,%d)", tt.n, tt.req, lo, hi, tt.lo, tt.hi)
			}
		})
	}
}

func ExampleParse() {
	q, _ := url.ParseQuery("page=2&size=10&sort=modifiedDate,desc")
	r, err := paging.Parse(q, paging.Spec{
		SortFields:  []string{"name", "modifiedDate"},
		DefaultSort: paging.Sort{Field: "name"},
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(r.Page, r.Size, r.Sort, r.Offset())

	_, err = paging.Parse(url.Values{"size": {"500"}}, paging.Spec{})
	fmt.Println(err)
	// Output:
	// 2 10 modifiedDate,desc 20
	// size: must be from 1 to 100 (got 500)
}

func TestOffsetSaturates(t *testing.T) {
	// Issue 11: page=9223372036854775807 is in range; a store adding the
	// page size to the offset must not overflow.
	q, _ := url.ParseQuery("page=9223372036854775807&size=100")
	r, err := paging.Parse(q, paging.Spec{SortFields: []string{"name"}, DefaultSort: paging.Sort{Field: "name"}})
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	for _, req := range []paging.Request{r, {Page: math.MaxInt, Size: 1}, {Page: math.MaxInt / 100, Size: 100}, {Page: paging.MaxOffset, Size: 1}} {
		off := req.Offset()
		if off != paging.MaxOffset || off+req.Size < off {
			t.Errorf("%+v: Offset() = %d; want %d, with offset+size not overflowing", req, off, paging.MaxOffset)
		}
	}
	if off := (paging.Request{Page: 3, Size: 20}).Offset(); off != 60 {
		t.Errorf("Offset() = %d; want 60", off)
	}
	if lo, hi := paging.Window(45, r); lo != 45 || hi != 45 {
		t.Errorf("Window = [%d,%d); want [45,45)", lo, hi)
	}
}
