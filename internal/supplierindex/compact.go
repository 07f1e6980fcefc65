package memstore

import (
	"github.com/google/uuid"
)

// compactAt is the default overlay size that starts a compaction of a
// community of n suppliers: an eighth of them, and at least 4,096
// changes. A compaction costs O(n log n) on one core (about 15 s of CPU
// at 1,000,000 suppliers), an overlay change some 700 bytes and, for the
// lists that find the overlay's matches per request (a filter's first
// request, query with modifiedSince sorted by name or createdDate), their
// time: see the package documentation. Lists through a view or without
// filters cost O(log d) in the overlay's size d, so a larger overlay
// costs them little and saves compactions.
func compactAt(n int) int { return max(4096, n/8) }

// snapshot is what a compaction rebuilds from: the base, which dead
// positions to leave out, and the delta's records.
type snapshot struct {
	base  *supplierSet
	dead  []uint64
	delta []*supplierRec
}

// startCompaction returns a snapshot when the overlay has grown past the
// limit and no compaction runs; c.mu is held exclusively.
func (c *comSuppliers) startCompaction() *snapshot {
	limit := c.limit
	if limit == 0 {
		limit = compactAt(c.ov.base.size())
	}
	if c.compacting || c.ov.size() < limit {
		return nil
	}
	c.compacting = true
	c.changed = c.changed[:0]
	snap := &snapshot{base: c.ov.base, dead: append([]uint64(nil), c.ov.dead...)}
	snap.delta = make([]*supplierRec, 0, len(c.ov.byID))
	for _, it := range c.ov.byID {
		snap.delta = append(snap.delta, it.rec)
	}
	return snap
}

// catchUpBatch is the number of changes a compaction applies under the
// exclusive lock when it swaps its base in; larger backlogs are applied
// beforehand without it.
const catchUpBatch = 16

// compact builds a new base from snap off-lock (one goroutine, so that
// reads keep the other cores), then brings a new overlay up to date with
// the writes made meanwhile, and swaps both in.
func (c *comSuppliers) compact(snap *snapshot) {
	live := make([]*supplierRec, 0, snap.base.size()+len(snap.delta))
	for p := range snap.base.size() {
		if len(snap.dead) == 0 || snap.dead[p>>6]&(1<<(uint(p)&63)) == 0 {
			live = append(live, snap.base.rec(p))
		}
	}
	live = append(live, snap.delta...)
	base, err := indexRecsPar(live, 1)
	if err != nil {
		// Cannot happen (the records are those of a valid set): keep
		// the overlay and let a later write try again.
		c.mu.Lock()
		c.compacting = false
		c.mu.Unlock()
		return
	}
	ov := newOverlay(base)
	for {
		c.mu.Lock()
		ids := c.changed
		if len(ids) <= catchUpBatch {
			for _, id := range ids {
				ov.sync(id, c.ov.find(id))
			}
			c.ov, c.changed, c.compacting = ov, nil, false
			done := c.compacted
			c.mu.Unlock()
			if done != nil {
				done()
			}
			return
		}
		c.changed = nil
		c.mu.Unlock()
		seen := make(map[uuid.UUID]bool, len(ids))
		for _, id := range ids {
			if !seen[id] {
				seen[id] = true
				ov.sync(id, c.current(id))
			}
		}
	}
}

// sync makes rec (nil: none) the current record of the supplier id in
// ov, which no reader sees yet.
func (ov *overlay) sync(id uuid.UUID, rec *supplierRec) {
	if rec == nil {
		ov.remove(id)
		return
	}
	if p, ok := ov.base.byID[id]; ok && ov.base.rec(int(p)) == rec {
		return // the base holds it already
	}
	ov.put(newDeltaItem(ov.base, rec))
}
