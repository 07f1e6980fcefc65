package supplierjson

import (
	"encoding/binary"
	"slices"
	"sync/atomic"

	"github.com/google/uuid"

	"github.com/procurekit/procure/supplier"
)

// Memo remembers the JSON of suppliers the supplier API has encoded -
// the summaries of the list (appendSummaryMemo), one supplier in full
// (appendDetailMemo) - so that a supplier listed or read again unchanged
// (the first page, which most callers ask for; a sync client re-reading;
// the suppliers many filtered pages share; a popular supplier) is copied
// instead of encoded: encoding is most of such a request's own CPU (most
// of it escaping strings and formatting three dates per summary), and
// copying its bytes costs next to nothing.
//
// It is a memo of a pure function keyed by its whole input: an entry is
// used only when the value being encoded equals, field by field, the one
// it was made from (supplier.Summary.Equal, supplier.Detail.Equal), so
// a changed supplier is encoded afresh whatever changed it - a write on
// this node or another, an import that keeps the dates. Nothing has to
// invalidate it, and a store does not have to cooperate.
//
// Bounds: a fixed table of slots per kind (summaryMemoSlots,
// detailMemoSlots), each holding at most one entry (a value and its JSON).
// A value
// takes a slot only the second time in a row its slot sees it
// (memoSlot.seen), so a stream of distinct suppliers (paging through the
// whole community, random reads) allocates nothing and does not evict
// the ones asked for again and again. Slots are independent atomic
// pointers to immutable entries: no lock, and readers never wait. The
// memory it may hold per mounted supplier API, and what it saves
// (BenchmarkSummaryMemo, BenchmarkListSuppliersDefaultPage,
// BenchmarkGetSupplier; a miss costs a slot check, nothing else), are in
// bench/README.md.
type Memo[T any] struct {
	slots []memoSlot[T] // len a power of two
}

// The sizes of the tables: powers of two.
const (
	summaryMemoSlots = 1 << 13
	detailMemoSlots  = 1 << 11
)

type memoSlot[T any] struct {
	seen atomic.Uint64 // the key of the value that last missed here
	// key is the key of entry's value, set after entry: a lookup of
	// another key (most lookups, for a stream of random suppliers) stops
	// here, without reading the entry - a cache miss of its own (in
	// bench/README.md, session 8, 9% of a server answering random pages).
	// The two are not read together atomically: an entry found through
	// its key is still compared in full.
	key   atomic.Uint64
	entry atomic.Pointer[memoEntry[T]]
}

// memoEntry is immutable once published.
type memoEntry[T any] struct {
	v    T
	json []byte // the encoder's output for v
}

// NewSummaryMemo returns a memo of summaries, one per mounted supplier API.
func NewSummaryMemo() *Memo[supplier.Summary] { return newEncMemo[supplier.Summary](summaryMemoSlots) }

// NewDetailMemo returns a memo of suppliers in full, one per mounted
// supplier API.
func NewDetailMemo() *Memo[supplier.Detail] { return newEncMemo[supplier.Detail](detailMemoSlots) }

func newEncMemo[T any](slots int) *Memo[T] {
	return &Memo[T]{slots: make([]memoSlot[T], slots)}
}

// memoKey mixes the id's two halves (uniform for the random and
// name-based UUIDs stores hold); never 0, the value of an unused slot.
func memoKey(id *uuid.UUID) uint64 {
	return binary.LittleEndian.Uint64(id[:8]) ^ binary.LittleEndian.Uint64(id[8:]) | 1
}

func (m *Memo[T]) slot(key uint64) *memoSlot[T] {
	return &m.slots[key&uint64(len(m.slots)-1)]
}

// get returns the entry of key's slot when the slot says it holds key's
// value (nil otherwise), which the caller compares with the value it
// encodes: it may be older, or, in a race with put, another supplier's.
func (m *Memo[T]) get(key uint64) *memoEntry[T] {
	slot := m.slot(key)
	if slot.key.Load() != key {
		return nil
	}
	return slot.entry.Load()
}

// put records that v, whose JSON is json, was encoded: an entry the
// second time in a row its slot sees key.
func (m *Memo[T]) put(key uint64, v *T, json []byte) {
	if m.admit(key) {
		m.store(key, *v, json)
	}
}

// admit reports whether key's value is to be recorded: the second time
// in a row its slot sees key.
func (m *Memo[T]) admit(key uint64) bool {
	return m.slot(key).seen.Swap(key) == key
}

// store records v, the memo's own, whose JSON is json.
func (m *Memo[T]) store(key uint64, v T, json []byte) {
	slot := m.slot(key)
	slot.entry.Store(&memoEntry[T]{v: v, json: slices.Clone(json)})
	slot.key.Store(key)
}

// appendSummaryMemo appends s as appendSummary does, from m when m holds
// s unchanged. The comparison and the encoder are called directly (not
// through function values), so that s does not escape.
func appendSummaryMemo(m *Memo[supplier.Summary], b []byte, s *supplier.Summary) ([]byte, error) {
	key := memoKey(&s.ID)
	if e := m.get(key); e != nil && e.v.Equal(s) {
		return append(b, e.json...), nil
	}
	start := len(b)
	b, err := appendSummary(b, s)
	if err == nil {
		m.put(key, s, b[start:])
	}
	return b, err
}

// appendDetailMemo is appendSummaryMemo for a supplier in full.
func appendDetailMemo(m *Memo[supplier.Detail], b []byte, d *supplier.Detail) ([]byte, error) {
	key := memoKey(&d.ID)
	if e := m.get(key); e != nil && e.v.Equal(d) {
		return append(b, e.json...), nil
	}
	start := len(b)
	b, err := appendDetail(b, d)
	if err == nil && m.admit(key) {
		// A copy of its own: d may be lent (supplier.Viewer), its parts
		// reused once the request is answered.
		m.store(key, d.Clone(), b[start:])
	}
	return b, err
}
