package supplierindex

import (
	"math"
	"slices"
	"sort"
	"sync"

	"github.com/procurekit/procure/internal/wavelet"
	"github.com/procurekit/procure/paging"
	"github.com/procurekit/procure/supplier"
)

// noSince is the modifiedSince threshold of a list without modifiedSince:
// every supplier is modified at or after it.
const noSince = math.MinInt64

// filter is a list's query as the index compares it.
type filter struct {
	// lq is the query's match key; empty: no query (a query whose key
	// is empty, only combining marks, is a prefix of every text).
	lq string
	// th is modifiedSince in microseconds, rounded up (ceilMicros), or
	// noSince.
	th int64
	o  int // the order
}

func filterOf(q supplier.ListQuery) filter {
	f := filter{th: noSince, o: orderOf(q.Page.Sort)}
	if q.Query != "" {
		f.lq = matchKey(q.Query)
	}
	if !q.ModifiedSince.IsZero() {
		f.th = ceilMicros(q.ModifiedSince)
	}
	return f
}

// list returns the page q.Page (already checked) of the suppliers matching
// q, and the number of matches: the one planner of every list. The items
// are appended to dst[:0] when it has room for a page (see pageBuf), so a
// caller can reuse one buffer.
//
// The plans, cheapest first: without filters, and with modifiedSince
// alone sorted by modifiedDate, a page is a range of the merged order
// (listAll, listSince). Otherwise the base's matches are described once
// (matches); with no change in the overlay they are the page (a wavelet
// walk, or a sort of few candidates); else through the filter's view when
// it has one (listView), else merged with the overlay's matches found for
// this request (listMerged).
func (ov *overlay) list(q supplier.ListQuery, dst []supplier.Summary) ([]supplier.Summary, int) {
	f := filterOf(q)
	r := q.Page
	switch {
	case f.lq == "" && f.th == noSince:
		return ov.listAll(dst, f.o, r)
	case f.lq == "" && f.o >= byModifiedAsc:
		return ov.listSince(dst, f.o, f.th, r)
	}
	m := ov.base.matches(f)
	if ov.empty() {
		lo, hi := paging.Window(m.total, r)
		return m.page(dst, lo, hi), m.total
	}
	if out, total, ok := ov.listView(dst, f, &m, r); ok {
		return out, total
	}
	return ov.listMerged(dst, f, &m, r)
}

// matches describes the base suppliers matching a filter (not empty, and
// not modifiedSince alone in a modifiedDate order): in order o, they are
// the distinct values of span t of tw less span p of pw (a wavelet walk
// over ranks in order o, see wavelet.DistinctWalk) that lie in [vlo, vhi),
// skip of the walk's values lying below vlo; when filtered (query and
// modifiedSince sorted by name or createdDate, which no matrix answers)
// only those modified at or after th.
type matches struct {
	set      *supplierSet
	o        int
	total    int
	tw, pw   *wavelet.Matrix
	t, p     span
	vlo, vhi int
	skip     int
	th       int64 // the filter's modifiedSince (noSince: none)
	filtered bool
	// walked is the number of the walk's values when filtered (the
	// query's matches, of which total are modified since th).
	walked int
	// cands are the positions among which the matches are, with
	// repeats and others: the gather plan's input. Those of a query are
	// not all modified since th; those of modifiedSince alone are.
	cands     []int32
	candsDate bool // whether a candidate must be checked against th
	// got are the ranks of the matches, sorted, once gathered (filtered).
	got      []int32
	gathered bool
}

