package supplierindex

import (
	"bytes"
	"cmp"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/procurekit/procure/internal/wavelet"
	"github.com/procurekit/procure/paging"
	"github.com/procurekit/procure/supplier"
)

// span is a range of positions in a wavelet matrix or a sorted table.
type span = wavelet.Span

// The supplier orders a list may ask for. Each has an index (rank -> position)
// and its inverse (position -> rank).
const (
	byNameAsc = iota
	byNameDesc
	byCreatedAsc
	byCreatedDesc
	byModifiedAsc
	byModifiedDesc
	numOrders
)

// orderOf maps a checked sort to its order.
func orderOf(s paging.Sort) int {
	o := byNameAsc
	switch s.Field {
	case "createdDate":
		o = byCreatedAsc
	case "modifiedDate":
		o = byModifiedAsc
	}
	if s.Desc {
		o++
	}
	return o
}

// supplierRec is what the store keeps of one supplier: the summary (what
// the lists read), the keywords (which only the text index reads, and a
// rebuild needs) and the rest packed (packed.go): the detail's other
// parts, the contacts in name order and the remittance addresses in
// companyName order with their other orders. A record is immutable once
// stored: a write makes a new one.
type supplierRec struct {
	summary  supplier.Summary
	keywords []string
	parts    string
}

// The orders of a supplier's remittance addresses.
const (
	addrByName = iota
	addrByNameDesc
	addrByDateAsc
	addrByDateDesc
)

// supplierSet is the immutable, indexed supplier data of one community.
//
// Records are kept in id order, so a position doubles as the id tie-break
// of every order. For each order there is the index (rank -> position) and
// its inverse, so a page without filters is index arithmetic.
//
// modifiedSince selects a suffix of the modifiedDate-ascending index (found
// by binary search); modBy[o] is a wavelet matrix over the ranks in order o
// of the suppliers in that index, so that the matches in order o, from the
// k-th on, are a depth-first walk of O(log n) per item.
//
// query selects a range of text, the sorted match keys of the searchable
// terms (name, legalBusinessName, supplierId, keywords) of every supplier. A
// supplier may own several terms in one range (its name and legal name
// both start with the query); see textIndex for how it is counted once.
type supplierSet struct {
	recs []*supplierRec // the record of each position
	// named holds the records in name order when a load laid them out
	// (layOut): named.at(r) is the record of rank r by name ascending,
	// read without recs (a cache miss per item of a page: the positions
	// of consecutive ranks are anywhere in recs). Empty for a set a
	// compaction built, whose records stay where they were.
	named  recStore
	byID   map[uuid.UUID]int32
	mod    []int64 // modifiedDate of each position, in microseconds
	create []int64 // createdDate of each position, in microseconds
	// The ascending keys by rank, for placing a written record among the
	// ranks with compact binary searches (newDeltaItem): the names' sort
	// keys (empty names last; the arena holds them by position),
	// createdDates and modifiedDates.
	nameKeys             strTable
	createdKeys, modKeys []int64
	orders               [numOrders][]int32
	ranks                [numOrders][]int32
	modBy                [byCreatedDesc + 1]*wavelet.Matrix
	text                 textIndex
	// maxMod is the largest modifiedDate of the suppliers, contacts and
	// addresses, in microseconds: where a community's stamps start.
	maxMod int64
}

// rec is the record at position p.
func (set *supplierSet) rec(p int) *supplierRec { return set.recs[p] }

// size is the number of suppliers.
func (set *supplierSet) size() int { return len(set.recs) }

// strTable is a sorted table of strings stored in one byte arena (no
// pointers for the garbage collector to chase, and repeated strings, such
// as a keyword shared by many suppliers, are stored once).
type strTable struct {
	arena  []byte
	start  []uint32
	length []uint16
	// keys holds the first 8 bytes of each string (big-endian, padded
	// with zeros), in the same order: a binary search reads this compact
	// array instead of chasing the arena, and a query of up to 8 bytes
	// needs nothing else.
	keys []uint64
}

// prefixKey is the first 8 bytes of s, big-endian, padded with pad.
func prefixKey[T string | []byte](s T, pad byte) uint64 {
	var k uint64
	for i := 0; i < 8; i++ {
		b := pad
		if i < len(s) {
			b = s[i]
		}
		k = k<<8 | uint64(b)
	}
	return k
}

