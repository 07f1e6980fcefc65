package supplierindex

import (
	"cmp"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/procurekit/procure/paging"
	"github.com/procurekit/procure/supplier"
)

// mergeBufs recycles the filtered overlay lists of list.
type mergeBufs struct {
	delta  []*deltaItem
	dead   []int
	placed []placedItem
}

// placedItem is a delta item with its placed rank in one order, so that
// sorting reads each item once.
type placedItem struct {
	at int32
	it *deltaItem
}

var mergePool = sync.Pool{New: func() any { return new(mergeBufs) }}

// listMerged is a filtered list without a view: the base's matches m
// without the dead, merged by rank with the delta's matches, which are
// found for this request.
//
// Both sides are in order o; a delta item goes before the base rank
// it.at[o]. A page near the front is merged from the first match
// (front); otherwise its first item is found by binary search on the
// delta's matches (the merged position of delta match j is j plus the
// live base matches ranked below it), so a page costs O(log n) base
// counts per step plus the page, plus the listing of the overlay's
// matches.
func (ov *overlay) listMerged(dst []supplier.Summary, flt filter, m *matches, r paging.Request) ([]supplier.Summary, int) {
	base := ov.base
	o := flt.o
	idx := base.orders[o]
	bufs := mergePool.Get().(*mergeBufs)
	defer func() {
		clear(bufs.delta)
		clear(bufs.placed)
		bufs.delta, bufs.dead, bufs.placed = bufs.delta[:0], bufs.dead[:0], bufs.placed[:0]
		mergePool.Put(bufs)
	}()
	f := ov.filter(flt, bufs)
	total := m.total - f.nDead + f.nDelta
	lo, hi := paging.Window(total, r)
	if lo >= hi {
		return nil, total
	}
	if lo <= frontLimit {
		return ov.front(dst, o, m, lo, hi, f.deltaIter(hi)), total
	}
	f.materialize()
	var (
		nDelta    int
		deltaAt   func(j int) *deltaItem
		deltaEach func(j int, yield func(*deltaItem) bool)
	)
	delta, dead := bufs.delta, bufs.dead
	if f.all {
		l := &ov.ord[o]
		nDelta = l.Len()
		deltaAt = func(j int) *deltaItem { return l.At(j).it }
		deltaEach = func(j int, yield func(*deltaItem) bool) {
			l.Each(j, func(e viewEntry) bool { return yield(e.it) })
		}
	} else {
		nDelta = len(delta)
		deltaAt = func(j int) *deltaItem { return delta[j] }
		deltaEach = func(j int, yield func(*deltaItem) bool) {
			for _, it := range delta[j:] {
				if !yield(it) {
					return
				}
			}
		}
	}
	nDead := len(dead)
	deadBefore := func(x int) int { return sort.SearchInts(dead, x) }
	// liveStart is the match index of the i-th live base match: dead
	// match k has count(dead[k]) - k live matches before it.
	liveStart := func(i int) int {
		return i + sort.Search(len(dead), func(k int) bool { return m.count(dead[k])-k > i })
	}
	total = m.total - nDead + nDelta
	lo, hi = paging.Window(total, r)
	if lo >= hi {
		return nil, total
	}
	// j is the number of delta items before the page.
	j := 0 // the first page (the most asked for) needs no search
	if lo > 0 {
		j = sort.Search(nDelta, func(j int) bool {
			b := int(deltaAt(j).at[o])
			return j+m.count(b)-deadBefore(b) >= lo
		})
	}
	out := pageBuf(dst, hi-lo)
	need := hi - lo
	var next *deltaItem // the next delta item, or nil
	nextAt := func() {
		next = nil
		if j < nDelta {
			next = deltaAt(j)
		}
	}
	nextAt()
	m.each(liveStart(lo-j), func(rank int) bool {
		for next != nil && int(next.at[o]) <= rank {
			out = append(out, next.rec.summary)
			j++
			if len(out) == need {
				return false
			}
			nextAt()
		}
		if p := int(idx[rank]); !ov.isDead(p) {
			out = append(out, base.rec(p).summary)
		}
		return len(out) < need
	})
	if len(out) < need {
		deltaEach(j, func(it *deltaItem) bool {
			out = append(out, it.rec.summary)
			return len(out) < need
		})
	}
	return out, total
}

