package pgstore

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/procurekit/procure/auth"
)

// claim grants each credential each later minute once: never twice, never
// an earlier minute, independently per credential and kind.
func TestUsageMinutesClaim(t *testing.T) {
	var u usageMinutes
	h1, h2 := auth.HashSecret("one"), auth.HashSecret("two")
	steps := []struct {
		kind   usageKind
		h      auth.Hash
		minute int64
		want   bool
	}{
		{tokenUsage, h1, 600, true},
		{tokenUsage, h1, 600, false}, // same minute
		{keyUsage, h1, 600, true},    // another kind: another credential
		{tokenUsage, h2, 600, true},
		{tokenUsage, h1, 660, true},
		{tokenUsage, h1, 600, false}, // never back
		{tokenUsage, h1, 660, false},
		{tokenUsage, h1, 900, true},
	}
	for i, st := range steps {
		if got := u.claim(st.kind, st.h, st.minute); got != st.want {
			t.Errorf("step %d: claim(%d, %d) = %v, want %v", i, st.kind, st.minute, got, st.want)
		}
	}
}

// Of many goroutines claiming one minute of one credential, exactly one
// wins.
func TestUsageMinutesClaimConcurrent(t *testing.T) {
	var u usageMinutes
	h := auth.HashSecret("busy")
	var won atomic.Int32
	var wg sync.WaitGroup
	for range 64 {
		wg.Go(func() {
			for m := int64(0); m < 10; m++ {
				if u.claim(tokenUsage, h, m*60) {
					won.Add(1)
				}
			}
		})
	}
	wg.Wait()
	if won.Load() != 10 {
		t.Errorf("%d claims won for 10 minutes, want 10", won.Load())
	}
}

// The map is swept of minutes gone by once it has grown: it stays bounded
// by the credentials in use, and a swept credential is claimed again.
func TestUsageMinutesSweep(t *testing.T) {
	var u usageMinutes
	secret := func(i int) auth.Hash { return auth.HashSecret(string(rune('a'+i%26)) + string(rune(i))) }
	for i := range minSweep {
		u.claim(tokenUsage, secret(i), 0)
	}
	if u.size() != minSweep {
		t.Fatalf("size %d, want %d", u.size(), minSweep)
	}
	// An hour later, a new credential: the old entries go.
	if !u.claim(tokenUsage, auth.HashSecret("new"), 3600) {
		t.Fatal("a new credential was not claimed")
	}
	if u.size() != 1 {
		t.Errorf("size after the sweep %d, want 1", u.size())
	}
	if !u.claim(tokenUsage, secret(0), 3600) {
		t.Error("a swept credential was not claimed for a later minute")
	}
}

// BenchmarkUsageClaimRecorded is the cost lastUsedAt adds to a request
// whose minute is recorded already (all but one a minute per credential
// and node): a read lock, a map lookup and an atomic load, no allocation.
func BenchmarkUsageClaimRecorded(b *testing.B) {
	var u usageMinutes
	hashes := make([]auth.Hash, 100)
	for i := range hashes {
		hashes[i] = auth.HashSecret(string(rune('a' + i)))
		u.claim(tokenUsage, hashes[i], 600)
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			u.claim(tokenUsage, hashes[i%len(hashes)], 600)
			i++
		}
	})
}