// matches returns the base's side of the filtered list f.
func (set *supplierSet) matches(f filter) matches {
	n := set.size()
	m := matches{set: set, o: f.o, vhi: n, th: f.th}
	since := 0
	if f.th != noSince {
		since = sort.Search(n, func(i int) bool { return set.modKeys[i] >= f.th })
	}
	if f.lq == "" {
		// modifiedSince in name or createdDate order.
		m.tw, m.t = set.modBy[f.o], span{Lo: since, Hi: n}
		m.total = n - since
		m.cands = set.orders[byModifiedAsc][since:]
		return m
	}
	x := &set.text
	ts, ps := x.terms.prefixSpan(f.lq), x.pairs.prefixSpan(f.lq)
	m.tw, m.pw, m.t, m.p = x.by[f.o], x.pBy[f.o], ts, ps
	m.cands = x.owner[ts.Lo:ts.Hi]
	all := ts.Len() - ps.Len()
	m.total = all
	if f.th == noSince {
		return m
	}
	// Both filters: the query's matches ranked below since in
	// modifiedDate-ascending order are the ones modified earlier.
	before := wavelet.DistinctLess(x.by[byModifiedAsc], ts, x.pBy[byModifiedAsc], ps, since)
	m.total = all - before
	m.candsDate = true
	switch f.o {
	case byModifiedAsc:
		m.vlo, m.skip = since, before
	case byModifiedDesc:
		// Newest first: the recent matches come first.
		m.vhi = n - since
	default:
		m.filtered, m.walked = true, all
	}
	return m
}

// walkable reports whether a walk lists exactly the matches.
func (m *matches) walkable() bool { return !m.filtered }

// count is the number of matches ranked below x.
func (m *matches) count(x int) int {
	if !m.walkable() {
		m.gather()
		i, _ := slices.BinarySearch(m.got, int32(x))
		return i
	}
	c := wavelet.DistinctLess(m.tw, m.t, m.pw, m.p, min(x, m.vhi)) - m.skip
	return max(0, min(c, m.total))
}

// each yields the ranks of the matches in increasing order from the k-th
// on, until yield returns false.
func (m *matches) each(k int, yield func(rank int) bool) {
	if !m.walkable() {
		m.gather()
		for _, r := range m.got[min(k, len(m.got)):] {
			if !yield(int(r)) {
				return
			}
		}
		return
	}
	left := m.total - k
	if left <= 0 {
		return
	}
	w := wavelet.DistinctWalk{T: m.tw, P: m.pw, Skip: m.skip + k, Yield: func(r int) bool {
		left--
		return yield(r) && left > 0
	}}
	w.Run(m.t, m.p)
}

// gather lists the ranks of the matches (filtered), once.
func (m *matches) gather() {
	if m.gathered {
		return
	}
	m.gathered = true
	set := m.set
	rk := set.ranks[m.o]
	for _, p := range m.cands {
		if set.mod[p] >= m.th {
			m.got = append(m.got, rk[p])
		}
	}
	slices.Sort(m.got)
	m.got = slices.Compact(m.got)
}

// page returns the matches [lo, hi) in order o, when the overlay changes
// nothing: by a walk, or by a sort of the candidates when they are few.
func (m *matches) page(dst []supplier.Summary, lo, hi int) []supplier.Summary {
	if lo >= hi {
		return nil
	}
	set := m.set
	var keep func(p int32) bool
	if m.candsDate {
		mod, th := set.mod, m.th
		keep = func(p int32) bool { return mod[p] >= th }
	}
	if set.gatherIsCheaper(len(m.cands), m.o, lo, hi) {
		return set.gather(dst, m.o, m.cands, keep, lo, hi)
	}
	if !m.walkable() {
		return set.listBoth(dst, m, lo, hi)
	}
	return set.walkPage(dst, m.tw, m.pw, m.t, m.p, m.o, m.skip+lo, m.skip+hi)
}

// gatherIsCheaper reports whether collecting and sorting m candidates
// costs less than walking a wavelet matrix for the page [lo, hi) in order
// o. A walk costs a few rank operations per level for every item, each a
// likely cache miss in a large community; gathering costs a read of each
// candidate's rank and a sort of small integers. So a selective query (a
// few dozen terms) gathers, and a broad one walks.
func (set *supplierSet) gatherIsCheaper(m, o, lo, hi int) bool {
	levels := set.text.by[o].Levels()
	return m <= 2*levels*(hi-lo+1)
}

