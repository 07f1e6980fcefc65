package suppliertest

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/procurekit/procure/supplier"
)

// FullRecord returns a valid supplier record with every field of the
// supplier types set, at every depth, found by reflection: pointers point
// to filled values, slices hold two elements (ids distinct), text is
// within its limits, enums valid, e-mail addresses plainly valid, dates
// within range. A field added to a supplier type is filled with no change
// here, so a store that forgets to keep it fails the suite
// (EveryFieldRoundTrips).
func FullRecord(rng *rand.Rand) supplier.Record {
	var r supplier.Record
	fillValid(rng, reflect.ValueOf(&r).Elem(), "")
	return r
}

type enum interface{ Allowed() []string }

var (
	textType = reflect.TypeFor[supplier.Text]()
	timeType = reflect.TypeFor[time.Time]()
	uuidType = reflect.TypeFor[uuid.UUID]()
)

func fillValid(rng *rand.Rand, v reflect.Value, tag string) {
	if e, ok := v.Addr().Interface().(enum); ok {
		allowed := e.Allowed()
		v.SetString(allowed[rng.IntN(len(allowed))])
		return
	}
	switch v.Type() {
	case timeType:
		v.Set(reflect.ValueOf(time.Date(2020+rng.IntN(6), 1, 1, 0, 0, 0, rng.IntN(1e6)*1000, time.UTC)))
		return
	case uuidType:
		v.Set(reflect.ValueOf(uuid.New()))
		return
	case textType:
		v.Set(reflect.ValueOf(supplier.NewText(sample(rng, tag))))
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(sample(rng, tag))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int:
		v.SetInt(int64(1 + rng.IntN(90)))
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		fillValid(rng, p.Elem(), tag)
		v.Set(p)
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 2, 2)
		for i := range 2 {
			fillValid(rng, s.Index(i), tag)
		}
		v.Set(s)
	case reflect.Struct:
		for i := range v.NumField() {
			if f := v.Type().Field(i); f.IsExported() {
				fillValid(rng, v.Field(i), f.Tag.Get("validate"))
			}
		}
	default:
		panic("suppliertest: FullRecord has no rule for " + v.Type().String())
	}
}

// sample is a short text that keeps the rules of tag.
func sample(rng *rand.Rand, tag string) string {
	if strings.Contains(","+tag+",", ",email,") {
		return fmt.Sprintf("a%d@example.com", rng.IntN(1000))
	}
	return fmt.Sprintf("Ō%d", rng.IntN(1000))
}

// BlankTexts sets every supplier.Text of *v (a pointer to a supplier
// type), at any depth, to the empty string: a value of its own.
func BlankTexts(v any) {
	blank(reflect.ValueOf(v).Elem())
}

func blank(v reflect.Value) {
	switch {
	case v.Type() == textType:
		v.Set(reflect.ValueOf(supplier.NewText("")))
	case v.Kind() == reflect.Pointer && !v.IsNil():
		blank(v.Elem())
	case v.Kind() == reflect.Slice:
		for i := range v.Len() {
			blank(v.Index(i))
		}
	case v.Kind() == reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				blank(v.Field(i))
			}
		}
	}
}

// testEveryField writes a supplier, a contact and an address with every
// field set (FullRecord), then with every optional text "", and reads
// each back through every read: equal but for the stamped dates.
func (w *writerHarness) testEveryField(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, uint64(time.Now().UnixNano())))
	for _, blankText := range []bool{false, true} {
		com := w.community(t)
		full := FullRecord(rng)
		if blankText {
			BlankTexts(&full)
		}
		r := supplier.Record{Detail: full.Detail.Clone(), Keywords: full.Keywords}
		d := w.put(t, com, r)
		got := w.get(t, com, r.ID)
		for what, v := range map[string]supplier.Detail{"PutSupplier": d, "Supplier": got} {
			if !v.EqualContent(&r.Detail) {
				t.Errorf("blank %v: %s gives a supplier that differs from the one written, dates aside (-wrote +got):\n%s",
					blankText, what, jsonDiff(datedAs(r.Detail, v), v))
			}
		}
		items, _ := w.all(t, com, supplier.ListQuery{})
		want := r.Summary
		if len(items) == 1 {
			want.ModifiedDate, want.CreatedDate = items[0].ModifiedDate, items[0].CreatedDate
		}
		if len(items) != 1 || !items[0].Equal(&want) {
			t.Errorf("blank %v: the list does not give the summary written, dates aside (-wrote +got):\n%s", blankText, jsonDiff([]supplier.Summary{want}, items))
		}
		c := full.Contacts[0].Clone()
		if _, err := w.st.PutContact(ctx, com, r.ID, c); err != nil {
			t.Fatal(err)
		}
		if cs := w.contacts(t, com, r.ID); len(cs) != 1 || !cs[0].EqualContent(&c) {
			t.Errorf("blank %v: ListContacts does not give the contact written, dates aside (-wrote +got):\n%s", blankText, jsonDiff([]supplier.Contact{c}, cs))
		}
		a := full.RemittanceAddresses[0].Clone()
		if _, err := w.st.PutRemittanceAddress(ctx, com, r.ID, a); err != nil {
			t.Fatal(err)
		}
		if as := w.addresses(t, com, r.ID); len(as) != 1 || !as[0].EqualContent(&a) {
			t.Errorf("blank %v: ListRemittanceAddresses does not give the address written, dates aside (-wrote +got):\n%s",
				blankText, jsonDiff([]supplier.RemittanceAddress{a}, as))
		}
	}
}

// datedAs returns d with the dates a write stamps taken from like.
func datedAs(d, like supplier.Detail) supplier.Detail {
	d = d.Clone()
	d.ModifiedDate, d.CreatedDate = like.ModifiedDate, like.CreatedDate
	if c, l := d.DefaultContact, like.DefaultContact; c != nil && l != nil {
		c.ModifiedDate, c.CreatedDate = l.ModifiedDate, l.CreatedDate
	}
	if a, l := d.DefaultRemittanceAddress, like.DefaultRemittanceAddress; a != nil && l != nil {
		a.ModifiedDate, a.CreatedDate = l.ModifiedDate, l.CreatedDate
	}
	return d
}

// jsonDiff shows how the JSON of want and got differ, dates aside: the
// members a store dropped or changed, by name.
func jsonDiff(want, got any) string {
	norm := func(v any) any {
		b, err := json.Marshal(v)
		if err != nil {
			return err.Error()
		}
		var out any
		if err := json.Unmarshal(b, &out); err != nil {
			return err.Error()
		}
		return out
	}
	return cmp.Diff(norm(want), norm(got), cmp.FilterPath(func(p cmp.Path) bool {
		k, ok := p.Last().(cmp.MapIndex)
		return ok && (k.Key().String() == "modifiedDate" || k.Key().String() == "createdDate")
	}, cmp.Ignore()))
}
