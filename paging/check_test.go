package paging_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/procurekit/procure"
	"github.com/procurekit/procure/paging"
)

func TestRequestCheck(t *testing.T) {
	list := paging.Spec{SortFields: []string{"name", "createdDate"}, DefaultSort: paging.Sort{Field: "name"}}
	noSort := paging.Spec{DefaultSort: paging.Sort{Field: "name"}}
	tests := []struct {
		name string
		spec paging.Spec
		in   paging.Request
		want paging.Request
		errs []string // fields with a broken rule
	}{
		{"valid", list, paging.Request{Page: 3, Size: 100, Sort: paging.Sort{Field: "createdDate", Desc: true}}, paging.Request{Page: 3, Size: 100, Sort: paging.Sort{Field: "createdDate", Desc: true}}, nil},
		{"empty sort is the default", list, paging.Request{Size: 1}, paging.Request{Size: 1, Sort: paging.Sort{Field: "name"}}, nil},
		{"empty sort field keeps the direction", list, paging.Request{Size: 1, Sort: paging.Sort{Desc: true}}, paging.Request{Size: 1, Sort: paging.Sort{Field: "name", Desc: true}}, nil},
		{"list without sort ignores it", noSort, paging.Request{Size: 5, Sort: paging.Sort{Field: "createdDate", Desc: true}}, paging.Request{Size: 5, Sort: paging.Sort{Field: "name"}}, nil},
		{"size 0", list, paging.Request{Size: 0}, paging.Request{}, []string{"size"}},
		{"size 101", list, paging.Request{Size: 101}, paging.Request{}, []string{"size"}},
		{"negative page", list, paging.Request{Page: -1, Size: 20}, paging.Request{}, []string{"page"}},
		{"unknown sort field", list, paging.Request{Size: 20, Sort: paging.Sort{Field: "id"}}, paging.Request{}, []string{"sort"}},
		{"all at once", list, paging.Request{Page: -2, Size: -1, Sort: paging.Sort{Field: "x"}}, paging.Request{}, []string{"page", "size", "sort"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.in.Check(tt.spec)
			if tt.errs == nil {
				if err != nil {
					t.Fatalf("Check: %v", err)
				}
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("request (-want +got):\n%s", diff)
				}
				return
			}
			var v *procure.ValidationError
			if !errors.As(err, &v) || !errors.Is(err, procure.ErrInvalid) || v.Source != procure.SourceQuery {
				t.Fatalf("Check: err = %v, want a *procure.ValidationError from the query", err)
			}
			var fields []string
			for _, f := range v.Fields {
				fields = append(fields, f.Field)
			}
			if diff := cmp.Diff(tt.errs, fields); diff != "" {
				t.Errorf("fields (-want +got):\n%s", diff)
			}
		})
	}
}

func BenchmarkRequestCheck(b *testing.B) {
	r := paging.Request{Page: 2, Size: 20, Sort: paging.Sort{Field: "createdDate"}}
	spec := paging.Spec{SortFields: []string{"name", "createdDate"}, DefaultSort: paging.Sort{Field: "name"}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.Check(spec); err != nil {
			b.Fatal(err)
		}
	}
}
