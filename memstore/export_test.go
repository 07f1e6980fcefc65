package memstore

// OverlaySize is the number of changes a community's reads merge (tests
// and benchmarks).
func (s *Store) OverlaySize(community string) int {
	c := s.suppliers.get(community)
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.ov.size()
}