func (t *strTable) at(i int) []byte {
	s := t.start[i]
	return t.arena[s : s+uint32(t.length[i])]
}

// prefixSpan is the range of entries that start with q (not empty).
//
// Strings starting with q have keys from prefixKey(q, 0x00) to
// prefixKey(q, 0xFF); for a q of up to 8 bytes those are exactly the
// strings that start with it. A longer q narrows that range by comparing
// strings.
func (t *strTable) prefixSpan(q string) span {
	keys := t.keys
	kmin, kmax := prefixKey(q, 0), prefixKey(q, 0xFF)
	lo := sort.Search(len(keys), func(i int) bool { return keys[i] >= kmin })
	hi := lo + sort.Search(len(keys)-lo, func(i int) bool { return keys[lo+i] > kmax })
	if len(q) <= 8 {
		return span{Lo: lo, Hi: hi}
	}
	n := hi - lo
	first := lo + sort.Search(n, func(i int) bool { return string(t.at(lo+i)) >= q })
	last := first + sort.Search(hi-first, func(i int) bool {
		b := t.at(first + i)
		return len(b) < len(q) || string(b[:len(q)]) != q
	})
	return span{Lo: first, Hi: last}
}

// textIndex is the index of the list's query.
//
// terms holds every supplier's distinct terms (match keys), sorted, with the
// owning position in owner. The terms starting with a query are one range.
//
// To count each supplier once, pairs holds, for every two neighbouring
// terms of one supplier (in the supplier's own sorted list of terms), their
// common prefix, when not empty. A supplier whose terms match a query q
// owns a run of j consecutive matching terms in its sorted list, and so
// exactly j-1 neighbouring pairs that both match, which are exactly its
// pairs whose common prefix starts with q. Summed over suppliers: distinct
// matches = matching terms - matching pairs, two binary searches. The same
// identity holds within any interval of ranks, which is what lets
// distinctWalk descend the two wavelet matrices in step, skip whole
// subtrees of ranks by their counts, and list the matches in any order
// from the k-th on in O(log n) per item.
type textIndex struct {
	terms strTable
	owner []int32
	by    [numOrders]*wavelet.Matrix // ranks of owner[i] in each order
	pairs strTable
	pBy   [numOrders]*wavelet.Matrix // ranks of each pair's owner
}

// termEntry is a term or a pair prefix with its owner, while building.
// Sorting compares the 8-byte keys first, which settles most comparisons
// without reading the strings (millions of them in a large community).
type termEntry struct {
	key   uint64
	s     string
	owner int32
}

func newEntry(s string, owner int32) termEntry {
	return termEntry{key: prefixKey(s, 0), s: s, owner: owner}
}

func cmpEntry(a, b termEntry) int {
	if c := cmp.Compare(a.key, b.key); c != 0 {
		return c
	}
	if c := strings.Compare(a.s, b.s); c != 0 {
		return c
	}
	return cmp.Compare(a.owner, b.owner)
}

// maxTermBytes is the longest searchable text the index stores (its length
// is kept in 16 bits). Validated data stays far below: 255 characters.
const maxTermBytes = math.MaxUint16

func checkCount(n int) error {
	if n > math.MaxInt32/2 {
		return fmt.Errorf("suppliers: at most %d per community (got %d)", math.MaxInt32/2, n)
	}
	return nil
}

// recStore holds a community's records in chunks, in the order they were
// added: growing it never copies a record, and no record moves after.
type recStore struct {
	chunks [][]supplierRec
	n      int
}

const recChunkBits = 13

func (r *recStore) at(i int32) *supplierRec {
	return &r.chunks[i>>recChunkBits][i&(1<<recChunkBits-1)]
}

func (r *recStore) add(rec supplierRec) {
	if r.n>>recChunkBits == len(r.chunks) {
		r.chunks = append(r.chunks, make([]supplierRec, 0, 1<<recChunkBits))
	}
	last := &r.chunks[len(r.chunks)-1]
	*last = append(*last, rec)
	r.n++
}

