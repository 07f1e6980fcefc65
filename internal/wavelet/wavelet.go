// Package wavelet holds the succinct structures behind filtered supplier
// lists: a bit vector with constant-time rank, and a wavelet matrix over a
// sequence of small integers (the ranks of suppliers in one sort order).
//
//	m := wavelet.New(ranks, n)            // ranks in [0, n)
//	c := m.CountLess(wavelet.Span{Lo: 3, Hi: 9}, 5)
//	w := wavelet.DistinctWalk{T: m, Yield: func(v int) bool { ...; return more }}
//	w.Run(wavelet.Span{Lo: 0, Hi: m.Len()}, wavelet.Span{})
//
// The matrix answers "how many values below v among positions [lo, hi)"
// in O(log n) and lists the values of a span in increasing (or
// decreasing) order from the k-th on in O(log n) per item. That turns a
// filter (a range of a term index, a range of the modifiedDate order)
// plus any sort order into O(log n) per item of a page, instead of a scan
// and sort of every match. The structures are immutable once built and
// safe for concurrent reads.
package wavelet

import "math/bits"

// bitBlock is one 64-byte cache line: 448 bits and the number of ones
// before them, so that a rank reads one line and at most seven words.
type bitBlock struct {
	ones  uint64
	words [blockWords]uint64
}

const (
	blockWords = 7
	blockBits  = blockWords * 64
)

// BitVector is a sequence of bits with rank support: set the bits, call
// Finish once, then read.
type BitVector struct {
	blocks []bitBlock
}

// NewBitVector returns n zero bits.
func NewBitVector(n int) BitVector {
	// One block more than needed, so that Rank1(n) has a block to read.
	return BitVector{blocks: make([]bitBlock, n/blockBits+1)}
}

// Set sets bit i (before Finish).
func (b *BitVector) Set(i int) {
	b.blocks[i/blockBits].words[(i%blockBits)>>6] |= 1 << (uint(i) & 63)
}

// Finish fills in the per-block counts once every bit is set.
func (b *BitVector) Finish() {
	var ones uint64
	for i := range b.blocks {
		blk := &b.blocks[i]
		blk.ones = ones
		for _, w := range blk.words {
			ones += uint64(bits.OnesCount64(w))
		}
	}
}

// Rank1 is the number of ones among bits [0, i).
func (b *BitVector) Rank1(i int) int {
	blk := &b.blocks[i/blockBits]
	r := int(blk.ones)
	off := i % blockBits
	w := off >> 6
	for j := 0; j < w; j++ {
		r += bits.OnesCount64(blk.words[j])
	}
	return r + bits.OnesCount64(blk.words[w]&(1<<(uint(off)&63)-1))
}

// Matrix is a wavelet matrix over a sequence of values in [0, 2^levels).
// Level 0 holds the most significant bit of every value; each level orders
// the values stably by the bits above it, zeros first.
type Matrix struct {
	n      int
	levels []BitVector
	zeros  []int // zeros[l]: number of zero bits at level l
}

// New builds the matrix of vals, whose values lie in [0, limit). vals is
// left unchanged.
func New(vals []int32, limit int) *Matrix {
	n := len(vals)
	nl := 0
	if limit > 1 {
		nl = bits.Len(uint(limit - 1))
	}
	w := &Matrix{n: n, levels: make([]BitVector, nl), zeros: make([]int, nl)}
	cur := make([]int32, n)
	copy(cur, vals)
	next := make([]int32, n)
	ones := make([]int32, n)
	for l := 0; l < nl; l++ {
		shift := uint(nl - 1 - l)
		bv := NewBitVector(n)
		// One pass: mark the bits and partition stably, zeros at the
		// front of next in their order, ones aside, then after them.
		// Without branches: a value's bit is as likely 0 as 1, and a
		// mispredicted branch a value cost more than the pass
		// (BenchmarkNew). Each value is written to both sides, and the
		// side its bit names advances; the bits go a word at a time.
		zi, oi := 0, 0
		for i := 0; i < n; i += 64 {
			var word uint64
			for j, v := range cur[i:min(i+64, n)] {
				bit := int(uint32(v)>>shift) & 1
				word |= uint64(bit) << uint(j)
				next[zi] = v
				ones[oi] = v
				zi += 1 - bit
				oi += bit
			}
			bv.blocks[i/blockBits].words[(i%blockBits)>>6] = word
		}
		copy(next[zi:], ones[:oi])
		bv.Finish()
		w.levels[l] = bv
		w.zeros[l] = zi
		cur, next = next, cur
	}
	return w
}

