package supplierindex_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/procurekit/procure/internal/supplierindex"
	"github.com/procurekit/procure/paging"
	"github.com/procurekit/procure/supplier"
	"github.com/procurekit/procure/supplier/suppliertest"
)

// TestListAgainstReferenceRandom compares the indexed list with the
// suite's brute-force reference on random data built to stress the text
// index: terms from a tiny alphabet (many shared prefixes, many terms of
// one supplier matching one query), many equal names and dates, empty
// names; random queries, dates, sorts and pages, including the plans the
// combined filters choose between.
func TestListAgainstReferenceRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	word := func() string {
		const alphabet = "abAB é"
		var b strings.Builder
		for range 1 + rng.IntN(5) {
			b.WriteString(string([]rune(alphabet)[rng.IntN(6)]))
		}
		return strings.TrimSpace(b.String())
	}
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	const n = 3000
	recs := make([]supplier.Record, n)
	for i := range recs {
		r := &recs[i]
		r.ID = uuid.NewSHA1(uuid.NameSpaceOID, []byte(fmt.Sprint(i)))
		r.ProfileType = supplier.ProfileCompany
		if rng.IntN(10) > 0 {
			r.Name = supplier.NewText(word())
		}
		if rng.IntN(2) == 0 {
			r.LegalBusinessName = supplier.NewText(r.Name.String() + word())
		}
		if rng.IntN(2) == 0 {
			r.SupplierID = supplier.NewText(word())
		}
		for range rng.IntN(4) {
			r.Keywords = append(r.Keywords, word())
		}
		r.ModifiedDate = base.Add(time.Duration(rng.IntN(200)) * time.Microsecond)
		r.CreatedDate = base.Add(-time.Duration(rng.IntN(50)) * time.Hour)
	}
	x, err := supplierindex.New(slices.Clone(recs))
	if err != nil {
		t.Fatal(err)
	}
	fields := []string{"name", "createdDate", "modifiedDate"}
	for trial := range 1000 {
		q := supplier.ListQuery{Page: paging.Request{
			Size: 1 + rng.IntN(30),
			Sort: paging.Sort{Field: fields[rng.IntN(3)], Desc: rng.IntN(2) == 0},
		}}
		if w := []rune(word()); rng.IntN(4) > 0 && len(w) > 0 {
			q.Query = string(w[:1+rng.IntN(min(3, len(w)))])
		}
		if rng.IntN(2) == 0 {
			q.ModifiedSince = base.Add(time.Duration(rng.IntN(220)) * time.Microsecond)
		}
		all := suppliertest.Reference(recs, q)
		pages := (len(all) + q.Page.Size - 1) / q.Page.Size
		q.Page.Page = rng.IntN(pages + 2)
		got, err := x.List(q, nil)
		if err != nil {
			t.Fatal(err)
		}
		lo, hi := paging.Window(len(all), q.Page)
		var gotIDs []uuid.UUID
		for _, it := range got.Content {
			gotIDs = append(gotIDs, it.ID)
		}
		if !slices.Equal(all[lo:hi], gotIDs) || got.Page.TotalElements != len(all) {
			t.Fatalf("trial %d: query %q since %v %+v: got %d items of %d, want %d of %d",
				trial, q.Query, q.ModifiedSince, q.Page, len(gotIDs), got.Page.TotalElements, hi-lo, len(all))
		}
	}
}
