package memstore

import (
	"github.com/procurekit/procure/datafile"
	"github.com/procurekit/procure/internal/supplierindex"
	"github.com/procurekit/procure/supplier"
)

// OverlaySize is the number of changes a community's reads merge (tests
// and benchmarks).
func (s *Store) OverlaySize(community string) int {
	return s.suppliers.get(community).ix.OverlaySize()
}

// LoadRecords adds a community holding recs, which it takes over and puts
// in normal form (benchmarks: a million suppliers load without a data
// file's encoding and decoding).
func (s *Store) LoadRecords(community string, recs []supplier.Record) error {
	for i := range recs {
		recs[i].Normalize()
	}
	ix, err := supplierindex.New(recs)
	if err != nil {
		return err
	}
	return s.add(&datafile.Community{ID: community, Name: community, Region: datafile.NZ}, ix)
}
