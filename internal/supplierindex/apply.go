package supplierindex

import (
	"slices"

	"github.com/google/uuid"

	"github.com/procurekit/procure/supplier"
)

// Apply removes the suppliers of deleted (an id the index does not hold
// is skipped), then makes each record of put its supplier's current
// version exactly as given: its dates and those of its default contact,
// contacts and remittance addresses kept, its contacts and addresses
// replacing the stored ones. Deletes come first, so an id in both lists
// (deleted, then created again) ends as put has it. The records must be
// in normal form (supplier.Record's Normalize) and valid: the index does
// not check them. It keeps their summaries' texts and keywords, shared
// (the caller must not change them afterwards), packs the rest, and
// never writes into them. A record equal to the stored one, dates
// included, changes nothing.
//
// Each change holds the index's lock exclusively only for its overlay
// update (the binary searches that place a record run before); when the
// overlay has grown enough, a compaction starts in the background.
// Readers see each change whole, in order.
func (x *Index) Apply(put []supplier.Record, deleted []uuid.UUID) {
	for _, id := range deleted {
		x.replace(id, nil)
	}
	for i := range put {
		rec := newSupplierRec(&put[i], nil)
		if old := x.current(rec.summary.ID); old != nil && sameRecord(old, &rec) {
			continue
		}
		x.replace(rec.summary.ID, &rec)
	}
}

// replace makes rec the supplier id's current record, or removes the
// supplier when rec is nil. The costly part, placing rec among the base's
// ranks, is done before taking x.mu.
func (x *Index) replace(id uuid.UUID, rec *supplierRec) {
	x.mu.RLock()
	base := x.ov.base
	x.mu.RUnlock()
	var it *deltaItem
	if rec != nil {
		it = newDeltaItem(base, rec)
	}
	x.mu.Lock()
	if rec != nil && x.ov.base != base {
		// A compaction swapped the base meanwhile.
		it = newDeltaItem(x.ov.base, rec)
	}
	switch {
	case it != nil:
		x.ov.put(it)
		x.maxMod = max(x.maxMod, recMaxModified(rec))
	case x.ov.find(id) == nil:
		x.mu.Unlock()
		return
	default:
		x.ov.remove(id)
	}
	if x.compacting {
		x.changed = append(x.changed, id)
	}
	snap := x.startCompaction()
	x.mu.Unlock()
	if snap != nil {
		go x.compact(snap)
	}
}

// recMaxModified is the latest modifiedDate of a record, its default
// contact and address, contacts and addresses, in microseconds.
func recMaxModified(rec *supplierRec) int64 {
	return max(rec.summary.ModifiedDate.UnixMicro(), partsMaxModified(rec.parts))
}

// sameRecord reports whether two stored records hold the same supplier,
// dates included (equal values pack to equal parts: packed.go).
func sameRecord(a, b *supplierRec) bool {
	return a.summary.Equal(&b.summary) && slices.Equal(a.keywords, b.keywords) && a.parts == b.parts
}