// frontLimit is the deepest page start a filtered list reaches by
// merging from the first match: cheaper there than finding the start by
// binary search, which needs the dead matches listed.
// (A variable so that tests can send every page one way or the other.)
var frontLimit = 200

// deltaPlan forces deltaIter's choice in tests: 0 chooses by cost,
// 1 always scans, 2 always lists.
var deltaPlan = 0

// front returns the merged items [lo, hi) by walking both sides from
// their first match.
func (ov *overlay) front(dst []supplier.Summary, o int, m *matches, lo, hi int, next func() *deltaItem) []supplier.Summary {
	base := ov.base
	idx := base.orders[o]
	out := pageBuf(dst, hi-lo)
	skip, need := lo, hi-lo
	add := func(sum *supplier.Summary) bool {
		if skip > 0 {
			skip--
		} else {
			out = append(out, *sum)
		}
		return len(out) < need
	}
	// The delta's matches are walked alongside the base's, one ahead.
	pending := next()
	done := false
	m.each(0, func(rank int) bool {
		for pending != nil && int(pending.at[o]) <= rank {
			it := pending
			pending = next()
			if !add(&it.rec.summary) {
				done = true
				return false
			}
		}
		if p := int(idx[rank]); !ov.isDead(p) {
			if !add(&base.rec(p).summary) {
				done = true
				return false
			}
		}
		return true
	})
	for !done && pending != nil {
		it := pending
		pending = next()
		done = !add(&it.rec.summary)
	}
	return out
}

// overlayFilter is the overlay's side of a filtered list: how many delta
// items and dead base suppliers match, found as cheaply as the filter
// allows, and, on demand, the matches themselves in order o.
type overlayFilter struct {
	ov     *overlay
	lq     string
	th     int64
	o      int
	bufs   *mergeBufs
	nDelta int
	nDead  int
	// all: every delta item matches (the list is ov.ord[o] itself).
	all bool
	// listed: bufs.delta holds the delta's matches (sorted); else they
	// are found by deltaIter. deadListed: bufs.dead holds the dead's.
	listed, deadListed bool
}

func (ov *overlay) filter(flt filter, bufs *mergeBufs) *overlayFilter {
	lq, th := flt.lq, flt.th
	f := &overlayFilter{ov: ov, lq: lq, th: th, o: flt.o, bufs: bufs}
	base := ov.base
	switch {
	case lq == "":
		// modifiedSince only: the delta's suffix in modifiedDate order,
		// the dead counted by their modifiedDate rank.
		mods := &ov.ord[byModifiedAsc]
		k := mods.First(func(e viewEntry) bool { return e.it.key.mod >= th })
		f.nDelta = mods.Len() - k
		f.all = k == 0
		if len(ov.deads) > 0 {
			keys := base.modKeys
			since := sort.Search(base.size(), func(i int) bool { return keys[i] >= th })
			f.nDead = len(ov.deads) - ov.deadBy[byModifiedAsc].Before(since)
		}
	default:
		if th == noSince {
			// query only: distinct matches are matching terms less
			// matching pairs, in the overlay as in the base.
			f.nDelta = countPrefix(&ov.terms, lq) - countPrefix(&ov.pairs, lq)
			f.nDead = countPrefix(&ov.deadTerms, lq) - countPrefix(&ov.deadPairs, lq)
			break
		}
		// query and modifiedSince: list both sides.
		f.listDelta()
		f.listDead()
	}
	return f
}

// listDelta puts the delta's matches, in order o, in bufs.delta.
func (f *overlayFilter) listDelta() {
	if f.listed {
		return
	}
	f.listed = true
	ov, b := f.ov, f.bufs
	// Sorting by the base rank each item was placed at settles most
	// comparisons on integers.
	byOrder := func(x, y *deltaItem) int {
		if c := cmp.Compare(x.at[f.o], y.at[f.o]); c != 0 {
			return c
		}
		return compareKeys(f.o, &x.key, &y.key)
	}
	if f.lq != "" {
		o := f.o
		prefixRange(&ov.terms, f.lq, func(t termRef) bool {
			if it := t.item; it.key.mod >= f.th {
				b.placed = append(b.placed, placedItem{at: it.at[o], it: it})
			}
			return true
		})
		slices.SortFunc(b.placed, func(x, y placedItem) int {
			if c := cmp.Compare(x.at, y.at); c != 0 {
				return c
			}
			return byOrder(x.it, y.it)
		})
		for i, p := range b.placed {
			if i == 0 || p.it != b.placed[i-1].it {
				b.delta = append(b.delta, p.it)
			}
		}
		clear(b.placed)
		b.placed = b.placed[:0]
		f.nDelta = len(b.delta)
		return
	}
	if f.all {
		return
	}
	keep := func(e viewEntry) bool { b.delta = append(b.delta, e.it); return true }
	mods := &ov.ord[byModifiedAsc]
	k := mods.Len() - f.nDelta
	switch {
	case f.nDelta == 0:
	case f.o == byModifiedAsc:
		mods.Each(k, keep)
	case f.o == byModifiedDesc:
		ov.ord[f.o].Each(0, func(e viewEntry) bool { return keep(e) && len(b.delta) < f.nDelta })
	default:
		mods.Each(k, keep)
		slices.SortFunc(b.delta, byOrder)
	}
}

