package httpapi

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/procurekit/procure/supplier"
)

// sameSummary sees a change to any field of supplier.Summary, found by
// reflection: a field added to the type and not compared fails here. An
// equal copy with its own strings and pointers is the same.
func TestSameSummarySeesEveryField(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var a supplier.Summary
	fillFull(rng, reflect.ValueOf(&a).Elem())
	if c := deepCopySummary(a); !sameSummary(&a, &c) {
		t.Fatal("an equal copy with its own strings and pointers is not the same")
	}
	typ := reflect.TypeFor[supplier.Summary]()
	for i := range typ.NumField() {
		f := typ.Field(i)
		if !f.IsExported() {
			continue
		}
		for _, change := range []string{"value", "zero"} {
			b := deepCopySummary(a)
			v := reflect.ValueOf(&b).Elem().Field(i)
			if change == "zero" {
				v.SetZero()
			} else {
				alter(v)
			}
			if sameSummary(&a, &b) || sameSummary(&b, &a) {
				t.Errorf("a summary whose %s changed (%s) is the same to sameSummary", f.Name, change)
			}
		}
	}
}

// alter changes v (a field of a fully filled summary) to a different value
// of its type.
func alter(v reflect.Value) {
	switch {
	case v.Type() == reflect.TypeFor[time.Time]():
		v.Set(reflect.ValueOf(v.Interface().(time.Time).Add(time.Nanosecond)))
	case v.Kind() == reflect.String:
		v.SetString(v.String() + "x")
	case v.Kind() == reflect.Array: // uuid.UUID
		v.Index(0).SetUint(v.Index(0).Uint() ^ 1)
	case v.Kind() == reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		p.Elem().Set(v.Elem())
		alter(p.Elem())
		v.Set(p)
	case v.Kind() == reflect.Slice:
		s := reflect.MakeSlice(v.Type(), v.Len(), v.Len()+1)
		reflect.Copy(s, v)
		s = reflect.Append(s, v.Index(0))
		v.Set(s)
	default:
		panic("alter: no rule for " + v.Type().String())
	}
}

// deepCopySummary copies s with its own strings, pointers and slices.
func deepCopySummary(s supplier.Summary) supplier.Summary {
	c := s
	v := reflect.ValueOf(&c).Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		switch f.Kind() {
		case reflect.String:
			f.SetString(strings.Clone(f.String()))
		case reflect.Pointer:
			if !f.IsNil() {
				p := reflect.New(f.Type().Elem())
				p.Elem().Set(f.Elem())
				f.Set(p)
			}
		case reflect.Slice:
			if !f.IsNil() {
				n := reflect.MakeSlice(f.Type(), f.Len(), f.Len())
				for j := range f.Len() {
					n.Index(j).SetString(strings.Clone(f.Index(j).String()))
				}
				f.Set(n)
			}
		}
	}
	return c
}

// The memo's output is always the encoder's: summaries listed again and
// again while fields change at random (each change a fresh encoding), ids
// that share a slot, and several goroutines on one memo, each with its own
// versions of the same suppliers.
func TestSummaryMemoMatchesEncoder(t *testing.T) {
	m := new(summaryMemo)
	base := make([]supplier.Summary, 40)
	rng := rand.New(rand.NewPCG(7, 8))
	for i := range base {
		fillRandom(rng, reflect.ValueOf(&base[i]).Elem(), 0)
		if i%4 == 1 {
			// The same slot as the one before: only the key's top
			// bits differ.
			base[i].ID = base[i-1].ID
			base[i].ID[15] ^= 0x80
		}
	}
	if memoKey(&base[0])&(memoSlots-1) != memoKey(&base[1])&(memoSlots-1) || base[0].ID == base[1].ID {
		t.Fatal("the test's colliding ids do not share a slot")
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(g), 9))
			mine := make([]supplier.Summary, len(base))
			for i := range base {
				mine[i] = deepCopySummary(base[i])
			}
			fields := reflect.TypeFor[supplier.Summary]().NumField()
			hits := 0
			for n := range 20000 {
				s := &mine[rng.IntN(len(mine))]
				if rng.IntN(5) == 0 {
					f := rng.IntN(fields)
					if reflect.TypeFor[supplier.Summary]().Field(f).Name != "ID" {
						fillRandom(rng, reflect.ValueOf(s).Elem().Field(f), 1)
					}
				}
				want, werr := appendSummary([]byte("x"), s)
				got, gerr := m.appendSummary([]byte("x"), s)
				if (werr != nil) != (gerr != nil) || werr == nil && !bytes.Equal(want, got) {
					t.Errorf("goroutine %d, step %d: memo %s (%v), encoder %s (%v)", g, n, got, gerr, want, werr)
					return
				}
				if e := m.slots[memoKey(s)&(memoSlots-1)].entry.Load(); e != nil && sameSummary(&e.sum, s) {
					hits++
				}
			}
			if hits == 0 {
				t.Errorf("goroutine %d: the memo never held a summary being listed", g)
			}
		})
	}
	wg.Wait()
}

