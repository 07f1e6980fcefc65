package supplierjson

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/procurekit/procure/paging"
	"github.com/procurekit/procure/supplier"
)

// The hand-written encoder must give exactly what encoding/json gives, for
// every field of every type: values are filled at random by reflection
// (so a field added to a supplier type is filled too, and the test fails
// until the encoder writes it), with empty and nil values mixed in to
// exercise omitempty, and strings drawn to need every kind of escape.
func TestEncoderMatchesEncodingJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 3000 {
		var d supplier.Detail
		fillRandom(rng, reflect.ValueOf(&d).Elem(), 0)
		compareEncoding(t, i, &d, appendDetail)

		var p paging.Page[supplier.Summary]
		fillRandom(rng, reflect.ValueOf(&p).Elem(), 0)
		if p.Content == nil {
			p.Content = []supplier.Summary{} // the encoder always writes an array
		}
		compareEncoding(t, i, &p, appendSummaryPage)

		var c paging.Page[supplier.Contact]
		fillRandom(rng, reflect.ValueOf(&c).Elem(), 0)
		if c.Content == nil {
			c.Content = []supplier.Contact{}
		}
		compareEncoding(t, i, &c, appendContactPage)

		var a paging.Page[supplier.RemittanceAddress]
		fillRandom(rng, reflect.ValueOf(&a).Elem(), 0)
		if a.Content == nil {
			a.Content = []supplier.RemittanceAddress{}
		}
		compareEncoding(t, i, &a, appendAddressPage)
		if t.Failed() {
			return
		}
	}
}

// Every field of a fully filled value is written: the random test might
// leave a rare combination out, this one leaves nothing empty.
func TestEncoderWritesEveryField(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var d supplier.Detail
	fillFull(rng, reflect.ValueOf(&d).Elem())
	compareEncoding(t, 0, &d, appendDetail)
}

func compareEncoding[T any](t *testing.T, i int, v *T, enc func([]byte, *T) ([]byte, error)) {
	t.Helper()
	want, werr := json.Marshal(v)
	got, gerr := enc(nil, v)
	if (werr != nil) != (gerr != nil) {
		t.Fatalf("case %d: encoding/json error %v, encoder error %v", i, werr, gerr)
	}
	if werr != nil {
		return
	}
	if !bytes.Equal(want, got) {
		t.Fatalf("case %d: %T encodes differently\nencoding/json: %s\nencoder:       %s", i, v, want, got)
	}
}

// A nil content still encodes as an array (docs: paging.md "Page object": content is required).
func TestEncoderNilContentIsArray(t *testing.T) {
	got, err := appendSummaryPage(nil, &paging.Page[supplier.Summary]{Page: paging.Metadata{Size: 20}})
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"content":[],"page":{"size":20,"number":0,"totalElements":0,"totalPages":0}}`
	if string(got) != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

// Dates RFC 3339 cannot carry are an error, as they are for encoding/json;
// the handler turns it into a 500.
func TestEncoderRejectsUnencodableTimes(t *testing.T) {
	for _, tm := range []time.Time{
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2026, 1, 1, 0, 0, 0, 0, time.FixedZone("far", 24*3600+60)),
	} {
		s := supplier.Summary{ModifiedDate: tm, CreatedDate: tm}
		if _, err := appendSummary(nil, &s); err == nil {
			t.Errorf("%v: no error", tm)
		}
		if _, err := json.Marshal(s); err == nil {
			t.Errorf("%v: encoding/json gave no error either; the test is wrong", tm)
		}
	}
}

// strings that need every kind of escape encoding/json knows.
var awkward = []string{
	"", "plain", "Café Müller", "Ōtaki Organics", "北京 Trading", "quote \" and \\ backslash",
	"<script>&amp;</script>", "tab\tnew\nline\rret", "\b\f\x00\x01\x1f\x7f", "\u2028\u2029 separators",
	"bad \xff utf-8 \xc3", "emoji 🦘", "\xed\xa0\x80 surrogate", "a/b", "'single'",
}

var zones = []*time.Location{time.UTC, time.FixedZone("", 12*3600), time.FixedZone("", -5*3600-1800), time.FixedZone("", 3601)}

func fillRandom(rng *rand.Rand, v reflect.Value, depth int) {
	switch v.Type() {
	case reflect.TypeFor[time.Time]():
		v.Set(reflect.ValueOf(randomTime(rng)))
		return
	case reflect.TypeFor[supplier.Text]():
		// No value, the empty string (a value: written as ""), or text.
		switch rng.IntN(4) {
		case 0:
			v.SetZero()
		case 1:
			v.Set(reflect.ValueOf(supplier.NewText("")))
		default:
			v.Set(reflect.ValueOf(supplier.NewText(awkward[rng.IntN(len(awkward))])))
		}
		return
	case reflect.TypeFor[uuid.UUID]():
		var id uuid.UUID
		for i := range id {
			id[i] = byte(rng.Uint32())
		}
		v.Set(reflect.ValueOf(id))
		return
	}
	switch v.Kind() {
	case reflect.String:
		if rng.IntN(3) == 0 {
			v.SetString("")
		} else {
			v.SetString(awkward[rng.IntN(len(awkward))])
		}
	case reflect.Bool:
		v.SetBool(rng.IntN(2) == 0)
	case reflect.Int, reflect.Int64, reflect.Int32:
		v.SetInt(rng.Int64N(1<<40) - 1<<39)
	case reflect.Pointer:
		if rng.IntN(3) == 0 {
			v.SetZero()
			return
		}
		p := reflect.New(v.Type().Elem())
		fillRandom(rng, p.Elem(), depth+1)
		v.Set(p)
	case reflect.Slice:
		switch rng.IntN(4) {
		case 0:
			v.SetZero()
			return
		case 1:
			v.Set(reflect.MakeSlice(v.Type(), 0, 0))
			return
		}
		n := 1 + rng.IntN(3)
		s := reflect.MakeSlice(v.Type(), n, n)
		for i := range n {
			fillRandom(rng, s.Index(i), depth+1)
		}
		v.Set(s)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fillRandom(rng, v.Field(i), depth+1)
			}
		}
	default:
		panic("fillRandom: no rule for " + v.Type().String())
	}
}

// fillFull is fillRandom without empty values.
func fillFull(rng *rand.Rand, v reflect.Value) {
	switch v.Type() {
	case reflect.TypeFor[time.Time]():
		v.Set(reflect.ValueOf(randomTime(rng)))
		return
	case reflect.TypeFor[supplier.Text]():
		v.Set(reflect.ValueOf(supplier.NewText(awkward[1+rng.IntN(len(awkward)-1)])))
		return
	case reflect.TypeFor[uuid.UUID]():
		v.Set(reflect.ValueOf(uuid.New()))
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(awkward[1+rng.IntN(len(awkward)-1)])
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int64, reflect.Int32:
		v.SetInt(42)
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		fillFull(rng, p.Elem())
		v.Set(p)
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 2, 2)
		fillFull(rng, s.Index(0))
		fillFull(rng, s.Index(1))
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

func randomTime(rng *rand.Rand) time.Time {
	sec := rng.Int64N(300 * 365 * 86400)
	nsec := int64(0)
	switch rng.IntN(4) {
	case 1:
		nsec = rng.Int64N(1e9)
	case 2:
		nsec = rng.Int64N(1e6) * 1000
	case 3:
		nsec = rng.Int64N(1000) * 1e6
	}
	return time.Unix(sec-100*365*86400, nsec).In(zones[rng.IntN(len(zones))])
}