// listDead puts the base ranks in order o of the dead matches, sorted,
// in bufs.dead.
func (f *overlayFilter) listDead() {
	if f.deadListed {
		return
	}
	f.deadListed = true
	ov, b := f.ov, f.bufs
	rk := ov.base.ranks[f.o]
	if f.lq != "" {
		prefixRange(&ov.deadTerms, f.lq, func(t termRef) bool {
			if d := &ov.deads[t.deads]; d.mod >= f.th {
				b.dead = append(b.dead, int(rk[d.pos]))
			}
			return true
		})
		slices.Sort(b.dead)
		b.dead = slices.Compact(b.dead)
	} else {
		// The dead modified since th are a suffix of deadByMod.
		l := &ov.deadByMod
		i := l.First(func(k int32) bool { return ov.deads[k].mod >= f.th })
		l.Each(i, func(k int32) bool {
			b.dead = append(b.dead, int(rk[ov.deads[k].pos]))
			return true
		})
		slices.Sort(b.dead)
	}
	f.nDead = len(b.dead)
}

// materialize lists both sides (for a page found by binary search).
func (f *overlayFilter) materialize() {
	f.listDelta()
	f.listDead()
}

// deltaIter returns an iterator over the delta's matches in order o, for
// a page ending at hi: the listed matches, every delta item, or, when
// listing the matches would cost more than reaching hi of them, a scan of
// the delta in order o that skips the others.
func (f *overlayFilter) deltaIter(hi int) func() *deltaItem {
	ov := f.ov
	if f.nDelta == 0 {
		return func() *deltaItem { return nil }
	}
	if f.all {
		next := ov.ord[f.o].Iter(0, nil)
		return func() *deltaItem { return next().it }
	}
	if !f.listed && f.lq != "" && f.th == noSince && deltaPlan == 0 {
		return f.topDelta(hi)
	}
	d := ov.ord[f.o].Len()
	// Only the date orders scan: there a query's matches are spread
	// through the delta, while in name order a name prefix's matches
	// sit together, maybe at the far end of a scan.
	if !f.listed && f.lq != "" && f.th == noSince && (f.o >= byCreatedAsc || deltaPlan == 1) {
		scan := min(d, (hi+1)*d/f.nDelta)
		list := f.nDelta * (log2(f.nDelta) + 1)
		if deltaPlan == 1 || deltaPlan == 0 && scan < list {
			lq := f.lq
			next := ov.ord[f.o].Iter(0, func(e viewEntry) bool { return matchesTerms(e.it.terms, lq) })
			return func() *deltaItem { return next().it }
		}
	}
	f.listDelta()
	delta, j := f.bufs.delta, 0
	return func() *deltaItem {
		if j == len(delta) {
			return nil
		}
		j++
		return delta[j-1]
	}
}

// topDelta returns an iterator over the first hi of the delta's query
// matches in order o: one pass over the query's range of the term index,
// keeping the hi smallest by placed rank; only items placed at the same
// base rank are compared by their keys. (A filter's first request: the
// next ones go through its view.)
func (f *overlayFilter) topDelta(hi int) func() *deltaItem {
	o, b := f.o, f.bufs
	top := b.placed[:0]
	less := func(x, y *placedItem) bool {
		if x.at != y.at {
			return x.at < y.at
		}
		return compareKeys(o, &x.it.key, &y.it.key) < 0
	}
	prefixRange(&f.ov.terms, f.lq, func(t termRef) bool {
		c := placedItem{at: t.item.at[o], it: t.item}
		if len(top) == hi && !less(&c, &top[hi-1]) {
			return true
		}
		i := sort.Search(len(top), func(i int) bool { return !less(&top[i], &c) })
		if i < len(top) && top[i].it == c.it {
			return true // another term of the same item
		}
		top = slices.Insert(top, i, c)
		if len(top) > hi {
			top = top[:hi]
		}
		return true
	})
	b.placed = top
	j := 0
	return func() *deltaItem {
		if j == len(top) {
			return nil
		}
		j++
		return top[j-1].it
	}
}

