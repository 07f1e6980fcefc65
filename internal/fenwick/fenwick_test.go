package fenwick_test

import (
	"math/rand/v2"
	"testing"

	"github.com/procurekit/procure/internal/fenwick"
)

func TestTree(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, n := range []int{0, 1, 2, 3, 7, 8, 9, 100, 1000} {
		f := fenwick.New(n)
		counts := make([]int, n)
		for range 3 * n {
			i := rng.IntN(n)
			f.Add(i)
			counts[i]++
		}
		sum := 0
		for i := 0; i <= n; i++ {
			if got := f.Before(i); got != sum {
				t.Fatalf("n=%d: Before(%d) = %d, want %d", n, i, got, sum)
			}
			if i < n {
				sum += counts[i]
			}
		}
	}
}

// TestMarks checks counts and selections of marked positions against a
// plain slice, for sizes around the 64-position words.
func TestMarks(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for _, n := range []int{1, 2, 63, 64, 65, 127, 128, 129, 1000, 4096} {
		m := fenwick.NewMarks(n)
		marked := make([]bool, n)
		for round := range 4 {
			for range n / 3 {
				if i := rng.IntN(n); !marked[i] {
					marked[i] = true
					m.Add(i)
				}
			}
			var unmarked []int
			before := 0
			for i := 0; i <= n; i++ {
				if got := m.Before(i); got != before {
					t.Fatalf("n=%d round %d: Before(%d) = %d, want %d", n, round, i, got, before)
				}
				if i < n {
					if got := m.Has(i); got != marked[i] {
						t.Fatalf("n=%d round %d: Has(%d) = %v, want %v", n, round, i, got, marked[i])
					}
					if marked[i] {
						before++
					} else {
						unmarked = append(unmarked, i)
					}
				}
			}
			for k := -1; k <= len(unmarked)+1; k++ {
				want := n
				if k >= 0 && k < len(unmarked) {
					want = unmarked[k]
				}
				if got := m.SelectUnmarked(k); got != want {
					t.Fatalf("n=%d round %d: SelectUnmarked(%d) = %d, want %d", n, round, k, got, want)
				}
			}
		}
	}
}
