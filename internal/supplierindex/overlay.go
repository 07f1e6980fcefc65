package supplierindex

import (
	"bytes"
	"cmp"
	"sort"
	"strings"
	"sync/atomic"

	"github.com/google/uuid"

	"github.com/procurekit/procure/internal/blist"
	"github.com/procurekit/procure/internal/fenwick"
)

// This file holds what makes a community's suppliers writable without
// rebuilding its indexes: the overlay, the changes made since its
// immutable base supplierSet was built. See the package documentation
// (doc.go) for the design and its costs.

// orderKey is what the six supplier orders compare: the name's sort key
// (nil for no name), the dates in microseconds and the id (the
// tie-break).
type orderKey struct {
	name    []byte
	created int64
	mod     int64
	id      uuid.UUID
}

func keyOf(rec *supplierRec) orderKey {
	d := &rec.summary
	return orderKey{name: sortKey(d.Name.String()), created: d.CreatedDate.UnixMicro(), mod: d.ModifiedDate.UnixMicro(), id: d.ID}
}

// compareKeys orders a and b in order o exactly as buildOrder does
// (docs: paging.md): empty names last in both directions, equal keys
// by id ascending in both directions.
func compareKeys(o int, a, b *orderKey) int {
	var c int
	switch o {
	case byNameAsc, byNameDesc:
		switch {
		case len(a.name) == 0 && len(b.name) == 0:
		case len(a.name) == 0:
			return 1
		case len(b.name) == 0:
			return -1
		default:
			c = bytes.Compare(a.name, b.name)
		}
	case byCreatedAsc, byCreatedDesc:
		c = cmp.Compare(a.created, b.created)
	default:
		c = cmp.Compare(a.mod, b.mod)
	}
	if c != 0 {
		if o%2 == 1 {
			return -c
		}
		return c
	}
	return bytes.Compare(a.id[:], b.id[:])
}

// deltaItem is a record written since the base was built: a new supplier,
// or the new version of one (whose base version, if any, is dead).
type deltaItem struct {
	rec *supplierRec
	key orderKey
	// at[o] is the number of base suppliers before this one in order o
	// (dead ones included): where it goes between the base's ranks.
	at [numOrders]int32
	// terms are the match keys of the searchable texts, for the query filter,
	// and pairs the common prefixes of neighbouring terms (textIndex).
	terms, pairs []string
	// seq orders the item's entries among equal terms (termRef).
	seq int64
}

// deltaSeq numbers the delta items.
var deltaSeq atomic.Int64

// deadItem is a base supplier that a write replaced or deleted.
type deadItem struct {
	pos          int32
	mod          int64
	terms, pairs []string
}

// termPairs returns the non-empty common prefixes of neighbouring terms
// (sorted, distinct), as textIndex keeps them: a query matches a
// supplier's terms less its pairs times, once.
func termPairs(terms []string) []string {
	var out []string
	for j := 1; j < len(terms); j++ {
		if l := commonPrefix(terms[j-1], terms[j]); l > 0 {
			out = append(out, terms[j][:l])
		}
	}
	return out
}

// newDeltaItem places rec relative to base: for each field, binary
// searches on the base's compact ascending keys by rank give its place in
// the ascending and the descending order at once (place).
func newDeltaItem(base *supplierSet, rec *supplierRec) *deltaItem {
	it := &deltaItem{rec: rec, key: keyOf(rec), terms: matchTerms(rec, nil), seq: deltaSeq.Add(1)}
	it.pairs = termPairs(it.terms)
	n := base.size()
	k := &it.key
	idLess := func(asc int) func(r int) bool {
		idx := base.orders[asc]
		return func(r int) bool {
			id := base.rec(int(idx[r])).summary.ID
			return bytes.Compare(id[:], k.id[:]) < 0
		}
	}
	names := &base.nameKeys
	nonNull := sort.Search(n, func(r int) bool { return names.length[r] == 0 })
	kk := prefixKey(k.name, 0)
	a, d := place(n, nonNull, len(k.name) == 0, func(r int) int {
		if c := cmp.Compare(names.keys[r], kk); c != 0 {
			return c
		}
		if len(k.name) <= 8 && names.length[r] <= 8 {
			// Equal first bytes, zero-padded: the shorter is smaller.
			return cmp.Compare(int(names.length[r]), len(k.name))
		}
		return bytes.Compare(names.at(r), k.name)
	}, idLess(byNameAsc))
	it.at[byNameAsc], it.at[byNameDesc] = int32(a), int32(d)
	a, d = place(n, n, false, func(r int) int { return cmp.Compare(base.createdKeys[r], k.created) }, idLess(byCreatedAsc))
	it.at[byCreatedAsc], it.at[byCreatedDesc] = int32(a), int32(d)
	a, d = place(n, n, false, func(r int) int { return cmp.Compare(base.modKeys[r], k.mod) }, idLess(byModifiedAsc))
	it.at[byModifiedAsc], it.at[byModifiedDesc] = int32(a), int32(d)
	return it
}

