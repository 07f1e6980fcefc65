package memstore

import (
	"fmt"
	"io"

	"github.com/procurekit/procure/datafile"
	"github.com/procurekit/procure/internal/supplierindex"
	"github.com/procurekit/procure/supplier"
)

// LoadFile returns a store holding the data file at path, read with
// datafile.StreamFile: the file is never in memory as a whole, and the
// decoded suppliers become the store's records without being copied. It
// accepts exactly the files datafile.ReadFile accepts, and errors name the
// file and the entry. Secrets are hashed; the plain text is not kept.
func LoadFile(path string) (*Store, error) {
	s := New()
	if err := datafile.StreamFile(path, s.Loader()); err != nil {
		return nil, err
	}
	return s, nil
}

// LoadReader is LoadFile on a data file read from r.
func LoadReader(r io.Reader) (*Store, error) {
	s := New()
	if err := datafile.Stream(r, s.Loader()); err != nil {
		return nil, err
	}
	return s, nil
}

// Loader returns a datafile.Handler that adds each community of a
// datafile.Stream to s as its object ends (all or nothing: an error
// leaves nothing of that community in s), taking over the decoded
// suppliers instead of copying them. A community s holds already is an
// error. It serves one stream; LoadFile and LoadReader are the common
// uses. Wrap it to watch a load (a progress count, say): a wrapper must
// pass every call on, in order. Communities added before an error in a
// later one stay in s.
func (s *Store) Loader() datafile.Handler {
	return &streamLoader{s: s}
}

// streamLoader is the datafile.Handler of LoadFile: it hands each supplier
// to the index builder as it arrives, and adds a community (all or
// nothing) when its object ends.
type streamLoader struct {
	s *Store
	// The suppliers of the community being read.
	ci   int
	recs supplierindex.Builder
}

func (l *streamLoader) Supplier(ci, si int, rec *supplier.Record) error {
	if l.recs.Len() == 0 {
		l.ci = ci
	} else if ci != l.ci {
		// datafile.Stream ends a community before the next begins.
		return fmt.Errorf("communities[%d].suppliers[%d]: community %d is not finished", ci, si, l.ci)
	}
	l.recs.Add(rec)
	return nil
}

func (l *streamLoader) Community(ci int, c *datafile.Community, n int) error {
	recs := &l.recs
	if got := recs.Len(); got != n || (n > 0 && l.ci != ci) {
		return fmt.Errorf("communities[%d]: %d suppliers announced, %d received", ci, n, got)
	}
	if err := l.add(c, recs); err != nil {
		return fmt.Errorf("communities[%d]: %w", ci, err)
	}
	return nil
}

// add builds the community's index (which empties recs) and adds it.
func (l *streamLoader) add(c *datafile.Community, recs *supplierindex.Builder) error {
	x := &l.s.suppliers
	x.mu.RLock()
	err := x.check(c.ID)
	x.mu.RUnlock()
	if err != nil {
		*recs = supplierindex.Builder{}
		return err
	}
	ix, err := recs.Build()
	if err != nil {
		return err
	}
	return l.s.add(c, ix)
}
