package memstore

import (
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/procurekit/procure/paging"
	"github.com/procurekit/procure/supplier"
)

// list returns the page q.Page (already checked) of the suppliers matching
// q, and the number of matches. The items are appended to dst[:0] when it
// has room for a page (see pageBuf), so a caller can reuse one buffer.
func (set *supplierSet) list(q supplier.ListQuery, dst []supplier.Summary) ([]supplier.Summary, int) {
	n := set.size()
	r := q.Page
	o := orderOf(r.Sort)

	// since: the suppliers modified at or after q.ModifiedSince are the
	// ranks [since, n) of the modifiedDate-ascending index.
	filterDate := !q.ModifiedSince.IsZero()
	since, th := 0, int64(0)
	if filterDate {
		th = ceilMicros(q.ModifiedSince)
		asc := set.orders[byModifiedAsc]
		since = sort.Search(n, func(i int) bool { return set.mod[asc[i]] >= th })
	}

	if q.Query == "" {
		if !filterDate {
			lo, hi := paging.Window(n, r)
			return set.page(dst, o, lo, hi, func(k int) int { return k }), n
		}
		total := n - since
		lo, hi := paging.Window(total, r)
		var rankAt func(k int) int
		switch o {
		case byModifiedAsc:
			rankAt = func(k int) int { return since + k }
		case byModifiedDesc:
			// Newest first: the matches are the first total ranks.
			rankAt = func(k int) int { return k }
		default:
			if set.gatherIsCheaper(total, o, lo, hi) {
				return set.gather(dst, o, set.orders[byModifiedAsc][since:], nil, lo, hi), total
			}
			return set.walkPage(dst, set.modBy[o], nil, span{since, n}, span{}, o, lo, hi), total
		}
		return set.page(dst, o, lo, hi, rankAt), total
	}

	x := &set.text
	ql := strings.ToLower(q.Query)
	ts, ps := x.terms.prefixSpan(ql), x.pairs.prefixSpan(ql)
	matches := (ts.hi - ts.lo) - (ps.hi - ps.lo)
	if !filterDate {
		lo, hi := paging.Window(matches, r)
		if set.gatherIsCheaper(ts.hi-ts.lo, o, lo, hi) {
			return set.gather(dst, o, x.owner[ts.lo:ts.hi], nil, lo, hi), matches
		}
		return set.walkPage(dst, x.by[o], x.pBy[o], ts, ps, o, lo, hi), matches
	}

	// Both filters. Count: the matches whose modifiedDate-ascending rank
	// is below since are the ones modified earlier.
	before := distinctLess(x.by[byModifiedAsc], ts, x.pBy[byModifiedAsc], ps, since)
	total := matches - before
	lo, hi := paging.Window(total, r)
	if lo >= hi {
		return nil, total
	}
	if set.gatherIsCheaper(ts.hi-ts.lo, o, lo, hi) {
		mod := set.mod
		return set.gather(dst, o, x.owner[ts.lo:ts.hi], func(p int32) bool { return mod[p] >= th }, lo, hi), total
	}
	switch o {
	case byModifiedAsc:
		return set.walkPage(dst, x.by[o], x.pBy[o], ts, ps, o, before+lo, before+hi), total
	case byModifiedDesc:
		// In newest-first order the recent matches come first.
		return set.walkPage(dst, x.by[o], x.pBy[o], ts, ps, o, lo, hi), total
	}
	return set.listBoth(dst, o, ts, ps, th, matches, total, lo, hi), total
}

// gatherIsCheaper reports whether collecting and sorting m candidates
// costs less than walking a wavelet matrix for the page [lo, hi) in order
// o. A walk costs a few rank operations per level for every item, each a
// likely cache miss in a large community; gathering costs a read of each
// candidate's rank and a sort of small integers. So a selective query (a
// few dozen terms) gathers, and a broad one walks.
func (set *supplierSet) gatherIsCheaper(m, o, lo, hi int) bool {
	levels := len(set.text.by[o].levels)
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
			out = append(out, set.rec(int(idx[rank])).detail.Summary)
		}
	}
	if cap(buf) <= maxPooledRanks {
		*bufp = buf
		rankBufs.Put(bufp)
	}
	return out
}

// page returns the items of ranks rankAt(k), k in [lo, hi), of order o.
func (set *supplierSet) page(dst []supplier.Summary, o, lo, hi int, rankAt func(k int) int) []supplier.Summary {
	if lo >= hi {
		return nil
	}
	idx := set.orders[o]
	out := pageBuf(dst, hi-lo)
	for k := lo; k < hi; k++ {
		out = append(out, set.rec(int(idx[rankAt(k)])).detail.Summary)
	}
	return out
}

// walkPage returns the items of the distinct ranks lo to hi-1 (in
// increasing order) that the wavelet walk over tw/pw and spans t/p
// enumerates, in order o.
func (set *supplierSet) walkPage(dst []supplier.Summary, tw, pw *wavelet, t, p span, o, lo, hi int) []supplier.Summary {
	if lo >= hi {
		return nil
	}
	idx := set.orders[o]
	out := pageBuf(dst, hi-lo)
	w := distinctWalk{tw: tw, pw: pw, skip: lo, yield: func(rank int) bool {
		out = append(out, set.rec(int(idx[rank])).detail.Summary)
		return len(out) < hi-lo
	}}
	w.run(t, p)
	return out
}

// listBoth serves query + modifiedSince sorted by name or createdDate, the
// one combination no single index answers. There are two plans:
//
//   - walk: enumerate the query's matches in order o (a depth-first walk
//     of the wavelet matrices) and keep those modified since th, from the front or, for a page
//     nearer the end, from the back. It touches about
//     (items needed) * matches/total matches.
//   - gather: collect the ranks in order o of every term in the query's
//     range modified since th, sort them and drop duplicates. It touches
//     every term of the range.
//
// Both are exact; the estimate only picks the cheaper one.
func (set *supplierSet) listBoth(dst []supplier.Summary, o int, ts, ps span, th int64, matches, total, lo, hi int) []supplier.Summary {
	x := &set.text
	fromBack := lo > total-hi
	need := hi
	if fromBack {
		need = total - lo
	}
	steps := min(matches, int((int64(need)*int64(matches)+int64(total)-1)/int64(total)))
	// A step of the walk costs a few rank operations on each matrix
	// (neighbouring items share most of their paths); gathering costs a
	// few random reads per term and the sort.
	const perStep = 16
	walkCost := int64(steps) * perStep
	gatherCost := int64(ts.hi-ts.lo)*3 + int64(total)*int64(log2(total)+1)

	if walkCost <= gatherCost {
		idx := set.orders[o]
		out := pageBuf(dst, hi-lo)
		// Enumerate the query's matches in order o (from the back for a
		// page nearer the end) and keep those modified since th.
		found := 0 // matches met so far, counted from the walk's start
		first, last := lo, hi
		if fromBack {
			first, last = total-hi, total-lo
		}
		w := distinctWalk{tw: x.by[o], pw: x.pBy[o], rev: fromBack, yield: func(rank int) bool {
			p := idx[rank]
			if set.mod[p] < th {
				return true
			}
			if found >= first {
				out = append(out, set.rec(int(p)).detail.Summary)
			}
			found++
			return found < last
		}}
		w.run(ts, ps)
		if fromBack {
			slices.Reverse(out)
		}
		return out
	}

	mod := set.mod
	return set.gather(dst, o, x.owner[ts.lo:ts.hi], func(p int32) bool { return mod[p] >= th }, lo, hi)
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
