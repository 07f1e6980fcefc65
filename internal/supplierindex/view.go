package supplierindex

import (
	"cmp"
	"math"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/procurekit/procure/internal/blist"
	"github.com/procurekit/procure/internal/wavelet"
	"github.com/procurekit/procure/paging"
	"github.com/procurekit/procure/supplier"
)

// This file holds the filter views of an overlay: for a filter asked for
// repeatedly (a query, modifiedSince, or both sorted by modifiedDate) in
// one order, the overlay's matches kept sorted in that order and up to
// date by every write, so that a page of the filtered list is one walk of
// the base's wavelet matrix that skips whole subtrees by their merged
// counts (mergeWalk), whatever the page and however many matches the
// overlay holds.
//
// Without a view, a filtered list finds the overlay's matches per request
// (a pass over the term index's range, or the dead matches listed and
// sorted: O(m) or O(m log m) for m of them). A view costs that once, when
// the filter is asked for the second time (viewAdmit), and then a write
// costs, per view, a match test and at most two insertions in a block
// list. At most maxViews filters have one per community; the least
// recently used makes way. A compaction starts a new overlay with none.

// maxViews is the number of filters an overlay keeps views of (ready or
// waiting for their second request).
const maxViews = 16

// viewAdmit is the request of a filter that builds its view (a variable
// so that tests can build views at once, or never).
var viewAdmit = 2

// viewEntry is an entry of a view: a delta item (it) placed at base rank
// at in the view's order, or a dead base supplier (it nil) of rank at.
type viewEntry struct {
	at int32
	it *deltaItem
}

type viewKey struct {
	lq string
	th int64
	o  int
}

// filterView is the overlay's side of one filter in one order.
type filterView struct {
	viewKey
	// delta holds the matching delta items by (at, key in order o);
	// dead the ranks in order o of the matching dead base suppliers.
	delta, dead blist.List[viewEntry]
	ready       bool
	hits        int
	used        atomic.Uint64 // views.tick when last asked for
}

// views is an overlay's filter views. The map is read by readers
// (holding the community's lock shared) under mu shared, and changed
// (a filter's first requests, its view's build, an eviction) under mu; a
// ready view's lists change only in writes, which hold the community's
// lock exclusively and so need not take mu.
type views struct {
	mu   sync.RWMutex
	m    map[viewKey]*filterView
	tick atomic.Uint64
}

func (v *filterView) matchesItem(it *deltaItem) bool {
	return it.key.mod >= v.th && (v.lq == "" || matchesTerms(it.terms, v.lq))
}

func (v *filterView) matchesDead(d *deadItem) bool {
	return d.mod >= v.th && (v.lq == "" || matchesTerms(d.terms, v.lq))
}

func newFilterView(k viewKey) *filterView {
	v := &filterView{viewKey: k}
	v.delta.Init(deltaOrder(k.o))
	v.dead.Init(cmpAt)
	return v
}

// deltaOrder orders delta entries in order o: by the base rank they were
// placed at, then by their keys.
func deltaOrder(o int) func(a, b viewEntry) int {
	return func(a, b viewEntry) int {
		if c := cmp.Compare(a.at, b.at); c != 0 {
			return c
		}
		return compareKeys(o, &a.it.key, &b.it.key)
	}
}

// cmpAt orders entries by rank alone (dead ones: one per rank).
func cmpAt(a, b viewEntry) int { return cmp.Compare(a.at, b.at) }

