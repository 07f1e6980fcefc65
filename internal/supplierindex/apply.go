package memstore

import (
	"github.com/google/uuid"

	"github.com/procurekit/procure/supplier"
)

// ReplicateSuppliers applies to a community of the store changes that
// were made, and stamped, in another store that this one mirrors (such as
// pgstore's per-node cache, which follows the database's changes): the
// suppliers of deleted are removed (an id the community does not hold is
// skipped), then each record of put becomes its supplier's stored version
// exactly as given - its dates and those of its default contact,
// contacts and remittance addresses kept, nothing stamped, and its
// contacts and addresses replacing the stored ones. Deletes come first, so
// an id in both lists (deleted, then created again) ends as put has it.
//
// The records are copied and put in normal form (supplier.Record's
// Normalize), not validated: they come from a store that validated them.
// A record equal to the stored one, dates included, changes nothing. The
// community's modifiedDate high-water mark rises to the latest date
// applied, so a later write through this store still stamps above it.
//
// It returns an error matching procure.ErrUnknownCommunity when the store
// does not hold the community.
func (s *Store) ReplicateSuppliers(community string, put []supplier.Record, deleted []uuid.UUID) error {
	if err := s.needCommunity(community); err != nil {
		return err
	}
	if len(put) == 0 && len(deleted) == 0 {
		return nil
	}
	cs := s.suppliers.writable(community)
	cs.wmu.Lock()
	defer cs.wmu.Unlock()
	for _, id := range deleted {
		if cs.current(id) == nil {
			continue
		}
		if err := cs.replace(id, nil); err != nil {
			return err
		}
	}
	for i := range put {
		rec := newSupplierRec(&put[i], nil)
		id := rec.detail.ID
		if old := cs.current(id); old != nil && sameRecord(old, &rec) {
			continue
		}
		if cs.hwSet {
			cs.hw = max(cs.hw, recMaxModified(&rec))
		}
		if err := cs.replace(id, &rec); err != nil {
			return err
		}
	}
	return nil
}