// matchesTerms reports whether any of terms starts with lq.
func matchesTerms(terms []string, lq string) bool {
	for _, t := range terms {
		if strings.HasPrefix(t, lq) {
			return true
		}
	}
	return false
}

// listAll is list without filters, written out without closures (this
// is the most asked-for list: a page allocates nothing but its items).
func (ov *overlay) listAll(dst []supplier.Summary, o int, r paging.Request) ([]supplier.Summary, int) {
	total := ov.base.size() - len(ov.deads) + ov.ord[o].Len()
	lo, hi := paging.Window(total, r)
	return ov.pageAll(dst, o, lo, hi), total
}

// listSince is list with modifiedSince alone (th, in microseconds) sorted
// by modifiedDate: the matches are the unfiltered list's last items in
// ascending order, its first in descending order.
func (ov *overlay) listSince(dst []supplier.Summary, o int, th int64, r paging.Request) ([]supplier.Summary, int) {
	base := ov.base
	n := base.size()
	keys := base.modKeys
	since := sort.Search(n, func(i int) bool { return keys[i] >= th })
	mods := &ov.ord[byModifiedAsc]
	k := mods.First(func(e viewEntry) bool { return e.it.key.mod >= th })
	deadBelow := 0
	if len(ov.deads) > 0 {
		deadBelow = ov.deadBy[byModifiedAsc].Before(since)
	}
	// The items modified before th: the delta's first k and the live
	// base ranks below since.
	before := k + since - deadBelow
	total := n - len(ov.deads) + mods.Len() - before
	lo, hi := paging.Window(total, r)
	if o == byModifiedAsc {
		lo, hi = lo+before, hi+before
	}
	return ov.pageAll(dst, o, lo, hi), total
}

// pageAll returns the items [lo, hi) of the unfiltered list in order o.
func (ov *overlay) pageAll(dst []supplier.Summary, o, lo, hi int) []supplier.Summary {
	if lo >= hi {
		return nil
	}
	base := ov.base
	n, l := base.size(), &ov.ord[o]
	d, nDead := l.Len(), len(ov.deads)
	f := &ov.deadBy[o]
	deadBefore := func(x int) int {
		if nDead == 0 {
			return 0
		}
		return f.Before(x)
	}
	// j: the delta items before the page; x: the base rank to go on from.
	j := 0
	if lo > 0 {
		// The first j whose item is at lo or after: a search on the
		// blocks' last items, then in the block.
		after := func(j int, at int32) bool { return j+int(at)-deadBefore(int(at)) >= lo }
		b := sort.Search(l.NumBlocks(), func(b int) bool {
			return after(l.Start(b)+len(l.Block(b))-1, l.Last(b).at)
		})
		j = d
		if b < l.NumBlocks() {
			blk, s := l.Block(b), l.Start(b)
			j = s + sort.Search(len(blk), func(i int) bool { return after(s+i, blk[i].at) })
		}
	}
	x := lo - j
	switch {
	case nDead == 0:
	case x >= n-nDead:
		x = n
	default:
		x = f.SelectUnmarked(x)
	}
	idx := base.orders[o]
	out := pageBuf(dst, hi-lo)
	need := hi - lo
	named := o == byNameAsc && base.named.n == n
	var next viewEntry // the next delta item (it nil: none)
	if j < d {
		next = l.At(j)
	}
	for len(out) < need {
		if next.it != nil && (x >= n || int(next.at) <= x) {
			out = append(out, next.it.rec.summary)
			j++
			next = viewEntry{}
			if j < d {
				next = l.At(j)
			}
			continue
		}
		if x >= n {
			break
		}
		p := int(idx[x])
		x++
		if !ov.isDead(p) {
			if named {
				out = append(out, base.named.at(int32(x-1)).summary)
			} else {
				out = append(out, base.rec(p).summary)
			}
		}
	}
	return out
}
