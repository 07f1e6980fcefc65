package supplierindex

import "unsafe"

// interner makes the records of a load share one copy of the keywords
// that repeat across suppliers ("consulting" in a hundred thousand of
// them). The other repeated texts (cities, countries, bank names) need
// none: a record packs its own copy of each (packed.go), a few bytes, in
// place of a string header that would point to a shared one. Keywords
// unique to a supplier are kept as they are, past maxInterned.
//
// It also hands out the memory a load's records keep their parts and
// keywords in, carved from blocks (own, ownKeywords): the collector marks
// every object a stored record points to at every collection, and a
// record's own parts string and keywords slice were two objects a
// supplier, each mark a cache miss on its span's bits (1,000,000
// suppliers: 1.1 million parts strings and 0.83 million keyword slices,
// and a forced collection's mark 0.6-0.7 s of CPU; bench/README.md,
// sessions 17 and 18). From blocks they are two objects per few dozen
// records. The cost: a block stays alive while any record carved from it
// does, so a record a write replaced keeps its old parts' bytes until
// its block goes (at most what the load held). Records made outside a
// load (a write's) have memory of their own.
type interner struct {
	strs  map[string]string
	bytes []byte   // the current block of parts: its length is what is handed out
	words []string // the current block of keywords, likewise
}

// The blocks' sizes, and the largest parts carved from one (larger ones
// get their own allocation, so a block is never mostly one record's).
const (
	partsBlock    = 64 << 10
	maxBlockParts = partsBlock / 8
	wordsBlock    = 2048
	maxBlockWords = wordsBlock / 8
)

// own returns a string of b's bytes, carved from the current block. The
// bytes handed out are never written again: the block only grows into
// its capacity, and a full one is left to the strings that point into it.
func (in *interner) own(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if len(b) > maxBlockParts {
		return string(b)
	}
	c := carve(&in.bytes, b, partsBlock)
	return unsafe.String(&c[0], len(c))
}

// ownString is own for a string.
func (in *interner) ownString(s string) string {
	return in.own(unsafe.Slice(unsafe.StringData(s), len(s)))
}

// ownKeywords interns kw's values in place (keywords) and returns them
// in a slice carved from the current block of keywords, capped, so that
// an append to it copies rather than writing over the next record's.
// nil and empty slices are returned as they are.
func (in *interner) ownKeywords(kw []string) []string {
	in.keywords(kw)
	if len(kw) == 0 || len(kw) > maxBlockWords {
		return kw
	}
	return carve(&in.words, kw, wordsBlock)
}

// carve copies v to the end of *block, first starting a new block of
// size when the current one has no room for it, and returns the copy,
// capped. A full block is left to the copies that point into it.
func carve[T any](block *[]T, v []T, size int) []T {
	if cap(*block)-len(*block) < len(v) {
		*block = make([]T, 0, size)
	}
	at := len(*block)
	*block = append(*block, v...)
	return (*block)[at:len(*block):len(*block)]
}

// maxInterned bounds the interner's table: past it, new values are kept
// as they are (still correct, just not shared).
const maxInterned = 1 << 18

func newInterner() *interner {
	return &interner{strs: make(map[string]string)}
}

// keywords replaces each of kw by the shared copy of its value, in place.
func (in *interner) keywords(kw []string) {
	for i := range kw {
		in.str(&kw[i])
	}
}

// str replaces *p by the shared copy of its value.
func (in *interner) str(p *string) {
	if *p == "" {
		return
	}
	if v, ok := in.strs[*p]; ok {
		*p = v
		return
	}
	if len(in.strs) < maxInterned {
		in.strs[*p] = *p
	}
}
