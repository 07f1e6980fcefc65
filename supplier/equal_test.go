package supplier_test

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/procurekit/procure/supplier"
)

// Equal and EqualContent see a change to any field, at any depth, found
// by reflection: a field added to a supplier type and not compared fails
// here. Each leaf of a fully filled value is changed in turn, and each
// pointer and slice on the way is also emptied; an equal copy with its
// own strings, pointers and slices is equal. EqualContent leaves out
// exactly the dates a write stamps.
func TestEqualSeesEveryField(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var s supplier.Summary
	fillFull(rng, reflect.ValueOf(&s).Elem())
	checkSeesEveryField(t, s, (*supplier.Summary).Equal, nil)
	var d supplier.Detail
	fillFull(rng, reflect.ValueOf(&d).Elem())
	checkSeesEveryField(t, d, (*supplier.Detail).Equal, nil)
	checkSeesEveryField(t, d, (*supplier.Detail).EqualContent, []string{
		".Summary.ModifiedDate", ".Summary.CreatedDate",
		".DefaultContact.ModifiedDate", ".DefaultContact.CreatedDate",
		".DefaultRemittanceAddress.ModifiedDate", ".DefaultRemittanceAddress.CreatedDate",
	})
	var c supplier.Contact
	fillFull(rng, reflect.ValueOf(&c).Elem())
	checkSeesEveryField(t, c, (*supplier.Contact).Equal, nil)
	checkSeesEveryField(t, c, (*supplier.Contact).EqualContent, []string{".ModifiedDate", ".CreatedDate"})
	var a supplier.RemittanceAddress
	fillFull(rng, reflect.ValueOf(&a).Elem())
	checkSeesEveryField(t, a, (*supplier.RemittanceAddress).Equal, nil)
	checkSeesEveryField(t, a, (*supplier.RemittanceAddress).EqualContent, []string{".ModifiedDate", ".CreatedDate"})
}

var textType = reflect.TypeFor[supplier.Text]()

// Times are equal as the same instant in the same location: what their
// RFC 3339 text shows.
func TestEqualTimes(t *testing.T) {
	at := time.Date(2026, 5, 1, 9, 30, 0, 0, time.UTC)
	nz := time.FixedZone("NZST", 12*3600)
	a := supplier.Summary{ModifiedDate: at, CreatedDate: at}
	b := a
	b.ModifiedDate = time.Unix(at.Unix(), 0).UTC() // no monotonic reading, same instant
	if !a.Equal(&b) {
		t.Error("the same instant in UTC is not equal")
	}
	b.ModifiedDate = at.In(nz)
	if a.Equal(&b) {
		t.Error("the same instant in another zone is equal")
	}
}

// ignored lists the paths (pathName) that same must not see.
func checkSeesEveryField[T any](t *testing.T, a T, same func(a, b *T) bool, ignored []string) {
	t.Helper()
	if c := deepCopy(a); !same(&a, &c) {
		t.Fatalf("%T: an equal copy with its own strings and pointers is not the same", a)
	}
	var paths [][]int
	collectPaths(reflect.ValueOf(a), nil, &paths)
	seen := map[string]bool{}
	for _, path := range paths {
		name := pathName(reflect.TypeOf(a), path)
		for _, change := range []string{"value", "zero", "empty", "empty, against none"} {
			b := deepCopy(a)
			v := at(reflect.ValueOf(&b).Elem(), path)
			a := a
			switch change {
			case "zero":
				if v.IsZero() {
					continue
				}
				v.SetZero()
			case "empty", "empty, against none":
				// An empty string and no value are different values.
				if v.Type() != textType {
					continue
				}
				v.Set(reflect.ValueOf(supplier.NewText("")))
				if change == "empty, against none" {
					a = deepCopy(b)
					at(reflect.ValueOf(&a).Elem(), path).SetZero()
				}
			default:
				alter(v)
			}
			switch got := same(&a, &b) || same(&b, &a); {
			case slices.Contains(ignored, name):
				seen[name] = true
				if got := same(&a, &b) && same(&b, &a); !got {
					t.Errorf("%T: a change to %s (%s) is seen; it should be left out", a, name, change)
				}
			case got:
				t.Errorf("%T: a change to %s (%s) is not seen", a, name, change)
			}
		}
	}
	for _, name := range ignored {
		if !seen[name] {
			t.Errorf("%T: no path %s", a, name)
		}
	}
	if len(paths) < 10 {
		t.Fatalf("%T: only %d paths", a, len(paths))
	}
}

// Clone shares no memory with its original but strings, found by
// reflection: every pointer and slice of a fully filled value is its own,
// and the copy is Equal (and deeply equal) to the original.
func TestCloneSharesNothing(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	var r supplier.Record
	fillFull(rng, reflect.ValueOf(&r).Elem())
	check := func(name string, orig, clone any, equal bool) {
		t.Helper()
		if !equal || !reflect.DeepEqual(orig, clone) {
			t.Errorf("%s: the clone differs from the original", name)
		}
		checkDisjoint(t, name, reflect.ValueOf(orig), reflect.ValueOf(clone))
	}
	rc := r.Clone()
	check("Record", &r, &rc, rc.Detail.Equal(&r.Detail) && slices.Equal(rc.Keywords, r.Keywords))
	dc := r.Detail.Clone()
	check("Detail", &r.Detail, &dc, dc.Equal(&r.Detail))
	sc := r.Summary.Clone()
	check("Summary", &r.Summary, &sc, sc.Equal(&r.Summary))
	cc := r.Contacts[0].Clone()
	check("Contact", &r.Contacts[0], &cc, cc.Equal(&r.Contacts[0]))
	ac := r.RemittanceAddresses[0].Clone()
	check("RemittanceAddress", &r.RemittanceAddresses[0], &ac, ac.Equal(&r.RemittanceAddresses[0]))
}