// A summary takes a slot the second time it is encoded, not the first; a
// different supplier in between makes it start again; an entry that no
// longer matches is replaced.
func TestSummaryMemoAdmission(t *testing.T) {
	m := new(summaryMemo)
	a := benchSummary(1)
	b := a
	b.ID[15] ^= 0x80 // same slot, another supplier
	slot := &m.slots[memoKey(&a)&(memoSlots-1)]
	enc := func(s *supplier.Summary) {
		t.Helper()
		if _, err := m.appendSummary(nil, s); err != nil {
			t.Fatal(err)
		}
	}
	enc(&a)
	if slot.entry.Load() != nil {
		t.Fatal("an entry after one encoding")
	}
	enc(&b)
	enc(&a)
	if slot.entry.Load() != nil {
		t.Fatal("an entry though another supplier came between the two encodings")
	}
	enc(&a)
	if e := slot.entry.Load(); e == nil || e.sum.ID != a.ID {
		t.Fatal("no entry for a summary encoded twice in a row")
	}
	a.Name = "Renamed"
	enc(&a)
	enc(&a)
	if e := slot.entry.Load(); e == nil || e.sum.Name != "Renamed" {
		t.Fatal("the entry of a changed summary was not replaced")
	}
	got, _ := m.appendSummary(nil, &a)
	if !bytes.Contains(got, []byte(`"name":"Renamed"`)) {
		t.Fatalf("memo output %s", got)
	}
}

// benchSummary is a summary as the generated data holds them.
func benchSummary(i int) supplier.Summary {
	verified := time.Date(2025, 12, 26, 7, 56, 29, 907702000, time.UTC)
	return supplier.Summary{
		ID:                      uuid.NewSHA1(uuid.NameSpaceOID, fmt.Appendf(nil, "memo-%d", i)),
		CommunitySupplierID:     fmt.Sprintf("CS0-%07d", i),
		SupplierID:              fmt.Sprintf("V%06d", i),
		Name:                    fmt.Sprintf("Tasman Office Supplies %d", i),
		ProfileType:             supplier.ProfileCompany,
		LegalBusinessName:       fmt.Sprintf("Tasman Office Supplies %d Pty Ltd", i),
		TaxIdentificationType:   "FOREIGN_TIN",
		TaxIdentificationNumber: fmt.Sprintf("TIN%09d", i),
		TinVerificationStatus:   "MATCHED",
		TinLastVerifiedDate:     &verified,
		ConnectionState:         "CONNECTED",
		BusinessNumber:          "55 636 453 930",
		ModifiedDate:            time.Date(2026, 1, 5, 3, 0, 0, 123000, time.UTC),
		CreatedDate:             time.Date(2022, 11, 21, 4, 24, 54, 0, time.UTC),
	}
}

// A page of 20 summaries as the list encodes them: listed again
// (repeat: every summary from the memo), never listed before (distinct:
// a new id each time, the memo's cost on a miss), and with no memo.
func BenchmarkSummaryMemo(b *testing.B) {
	page := make([]supplier.Summary, 20)
	for i := range page {
		page[i] = benchSummary(i)
	}
	run := func(b *testing.B, m *summaryMemo, fresh bool) {
		buf := make([]byte, 0, 16<<10)
		n := uint32(0)
		b.ReportAllocs()
		for b.Loop() {
			buf = buf[:0]
			for i := range page {
				if fresh {
					n++
					page[i].ID[0], page[i].ID[1], page[i].ID[2], page[i].ID[3] = byte(n), byte(n>>8), byte(n>>16), byte(n>>24)
				}
				buf, _ = m.appendSummary(buf, &page[i])
			}
		}
		b.SetBytes(int64(len(buf)))
	}
	b.Run("repeat", func(b *testing.B) { run(b, new(summaryMemo), false) })
	b.Run("distinct", func(b *testing.B) { run(b, new(summaryMemo), true) })
	b.Run("none", func(b *testing.B) { run(b, nil, false) })
}
