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