// place returns how many of n base suppliers come before a key in the
// ascending and in the descending order of one field (docs: paging.md). The base's keys by ascending rank are compared with the key
// by cmpAt over the ranks [0, nonNull) that have one; the keyless ranks
// follow, in id order. null says the key is absent. idLess(r) reports
// whether the supplier at ascending rank r has a smaller id: equal keys
// are in id order in both directions.
func place(n, nonNull int, null bool, cmpAt func(r int) int, idLess func(r int) bool) (asc, desc int) {
	if null {
		eq := sort.Search(n-nonNull, func(i int) bool { return !idLess(nonNull + i) })
		return nonNull + eq, nonNull + eq
	}
	lower := sort.Search(nonNull, func(r int) bool { return cmpAt(r) >= 0 })
	upper := lower + sort.Search(nonNull-lower, func(i int) bool { return cmpAt(lower+i) > 0 })
	eq := sort.Search(upper-lower, func(i int) bool { return !idLess(lower + i) })
	return lower + eq, nonNull - upper + eq
}

// overlay is the changes to a base: dead base suppliers and delta items.
// It is mutated in place under comSuppliers.mu (readers hold it shared).
type overlay struct {
	base  *supplierSet
	dead  []uint64 // a bit per base position
	deads []deadItem
	// deadBy[o] counts the dead by rank in order o (allocated with the
	// first dead supplier).
	deadBy [numOrders]fenwick.Marks
	byID   map[uuid.UUID]*deltaItem
	// ord[o] holds the delta items in order o, each with its placed
	// rank at[o] (read without following the item).
	ord [numOrders]blist.List[viewEntry]
	// terms and deadTerms index the searchable terms of the delta items
	// and of the dead base suppliers.
	terms, deadTerms blist.List[termRef]
	// pairs and deadPairs hold their pairs (termPairs), so that a query's
	// matches are counted, as in the base, with two searches each.
	pairs, deadPairs blist.List[termRef]
	// deadByMod lists the dead (indexes into deads) by modifiedDate.
	deadByMod blist.List[int32]
	// views keeps the matches of filters asked for repeatedly
	// (view.go).
	views views
}

func newOverlay(base *supplierSet) *overlay {
	ov := &overlay{base: base, byID: make(map[uuid.UUID]*deltaItem)}
	for o := range numOrders {
		ov.ord[o].Init(func(a, b viewEntry) int {
			if a.at != b.at {
				return cmp.Compare(a.at, b.at)
			}
			return compareKeys(o, &a.it.key, &b.it.key)
		})
	}
	for _, l := range []*blist.List[termRef]{&ov.terms, &ov.deadTerms, &ov.pairs, &ov.deadPairs} {
		l.Init(compareTermRefs)
	}
	ov.deadByMod.Init(func(a, b int32) int {
		return cmp.Or(cmp.Compare(ov.deads[a].mod, ov.deads[b].mod), cmp.Compare(a, b))
	})
	return ov
}

// size is the number of changes the overlay holds.
func (ov *overlay) size() int { return len(ov.deads) + len(ov.byID) }

// empty reports whether the overlay changes nothing.
func (ov *overlay) empty() bool { return len(ov.deads) == 0 && len(ov.byID) == 0 }

func (ov *overlay) isDead(p int) bool {
	return len(ov.dead) > 0 && ov.dead[p>>6]&(1<<(uint(p)&63)) != 0
}

// find returns the current record of the supplier id, or nil.
func (ov *overlay) find(id uuid.UUID) *supplierRec {
	if it, ok := ov.byID[id]; ok {
		return it.rec
	}
	p, ok := ov.base.byID[id]
	if !ok || ov.isDead(int(p)) {
		return nil
	}
	return ov.base.rec(int(p))
}

// put makes it the current version of its supplier. it was made by
// newDeltaItem against ov.base.
func (ov *overlay) put(it *deltaItem) {
	ov.remove(it.key.id)
	ov.byID[it.key.id] = it
	for o := range numOrders {
		ov.ord[o].Insert(viewEntry{at: it.at[o], it: it})
	}
	for _, t := range it.terms {
		ov.terms.Insert(newTermRef(t, it, 0))
	}
	for _, t := range it.pairs {
		ov.pairs.Insert(newTermRef(t, it, 0))
	}
	ov.viewsPut(it)
}

