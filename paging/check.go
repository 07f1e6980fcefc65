package paging

import (
	"slices"
	"strconv"
	"strings"

	"github.com/procurekit/procure"
)

// Check returns r ready for a store to serve, or a *procure.ValidationError
// (source query) naming what r breaks. It applies to a Request built by hand
// the rules Parse applies to a query string, so that every store answers a
// bad request the same way instead of guessing: page >= 0, 1 <= size <=
// MaxSize, and a sort field that spec allows. An empty sort field means
// spec.DefaultSort. For a list without sort fields (spec.SortFields empty),
// the sort is always spec.DefaultSort, as Parse ignores a sort parameter
// there.
func (r Request) Check(spec Spec) (Request, error) {
	var verr *procure.ValidationError // allocated only when a rule is broken
	add := func(field, rule string) {
		if verr == nil {
			verr = &procure.ValidationError{Source: procure.SourceQuery}
		}
		verr.Add(field, rule)
	}
	if r.Page < 0 {
		add("page", "must be >= 0 (got "+strconv.Itoa(r.Page)+")")
	}
	if r.Size < 1 || r.Size > MaxSize {
		add("size", "must be from 1 to 100 (got "+strconv.Itoa(r.Size)+")")
	}
	switch {
	case len(spec.SortFields) == 0 || r.Sort.Field == "":
		desc := r.Sort.Desc && len(spec.SortFields) > 0
		r.Sort = spec.DefaultSort
		r.Sort.Desc = r.Sort.Desc || desc
	case !slices.Contains(spec.SortFields, r.Sort.Field):
		add("sort", "field must be one of "+strings.Join(spec.SortFields, ", ")+" (got "+quote(r.Sort.Field)+")")
	}
	if verr != nil {
		return Request{}, verr
	}
	return r, nil
}
