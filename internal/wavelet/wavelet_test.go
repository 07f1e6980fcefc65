package wavelet_test

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/procurekit/procure/internal/wavelet"
)

// TestWaveletAgainstBruteForce checks the succinct structures on random
// sequences with many duplicates: rank, CountLess, DistinctLess and the
// depth-first walk, in both directions, from every start.
func TestWaveletAgainstBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct{ n, limit int }{{0, 1}, {1, 1}, {5, 1}, {300, 2}, {700, 37}, {1000, 1000}, {2000, 257}} {
		vals := make([]int32, tc.n)
		for i := range vals {
			vals[i] = int32(rng.IntN(tc.limit))
		}
		w := wavelet.New(vals, tc.limit)
		// The duplicates to discount: one entry per repeated value in
		// the span, as the text index's pairs are.
		for trial := 0; trial < 60; trial++ {
			lo := rng.IntN(tc.n + 1)
			hi := lo + rng.IntN(tc.n-lo+1)
			var dups []int32
			seen := map[int32]bool{}
			var distinct []int
			for _, v := range vals[lo:hi] {
				if seen[v] {
					dups = append(dups, v)
					continue
				}
				seen[v] = true
				distinct = append(distinct, int(v))
			}
			slices.Sort(distinct)
			pw := wavelet.New(dups, tc.limit)
			ps := wavelet.Span{0, len(dups)}
			for _, v := range []int{0, 1, tc.limit / 2, tc.limit - 1, tc.limit, tc.limit + 5} {
				want := 0
				for _, x := range vals[lo:hi] {
					if int(x) < v {
						want++
					}
				}
				if got := w.CountLess(wavelet.Span{lo, hi}, v); got != want {
					t.Fatalf("n=%d limit=%d: countLess([%d,%d), %d) = %d, want %d", tc.n, tc.limit, lo, hi, v, got, want)
				}
				wantD, _ := slices.BinarySearch(distinct, v)
				if got := wavelet.DistinctLess(w, wavelet.Span{lo, hi}, pw, ps, v); got != wantD {
					t.Fatalf("n=%d limit=%d: wavelet.DistinctLess([%d,%d), %d) = %d, want %d", tc.n, tc.limit, lo, hi, v, got, wantD)
				}
			}
			for _, rev := range []bool{false, true} {
				want := slices.Clone(distinct)
				if rev {
					slices.Reverse(want)
				}
				skip := rng.IntN(len(want) + 2)
				limit := rng.IntN(25) + 1
				var got []int
				d := wavelet.DistinctWalk{T: w, P: pw, Skip: skip, Rev: rev, Yield: func(v int) bool {
					got = append(got, v)
					return len(got) < limit
				}}
				d.Run(wavelet.Span{lo, hi}, ps)
				exp := want[min(skip, len(want)):]
				exp = exp[:min(limit, len(exp))]
				if !slices.Equal(got, exp) && !(len(got) == 0 && len(exp) == 0) {
					t.Fatalf("n=%d limit=%d: walk([%d,%d), skip %d, rev %v) = %v, want %v", tc.n, tc.limit, lo, hi, skip, rev, got, exp)
				}
			}
		}
	}
}

func TestBitVectorRank(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{0, 1, 63, 64, 65, 447, 448, 449, 895, 896, 897, 2000} {
		bv := wavelet.NewBitVector(n)
		bits := make([]bool, n)
		for i := range bits {
			if rng.IntN(3) == 0 {
				bits[i] = true
				bv.Set(i)
			}
		}
		bv.Finish()
		ones := 0
		for i := 0; i <= n; i++ {
			if got := bv.Rank1(i); got != ones {
				t.Fatalf("n=%d: rank1(%d) = %d, want %d", n, i, got, ones)
			}
			if i < n && bits[i] {
				ones++
			}
		}
	}
}

// BenchmarkNew builds a matrix over a million ranks in random order, as
// a cache load builds one per sort order and filter (issue 22: the
// build is part of a node's load).
func BenchmarkNew(b *testing.B) {
	const n = 1 << 20
	vals := make([]int32, n)
	for i := range vals {
		vals[i] = int32(i)
	}
	rng := rand.New(rand.NewPCG(5, 6))
	rng.Shuffle(n, func(i, j int) { vals[i], vals[j] = vals[j], vals[i] })
	b.ReportAllocs()
	for b.Loop() {
		wavelet.New(vals, n)
	}
}
