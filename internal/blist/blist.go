// Package blist is an ordered list in blocks: a sorted sequence that
// takes insertions and removals anywhere at the cost of moving within one
// block, and reads by index or walks from any index.
//
//	var l blist.List[int]
//	l.Init(cmp.Compare[int])
//	l.Insert(5)
//	l.Each(l.First(func(v int) bool { return v >= 3 }), func(v int) bool { ...; return true })
//
// Insert and Remove cost a block's move and the update of the block
// starts (O(sqrt n)-ish for the sizes the supplier index's overlay
// reaches); At and First cost two binary searches; a walk from any index
// costs O(1) per item. The supplier index keeps its overlay's orders, term
// indexes and filter views in them. Not safe for concurrent writes;
// concurrent reads are safe.
package blist

import (
	"slices"
	"sort"
)

// List is a sorted list of T in blocks. Its zero value needs Init.
type List[T comparable] struct {
	cmp    func(a, b T) int
	blocks [][]T
	starts []int // starts[b]: the index of block b's first item
	// lasts[b] is block b's last item: a search reads one array, not
	// every block it probes.
	lasts []T
	n     int
}

// blockSize is the size blocks are split back to when they reach twice it.
const blockSize = 256

// Init empties l and sets the order of its items.
func (l *List[T]) Init(cmp func(a, b T) int) {
	*l = List[T]{cmp: cmp}
}

// Len is the number of items.
func (l *List[T]) Len() int { return l.n }

// NumBlocks is the number of blocks.
func (l *List[T]) NumBlocks() int { return len(l.blocks) }

// Block is the items of block b, in order (read-only).
func (l *List[T]) Block(b int) []T { return l.blocks[b] }

// Start is the index of block b's first item.
func (l *List[T]) Start(b int) int { return l.starts[b] }

// Last is block b's last item.
func (l *List[T]) Last(b int) T { return l.lasts[b] }

// fix recomputes starts from block from on (lasts is kept by the
// callers, which know which blocks changed).
func (l *List[T]) fix(from int) {
	l.starts = l.starts[:len(l.blocks)]
	s := 0
	if from > 0 {
		s = l.starts[from-1] + len(l.blocks[from-1])
	}
	for b := from; b < len(l.blocks); b++ {
		l.starts[b] = s
		s += len(l.blocks[b])
	}
	l.n = s
}

// search returns the index of the first item not below v (cmp >= 0),
// with its block and offset.
func (l *List[T]) search(v T) (i, b, off int) {
	b = sort.Search(len(l.lasts), func(b int) bool { return l.cmp(l.lasts[b], v) >= 0 })
	if b == len(l.blocks) {
		return l.n, b, 0
	}
	blk := l.blocks[b]
	off = sort.Search(len(blk), func(i int) bool { return l.cmp(blk[i], v) >= 0 })
	return l.starts[b] + off, b, off
}

// First returns the index of the first item for which ok (monotone over
// the list: false, then true) holds, or Len when none does.
func (l *List[T]) First(ok func(T) bool) int {
	b := sort.Search(len(l.lasts), func(b int) bool { return ok(l.lasts[b]) })
	if b == len(l.blocks) {
		return l.n
	}
	blk := l.blocks[b]
	return l.starts[b] + sort.Search(len(blk), func(i int) bool { return ok(blk[i]) })
}

// Insert adds v after the items not above it.
func (l *List[T]) Insert(v T) {
	if len(l.blocks) == 0 {
		l.blocks = append(l.blocks, []T{v})
		l.starts = append(l.starts, 0)
		l.lasts = append(l.lasts, v)
		l.fix(0)
		return
	}
	_, b, off := l.search(v)
	if b == len(l.blocks) {
		b = len(l.blocks) - 1
		off = len(l.blocks[b])
	}
	blk := slices.Insert(l.blocks[b], off, v)
	if len(blk) > 2*blockSize {
		half := slices.Clone(blk[blockSize:])
		blk = blk[:blockSize:blockSize]
		l.blocks = slices.Insert(l.blocks, b+1, half)
		l.lasts = slices.Insert(l.lasts, b+1, half[len(half)-1])
		l.starts = append(l.starts, 0)
	}
	l.blocks[b] = blk
	l.lasts[b] = blk[len(blk)-1]
	l.fix(b)
}

// Remove removes v: the first item equal to it under the order, if that
// item is also == v.
func (l *List[T]) Remove(v T) {
	_, b, off := l.search(v)
	if b == len(l.blocks) || l.blocks[b][off] != v {
		return
	}
	blk := slices.Delete(l.blocks[b], off, off+1)
	if len(blk) == 0 {
		l.blocks = slices.Delete(l.blocks, b, b+1)
		l.lasts = slices.Delete(l.lasts, b, b+1)
		l.starts = l.starts[:len(l.blocks)]
		l.fix(max(b-1, 0))
		return
	}
	l.blocks[b] = blk
	l.lasts[b] = blk[len(blk)-1]
	l.fix(b)
}

// Fill makes l hold items, which must be sorted, in full blocks.
func (l *List[T]) Fill(items []T) {
	l.blocks, l.starts, l.lasts = nil, nil, nil
	for len(items) > 0 {
		k := min(len(items), blockSize)
		l.blocks = append(l.blocks, slices.Clip(slices.Clone(items[:k])))
		l.starts = append(l.starts, 0)
		l.lasts = append(l.lasts, items[k-1])
		items = items[k:]
	}
	l.fix(0)
}

// BlockOf is the block holding index i (< Len).
func (l *List[T]) BlockOf(i int) int {
	lo, hi := 0, len(l.starts)-1
	for lo < hi {
		m := int(uint(lo+hi+1) >> 1)
		if l.starts[m] <= i {
			lo = m
		} else {
			hi = m - 1
		}
	}
	return lo
}

// At is the i-th item.
func (l *List[T]) At(i int) T {
	b := l.BlockOf(i)
	return l.blocks[b][i-l.starts[b]]
}

// Each calls yield with the items from the i-th on, in order, until it
// returns false.
func (l *List[T]) Each(i int, yield func(T) bool) {
	if i >= l.n {
		return
	}
	b := l.BlockOf(i)
	for j := i - l.starts[b]; b < len(l.blocks); b, j = b+1, 0 {
		for _, it := range l.blocks[b][j:] {
			if !yield(it) {
				return
			}
		}
	}
}

// Iter returns an iterator over the items from the i-th on that keep
// accepts (nil: all); it returns the zero T at the end.
func (l *List[T]) Iter(i int, keep func(T) bool) func() T {
	b, j := len(l.blocks), 0
	if i < l.n {
		b = l.BlockOf(i)
		j = i - l.starts[b]
	}
	return func() T {
		for b < len(l.blocks) {
			blk := l.blocks[b]
			for j < len(blk) {
				v := blk[j]
				j++
				if keep == nil || keep(v) {
					return v
				}
			}
			b, j = b+1, 0
		}
		var zero T
		return zero
	}
}
