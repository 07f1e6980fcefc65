package pgstore

// CacheServed returns how many reads the store's supplier cache served
// (0 without WithSupplierCache), so that tests can check that a suite
// run with the cache on went through it.
func CacheServed(s *Store) int64 {
	if s.cache == nil {
		return 0
	}
	return s.cache.served.Load()
}

// HoldCacheLoads keeps the supplier cache's background loads from
// starting (they wait for its one load slot) until release is called.
func HoldCacheLoads(s *Store) (release func()) {
	s.cache.load <- struct{}{}
	return func() { <-s.cache.load }
}

// CacheLoading reports whether a background load of the community was
// started and has not ended.
func CacheLoading(s *Store, community string) bool {
	return s.cache.entry(community).loading.Load()
}

// ProcStatus is procStatus (cache_memory_test.go) for the external tests:
// a field of /proc/self/status in kB.
var ProcStatus = procStatus

// UserCacheServed returns how many user reads the store's user cache
// answered (0 without WithUserCache).
func UserCacheServed(s *Store) int64 {
	if s.users == nil {
		return 0
	}
	return s.users.served.Load()
}

// UserDBReads returns how many user reads (by username or id) went to the
// database.
func UserDBReads(s *Store) int64 { return s.userReads.Load() }

// HoldUserPolls keeps the user cache from polling until release is
// called.
var HoldUserPolls = holdUserPolls

// ReadsFromReplica reports whether a read of s that may be served a
// little old would go to its replica now (WithReadDSN).
func ReadsFromReplica(s *Store) bool {
	if s.replica == nil {
		return false
	}
	_, ok := s.replica.fresh()
	return ok
}

// ReplicaReads returns how many reads s sent to its replica, and how many
// it sent to the primary instead.
func ReplicaReads(s *Store) (replica, primary int64) {
	if s.replica == nil {
		return 0, 0
	}
	return s.replica.served.Load(), s.replica.fallbacks.Load()
}

// ReplicaWrote returns when this node last ended a call on the primary
// that may have written (replica.go's monotonic nanoseconds; 0 without a
// replica).
func ReplicaWrote(s *Store) int64 {
	if s.replica == nil {
		return 0
	}
	return s.replica.wrote.Load()
}

// CacheReadSyncs returns how many syncs the supplier cache's reads
// waited for.
func CacheReadSyncs(s *Store) int64 { return s.cache.readSyncs.Load() }