// remove deletes the current version of the supplier id, if any.
func (ov *overlay) remove(id uuid.UUID) {
	if old, ok := ov.byID[id]; ok {
		delete(ov.byID, id)
		for o := range numOrders {
			ov.ord[o].Remove(viewEntry{at: old.at[o], it: old})
		}
		for _, t := range old.terms {
			ov.terms.Remove(newTermRef(t, old, 0))
		}
		for _, t := range old.pairs {
			ov.pairs.Remove(newTermRef(t, old, 0))
		}
		ov.viewsRemove(old)
		return
	}
	p, ok := ov.base.byID[id]
	if !ok || ov.isDead(int(p)) {
		return
	}
	n := ov.base.size()
	if ov.dead == nil {
		ov.dead = make([]uint64, (n+63)/64)
		for o := range numOrders {
			ov.deadBy[o] = fenwick.NewMarks(n)
		}
	}
	ov.dead[p>>6] |= 1 << (uint(p) & 63)
	for o := range numOrders {
		ov.deadBy[o].Add(int(ov.base.ranks[o][p]))
	}
	d := deadItem{pos: p, mod: ov.base.mod[p], terms: matchTerms(ov.base.rec(int(p)), nil)}
	d.pairs = termPairs(d.terms)
	for _, t := range d.terms {
		ov.deadTerms.Insert(newTermRef(t, nil, int32(len(ov.deads))))
	}
	for _, t := range d.pairs {
		ov.deadPairs.Insert(newTermRef(t, nil, int32(len(ov.deads))))
	}
	ov.viewsDead(&d)
	ov.deads = append(ov.deads, d)
	ov.deadByMod.Insert(int32(len(ov.deads) - 1))
}

// termRef is a searchable term of a delta item or of a dead base
// supplier (deads index), for the query filter. key and key2 are the
// term's first 16 bytes (prefixKey): comparisons read them, not the
// term's bytes, unless both are equal and a term is longer; equal terms
// are ordered by the item's seq (or deads), also without reading it.
type termRef struct {
	term      string
	key, key2 uint64
	item      *deltaItem
	seq       int64
	deads     int32
}

func newTermRef(term string, it *deltaItem, deads int32) termRef {
	t := termRef{term: term, key: prefixKey(term, 0), item: it, deads: deads}
	if len(term) > 8 {
		t.key2 = prefixKey(term[8:], 0)
	}
	if it != nil {
		t.seq = it.seq
	}
	return t
}

func compareTermRefs(a, b termRef) int {
	if a.key != b.key {
		return cmp.Compare(a.key, b.key)
	}
	if a.key2 != b.key2 {
		return cmp.Compare(a.key2, b.key2)
	}
	if len(a.term) > 16 || len(b.term) > 16 || len(a.term) != len(b.term) {
		if c := strings.Compare(a.term, b.term); c != 0 {
			return c
		}
	}
	return cmp.Or(cmp.Compare(a.seq, b.seq), cmp.Compare(a.deads, b.deads))
}

// termBounds tells the entries of a term index that start with lq (not
// empty) from those before and after them, as strTable.prefixSpan does:
// by the 8-byte keys alone when lq is no longer than 8 bytes.
type termBounds struct {
	lq         string
	kmin, kmax uint64
}

func boundsOf(lq string) termBounds {
	return termBounds{lq: lq, kmin: prefixKey(lq, 0), kmax: prefixKey(lq, 0xFF)}
}

// notBefore reports whether t is not before the entries starting with lq.
func (b *termBounds) notBefore(t *termRef) bool {
	if t.key != b.kmin {
		return t.key > b.kmin
	}
	return t.term >= b.lq
}

// within reports whether t, not before them, starts with lq.
func (b *termBounds) within(t *termRef) bool {
	if t.key > b.kmax {
		return false
	}
	return len(b.lq) <= 8 || strings.HasPrefix(t.term, b.lq)
}

// countPrefix is the number of entries of l whose term starts with lq.
func countPrefix(l *blist.List[termRef], lq string) int {
	b := boundsOf(lq)
	lo := l.First(func(t termRef) bool { return b.notBefore(&t) })
	hi := l.First(func(t termRef) bool { return b.notBefore(&t) && !b.within(&t) })
	return hi - lo
}

// prefixRange returns the entries of l whose term starts with lq.
func prefixRange(l *blist.List[termRef], lq string, yield func(termRef) bool) {
	b := boundsOf(lq)
	i := l.First(func(t termRef) bool { return b.notBefore(&t) })
	l.Each(i, func(t termRef) bool {
		return b.within(&t) && yield(t)
	})
}