// view returns the ready view of the filter (lq, th) in order o, building
// it when this is the filter's viewAdmit-th request, or nil.
func (ov *overlay) view(lq string, th int64, o int) *filterView {
	vs := &ov.views
	k := viewKey{lq: lq, th: th, o: o}
	vs.mu.RLock()
	v := vs.m[k]
	if v != nil && v.ready {
		v.used.Store(vs.tick.Add(1))
		vs.mu.RUnlock()
		return v
	}
	vs.mu.RUnlock()
	vs.mu.Lock()
	defer vs.mu.Unlock()
	if vs.m == nil {
		vs.m = make(map[viewKey]*filterView)
	}
	v = vs.m[k]
	if v == nil {
		if len(vs.m) >= maxViews {
			var lru *filterView
			for _, x := range vs.m {
				if lru == nil || x.used.Load() < lru.used.Load() {
					lru = x
				}
			}
			delete(vs.m, lru.viewKey)
		}
		v = newFilterView(k)
		vs.m[k] = v
	}
	v.used.Store(vs.tick.Add(1))
	if !v.ready {
		v.hits++
		if v.hits < viewAdmit {
			return nil
		}
		ov.buildView(v)
		v.ready = true
	}
	return v
}

// buildView lists the overlay's matches of v's filter.
func (ov *overlay) buildView(v *filterView) {
	o := v.o
	cmpDelta := deltaOrder(o)
	var delta []viewEntry
	if v.lq != "" {
		prefixRange(&ov.terms, v.lq, func(t termRef) bool {
			if t.item.key.mod >= v.th {
				delta = append(delta, viewEntry{at: t.item.at[o], it: t.item})
			}
			return true
		})
		slices.SortFunc(delta, cmpDelta)
		// An item with several matching terms is listed once.
		delta = slices.CompactFunc(delta, func(a, b viewEntry) bool { return a.it == b.it })
	} else {
		mods := &ov.ord[byModifiedAsc]
		k := mods.First(func(e viewEntry) bool { return e.it.key.mod >= v.th })
		if k == 0 {
			// Every delta item matches: they are in order already.
			ov.ord[o].Each(0, func(e viewEntry) bool {
				delta = append(delta, e)
				return true
			})
		} else {
			mods.Each(k, func(e viewEntry) bool {
				delta = append(delta, viewEntry{at: e.it.at[o], it: e.it})
				return true
			})
			slices.SortFunc(delta, cmpDelta)
		}
	}
	v.delta.Fill(delta)

	rk := ov.base.ranks[o]
	var dead []viewEntry
	if v.lq != "" {
		prefixRange(&ov.deadTerms, v.lq, func(t termRef) bool {
			if d := &ov.deads[t.deads]; d.mod >= v.th {
				dead = append(dead, viewEntry{at: rk[d.pos]})
			}
			return true
		})
	} else {
		l := &ov.deadByMod
		i := l.First(func(k int32) bool { return ov.deads[k].mod >= v.th })
		l.Each(i, func(k int32) bool {
			dead = append(dead, viewEntry{at: rk[ov.deads[k].pos]})
			return true
		})
	}
	slices.SortFunc(dead, cmpAt)
	dead = slices.Compact(dead)
	v.dead.Fill(dead)
}

// viewsPut and the two functions after it keep the ready views up to
// date; the community's lock is held exclusively.
func (ov *overlay) viewsPut(it *deltaItem) {
	for _, v := range ov.views.m {
		if v.ready && v.matchesItem(it) {
			v.delta.Insert(viewEntry{at: it.at[v.o], it: it})
		}
	}
}

func (ov *overlay) viewsRemove(it *deltaItem) {
	for _, v := range ov.views.m {
		if v.ready && v.matchesItem(it) {
			v.delta.Remove(viewEntry{at: it.at[v.o], it: it})
		}
	}
}

func (ov *overlay) viewsDead(d *deadItem) {
	for _, v := range ov.views.m {
		if v.ready && v.matchesDead(d) {
			v.dead.Insert(viewEntry{at: ov.base.ranks[v.o][d.pos]})
		}
	}
}

// mergeWalk lists a page of a filtered list through a view: a depth-first
// walk of the base's wavelet matrices over the ranks of order o (as
// distinctWalk), in which a subtree of ranks [v, v+size) counts its live
// base matches (the base's, less the view's dead there) plus the view's
// delta items placed in it; a subtree the page starts after is skipped
// whole. A delta item placed at rank r comes just before the base rank r.
type mergeWalk struct {
	ov     *overlay
	idx    []int32
	tw, pw *wavelet.Matrix
	nl     int
	// the base's matches are the ranks [vlo, vhi) among the walk's.
	vlo, vhi    int
	delta, dead *blist.List[viewEntry]
	skip, need  int
	out         []supplier.Summary
	done        bool
}

