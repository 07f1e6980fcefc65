package supplierindex

import (
	"time"

	"github.com/procurekit/procure/supplier"
)

// A page of the supplier list reads, for each of its items, the record
// and the texts of its summary. A load's records sit in memory in the
// order they were added (a data file's), and their texts where the
// decoder put them (the data file's decoder: in blocks, in file order; a
// pgstore cache's rows: an allocation each), in no order the lists use: a
// page by name at random cost a cache miss or more per record and per
// record's texts (the profiles and figures are in bench/README.md,
// session 8). layOut moves the records of a new base into name order
// (the list's default order, which users page through) and copies the
// texts of their summaries, record after record, into one string per
// batch of records, so that a page reads its records and its texts from
// a few contiguous runs of memory. The copies cost memory where the
// originals stay referenced (a decoder's block holds a record's other
// texts too): bench/README.md says how much.

// layoutBatch is the number of records whose texts share one string.
const layoutBatch = 64

// layOut moves the records of r, which set indexes (built by
// indexSuppliers from r's records in their order), into name order in
// place, and packs their summaries' texts, then points set at them. It
// runs before set is published: nothing reads the records yet, and no
// record is copied twice in memory at once (the moves are in place, by
// cycles; only the packed texts are new).
func (r *recStore) layOut(set *supplierSet) {
	n := r.n
	if n == 0 {
		return
	}
	rank := set.ranks[byNameAsc]
	// dest[i] is the slot the record now at slot i goes to: its rank by
	// name.
	dest := make([]int32, n)
	for i := range n {
		dest[i] = rank[set.byID[r.at(int32(i)).summary.ID]]
	}
	for i := range int32(n) {
		for dest[i] != i {
			j := dest[i]
			a, b := r.at(i), r.at(j)
			*a, *b = *b, *a
			dest[i], dest[j] = dest[j], dest[i]
		}
	}
	dest = nil
	var sums []byte
	for lo := 0; lo < n; lo += layoutBatch {
		hi := min(n, lo+layoutBatch)
		sums = sums[:0]
		tins := 0
		for i := lo; i < hi; i++ {
			rec := r.at(int32(i))
			forSummaryTexts(&rec.summary, func(t *supplier.Text) { sums = append(sums, t.String()...) })
			if rec.summary.TinLastVerifiedDate != nil {
				tins++
			}
		}
		packed := string(sums) // one allocation for the batch's summary texts
		var dates []time.Time
		if tins > 0 {
			dates = make([]time.Time, 0, tins)
		}
		at := 0
		for i := lo; i < hi; i++ {
			rec := r.at(int32(i))
			s := &rec.summary
			forSummaryTexts(s, func(t *supplier.Text) {
				l := len(t.String())
				*t = supplier.NewText(packed[at : at+l])
				at += l
			})
			if s.TinLastVerifiedDate != nil {
				dates = append(dates, *s.TinLastVerifiedDate)
				s.TinLastVerifiedDate = &dates[len(dates)-1]
			}
		}
	}
	for p := range set.recs {
		set.recs[p] = r.at(rank[p])
	}
	set.named = *r
}

// forSummaryTexts calls f with each text of s that holds a non-empty
// value (the empty value and no value need no memory of their own).
func forSummaryTexts(s *supplier.Summary, f func(*supplier.Text)) {
	for _, t := range [...]*supplier.Text{&s.Name, &s.SupplierID, &s.CommunitySupplierID, &s.LegalBusinessName,
		&s.FirstName, &s.LastName, &s.TaxIdentificationNumber, &s.BusinessNumber, &s.DefaultEmailAddress} {
		if t.String() != "" {
			f(t)
		}
	}
}
