// Package supplierindex keeps one community's suppliers indexed for every
// list the supplier API serves (docs: paging.md, "Filters"), and takes writes
// while it serves reads. memstore keeps its suppliers in it; pgstore keeps
// one per community as a per-node cache that follows the database's
// changes in commit order.
//
// This first version is the contract and a plain implementation: a map by
// id, and a filter plus sort per list. It is correct and O(n log n) per
// list; the indexed implementation replaces its insides, not its API.
package supplierindex

import (
	"bytes"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/procurekit/procure/paging"
	"github.com/procurekit/procure/supplier"
)

// Entry is what the index holds of one supplier: its summary (what lists
// return and sort on), its keywords (what the query also matches), and a
// payload of the owner's (memstore keeps the rest of the detail, contacts
// and addresses there; pgstore nothing).
type Entry[P any] struct {
	Summary  supplier.Summary
	Keywords []string
	Payload  P
}

// Index is one community's suppliers. It is safe for concurrent use: any
// number of readers, and writers that exclude them only briefly.
type Index[P any] struct {
	mu   sync.RWMutex
	byID map[uuid.UUID]*Entry[P]
	// maxModified is the largest modifiedDate the index has held since it
	// was made (deletes do not lower it), for stamping.
	maxModified time.Time
}

// New returns an empty index.
func New[P any]() *Index[P] {
	return &Index[P]{byID: make(map[uuid.UUID]*Entry[P])}
}

// Put inserts e, or replaces the entry with its id. The index keeps e as
// given: the caller must not modify e's slices afterwards.
func (x *Index[P]) Put(e Entry[P]) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.put(e)
}

// PutMany is Put for many entries under one lock (bulk loads).
func (x *Index[P]) PutMany(es []Entry[P]) {
	x.mu.Lock()
	defer x.mu.Unlock()
	for _, e := range es {
		x.put(e)
	}
}

func (x *Index[P]) put(e Entry[P]) {
	c := e
	x.byID[e.Summary.ID] = &c
	if e.Summary.ModifiedDate.After(x.maxModified) {
		x.maxModified = e.Summary.ModifiedDate
	}
}

// Delete removes the entry with that id and reports whether there was one.
func (x *Index[P]) Delete(id uuid.UUID) bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	_, ok := x.byID[id]
	delete(x.byID, id)
	return ok
}

// Get returns the entry with that id.
func (x *Index[P]) Get(id uuid.UUID) (Entry[P], bool) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	e, ok := x.byID[id]
	if !ok {
		return Entry[P]{}, false
	}
	return *e, true
}

// Len is the number of entries.
func (x *Index[P]) Len() int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return len(x.byID)
}

// MaxModified is the largest modifiedDate the index has held since it was
// made, deleted entries included: a store stamps the next write after it.
func (x *Index[P]) MaxModified() time.Time {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.maxModified
}

// List returns page q.Page of the suppliers matching q, in q.Page.Sort's
// order, and the number of matches. The page is appended to dst[:0] when
// dst has room for it (so a caller may pass a pooled buffer), and
// allocated otherwise.
func (x *Index[P]) List(q supplier.ListQuery, dst []supplier.Summary) ([]supplier.Summary, int) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	var lq string
	if q.Query != "" {
		lq = strings.ToLower(q.Query)
	}
	var hits []*Entry[P]
	for _, e := range x.byID {
		if matches(e, lq, q.ModifiedSince) {
			hits = append(hits, e)
		}
	}
	s := q.Page.Sort
	slices.SortFunc(hits, func(a, b *Entry[P]) int { return Compare(&a.Summary, &b.Summary, s) })
	lo, hi := paging.Window(len(hits), q.Page)
	out := dst[:0]
	if cap(dst) < hi-lo {
		out = make([]supplier.Summary, 0, hi-lo)
	}
	for _, e := range hits[lo:hi] {
		out = append(out, e.Summary)
	}
	return out, len(hits)
}

func matches[P any](e *Entry[P], lq string, since time.Time) bool {
	if !since.IsZero() && e.Summary.ModifiedDate.Before(since) {
		return false
	}
	if lq == "" {
		return true
	}
	has := func(s string) bool { return strings.HasPrefix(strings.ToLower(s), lq) }
	if has(e.Summary.Name) || has(e.Summary.LegalBusinessName) || has(e.Summary.SupplierID) {
		return true
	}
	return slices.ContainsFunc(e.Keywords, has)
}

// Compare orders two summaries as the supplier list does (docs: paging.md):
// text keys lower-cased then in byte order, empty values last in both
// directions, dates as instants, ties on id ascending in both directions.
func Compare(a, b *supplier.Summary, s paging.Sort) int {
	var c int
	switch s.Field {
	case "createdDate":
		c = a.CreatedDate.Compare(b.CreatedDate)
		if s.Desc {
			c = -c
		}
	case "modifiedDate":
		c = a.ModifiedDate.Compare(b.ModifiedDate)
		if s.Desc {
			c = -c
		}
	default:
		la, lb := strings.ToLower(a.Name), strings.ToLower(b.Name)
		switch {
		case la == lb:
		case la == "":
			c = 1
		case lb == "":
			c = -1
		default:
			c = strings.Compare(la, lb)
			if s.Desc {
				c = -c
			}
		}
	}
	if c != 0 {
		return c
	}
	return bytes.Compare(a.ID[:], b.ID[:])
}
