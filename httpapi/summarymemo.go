package httpapi

import (
	"encoding/binary"
	"slices"
	"sync/atomic"

	"github.com/procurekit/procure/supplier"
)

// summaryMemo remembers the JSON of supplier summaries the list has
// encoded, so that a summary listed again unchanged (the first page, which
// most callers ask for; a sync client re-reading; the suppliers many
// filtered pages share) is copied instead of encoded: encoding is most of
// a list request's own CPU (a page of 20 summaries: about 6 us of 8, most
// of it escaping strings and formatting three times each), and copying
// 500 bytes costs a few tens of nanoseconds.
//
// It is a memo of a pure function keyed by its whole input: an entry is
// used only when the summary being encoded equals, field by field, the
// one it was made from (sameSummary, beside appendSummaryFields), so a changed supplier is encoded
// afresh whatever changed it - a write on this node, another node, an
// import that keeps the dates. Nothing has to invalidate it, and a store
// does not have to cooperate.
//
// Bounds: a fixed table of memoSlots slots, each holding at most one
// entry (a summary and its JSON, ~1 KB: a few MB at most). A summary takes
// a slot only the second time it is encoded while the slot remembers it
// (memoSlot.seen), so a stream of distinct suppliers (paging through the
// whole community, random reads) allocates nothing and does not evict the
// summaries that are listed again and again. Slots are independent atomic
// pointers to immutable entries: no lock, and readers never wait.
//
// Figures, a page of 20 summaries (BenchmarkSummaryMemo): 0.85 us from
// the memo against 5.6 us encoded; a page of suppliers never listed
// before 5.5-6.6 us (the miss costs a slot check and nothing else). The
// whole default-page request (BenchmarkListSuppliersDefaultPage) went
// from 8.0 to 3.0 us. At most ~7 MB per mounted API (8,192 entries).
type summaryMemo struct {
	slots [memoSlots]memoSlot
}

// memoSlots is the size of the table: a power of two.
const memoSlots = 1 << 13

type memoSlot struct {
	seen  atomic.Uint64 // the key of the summary that last missed here
	entry atomic.Pointer[memoEntry]
}

// memoEntry is immutable once published.
type memoEntry struct {
	sum  supplier.Summary
	json []byte // appendSummary's output for sum
}

// memoKey mixes the supplier id's two halves (uniform for the random and
// name-based UUIDs stores hold); never 0, the value of an unused slot.
func memoKey(s *supplier.Summary) uint64 {
	return binary.LittleEndian.Uint64(s.ID[:8]) ^ binary.LittleEndian.Uint64(s.ID[8:]) | 1
}

// appendSummary appends s as appendSummary does, from the memo when it
// holds s unchanged. A nil memo encodes every time.
func (m *summaryMemo) appendSummary(b []byte, s *supplier.Summary) ([]byte, error) {
	if m == nil {
		return appendSummary(b, s)
	}
	key := memoKey(s)
	slot := &m.slots[key&(memoSlots-1)]
	if e := slot.entry.Load(); e != nil && sameSummary(&e.sum, s) {
		return append(b, e.json...), nil
	}
	start := len(b)
	b, err := appendSummary(b, s)
	if err != nil {
		return b, err
	}
	if slot.seen.Swap(key) == key {
		// The second sighting since the slot last saw another
		// supplier: worth an entry.
		slot.entry.Store(&memoEntry{sum: *s, json: slices.Clone(b[start:])})
	}
	return b, nil
}