// indexSuppliers indexes the records of one community, which it takes
// over. The records are in file order; errors name them by that index.
func indexSuppliers(recs recStore) (*supplierSet, error) {
	src := make([]*supplierRec, recs.n)
	for i := range src {
		src[i] = recs.at(int32(i))
	}
	set, err := indexRecsPar(src, 0, nil)
	if err != nil {
		return nil, err
	}
	recs.layOut(set)
	return set, nil
}

// indexRecsPar indexes records, which must not change afterwards (a set
// shares them: a compaction builds a new set over the same records), on
// up to par goroutines (0: GOMAXPROCS). known, when not nil, gives the
// name sort keys already computed (a compaction's: the old base's and the
// delta items'), ok false for one to compute. Errors name records by their
// index in src.
func indexRecsPar(src []*supplierRec, par int, known func(i int) (key []byte, ok bool)) (*supplierSet, error) {
	n := len(src)
	if err := checkCount(n); err != nil {
		return nil, err
	}
	// Positions are id order: slot[p] is the record at position p.
	slot := make([]int32, n)
	ids := make([]uuid.UUID, n)
	for i := range n {
		ids[i] = src[i].summary.ID
		if ids[i] == uuid.Nil {
			return nil, fmt.Errorf("suppliers[%d].id: is required (a non-nil UUID)", i)
		}
		slot[i] = int32(i)
	}
	slices.SortFunc(slot, func(a, b int32) int {
		if c := bytes.Compare(ids[a][:], ids[b][:]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	for p := 1; p < n; p++ {
		if ids[slot[p]] == ids[slot[p-1]] {
			return nil, fmt.Errorf("suppliers[%d].id: duplicate supplier id %s", slot[p], ids[slot[p]])
		}
	}
	posOf := make([]int32, n)
	for p, i := range slot {
		posOf[i] = int32(p)
	}

	// The text keys (sort keys of the names, match keys of the terms)
	// cost most of a build: computed once here, on every core.
	keys, err := textKeys(src, posOf, par, known)
	if err != nil {
		return nil, err
	}

	set := &supplierSet{
		maxMod: math.MinInt64,
		recs:   make([]*supplierRec, n),
		byID:   make(map[uuid.UUID]int32, n),
		mod:    make([]int64, n),
	}
	created := make([]int64, n)
	set.create = created
	// Walk the records in storage order (sequential reads), each at its
	// position.
	for i := range n {
		p := int(posOf[i])
		set.recs[p] = src[i]
		set.maxMod = max(set.maxMod, recMaxModified(src[i]))
		d := &src[i].summary
		set.byID[d.ID] = int32(p)
		set.mod[p] = d.ModifiedDate.UnixMicro()
		created[p] = d.CreatedDate.UnixMicro()
	}
	names := &keys.names // by position
	terms, pairs := keys.terms, keys.pairs
	keys.terms, keys.pairs = nil, nil

	// The orders and the sorts of the text index are independent: build
	// them in parallel.
	mod := set.mod
	runAll(par, []func(){
		func() {
			set.orders[byNameAsc], set.orders[byNameDesc] = buildOrder(n,
				func(a, b int32) int {
					if c := cmp.Compare(names.keys[a], names.keys[b]); c != 0 {
						return c
					}
					return bytes.Compare(names.at(int(a)), names.at(int(b)))
				},
				func(a int32) bool { return names.length[a] == 0 },
				func(a, b int32) int { return cmp.Compare(a, b) })
		},
		func() {
			set.orders[byCreatedAsc], set.orders[byCreatedDesc] = buildOrder(n,
				func(a, b int32) int { return cmp.Compare(created[a], created[b]) },
				nil,
				func(a, b int32) int { return cmp.Compare(a, b) })
		},
		func() {
			set.orders[byModifiedAsc], set.orders[byModifiedDesc] = buildOrder(n,
				func(a, b int32) int { return cmp.Compare(mod[a], mod[b]) },
				nil,
				func(a, b int32) int { return cmp.Compare(a, b) })
		},
		func() { slices.SortFunc(terms, cmpEntry) },
		func() { slices.SortFunc(pairs, cmpEntry) },
	})
	for o := range set.orders {
		rk := make([]int32, n)
		for r, p := range set.orders[o] {
			rk[p] = int32(r)
		}
		set.ranks[o] = rk
	}
	set.createdKeys, set.modKeys = make([]int64, n), make([]int64, n)
	for r := range n {
		set.createdKeys[r] = created[set.orders[byCreatedAsc][r]]
		set.modKeys[r] = set.mod[set.orders[byModifiedAsc][r]]
	}
	// The name keys by rank, over the same arena.
	set.nameKeys = strTable{arena: names.arena, start: make([]uint32, n), length: make([]uint16, n), keys: make([]uint64, n)}
	for r, p := range set.orders[byNameAsc] {
		t := &set.nameKeys
		t.start[r], t.length[r], t.keys[r] = names.start[p], names.length[p], names.keys[p]
	}

	var arena []byte
	if set.text.terms, arena, err = packTable(terms, arena); err != nil {
		return nil, err
	}
	if set.text.pairs, arena, err = packTable(pairs, arena); err != nil {
		return nil, err
	}
	arena = slices.Clip(arena)
	set.text.terms.arena, set.text.pairs.arena = arena, arena
	set.text.owner = make([]int32, len(terms))
	for i, e := range terms {
		set.text.owner[i] = e.owner
	}
	pairOwner := make([]int32, len(pairs))
	for i, e := range pairs {
		pairOwner[i] = e.owner
	}
	terms, pairs = nil, nil

	// The wavelet matrices are independent: build them in parallel.
	var jobs []func()
	ranksOf := func(o int, positions []int32) []int32 {
		vals := make([]int32, len(positions))
		for i, p := range positions {
			vals[i] = set.ranks[o][p]
		}
		return vals
	}
	for o := 0; o < numOrders; o++ {
		jobs = append(jobs,
			func() { set.text.by[o] = wavelet.New(ranksOf(o, set.text.owner), n) },
			func() { set.text.pBy[o] = wavelet.New(ranksOf(o, pairOwner), n) })
		if o < len(set.modBy) {
			jobs = append(jobs, func() { set.modBy[o] = wavelet.New(ranksOf(o, set.orders[byModifiedAsc]), n) })
		}
	}
	runAll(par, jobs)
	return set, nil
}

// packTable stores the sorted entries' strings in arena, each distinct
// string once.
func packTable(entries []termEntry, arena []byte) (strTable, []byte, error) {
	t := strTable{start: make([]uint32, len(entries)), length: make([]uint16, len(entries)), keys: make([]uint64, len(entries))}
	for i, e := range entries {
		t.keys[i] = e.key
		if i > 0 && entries[i-1].s == e.s {
			t.start[i], t.length[i] = t.start[i-1], t.length[i-1]
			continue
		}
		if len(arena)+len(e.s) > math.MaxUint32 {
			return strTable{}, nil, fmt.Errorf("suppliers: the searchable text of one community exceeds 4 GiB")
		}
		t.start[i], t.length[i] = uint32(len(arena)), uint16(len(e.s))
		arena = append(arena, e.s...)
	}
	return t, arena, nil
}

// runAll runs the jobs on up to par goroutines (0: GOMAXPROCS) and waits
// for them.
func runAll(par int, jobs []func()) {
	if par <= 0 {
		par = runtime.GOMAXPROCS(0)
	}
	ch := make(chan func())
	var wg sync.WaitGroup
	for range min(par, len(jobs)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for job := range ch {
				job()
			}
		}()
	}
	for _, job := range jobs {
		ch <- job
	}
	close(ch)
	wg.Wait()
}

func commonPrefix(a, b string) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// buildOrder returns the ascending and descending orders of n items
// (docs: paging.md): by key, null keys (isNull, may be nil) after all
// others in both directions, ties broken by tie ascending in both
// directions. The descending order reverses the groups of equal keys, not
// the items within a group.
func buildOrder(n int, key func(a, b int32) int, isNull func(a int32) bool, tie func(a, b int32) int) (asc, desc []int32) {
	if isNull == nil {
		isNull = func(int32) bool { return false }
	}
	asc = make([]int32, n)
	for i := range asc {
		asc[i] = int32(i)
	}
	slices.SortFunc(asc, func(a, b int32) int {
		na, nb := isNull(a), isNull(b)
		switch {
		case na && !nb:
			return 1
		case nb && !na:
			return -1
		case !na:
			if c := key(a, b); c != 0 {
				return c
			}
		}
		return tie(a, b)
	})
	nonNull := n
	for nonNull > 0 && isNull(asc[nonNull-1]) {
		nonNull--
	}
	desc = make([]int32, 0, n)
	for end := nonNull; end > 0; {
		start := end - 1
		for start > 0 && key(asc[start-1], asc[end-1]) == 0 {
			start--
		}
		desc = append(desc, asc[start:end]...)
		end = start
	}
	desc = append(desc, asc[nonNull:]...)
	return asc, desc
}

// newSupplierRec makes the stored form of a record: it sorts the
// contacts by name and the addresses by companyName, precomputes the
// other address orders, and packs them with the detail's other parts.
// With in, the keywords share one copy with the other records of a load
// (in place: src is a load's own), and the keywords and the parts are
// carved from the load's blocks (interner.own). The stored form shares no
// memory with src but the summary's texts and the keywords' values.
func newSupplierRec(src *supplier.Record, in *interner) supplierRec {
	kw := slices.Clip(src.Keywords)
	if in != nil {
		kw = in.ownKeywords(kw)
	}
	rec := supplierRec{summary: src.Summary, keywords: kw}
	contacts := src.Contacts
	if len(contacts) > 1 {
		cs := contacts
		keys := sortKeys(len(cs), func(i int) string { return cs[i].Name })
		asc, _ := buildOrder(len(cs),
			func(a, b int32) int { return bytes.Compare(keys[a], keys[b]) },
			func(a int32) bool { return len(keys[a]) == 0 },
			func(a, b int32) int { return bytes.Compare(cs[a].ID[:], cs[b].ID[:]) })
		contacts = make([]supplier.Contact, len(cs))
		for i, j := range asc {
			contacts[i] = cs[j]
		}
	}
	addrs := src.RemittanceAddresses
	var addrIdx []int32
	if len(addrs) > 1 {
		as := addrs
		keys := sortKeys(len(as), func(i int) string { return as[i].CompanyName.String() })
		byName := func(a, b int32) int { return bytes.Compare(keys[a], keys[b]) }
		noName := func(a int32) bool { return len(keys[a]) == 0 }
		byID := func(a, b int32) int { return bytes.Compare(as[a].ID[:], as[b].ID[:]) }
		asc, _ := buildOrder(len(as), byName, noName, byID)
		sorted := make([]supplier.RemittanceAddress, len(as))
		sortedKeys := make([][]byte, len(as))
		for i, j := range asc {
			sorted[i], sortedKeys[i] = as[j], keys[j]
		}
		addrs = sorted
		as, keys = sorted, sortedKeys
		_, nameDesc := buildOrder(len(as), byName, noName, byID)
		dateAsc, dateDesc := buildOrder(len(as),
			func(a, b int32) int { return as[a].ModifiedDate.Compare(as[b].ModifiedDate) },
			nil, byID)
		addrIdx = slices.Concat(nameDesc, dateAsc, dateDesc)
	}
	rec.parts = packParts(&src.Detail, contacts, addrs, addrIdx, in)
	return rec
}

// sortKeys returns the sort keys of text(i) for i in [0, n): a record's
// contact names or address company names, sorted once when it is stored.
func sortKeys(n int, text func(i int) string) [][]byte {
	keys := make([][]byte, n)
	for i := range keys {
		keys[i] = sortKey(text(i))
	}
	return keys
}

// ceilMicros is the smallest whole microsecond at or after t, so that a
// stored date d (whole microseconds) satisfies d >= t exactly when its
// microseconds are >= ceilMicros(t). Instants beyond the int64 range of
// microseconds saturate.
func ceilMicros(t time.Time) int64 {
	const maxSec = math.MaxInt64/1_000_000 - 1
	sec, ns := t.Unix(), int64(t.Nanosecond())
	switch {
	case sec > maxSec:
		return math.MaxInt64
	case sec < -maxSec:
		return math.MinInt64
	}
	us := sec*1_000_000 + ns/1000
	if ns%1000 != 0 {
		us++
	}
	return us
}
