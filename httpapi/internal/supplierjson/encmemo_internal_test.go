package supplierjson

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

// deepCopy copies v with its own strings, pointers and slices.
func deepCopy[T any](v T) T {
	return deepCopyValue(reflect.ValueOf(v)).Interface().(T)
}

func deepCopyValue(v reflect.Value) reflect.Value {
	c := reflect.New(v.Type()).Elem()
	switch v.Kind() {
	case reflect.String:
		c.SetString(strings.Clone(v.String()))
	case reflect.Pointer:
		if !v.IsNil() {
			p := reflect.New(v.Type().Elem())
			p.Elem().Set(deepCopyValue(v.Elem()))
			c.Set(p)
		}
	case reflect.Slice:
		if !v.IsNil() {
			s := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
			for i := range v.Len() {
				s.Index(i).Set(deepCopyValue(v.Index(i)))
			}
			c.Set(s)
		}
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			c.Set(v)
			break
		}
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				c.Field(i).Set(deepCopyValue(v.Field(i)))
			}
		}
	default:
		c.Set(v)
	}
	return c
}

// The memo's output is always the encoder's: values encoded again and
// again while fields change at random (each change a fresh encoding), ids
// that share a slot, and several goroutines on one memo, each with its own
// versions of the same suppliers. For the list's summaries and for
// details.
func TestMemoMatchesEncoder(t *testing.T) {
	t.Run("summary", func(t *testing.T) {
		checkMemo(t, newEncMemo[supplier.Summary](summaryMemoSlots), func(s *supplier.Summary) *uuid.UUID { return &s.ID },
			(*supplier.Summary).Equal, appendSummary, appendSummaryMemo)
	})
	t.Run("detail", func(t *testing.T) {
		checkMemo(t, newEncMemo[supplier.Detail](detailMemoSlots), func(d *supplier.Detail) *uuid.UUID { return &d.ID },
			(*supplier.Detail).Equal, appendDetail, appendDetailMemo)
	})
}

func checkMemo[T any](t *testing.T, m *Memo[T], id func(*T) *uuid.UUID, same func(a, b *T) bool,
	enc func([]byte, *T) ([]byte, error), memoEnc func(*Memo[T], []byte, *T) ([]byte, error)) {
	base := make([]T, 40)
	rng := rand.New(rand.NewPCG(7, 8))
	for i := range base {
		fillRandom(rng, reflect.ValueOf(&base[i]).Elem(), 0)
		if i%4 == 1 {
			// The same slot as the one before: only the key's top
			// bits differ.
			*id(&base[i]) = *id(&base[i-1])
			id(&base[i])[15] ^= 0x80
		}
	}
	if m.slot(memoKey(id(&base[0]))) != m.slot(memoKey(id(&base[1]))) || *id(&base[0]) == *id(&base[1]) {
		t.Fatal("the test's colliding ids do not share a slot")
	}
	fields := reflect.TypeFor[T]().NumField()
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(g), 9))
			mine := make([]T, len(base))
			for i := range base {
				mine[i] = deepCopy(base[i])
			}
			hits := 0
			for n := range 20000 {
				v := &mine[rng.IntN(len(mine))]
				if rng.IntN(5) == 0 {
					keep := *id(v)
					fillRandom(rng, reflect.ValueOf(v).Elem().Field(rng.IntN(fields)), 1)
					*id(v) = keep
				}
				want, werr := enc([]byte("x"), v)
				got, gerr := memoEnc(m, []byte("x"), v)
				if (werr != nil) != (gerr != nil) || werr == nil && !bytes.Equal(want, got) {
					t.Errorf("goroutine %d, step %d: memo %s (%v), encoder %s (%v)", g, n, got, gerr, want, werr)
					return
				}
				if e := m.get(memoKey(id(v))); e != nil && same(&e.v, v) {
					hits++
				}
			}
			if hits == 0 {
				t.Errorf("goroutine %d: the memo never held a value being encoded", g)
			}
		})
	}
	wg.Wait()
}

