package supplierindex

import (
	"github.com/google/uuid"
)

// compactAt is the default overlay size that starts a compaction of a
// community of n suppliers: an eighth of them, and at least 4,096
// changes. A compaction costs O(n log n) on one core, an overlay change
// memory and, for the lists that find the overlay's matches per request (a
// filter's first request, query with modifiedSince sorted by name or
// createdDate), their time: see the package documentation, and
// bench/README.md for the figures. Lists through a view or without
// filters cost O(log d) in the overlay's size d, so a larger overlay
// costs them little and saves compactions.
func compactAt(n int) int { return max(4096, n/8) }

// snapshot is what a compaction rebuilds from: the base, which dead
// positions to leave out, and the delta's items.
type snapshot struct {
	base  *supplierSet
	dead  []uint64
	delta []*deltaItem
}

// startCompaction returns a snapshot when the overlay has grown past the
// limit and no compaction runs; x.mu is held exclusively.
func (x *Index) startCompaction() *snapshot {
	limit := x.limit
	if limit == 0 {
		limit = compactAt(x.ov.base.size())
	}
	if x.compacting || x.ov.size() < limit {
		return nil
	}
	x.compacting = true
	x.changed = x.changed[:0]
	snap := &snapshot{base: x.ov.base, dead: append([]uint64(nil), x.ov.dead...)}
	snap.delta = make([]*deltaItem, 0, len(x.ov.byID))
	for _, it := range x.ov.byID {
		snap.delta = append(snap.delta, it)
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
func (x *Index) compact(snap *snapshot) {
	old := snap.base
	live := make([]*supplierRec, 0, old.size()+len(snap.delta))
	var livePos []int32 // the old positions of live's base records
	for p := range old.size() {
		if len(snap.dead) == 0 || snap.dead[p>>6]&(1<<(uint(p)&63)) == 0 {
			live = append(live, old.rec(p))
			livePos = append(livePos, int32(p))
		}
	}
	for _, it := range snap.delta {
		live = append(live, it.rec)
	}
	// The name keys are known already: the old base's, by rank, and the
	// delta items'.
	nameKey := func(i int) ([]byte, bool) {
		if i < len(livePos) {
			return old.nameKeys.at(int(old.ranks[byNameAsc][livePos[i]])), true
		}
		return snap.delta[i-len(livePos)].key.name, true
	}
	base, err := indexRecsPar(live, 1, nameKey)
	if err != nil {
		// Cannot happen (the records are those of a valid set): keep
		// the overlay and let a later write try again.
		x.mu.Lock()
		x.compacting = false
		x.mu.Unlock()
		return
	}
	ov := newOverlay(base)
	for {
		x.mu.Lock()
		ids := x.changed
		if len(ids) <= catchUpBatch {
			for _, id := range ids {
				ov.sync(id, x.ov.find(id))
			}
			x.ov, x.changed, x.compacting = ov, nil, false
			done := x.compacted
			x.mu.Unlock()
			if done != nil {
				done()
			}
			return
		}
		x.changed = nil
		x.mu.Unlock()
		seen := make(map[uuid.UUID]bool, len(ids))
		for _, id := range ids {
			if !seen[id] {
				seen[id] = true
				ov.sync(id, x.current(id))
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