// checkDisjoint fails when a and b, two values of one type, share a
// pointer or a slice's array.
func checkDisjoint(t *testing.T, path string, a, b reflect.Value) {
	t.Helper()
	switch a.Kind() {
	case reflect.Pointer:
		if a.IsNil() {
			return
		}
		if a.Pointer() == b.Pointer() {
			t.Errorf("%s: the clone shares the pointer", path)
			return
		}
		checkDisjoint(t, path, a.Elem(), b.Elem())
	case reflect.Slice:
		if a.Len() == 0 {
			return
		}
		if a.Pointer() == b.Pointer() {
			t.Errorf("%s: the clone shares the slice's array", path)
			return
		}
		for i := range a.Len() {
			checkDisjoint(t, fmt.Sprintf("%s[%d]", path, i), a.Index(i), b.Index(i))
		}
	case reflect.Struct:
		for i := range a.NumField() {
			if a.Type().Field(i).IsExported() {
				checkDisjoint(t, path+"."+a.Type().Field(i).Name, a.Field(i), b.Field(i))
			}
		}
	}
}

// fillFull sets every field of v, at every depth, to a value that is not
// zero: pointers point to filled values and slices hold two filled
// elements.
func fillFull(rng *rand.Rand, v reflect.Value) {
	switch v.Type() {
	case reflect.TypeFor[time.Time]():
		v.Set(reflect.ValueOf(time.Date(2000+rng.IntN(30), time.Month(1+rng.IntN(12)), 1+rng.IntN(28), rng.IntN(24), 0, 0, rng.IntN(1e6)*1000, time.UTC)))
		return
	case textType:
		v.Set(reflect.ValueOf(supplier.NewText(fmt.Sprintf("t%d", rng.IntN(1e6)))))
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(fmt.Sprintf("s%d", rng.IntN(1e6)))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int:
		v.SetInt(int64(1 + rng.IntN(100)))
	case reflect.Array:
		for i := range v.Len() {
			v.Index(i).SetUint(uint64(1 + rng.IntN(255)))
		}
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		fillFull(rng, p.Elem())
		v.Set(p)
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 2, 2)
		for i := range 2 {
			fillFull(rng, s.Index(i))
		}
		v.Set(s)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fillFull(rng, v.Field(i))
			}
		}
	default:
		panic("fillFull: no rule for " + v.Type().String())
	}
}

// A path is a list of field indices (pointers followed on the way) and,
// for a slice element, -1-index.
func collectPaths(v reflect.Value, path []int, out *[][]int) {
	if len(path) > 0 {
		*out = append(*out, slices.Clone(path))
	}
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return
		}
		v = v.Elem()
	}
	if v.Type() == reflect.TypeFor[time.Time]() || v.Type() == textType {
		return
	}
	switch v.Kind() {
	case reflect.Slice:
		for i := range v.Len() {
			collectPaths(v.Index(i), append(path, -1-i), out)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				collectPaths(v.Field(i), append(path, i), out)
			}
		}
	}
}

// at follows path from v (pointers are followed before a field index).
func at(v reflect.Value, path []int) reflect.Value {
	for _, i := range path {
		if v.Kind() == reflect.Pointer {
			v = v.Elem()
		}
		if i < 0 {
			v = v.Index(-1 - i)
		} else {
			v = v.Field(i)
		}
	}
	return v
}

func pathName(t reflect.Type, path []int) string {
	var b strings.Builder
	for _, i := range path {
		if t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if i < 0 {
			fmt.Fprintf(&b, "[%d]", -1-i)
			t = t.Elem()
			continue
		}
		f := t.Field(i)
		b.WriteString("." + f.Name)
		t = f.Type
	}
	return b.String()
}

// alter changes v (a leaf or pointer or slice of a fully filled value) to
// a different value of its type.
func alter(v reflect.Value) {
	switch {
	case v.Type() == reflect.TypeFor[time.Time]():
		v.Set(reflect.ValueOf(v.Interface().(time.Time).Add(time.Microsecond)))
	case v.Type() == textType:
		v.Set(reflect.ValueOf(supplier.NewText(v.Interface().(supplier.Text).String() + "x")))
	case v.Kind() == reflect.String:
		v.SetString(v.String() + "x")
	case v.Kind() == reflect.Bool:
		v.SetBool(!v.Bool())
	case v.Kind() == reflect.Int:
		v.SetInt(v.Int() + 1)
	case v.Kind() == reflect.Array: // uuid.UUID
		v.Index(0).SetUint(v.Index(0).Uint() ^ 1)
	case v.Kind() == reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		p.Elem().Set(deepCopyValue(v.Elem()))
		alter(p.Elem())
		v.Set(p)
	case v.Kind() == reflect.Slice:
		s := reflect.MakeSlice(v.Type(), v.Len(), v.Len()+1)
		reflect.Copy(s, v)
		s = reflect.Append(s, v.Index(0))
		v.Set(s)
	case v.Kind() == reflect.Struct: // change its first field
		alter(v.Field(0))
	default:
		panic("alter: no rule for " + v.Type().String())
	}
}

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
		switch v.Type() {
		case reflect.TypeFor[time.Time]():
			c.Set(v)
			return c
		case textType:
			t := v.Interface().(supplier.Text)
			if !t.IsZero() {
				c.Set(reflect.ValueOf(supplier.NewText(strings.Clone(t.String()))))
			}
			return c
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
