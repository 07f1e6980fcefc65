package memstore

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// TestWaveletAgainstBruteForce checks the succinct structures on random
// sequences with many duplicates: rank, countLess, distinctLess and the
// depth-first walk, in both directions, from every start.
func TestWaveletAgainstBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct{ n, limit int }{{0, 1}, {1, 1}, {5, 1}, {300, 2}, {700, 37}, {1000, 1000}, {2000, 257}} {
		vals := make([]int32, tc.n)
		for i := range vals {
			vals[i] = int32(rng.IntN(tc.limit))
		}
		w := newWavelet(vals, tc.limit)
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
			pw := newWavelet(dups, tc.limit)
			ps := span{0, len(dups)}
			for _, v := range []int{0, 1, tc.limit / 2, tc.limit - 1, tc.limit, tc.limit + 5} {
				want := 0
				for _, x := range vals[lo:hi] {
					if int(x) < v {
						want++
					}
				}
				if got := w.countLess(span{lo, hi}, v); got != want {
					t.Fatalf("n=%d limit=%d: countLess([%d,%d), %d) = %d, want %d", tc.n, tc.limit, lo, hi, v, got, want)
				}
				wantD, _ := slices.BinarySearch(distinct, v)
				if got := distinctLess(w, span{lo, hi}, pw, ps, v); got != wantD {
					t.Fatalf("n=%d limit=%d: distinctLess([%d,%d), %d) = %d, want %d", tc.n, tc.limit, lo, hi, v, got, wantD)
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
				d := distinctWalk{tw: w, pw: pw, skip: skip, rev: rev, yield: func(v int) bool {
					got = append(got, v)
					return len(got) < limit
				}}
				d.run(span{lo, hi}, ps)
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
		bv := newBitVector(n)
		bits := make([]bool, n)
		for i := range bits {
			if rng.IntN(3) == 0 {
				bits[i] = true
				bv.set(i)
			}
		}
		bv.finish()
		ones := 0
		for i := 0; i <= n; i++ {
			if got := bv.rank1(i); got != ones {
				t.Fatalf("n=%d: rank1(%d) = %d, want %d", n, i, got, ones)
			}
			if i < n && bits[i] {
				ones++
			}
		}
	}
}

func TestCeilMicros(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want int64
	}{
		{"whole microsecond", "2026-05-01T00:00:00.000001Z", 1777593600000001},
		{"a nanosecond over rounds up", "2026-05-01T00:00:00.000001001Z", 1777593600000002},
		{"a nanosecond under rounds up to it", "2026-05-01T00:00:00.000000999Z", 1777593600000001},
		{"before 1970 rounds towards the future", "1969-12-31T23:59:59.9999995Z", 0},
		{"another zone", "2026-05-01T12:00:00+12:00", 1777593600000000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tm, err := time.Parse(time.RFC3339Nano, tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if got := ceilMicros(tm); got != tt.want {
				t.Errorf("ceilMicros(%s) = %d, want %d", tt.in, got, tt.want)
			}
		})
	}
}
