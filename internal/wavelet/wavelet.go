package memstore

import "math/bits"

// This file holds the succinct structures behind filtered supplier lists:
// a bit vector with constant-time rank, and a wavelet matrix over a
// sequence of small integers (ranks of suppliers in one sort order). The
// wavelet matrix answers "the k-th smallest value among positions [lo, hi)"
// and "how many values below v among positions [lo, hi)" in O(log n) each,
// which is what turns a filter (a range of the term index, a range of the
// modifiedDate index) plus any sort order into O(log n) per item of a page
// instead of a scan and sort of every match.

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

// bitVector is an immutable sequence of bits with rank support.
type bitVector struct {
	blocks []bitBlock
}

func newBitVector(n int) bitVector {
	// One block more than needed, so that rank1(n) has a block to read.
	return bitVector{blocks: make([]bitBlock, n/blockBits+1)}
}

func (b *bitVector) set(i int) {
	b.blocks[i/blockBits].words[(i%blockBits)>>6] |= 1 << (uint(i) & 63)
}

// finish fills in the per-block counts once every bit is set.
func (b *bitVector) finish() {
	var ones uint64
	for i := range b.blocks {
		blk := &b.blocks[i]
		blk.ones = ones
		for _, w := range blk.words {
			ones += uint64(bits.OnesCount64(w))
		}
	}
}

// rank1 is the number of ones among bits [0, i).
func (b *bitVector) rank1(i int) int {
	blk := &b.blocks[i/blockBits]
	r := int(blk.ones)
	off := i % blockBits
	w := off >> 6
	for j := 0; j < w; j++ {
		r += bits.OnesCount64(blk.words[j])
	}
	return r + bits.OnesCount64(blk.words[w]&(1<<(uint(off)&63)-1))
}

// wavelet is a wavelet matrix over a sequence of values in [0, 2^levels).
// Level 0 holds the most significant bit of every value; each level orders
// the values stably by the bits above it, zeros first.
type wavelet struct {
	n      int
	levels []bitVector
	zeros  []int // zeros[l]: number of zero bits at level l
}

// newWavelet builds the matrix of vals, whose values lie in [0, limit).
// vals is left unchanged.
func newWavelet(vals []int32, limit int) *wavelet {
	n := len(vals)
	nl := 0
	if limit > 1 {
		nl = bits.Len(uint(limit - 1))
	}
	w := &wavelet{n: n, levels: make([]bitVector, nl), zeros: make([]int, nl)}
	cur := make([]int32, n)
	copy(cur, vals)
	next := make([]int32, n)
	ones := make([]int32, n)
	for l := 0; l < nl; l++ {
		shift := uint(nl - 1 - l)
		bv := newBitVector(n)
		// One pass: mark the bits and partition stably, zeros at the
		// front of next in their order, ones aside, then after them.
		zi, oi := 0, 0
		for i, v := range cur {
			if (v>>shift)&1 == 1 {
				bv.set(i)
				ones[oi] = v
				oi++
			} else {
				next[zi] = v
				zi++
			}
		}
		copy(next[zi:], ones[:oi])
		bv.finish()
		w.levels[l] = bv
		w.zeros[l] = zi
		cur, next = next, cur
	}
	return w
}

// span is a range [lo, hi) of positions at one level of a wavelet.
type span struct{ lo, hi int }

// down maps s at level l to the positions of its values whose bit at that
// level is bit, one level lower.
func (w *wavelet) down(l int, s span, bit bool) span {
	bv := &w.levels[l]
	r1lo, r1hi := bv.rank1(s.lo), bv.rank1(s.hi)
	if bit {
		z := w.zeros[l]
		return span{z + r1lo, z + r1hi}
	}
	return span{s.lo - r1lo, s.hi - r1hi}
}

// zerosIn is the number of values in s (at level l) whose bit there is 0.
func (w *wavelet) zerosIn(l int, s span) int {
	bv := &w.levels[l]
	return (s.hi - s.lo) - (bv.rank1(s.hi) - bv.rank1(s.lo))
}

// countLess is the number of values below v among positions s.
func (w *wavelet) countLess(s span, v int) int {
	nl := len(w.levels)
	if nl == 0 || v >= 1<<nl {
		if v > 0 {
			return s.hi - s.lo
		}
		return 0
	}
	if v <= 0 {
		return 0
	}
	count := 0
	for l := 0; l < nl && s.lo < s.hi; l++ {
		if (v>>(nl-1-l))&1 == 1 {
			count += w.zerosIn(l, s)
			s = w.down(l, s, true)
		} else {
			s = w.down(l, s, false)
		}
	}
	return count
}

// distinctLess counts the distinct values below v in span t of tw, where
// pw/p (may be nil) hold one value for every duplicate to discount: for the
// text index, the terms and the shared prefixes of textIndex, whose
// difference counts each supplier once in any interval of ranks.
func distinctLess(tw *wavelet, t span, pw *wavelet, p span, v int) int {
	c := tw.countLess(t, v)
	if pw != nil {
		c -= pw.countLess(p, v)
	}
	return c
}

// distinctWalk enumerates, in increasing order, the distinct values of a
// span of tw, with pw/p discounting duplicates as in distinctLess. Both
// matrices index the same value space (the same number of levels). It visits
// the matrix depth first, so the items of one page share the upper levels
// of their paths: a page costs about levels + items*(levels below where
// their paths part), not items*levels.
type distinctWalk struct {
	tw, pw *wavelet
	skip   int              // distinct values still to pass over before yielding
	rev    bool             // largest values first
	yield  func(v int) bool // false stops the walk
	done   bool
}

// run yields the distinct values from the skip-th on (counted from the
// largest when rev), until yield returns false or the values run out.
func (d *distinctWalk) run(t, p span) {
	if d.pw == nil {
		p = span{}
	}
	d.visit(0, t, p, 0)
}

func (d *distinctWalk) visit(l int, t, p span, v int) {
	if d.done {
		return
	}
	cnt := (t.hi - t.lo) - (p.hi - p.lo)
	if cnt <= 0 {
		return
	}
	if d.skip >= cnt {
		d.skip -= cnt
		return
	}
	nl := len(d.tw.levels)
	if l == nl {
		// Every element here has the value v: one distinct value.
		if !d.yield(v) {
			d.done = true
		}
		return
	}
	bv, z := &d.tw.levels[l], d.tw.zeros[l]
	r1lo, r1hi := bv.rank1(t.lo), bv.rank1(t.hi)
	t0, t1 := span{t.lo - r1lo, t.hi - r1hi}, span{z + r1lo, z + r1hi}
	var p0, p1 span
	if p.lo < p.hi {
		pbv, pz := &d.pw.levels[l], d.pw.zeros[l]
		q1lo, q1hi := pbv.rank1(p.lo), pbv.rank1(p.hi)
		p0, p1 = span{p.lo - q1lo, p.hi - q1hi}, span{pz + q1lo, pz + q1hi}
	}
	if d.rev {
		d.visit(l+1, t1, p1, v|1<<(nl-1-l))
		d.visit(l+1, t0, p0, v)
		return
	}
	d.visit(l+1, t0, p0, v)
	d.visit(l+1, t1, p1, v|1<<(nl-1-l))
}
