package supplierindex

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"

	"github.com/procurekit/procure/internal/textkey"
	"github.com/procurekit/procure/supplier"
)

// The index compares names and queries as people read them
// (internal/textkey, docs: paging.md, filters.md): a supplier list sorted
// by name follows the names' sort keys (textkey.Sort: the Unicode
// Collation Algorithm, case and accents ignored first, then full
// strength, then the bytes), and a query matches the texts whose match
// key (textkey.Match: no accents, case-folded) starts with its own. The
// keys are computed once per value, when a record is loaded or applied,
// never per comparison: a build computes every record's on every core
// (textKeys), a change its own record's (newDeltaItem), and a compaction
// reuses the name keys it has.

// sortKey is the sort key of a name (nil for the empty name, which sorts
// last in both directions).
func sortKey(s string) []byte { return textkey.SortKey(s) }

// matchKey is the match key of a query or a searchable text.
func matchKey(s string) string { return textkey.Match(s) }

// matchTerms appends to dst the record's match terms
// (supplier.MatchTerms).
func matchTerms(rec *supplierRec, dst []string) []string {
	return supplier.MatchTerms(dst, &rec.summary, rec.keywords)
}

// builtKeys is what textKeys computes for a build.
type builtKeys struct {
	// names holds the name sort keys by position (not in key order).
	names strTable
	// terms and pairs are the text index's entries (owners are
	// positions), not yet sorted.
	terms, pairs []termEntry
}

// keyChunk is the records a worker of textKeys takes at a time.
const keyChunk = 4096

// chunkKeys is one chunk's name keys.
type chunkKeys struct {
	arena  []byte
	length []uint16 // of each record's name key, in src order
}

// termSink collects the term entries of a build's workers: each appends a
// chunk's under the lock, so that no second copy of them is made (their
// order does not matter: they are sorted afterwards).
type termSink struct {
	mu           sync.Mutex
	terms, pairs []termEntry
}

func (s *termSink) add(terms, pairs []termEntry) {
	s.mu.Lock()
	s.terms = append(s.terms, terms...)
	s.pairs = append(s.pairs, pairs...)
	s.mu.Unlock()
}

// textKeys computes the name sort keys and the term entries of src (record
// i at position posOf[i]) on up to par goroutines (0: GOMAXPROCS), taking
// the name keys known gives.
func textKeys(src []*supplierRec, posOf []int32, par int, known func(i int) ([]byte, bool)) (*builtKeys, error) {
	n := len(src)
	chunks := make([]chunkKeys, (n+keyChunk-1)/keyChunk)
	errs := make([]error, len(chunks))
	// Most suppliers have four or five terms (a name, a legal name, a
	// supplierId, keywords) and two or three pairs.
	sink := &termSink{terms: make([]termEntry, 0, n*5), pairs: make([]termEntry, 0, n*3)}
	jobs := make([]func(), len(chunks))
	for c := range chunks {
		jobs[c] = func() {
			chunks[c], errs[c] = oneChunk(src, posOf, c*keyChunk, min(n, (c+1)*keyChunk), known, sink)
		}
	}
	if par <= 0 {
		par = runtime.GOMAXPROCS(0)
	}
	runAll(par, jobs)
	for _, err := range errs {
		if err != nil {
			return nil, err // chunks are in src order: the first error
		}
	}

	out := &builtKeys{terms: sink.terms, pairs: sink.pairs}
	size := 0
	for c := range chunks {
		size += len(chunks[c].arena)
	}
	if size > math.MaxUint32 {
		return nil, fmt.Errorf("suppliers: the names of one community exceed 4 GiB of sort keys")
	}
	t := &out.names
	t.arena = make([]byte, 0, size)
	t.start, t.length, t.keys = make([]uint32, n), make([]uint16, n), make([]uint64, n)
	for c := range chunks {
		ch := &chunks[c]
		off := 0
		for j, l := range ch.length {
			p := posOf[c*keyChunk+j]
			key := ch.arena[off : off+int(l)]
			t.start[p], t.length[p], t.keys[p] = uint32(len(t.arena)+off), l, prefixKey(key, 0)
			off += int(l)
		}
		t.arena = append(t.arena, ch.arena...)
		*ch = chunkKeys{}
	}
	return out, nil
}

// oneChunk computes the keys of the records [lo, hi) of src: it returns
// their name keys and hands their term entries to sink.
func oneChunk(src []*supplierRec, posOf []int32, lo, hi int, known func(i int) ([]byte, bool), sink *termSink) (chunkKeys, error) {
	// Sized for Latin names (their keys run to about five bytes a
	// character) and the usual terms, so that the buffers rarely grow.
	size := 0
	for _, rec := range src[lo:hi] {
		size += 5*len(rec.summary.Name.String()) + 8
	}
	ch := chunkKeys{arena: make([]byte, 0, size), length: make([]uint16, 0, hi-lo)}
	var own []string
	terms, pairs := make([]termEntry, 0, 5*(hi-lo)), make([]termEntry, 0, 3*(hi-lo))
	for i := lo; i < hi; i++ {
		rec := src[i]
		before := len(ch.arena)
		k, ok := []byte(nil), false
		if known != nil {
			k, ok = known(i)
		}
		if ok {
			ch.arena = append(ch.arena, k...)
		} else {
			ch.arena = textkey.Sort(ch.arena, rec.summary.Name.String())
		}
		l := len(ch.arena) - before
		if l > maxTermBytes {
			return ch, fmt.Errorf("suppliers[%d].name: too long to sort (a sort key over %d bytes)", i, maxTermBytes)
		}
		ch.length = append(ch.length, uint16(l))

		own = matchTerms(rec, own[:0])
		p := posOf[i]
		for j, t := range own {
			if len(t) > maxTermBytes {
				return ch, fmt.Errorf("suppliers[%d]: a name, supplierId or keyword is longer than %d bytes", i, maxTermBytes)
			}
			terms = append(terms, newEntry(t, p))
			if j > 0 {
				if l := commonPrefix(own[j-1], t); l > 0 {
					pairs = append(pairs, newEntry(t[:l], p))
				}
			}
		}
	}
	sink.add(terms, pairs)
	ch.arena = slices.Clip(ch.arena)
	return ch, nil
}