// gather returns the page [lo, hi), in order o, of the distinct positions
// among candidates that keep (nil: all) accepts.
func (set *supplierSet) gather(dst []supplier.Summary, o int, candidates []int32, keep func(p int32) bool, lo, hi int) []supplier.Summary {
	bufp := rankBufs.Get().(*[]int32)
	buf := (*bufp)[:0]
	rk := set.ranks[o]
	for _, p := range candidates {
		if keep == nil || keep(p) {
			buf = append(buf, rk[p])
		}
	}
	slices.Sort(buf)
	buf = slices.Compact(buf)
	var out []supplier.Summary
	if lo < len(buf) {
		idx := set.orders[o]
		page := buf[lo:min(hi, len(buf))]
		out = pageBuf(dst, len(page))
		for _, rank := range page {
			out = append(out, set.rec(int(idx[rank])).summary)
		}
	}
	if cap(buf) <= maxPooledRanks {
		*bufp = buf
		rankBufs.Put(bufp)
	}
	return out
}

// walkPage returns the items of the distinct ranks lo to hi-1 (in
// increasing order) that the wavelet walk over tw/pw and spans t/p
// enumerates, in order o.
func (set *supplierSet) walkPage(dst []supplier.Summary, tw, pw *wavelet.Matrix, t, p span, o, lo, hi int) []supplier.Summary {
	if lo >= hi {
		return nil
	}
	idx := set.orders[o]
	out := pageBuf(dst, hi-lo)
	w := wavelet.DistinctWalk{T: tw, P: pw, Skip: lo, Yield: func(rank int) bool {
		out = append(out, set.rec(int(idx[rank])).summary)
		return len(out) < hi-lo
	}}
	w.Run(t, p)
	return out
}

// listBoth serves query + modifiedSince sorted by name or createdDate, the
// one combination no single index answers. There are two plans:
//
//   - walk: enumerate the query's matches in order o (a depth-first walk
//     of the wavelet matrices) and keep those modified since th, from the
//     front or, for a page nearer the end, from the back. It touches about
//     (items needed) * (query matches) / (matches).
//   - gather: collect the ranks in order o of every term in the query's
//     range modified since th, sort them and drop duplicates. It touches
//     every term of the range.
//
// Both are exact; the estimate only picks the cheaper one.
func (set *supplierSet) listBoth(dst []supplier.Summary, m *matches, lo, hi int) []supplier.Summary {
	total, all, th := m.total, m.walked, m.th
	fromBack := lo > total-hi
	need := hi
	if fromBack {
		need = total - lo
	}
	steps := min(all, int((int64(need)*int64(all)+int64(total)-1)/int64(total)))
	// A step of the walk costs a few rank operations on each matrix
	// (neighbouring items share most of their paths); gathering costs a
	// few random reads per term and the sort.
	const perStep = 16
	walkCost := int64(steps) * perStep
	gatherCost := int64(len(m.cands))*3 + int64(total)*int64(log2(total)+1)

	if walkCost > gatherCost {
		mod := set.mod
		return set.gather(dst, m.o, m.cands, func(p int32) bool { return mod[p] >= th }, lo, hi)
	}
	idx := set.orders[m.o]
	out := pageBuf(dst, hi-lo)
	// Enumerate the query's matches in order o (from the back for a
	// page nearer the end) and keep those modified since th.
	found := 0 // matches met so far, counted from the walk's start
	first, last := lo, hi
	if fromBack {
		first, last = total-hi, total-lo
	}
	w := wavelet.DistinctWalk{T: m.tw, P: m.pw, Rev: fromBack, Yield: func(rank int) bool {
		p := idx[rank]
		if set.mod[p] < th {
			return true
		}
		if found >= first {
			out = append(out, set.rec(int(p)).summary)
		}
		found++
		return found < last
	}}
	w.Run(m.t, m.p)
	if fromBack {
		slices.Reverse(out)
	}
	return out
}

// rankBufs recycles the gather plan's buffers; very large ones are left to
// the garbage collector rather than pinned.
var rankBufs = sync.Pool{New: func() any { b := make([]int32, 0, 1024); return &b }}

const maxPooledRanks = 1 << 20

func log2(n int) int {
	l := 0
	for n > 1 {
		n >>= 1
		l++
	}
	return l
}

// pageBuf returns dst emptied when it can hold n items, and a new slice
// otherwise.
func pageBuf(dst []supplier.Summary, n int) []supplier.Summary {
	if cap(dst) >= n {
		return dst[:0]
	}
	return make([]supplier.Summary, 0, n)
}
