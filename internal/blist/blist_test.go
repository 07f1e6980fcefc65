package blist_test

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/procurekit/procure/internal/blist"
)

// item is a key with an identity, as the index's entries are: equal keys
// are kept, and Remove removes the one that is == to its argument.
type item struct{ key, id int }

func cmpItem(a, b item) int { return cmp.Or(cmp.Compare(a.key, b.key), cmp.Compare(a.id, b.id)) }

// check compares every read of l with want.
func check(t *testing.T, l *blist.List[item], want []item) {
	t.Helper()
	if l.Len() != len(want) {
		t.Fatalf("Len = %d, want %d", l.Len(), len(want))
	}
	n := 0
	for b := range l.NumBlocks() {
		blk := l.Block(b)
		if len(blk) == 0 || l.Start(b) != n || l.Last(b) != blk[len(blk)-1] {
			t.Fatalf("block %d: %d items, start %d (want %d), last %v", b, len(blk), l.Start(b), n, l.Last(b))
		}
		for i := range blk {
			if l.BlockOf(n+i) != b {
				t.Fatalf("BlockOf(%d) = %d, want %d", n+i, l.BlockOf(n+i), b)
			}
		}
		n += len(blk)
	}
	for i, w := range want {
		if got := l.At(i); got != w {
			t.Fatalf("At(%d) = %v, want %v", i, got, w)
		}
	}
	for _, from := range []int{0, 1, len(want) / 2, max(len(want)-1, 0), len(want), len(want) + 3} {
		var got []item
		l.Each(from, func(v item) bool { got = append(got, v); return true })
		if exp := want[min(from, len(want)):]; !slices.Equal(got, exp) {
			t.Fatalf("Each(%d) = %d items, want %d", from, len(got), len(exp))
		}
		next := l.Iter(from, func(v item) bool { return v.key%2 == 0 })
		var even []item
		for v := next(); v != (item{}); v = next() {
			even = append(even, v)
		}
		var expEven []item
		for _, v := range want[min(from, len(want)):] {
			if v.key%2 == 0 {
				expEven = append(expEven, v)
			}
		}
		if !slices.Equal(even, expEven) {
			t.Fatalf("Iter(%d, even) = %d items, want %d", from, len(even), len(expEven))
		}
	}
	stop := 0
	l.Each(0, func(item) bool { stop++; return stop < 3 })
	if want := min(3, len(want)); stop != want {
		t.Fatalf("Each went on after false: %d calls, want %d", stop, want)
	}
	for _, k := range []int{-1, 0, 17, 500, 1 << 20} {
		got := l.First(func(v item) bool { return v.key >= k })
		exp, _ := slices.BinarySearchFunc(want, k, func(v item, k int) int { return cmp.Compare(v.key, k) })
		if got != exp {
			t.Fatalf("First(key >= %d) = %d, want %d", k, got, exp)
		}
	}
}

// TestListAgainstSlice inserts and removes at random, with many equal
// keys and enough items to split blocks, and compares every read with a
// sorted slice.
func TestListAgainstSlice(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var l blist.List[item]
	l.Init(cmpItem)
	check(t, &l, nil)
	var want []item
	id := 0
	for round := range 6 {
		for range 700 {
			if len(want) > 0 && rng.IntN(3) == 0 {
				v := want[rng.IntN(len(want))]
				l.Remove(v)
				i, _ := slices.BinarySearchFunc(want, v, cmpItem)
				want = slices.Delete(want, i, i+1)
				continue
			}
			id++
			v := item{key: rng.IntN(300 * (round + 1)), id: id}
			l.Insert(v)
			i, _ := slices.BinarySearchFunc(want, v, cmpItem)
			want = slices.Insert(want, i, v)
		}
		// Removing an item not held changes nothing.
		l.Remove(item{key: 1, id: -1})
		check(t, &l, want)
	}
	for _, v := range slices.Clone(want) {
		l.Remove(v)
	}
	check(t, &l, nil)
}

func TestFill(t *testing.T) {
	for _, n := range []int{0, 1, 255, 256, 257, 1000} {
		want := make([]item, n)
		for i := range want {
			want[i] = item{key: i / 3, id: i + 1}
		}
		var l blist.List[item]
		l.Init(cmpItem)
		l.Fill(want)
		check(t, &l, want)
		// Filled lists take insertions as any other.
		v := item{key: n / 6, id: -5}
		l.Insert(v)
		i, _ := slices.BinarySearchFunc(want, v, cmpItem)
		check(t, &l, slices.Insert(slices.Clone(want), i, v))
	}
}
