// Package fenwick counts marked positions: a Fenwick (binary indexed)
// tree of counters, and Marks, a set of marked positions in [0, n) that
// counts the marks below a position and selects the k-th unmarked one.
//
//	m := fenwick.NewMarks(n)
//	m.Add(i)                 // mark i
//	m.Before(j)              // marks below j
//	m.SelectUnmarked(k)      // the k-th (from 0) unmarked position
//
// The supplier index marks with them the suppliers a write replaced or
// deleted, rank by rank in each sort order, so that a page of the live
// suppliers is found without a scan. Not safe for concurrent writes.
package fenwick

import "math/bits"

// Tree counts marks over [0, n) with prefix sums; it is a slice of n+1
// counters (index 0 unused).
type Tree []int32

// New returns a tree over [0, n).
func New(n int) Tree { return make(Tree, n+1) }

// Add marks i.
func (f Tree) Add(i int) {
	for i++; i < len(f); i += i & -i {
		f[i]++
	}
}

// Before is the number of marks below i.
func (f Tree) Before(i int) int {
	s := 0
	for ; i > 0; i -= i & -i {
		s += int(f[i])
	}
	return s
}

// Marks marks positions [0, n): a bit per position, and a Tree of the
// marks per 64 positions, so that a count or a selection reads a small
// tree and one word (rather than a tree of n counters, a cache miss per
// level when n is large).
type Marks struct {
	words  []uint64
	blocks Tree
	n      int
}

// NewMarks returns n unmarked positions.
func NewMarks(n int) Marks {
	nw := (n + 63) / 64
	return Marks{words: make([]uint64, nw), blocks: New(nw), n: n}
}

// Add marks i, which must not be marked yet.
func (m *Marks) Add(i int) {
	m.words[i>>6] |= 1 << (uint(i) & 63)
	m.blocks.Add(i >> 6)
}

// Has reports whether i is marked.
func (m *Marks) Has(i int) bool {
	return len(m.words) > 0 && m.words[i>>6]&(1<<(uint(i)&63)) != 0
}

// Before is the number of marks below i.
func (m *Marks) Before(i int) int {
	w := i >> 6
	s := m.blocks.Before(w)
	if w < len(m.words) {
		s += bits.OnesCount64(m.words[w] & (1<<(uint(i)&63) - 1))
	}
	return s
}

// SelectUnmarked returns the k-th (from 0) unmarked position, or n when
// there are not that many.
func (m *Marks) SelectUnmarked(k int) int {
	nw := len(m.words)
	if nw == 0 || k < 0 {
		return m.n
	}
	// The first word whose unmarked positions, with those before, reach
	// k+1: a descent of the tree, whose node next covers the words
	// (pos, next].
	pos, rem := 0, k+1
	for step := 1 << (bits.Len(uint(nw)) - 1); step > 0; step >>= 1 {
		if next := pos + step; next <= nw {
			free := min(next*64, m.n) - pos*64 - int(m.blocks[next])
			if free < rem {
				pos, rem = next, rem-free
			}
		}
	}
	if pos >= nw {
		return m.n
	}
	w := ^m.words[pos]
	for ; rem > 1; rem-- {
		w &= w - 1
	}
	return min(pos*64+bits.TrailingZeros64(w), m.n)
}
