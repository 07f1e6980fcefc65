package supplierindex

// interner makes the records of a load share one copy of the keywords
// that repeat across suppliers ("consulting" in a hundred thousand of
// them). The other repeated texts (cities, countries, bank names) need
// none: a record packs its own copy of each (packed.go), a few bytes, in
// place of a string header that would point to a shared one. Keywords
// unique to a supplier are kept as they are, past maxInterned.
type interner struct {
	strs map[string]string
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
