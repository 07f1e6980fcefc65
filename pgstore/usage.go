package pgstore

import (
	"math"
	"sync"
	"sync/atomic"

	"github.com/procurekit/procure/auth"
)

// usageMinutes is a node's memory of lastUsedAt (docs: admin.md): for
// each credential it has seen authenticate, the latest minute it has
// claimed for writing. A request whose minute is claimed already costs a
// read lock and an atomic load, and no database call; so each node writes a
// credential's lastUsedAt at most once a minute, however many requests it
// serves. The zero value is ready to use.
//
// Cost: BenchmarkUsageClaimRecorded; a claim of a recorded minute
// allocates nothing and is a small fraction of a pgstore supplier list
// request, which is a database round trip (bench/README.md).
//
// Forgetting an entry is always safe - the write it allows is an UPDATE
// that changes nothing unless its minute is later than the stored one - so
// entries of minutes gone by are swept when the map has doubled since the
// last sweep, which bounds it by the credentials in use.
type usageMinutes struct {
	mu      sync.RWMutex
	m       map[usageKey]*atomic.Int64 // Unix seconds of the minute claimed
	sweepAt int                        // len(m) that triggers the next sweep
}

type usageKind uint8

const (
	tokenUsage usageKind = iota + 1
	keyUsage
)

type usageKey struct {
	kind usageKind
	hash auth.Hash
}

// minSweep is the smallest map that is swept.
const minSweep = 1024

// claim reports whether the caller should write minute (Unix seconds of a
// whole minute) as the credential's lastUsedAt: true once per credential
// and later minute, false for a minute claimed already or an earlier one.
func (u *usageMinutes) claim(kind usageKind, h auth.Hash, minute int64) bool {
	k := usageKey{kind, h}
	u.mu.RLock()
	p := u.m[k]
	u.mu.RUnlock()
	if p == nil {
		p = u.add(k, minute)
	}
	for {
		old := p.Load()
		if old >= minute {
			return false
		}
		if p.CompareAndSwap(old, minute) {
			return true
		}
	}
}

// add returns k's entry, making it if needed.
func (u *usageMinutes) add(k usageKey, minute int64) *atomic.Int64 {
	u.mu.Lock()
	defer u.mu.Unlock()
	if p := u.m[k]; p != nil {
		return p
	}
	if u.m == nil {
		u.m = make(map[usageKey]*atomic.Int64)
	}
	if len(u.m) >= max(u.sweepAt, minSweep) {
		// Minutes before the previous one will not be claimed again by
		// requests of today; a late one is only an UPDATE that changes
		// nothing.
		for key, p := range u.m {
			if p.Load() < minute-60 {
				delete(u.m, key)
			}
		}
		u.sweepAt = 2 * len(u.m)
	}
	p := new(atomic.Int64)
	p.Store(math.MinInt64)
	u.m[k] = p
	return p
}

// size returns the number of credentials remembered, for tests.
func (u *usageMinutes) size() int {
	u.mu.RLock()
	defer u.mu.RUnlock()
	return len(u.m)
}
