// Package paging parses and validates the page, size and sort query
// parameters shared by every list of the supplier API, and defines the page
// wrapper `{content, page{size, number, totalElements, totalPages}}` that
// every list response uses (docs: paging.md "Page object", docs: paging.md).
//
// Nothing is clamped: a value out of range is a *procure.ValidationError
// naming the parameter and the rule it broke.
package paging

import (
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/procurekit/procure"
)

// Limits of the spec (section 8).
const (
	DefaultSize   = 20
	MaxSize       = 100
	MaxSortLength = 255
)

// Sort is one sort key: a field of the listed resource and a direction.
type Sort struct {
	Field string
	Desc  bool
}

// String renders s as the query parameter would carry it ("name,desc").
func (s Sort) String() string {
	if s.Desc {
		return s.Field + ",desc"
	}
	return s.Field + ",asc"
}

// Request is a validated page request: a zero-based page number, a page
// size in [1, MaxSize], and the sort key to use.
type Request struct {
	Page int
	Size int
	Sort Sort
}

// MaxOffset is the largest Offset: math.MaxInt less MaxSize, so that a
// store may add a page size to an offset (offset+size, the end of the
// page) without overflowing.
const MaxOffset = math.MaxInt - MaxSize

// Offset is the number of items before the first item of the page. It
// saturates at MaxOffset instead of overflowing, so a huge page number
// (page=9223372036854775807 is in range) still means "past the end", and
// Offset()+Size never overflows.
func (r Request) Offset() int {
	if r.Size > 0 && r.Page > MaxOffset/r.Size {
		return MaxOffset
	}
	return r.Page * r.Size
}

// Spec describes the paging of one list endpoint: which fields `sort` may
// name (none means the endpoint has no sort parameter, and one sent is
// ignored like any unknown parameter) and the order used when it is omitted.
type Spec struct {
	SortFields  []string
	DefaultSort Sort
}

// Parse reads page, size and sort from q according to spec. Defaults: page
// 0, size 20, spec.DefaultSort. Each parameter may appear at most once.
func Parse(q url.Values, spec Spec) (Request, error) {
	r := Request{Page: 0, Size: DefaultSize, Sort: spec.DefaultSort}
	// A value, not a pointer: it is copied to the heap only when a rule
	// is broken, so a valid request costs no allocation here.
	verr := procure.ValidationError{Source: procure.SourceQuery}

	if v, ok, err := single(q, "page"); err != nil {
		verr.Fields = append(verr.Fields, *err)
	} else if ok {
		n, perr := parseInt(v)
		switch {
		case perr != nil:
			verr.Add("page", "must be an integer >= 0 (got "+quote(v)+")")
		case n < 0:
			verr.Add("page", "must be >= 0 (got "+v+")")
		default:
			r.Page = n
		}
	}

	if v, ok, err := single(q, "size"); err != nil {
		verr.Fields = append(verr.Fields, *err)
	} else if ok {
		n, perr := parseInt(v)
		switch {
		case perr != nil:
			verr.Add("size", "must be an integer from 1 to 100 (got "+quote(v)+")")
		case n < 1 || n > MaxSize:
			verr.Add("size", "must be from 1 to 100 (got "+v+")")
		default:
			r.Size = n
		}
	}

	if len(spec.SortFields) > 0 {
		if v, ok, err := single(q, "sort"); err != nil {
			verr.Fields = append(verr.Fields, *err)
		} else if ok {
			s, rule := ParseSort(v, spec.SortFields)
			if rule != "" {
				verr.Add("sort", rule)
			} else {
				r.Sort = s
			}
		}
	}

	if len(verr.Fields) > 0 {
		out := verr
		return Request{}, &out
	}
	return r, nil
}

// ParseSort parses "field", "field,asc" or "field,desc" (direction
// case-insensitive) against the allowed fields. It returns a rule in words
// when the value is not allowed.
func ParseSort(v string, allowed []string) (Sort, string) {
	if len(v) > MaxSortLength {
		return Sort{}, "must be at most 255 characters"
	}
	field, dir, hasDir := strings.Cut(v, ",")
	if !slices.Contains(allowed, field) {
		return Sort{}, "field must be one of " + strings.Join(allowed, ", ") + " (got " + quote(field) + ")"
	}
	s := Sort{Field: field}
	if hasDir {
		switch {
		case asciiFold(dir, "asc"):
		case asciiFold(dir, "desc"):
			s.Desc = true
		default:
			return Sort{}, "direction must be asc or desc (got " + quote(dir) + ")"
		}
	}
	return s, ""
}

// asciiFold reports whether s is lower (lower-case ASCII) in any case of
// ASCII letters: what strings.ToLower(s) == lower says for these words,
// without allocating. (Not strings.EqualFold, which also matches the long
// s "ſ" to "s".)
func asciiFold(s, lower string) bool {
	if len(s) != len(lower) {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

// single returns the one value of a parameter, whether it was present, or a
// field error when it was given more than once.
func single(q url.Values, name string) (string, bool, *procure.FieldError) {
	vs, ok := q[name]
	if !ok {
		return "", false, nil
	}
	if len(vs) > 1 {
		return "", false, &procure.FieldError{Field: name, Rule: "must be given at most once"}
	}
	return vs[0], true, nil
}

// parseInt accepts only plain decimal digits with an optional sign, so that
// "1e3", "0x10", " 1" and "" are all rejected.
func parseInt(v string) (int, error) {
	return strconv.Atoi(v)
}

func quote(s string) string {
	if len(s) > 40 {
		s = s[:40] + "..."
	}
	return strconv.Quote(s)
}

// Metadata is the `page` object of a list response.
type Metadata struct {
	Size          int `json:"size"`
	Number        int `json:"number"`
	TotalElements int `json:"totalElements"`
	TotalPages    int `json:"totalPages"`
}

// Page is a list response: the items of one page and where it stands.
type Page[T any] struct {
	Content []T      `json:"content"`
	Page    Metadata `json:"page"`
}

// NewPage wraps the items of page r out of total matching records. Content
// is never nil, so it encodes as [] rather than null. Page.Size echoes the
// requested size (docs: paging.md); the number of items is len(Content).
func NewPage[T any](items []T, total int, r Request) Page[T] {
	if items == nil {
		items = []T{}
	}
	return Page[T]{
		Content: items,
		Page: Metadata{
			Size:          r.Size,
			Number:        r.Page,
			TotalElements: total,
			TotalPages:    TotalPages(total, r.Size),
		},
	}
}

// TotalPages is ceil(total/size), and 0 when total is 0.
func TotalPages(total, size int) int {
	if total <= 0 || size <= 0 {
		return 0
	}
	return (total + size - 1) / size
}

// Window returns the bounds [lo, hi) of page r within n ordered items.
func Window(n int, r Request) (lo, hi int) {
	lo = r.Offset()
	if lo > n || lo < 0 {
		return n, n
	}
	hi = lo + r.Size
	if hi > n || hi < lo {
		hi = n
	}
	return lo, hi
}
