package supplierindex

import (
	"slices"
	"strings"
	"testing"
	"unsafe"
)

// The blocks hand out copies that keep their values while more are
// carved after them; keywords come back interned and capped; what is too
// large for a block gets memory of its own.
func TestInternerBlocks(t *testing.T) {
	in := newInterner()
	var got []string
	var want []string
	for i := range 5000 {
		v := strings.Repeat(string(rune('a'+i%26)), 1+i%300)
		b := []byte(v)
		got = append(got, in.own(b))
		clear(b) // the caller's buffer is its own again
		want = append(want, v)
	}
	if !slices.Equal(got, want) {
		t.Fatal("a carved string changed after more were carved")
	}
	big := strings.Repeat("x", maxBlockParts+1)
	if s := in.ownString(big); s != big || unsafe.StringData(s) == unsafe.StringData(big) {
		t.Error("a large part is not a copy of its own")
	}

	kw := []string{strings.Clone("consulting"), "it"}
	a := in.ownKeywords(kw)
	b := in.ownKeywords([]string{strings.Clone("consulting")})
	if !slices.Equal(a, []string{"consulting", "it"}) || cap(a) != len(a) {
		t.Fatalf("keywords %q of capacity %d", a, cap(a))
	}
	if unsafe.StringData(a[0]) != unsafe.StringData(b[0]) {
		t.Error("a repeated keyword is not shared")
	}
	if &unsafe.Slice(unsafe.SliceData(a), 3)[2] != unsafe.SliceData(b) {
		t.Error("two records' keywords are not carved one after the other")
	}
	if in.ownKeywords(nil) != nil {
		t.Error("no keywords became some")
	}
}

// The records of a build keep their parts and keywords in few
// allocations, not one or two a record: counted as runs of contiguous
// memory over the records in the order they were added.
func TestBuildCarvesParts(t *testing.T) {
	recs := layoutRecords(t)
	for _, add := range []string{"Add", "AddPacked"} {
		var b Builder
		for i := range recs {
			r := recs[i].Clone()
			r.Normalize()
			if add == "Add" {
				b.Add(&r)
			} else {
				b.AddPacked(Pack(&r))
			}
		}
		partsRuns, kwRuns, withKw := 0, 0, 0
		var partsEnd, kwEnd uintptr
		for i := range int32(b.recs.n) {
			rec := b.recs.at(i)
			p := uintptr(unsafe.Pointer(unsafe.StringData(rec.parts)))
			if p != partsEnd {
				partsRuns++
			}
			partsEnd = p + uintptr(len(rec.parts))
			if len(rec.keywords) == 0 {
				continue
			}
			withKw++
			k := uintptr(unsafe.Pointer(unsafe.SliceData(rec.keywords)))
			if k != kwEnd {
				kwRuns++
			}
			kwEnd = k + uintptr(len(rec.keywords))*unsafe.Sizeof("")
		}
		if withKw < 100 {
			t.Fatalf("%s: %d records with keywords: the test needs more", add, withKw)
		}
		if partsRuns > b.recs.n/16 || kwRuns > withKw/16 {
			t.Errorf("%s: %d records' parts in %d runs of memory, %d records' keywords in %d", add, b.recs.n, partsRuns, withKw, kwRuns)
		}
		ix, err := b.Build()
		if err != nil {
			t.Fatal(err)
		}
		for i := range recs {
			want := recs[i].Clone()
			want.Normalize()
			got, ok := ix.Record(want.ID)
			if !ok || !slices.Equal(got.Keywords, want.Keywords) || got.Name != want.Name {
				t.Fatalf("%s: record %d does not read back", add, i)
			}
		}
	}
}