// A summary takes a slot the second time it is encoded, not the first; a
// different supplier in between makes it start again; an entry that no
// longer matches is replaced.
func TestMemoAdmission(t *testing.T) {
	m := newEncMemo[supplier.Summary](summaryMemoSlots)
	a := benchSummary(1)
	b := a
	b.ID[15] ^= 0x80 // same slot, another supplier
	slot := m.slot(memoKey(&a.ID))
	enc := func(s *supplier.Summary) {
		t.Helper()
		if _, err := appendSummaryMemo(m, nil, s); err != nil {
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
	if e := slot.entry.Load(); e == nil || e.v.ID != a.ID {
		t.Fatal("no entry for a summary encoded twice in a row")
	}
	a.Name = supplier.NewText("Renamed")
	enc(&a)
	enc(&a)
	if e := slot.entry.Load(); e == nil || e.v.Name.String() != "Renamed" {
		t.Fatal("the entry of a changed summary was not replaced")
	}
	got, _ := appendSummaryMemo(m, nil, &a)
	if !bytes.Contains(got, []byte(`"name":"Renamed"`)) {
		t.Fatalf("memo output %s", got)
	}
}

// benchSummary is a summary as the generated data holds them.
func benchSummary(i int) supplier.Summary {
	verified := time.Date(2025, 12, 26, 7, 56, 29, 907702000, time.UTC)
	return supplier.Summary{
		ID:                      uuid.NewSHA1(uuid.NameSpaceOID, fmt.Appendf(nil, "memo-%d", i)),
		CommunitySupplierID:     supplier.NewText(fmt.Sprintf("CS0-%07d", i)),
		SupplierID:              supplier.NewText(fmt.Sprintf("V%06d", i)),
		Name:                    supplier.NewText(fmt.Sprintf("Tasman Office Supplies %d", i)),
		ProfileType:             supplier.ProfileCompany,
		LegalBusinessName:       supplier.NewText(fmt.Sprintf("Tasman Office Supplies %d Pty Ltd", i)),
		TaxIdentificationType:   "FOREIGN_TIN",
		TaxIdentificationNumber: supplier.NewText(fmt.Sprintf("TIN%09d", i)),
		TinVerificationStatus:   "MATCHED",
		TinLastVerifiedDate:     &verified,
		ConnectionState:         "CONNECTED",
		BusinessNumber:          supplier.NewText("55 636 453 930"),
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
	run := func(b *testing.B, m *Memo[supplier.Summary], fresh bool) {
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
				if m == nil {
					buf, _ = appendSummary(buf, &page[i])
				} else {
					buf, _ = appendSummaryMemo(m, buf, &page[i])
				}
			}
		}
		b.SetBytes(int64(len(buf)))
	}
	b.Run("repeat", func(b *testing.B) { run(b, newEncMemo[supplier.Summary](summaryMemoSlots), false) })
	b.Run("distinct", func(b *testing.B) { run(b, newEncMemo[supplier.Summary](summaryMemoSlots), true) })
	b.Run("none", func(b *testing.B) { run(b, nil, false) })
}

// The detail memo keeps a copy of its own: a detail lent by a
// supplier.Viewer is reused once the request is answered, and an entry
// that shared its parts would change with them, then match the lender's
// next detail and answer with the JSON of the one before.
func TestDetailMemoKeepsItsOwnCopy(t *testing.T) {
	m := NewDetailMemo()
	lent := supplier.Detail{Summary: benchSummary(1), DefaultContact: &supplier.Contact{
		ID: uuid.NewSHA1(uuid.NameSpaceOID, []byte("contact")), Name: "First",
		ModifiedDate: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), CreatedDate: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}}
	for range 2 { // the second encoding admits it
		if _, err := appendDetailMemo(m, nil, &lent); err != nil {
			t.Fatal(err)
		}
	}
	if m.slot(memoKey(&lent.ID)).entry.Load() == nil {
		t.Fatal("no entry for a detail encoded twice in a row")
	}
	lent.DefaultContact.Name = "Second" // the lender's memory, reused
	got, err := appendDetailMemo(m, nil, &lent)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := appendDetail(nil, &lent)
	if !bytes.Equal(got, want) {
		t.Errorf("memo output after the lent detail changed:\n%s\nwant\n%s", got, want)
	}
}
