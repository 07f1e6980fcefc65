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
// not check them. It keeps their parts, shared (the caller must not
// change them afterwards), but never writes into them, so a record may
// share parts with one the index holds (a write keeping a supplier's
// contacts, say). A record equal to the stored one, dates included,
// changes nothing.
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
		if old := x.current(rec.detail.ID); old != nil && sameRecord(old, &rec) {
			continue
		}
		x.replace(rec.detail.ID, &rec)
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
	m := rec.detail.ModifiedDate.UnixMicro()
	if c := rec.detail.DefaultContact; c != nil {
		m = max(m, c.ModifiedDate.UnixMicro())
	}
	if a := rec.detail.DefaultRemittanceAddress; a != nil {
		m = max(m, a.ModifiedDate.UnixMicro())
	}
	for i := range rec.contacts {
		m = max(m, rec.contacts[i].ModifiedDate.UnixMicro())
	}
	for i := range rec.addrs {
		m = max(m, rec.addrs[i].ModifiedDate.UnixMicro())
	}
	return m
}

// sameRecord reports whether two stored records hold the same supplier,
// dates included.
func sameRecord(a, b *supplierRec) bool {
	return a.detail.Equal(&b.detail) && slices.Equal(a.keywords, b.keywords) &&
		slices.EqualFunc(a.contacts, b.contacts, func(x, y supplier.Contact) bool { return x.Equal(&y) }) &&
		slices.EqualFunc(a.addrs, b.addrs, func(x, y supplier.RemittanceAddress) bool { return x.Equal(&y) })
}