// Len is the number of values.
func (w *Matrix) Len() int { return w.n }

// Levels is the number of bits of the values: the depth of a walk.
func (w *Matrix) Levels() int { return len(w.levels) }

// Span is a range [Lo, Hi) of positions at one level of a matrix.
type Span struct{ Lo, Hi int }

// Len is the number of positions in s.
func (s Span) Len() int { return s.Hi - s.Lo }

// Split maps s at level l to the positions, one level lower, of its
// values whose bit at that level is 0 (zero) and 1 (one).
func (w *Matrix) Split(l int, s Span) (zero, one Span) {
	bv := &w.levels[l]
	r1lo, r1hi := bv.Rank1(s.Lo), bv.Rank1(s.Hi)
	z := w.zeros[l]
	return Span{s.Lo - r1lo, s.Hi - r1hi}, Span{z + r1lo, z + r1hi}
}

// down maps s at level l to the positions of its values whose bit at that
// level is bit, one level lower.
func (w *Matrix) down(l int, s Span, bit bool) Span {
	bv := &w.levels[l]
	r1lo, r1hi := bv.Rank1(s.Lo), bv.Rank1(s.Hi)
	if bit {
		z := w.zeros[l]
		return Span{z + r1lo, z + r1hi}
	}
	return Span{s.Lo - r1lo, s.Hi - r1hi}
}

// zerosIn is the number of values in s (at level l) whose bit there is 0.
func (w *Matrix) zerosIn(l int, s Span) int {
	bv := &w.levels[l]
	return (s.Hi - s.Lo) - (bv.Rank1(s.Hi) - bv.Rank1(s.Lo))
}

// CountLess is the number of values below v among positions s.
func (w *Matrix) CountLess(s Span, v int) int {
	nl := len(w.levels)
	if nl == 0 || v >= 1<<nl {
		if v > 0 {
			return s.Hi - s.Lo
		}
		return 0
	}
	if v <= 0 {
		return 0
	}
	count := 0
	for l := 0; l < nl && s.Lo < s.Hi; l++ {
		if (v>>(nl-1-l))&1 == 1 {
			count += w.zerosIn(l, s)
			s = w.down(l, s, true)
		} else {
			s = w.down(l, s, false)
		}
	}
	return count
}

// DistinctLess counts the distinct values below v in span t of tw, where
// pw/p (pw may be nil) hold one value for every duplicate to discount: for
// a term index, its terms and the common prefixes of each owner's
// neighbouring terms, whose difference counts each owner once in any
// interval of values.
func DistinctLess(tw *Matrix, t Span, pw *Matrix, p Span, v int) int {
	c := tw.CountLess(t, v)
	if pw != nil {
		c -= pw.CountLess(p, v)
	}
	return c
}

// DistinctWalk enumerates, in increasing order, the distinct values of a
// span of T, with P discounting duplicates as in DistinctLess. Both
// matrices index the same value space (the same number of levels). It
// visits the matrix depth first, so the items of one page share the upper
// levels of their paths: a page costs about levels + items*(levels below
// where their paths part), not items*levels.
type DistinctWalk struct {
	T, P  *Matrix
	Skip  int              // distinct values still to pass over before yielding
	Rev   bool             // largest values first
	Yield func(v int) bool // false stops the walk
	done  bool
}

// Run yields the distinct values of span t of T (less span p of P) from
// the Skip-th on (counted from the largest when Rev), until Yield returns
// false or the values run out.
func (d *DistinctWalk) Run(t, p Span) {
	if d.P == nil {
		p = Span{}
	}
	d.visit(0, t, p, 0)
}

func (d *DistinctWalk) visit(l int, t, p Span, v int) {
	if d.done {
		return
	}
	cnt := (t.Hi - t.Lo) - (p.Hi - p.Lo)
	if cnt <= 0 {
		return
	}
	if d.Skip >= cnt {
		d.Skip -= cnt
		return
	}
	nl := len(d.T.levels)
	if l == nl {
		// Every element here has the value v: one distinct value.
		if !d.Yield(v) {
			d.done = true
		}
		return
	}
	t0, t1 := d.T.Split(l, t)
	var p0, p1 Span
	if p.Lo < p.Hi {
		p0, p1 = d.P.Split(l, p)
	}
	if d.Rev {
		d.visit(l+1, t1, p1, v|1<<(nl-1-l))
		d.visit(l+1, t0, p0, v)
		return
	}
	d.visit(l+1, t0, p0, v)
	d.visit(l+1, t1, p1, v|1<<(nl-1-l))
}