func (w *mergeWalk) emitDelta(lo, hi int) {
	s := min(w.skip, hi-lo)
	w.skip -= s
	lo += s
	if lo >= hi {
		return
	}
	l := w.delta
	for b := l.BlockOf(lo); b < l.NumBlocks() && lo < hi; b++ {
		blk, start := l.Block(b), l.Start(b)
		for _, e := range blk[lo-start : min(len(blk), hi-start)] {
			w.out = append(w.out, e.it.rec.summary)
			lo++
			if len(w.out) == w.need {
				w.done = true
				return
			}
		}
	}
}

// entries is a range [lo, hi) of a view's list with the blocks holding
// its first and last entries (when not empty), so that splitting it
// searches only those blocks.
type entries struct{ lo, hi, blo, bhi int }

// entriesOf is the whole of l.
func entriesOf(l *blist.List[viewEntry]) entries {
	e := entries{hi: l.Len()}
	if l.Len() > 0 {
		e.bhi = l.NumBlocks() - 1
	}
	return e
}

// split returns the entries of e placed below v and the others.
func split(l *blist.List[viewEntry], e entries, v int32) (below, rest entries) {
	if e.lo >= e.hi {
		return e, entries{lo: e.hi, hi: e.hi}
	}
	b, bh := e.blo, e.bhi
	for b < bh {
		m := int(uint(b+bh) >> 1)
		if l.Last(m).at >= v {
			bh = m
		} else {
			b = m + 1
		}
	}
	blk, s := l.Block(b), l.Start(b)
	i, j := max(e.lo-s, 0), min(e.hi-s, len(blk))
	for i < j {
		m := int(uint(i+j) >> 1)
		if blk[m].at >= v {
			j = m
		} else {
			i = m + 1
		}
	}
	m := s + i
	below = entries{lo: e.lo, hi: m, blo: e.blo, bhi: b}
	if i == 0 {
		below.bhi = b - 1 // used only when below is not empty
	}
	// When m < e.hi, entry m is in block b (the search stops in the
	// block holding the first entry at or above v).
	rest = entries{lo: m, hi: e.hi, blo: b, bhi: e.bhi}
	return below, rest
}

// visit walks the subtree of level l holding ranks [v, v+2^(nl-l)): spans
// t and p of the matrices, delta entries d, dead x.
func (w *mergeWalk) visit(l int, t, p span, v int, d, x entries) {
	if w.done {
		return
	}
	dlo, dhi, xlo, xhi := d.lo, d.hi, x.lo, x.hi
	end := v + 1<<(w.nl-l)
	nd := dhi - dlo
	live, known := 0, true
	switch {
	case end <= w.vlo || v >= w.vhi:
	case v >= w.vlo && end <= w.vhi:
		live = t.Len() - p.Len() - (xhi - xlo)
	default:
		known = false
	}
	if known {
		cnt := live + nd
		if cnt <= 0 {
			return
		}
		if w.skip >= cnt {
			w.skip -= cnt
			return
		}
		if live == 0 {
			w.emitDelta(dlo, dhi)
			return
		}
	} else if t.Lo >= t.Hi && nd == 0 {
		return
	}
	if l == w.nl {
		// One rank, a live base match: the delta items placed at it
		// come first.
		w.emitDelta(dlo, dhi)
		if w.done {
			return
		}
		if w.skip > 0 {
			w.skip--
			return
		}
		w.out = append(w.out, w.ov.base.rec(int(w.idx[v])).summary)
		w.done = len(w.out) == w.need
		return
	}
	mid := v + 1<<(w.nl-l-1)
	d0, d1 := split(w.delta, d, int32(mid))
	x0, x1 := split(w.dead, x, int32(mid))
	var t0, t1, p0, p1 span
	if t.Lo < t.Hi {
		t0, t1 = w.tw.Split(l, t)
	}
	if p.Lo < p.Hi {
		p0, p1 = w.pw.Split(l, p)
	}
	w.visit(l+1, t0, p0, v, d0, x0)
	w.visit(l+1, t1, p1, mid, d1, x1)
}

// listView serves the filtered list f, whose base matches are m, through
// the filter's view, or reports false when it has none (yet) or no walk
// serves it (query with modifiedSince sorted by name or createdDate).
func (ov *overlay) listView(dst []supplier.Summary, f filter, m *matches, r paging.Request) ([]supplier.Summary, int, bool) {
	if !m.walkable() {
		return nil, 0, false
	}
	v := ov.view(f.lq, f.th, f.o)
	if v == nil {
		return nil, 0, false
	}
	w := mergeWalk{ov: ov, idx: ov.base.orders[f.o], tw: m.tw, pw: m.pw, vlo: m.vlo, vhi: m.vhi, delta: &v.delta, dead: &v.dead}
	total := m.total - v.dead.Len() + v.delta.Len()
	lo, hi := paging.Window(total, r)
	if lo >= hi {
		return nil, total, true
	}
	w.nl = w.tw.Levels()
	w.skip, w.need = lo, hi-lo
	w.out = pageBuf(dst, hi-lo)
	if lo <= viewFrontLimit {
		w.front(m.t, m.p, m.skip)
		return w.out, total, true
	}
	// Delta items placed past the walk's ranks (at n = 2^levels) follow it.
	in, past := split(w.delta, entriesOf(w.delta), int32(min(1<<w.nl, math.MaxInt32)))
	w.visit(0, m.t, m.p, 0, in, entriesOf(w.dead))
	if !w.done {
		w.emitDelta(past.lo, past.hi)
	}
	return w.out, total, true
}

// viewFrontLimit is the deepest page start that listView reaches by
// merging from the first match (front) rather than by skipping subtrees
// (visit): a merge from the front needs no counts, so it costs no more
// than the base's own walk to the page while the page is near the front.
// (A variable so that tests can send every page one way.)
var viewFrontLimit = 40

// front lists the page by merging, from the first match, the base's
// matches (a distinctWalk over spans t and p that passes baseSkip matches
// below vlo first and stops at vhi) without the dead with the view's delta
// items.
func (w *mergeWalk) front(t, p span, baseSkip int) {
	l := w.delta
	b, k := 0, 0 // the next delta entry: l.Block(b)[k]
	nextAt := int32(math.MaxInt32)
	if l.Len() > 0 {
		nextAt = l.Block(0)[0].at
	}
	// emit adds the next delta entry and moves past it.
	emit := func() {
		e := l.Block(b)[k]
		if k++; k == len(l.Block(b)) {
			b, k = b+1, 0
		}
		nextAt = math.MaxInt32
		if b < l.NumBlocks() {
			nextAt = l.Block(b)[k].at
		}
		if w.skip > 0 {
			w.skip--
			return
		}
		w.out = append(w.out, e.it.rec.summary)
		w.done = len(w.out) == w.need
	}
	base := w.ov.base
	dw := wavelet.DistinctWalk{T: w.tw, P: w.pw, Skip: baseSkip, Yield: func(rank int) bool {
		if rank >= w.vhi {
			return false
		}
		for int(nextAt) <= rank {
			if emit(); w.done {
				return false
			}
		}
		if p := int(w.idx[rank]); !w.ov.isDead(p) {
			if w.skip > 0 {
				w.skip--
			} else {
				w.out = append(w.out, base.rec(p).summary)
				w.done = len(w.out) == w.need
			}
		}
		return !w.done
	}}
	dw.Run(t, p)
	for !w.done && nextAt != math.MaxInt32 {
		emit()
	}
}
