package datafile_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/procurekit/procure/datafile"
	"github.com/procurekit/procure/internal/check"
	"github.com/procurekit/procure/supplier"
	"github.com/procurekit/procure/supplier/suppliertest"
)

// The fast paths know every field and every rule of the supplier types,
// derived here from the types themselves by reflection (the validator
// tags, the JSON names): a field added to a supplier type, or a rule
// added to a tag, that fastcheck.go or fastdecode.go does not know fails
// one of these tests, never silently.

// isText reports whether v holds text: a string (an enum included) or a
// supplier.Text.
func isText(v reflect.Value) bool {
	return v.Kind() == reflect.String || v.Type() == reflect.TypeFor[supplier.Text]()
}

// getText and setText read and write the text of v (isText).
func getText(v reflect.Value) string {
	if t, ok := v.Interface().(supplier.Text); ok {
		return t.String()
	}
	return v.String()
}

func setText(v reflect.Value, s string) {
	if v.Type() == reflect.TypeFor[supplier.Text]() {
		v.Set(reflect.ValueOf(supplier.NewText(s)))
		return
	}
	v.SetString(s)
}

func hasRule(tag, rule string) bool {
	for _, r := range strings.Split(tag, ",") {
		if name, _, _ := strings.Cut(r, "="); name == rule {
			return true
		}
	}
	return false
}

// breaking is one way to break a rule of one field: path names it.
type breaking struct {
	path, rule string
	apply      func(v reflect.Value)
}

// breakings lists, for every field of v (a filled value), a change that
// breaks each of its rules: each rule of its validator tag, and the rules
// supplier.Record.Validate applies by type (every text storable, every id
// non-nil). It fails the test on a rule it cannot break, so that a new
// kind of rule is taught here first.
func breakings(t *testing.T, v reflect.Value, path, tag string, out *[]breaking) {
	t.Helper()
	add := func(rule string, apply func(v reflect.Value)) {
		*out = append(*out, breaking{path, rule, apply})
	}
	typ := v.Type()
	switch {
	case typ == reflect.TypeFor[uuid.UUID]():
		add("non-nil id", func(v reflect.Value) { v.Set(reflect.ValueOf(uuid.Nil)) })
		return
	case typ == reflect.TypeFor[time.Time]():
		for _, rule := range strings.Split(tag, ",") {
			switch rule {
			case "required":
				add(rule, func(v reflect.Value) { v.Set(reflect.ValueOf(time.Time{})) })
			case "instant":
				add(rule, func(v reflect.Value) { v.Set(reflect.ValueOf(check.MaxInstant.Add(time.Nanosecond))) })
			case "omitempty":
			default:
				t.Fatalf("%s: the rule %q of a time: teach breakings how to break it", path, rule)
			}
		}
		return
	}
	if isText(v) {
		add("storable", func(v reflect.Value) { setText(v, getText(v)+"\x00") })
		add("storable", func(v reflect.Value) { setText(v, "\xff"+getText(v)) })
		for _, rule := range strings.Split(tag, ",") {
			name, param, _ := strings.Cut(rule, "=")
			switch name {
			case "", "omitempty", "dive":
			case "required":
				add(rule, func(v reflect.Value) { setText(v, "") })
			case "max":
				n, err := strconv.Atoi(param)
				if err != nil {
					t.Fatal(err)
				}
				add(rule, func(v reflect.Value) { setText(v, strings.Repeat("é", n+1)) })
				if hasRule(tag, "email") {
					add(rule, func(v reflect.Value) { setText(v, strings.Repeat("a", n)+"@example.com") })
				} else {
					add(rule, func(v reflect.Value) { setText(v, strings.Repeat("x", n+1)) })
				}
			case "email":
				add(rule, func(v reflect.Value) { setText(v, "not an e-mail address") })
				add(rule, func(v reflect.Value) { setText(v, "a@b") })
			case "enum":
				add(rule, func(v reflect.Value) { setText(v, "BOGUS") })
				add(rule, func(v reflect.Value) { setText(v, strings.ToLower(getText(v))) })
			default:
				t.Fatalf("%s: the rule %q of a text: teach breakings how to break it", path, rule)
			}
		}
		if !hasRule(tag, "omitempty") && !hasRule(tag, "required") && hasRule(tag, "enum") {
			add("enum", func(v reflect.Value) { setText(v, "") })
		}
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			breakings(t, v.Elem(), path, tag, out)
		}
	case reflect.Slice:
		for i := range v.Len() {
			breakings(t, v.Index(i), fmt.Sprintf("%s[%d]", path, i), tag, out)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			f := typ.Field(i)
			if !f.IsExported() {
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			switch {
			case name == "-":
				continue
			case f.Anonymous:
				breakings(t, v.Field(i), path, f.Tag.Get("validate"), out)
				continue
			case path != "":
				name = path + "." + name
			}
			breakings(t, v.Field(i), name, f.Tag.Get("validate"), out)
		}
	case reflect.Bool, reflect.Int:
		if tag != "" {
			t.Fatalf("%s: the rules %q of a %s: teach breakings how to break them", path, tag, v.Kind())
		}
	default:
		t.Fatalf("%s: a %s: teach breakings about it", path, typ)
	}
}

// fieldAt returns the field of v (a *supplier.Record) at path, through
// pointers.
func fieldAt(v reflect.Value, path string) reflect.Value {
	for part := range strings.SplitSeq(path, ".") {
		name, index, _ := strings.Cut(part, "[")
		v = jsonField(v, name)
		if index != "" {
			if v.Kind() == reflect.Pointer {
				v = v.Elem()
			}
			i, _ := strconv.Atoi(strings.TrimSuffix(index, "]"))
			v = v.Index(i)
		}
	}
	for v.Kind() == reflect.Pointer {
		v = v.Elem()
	}
	return v
}

// jsonField returns the field of struct v (through a pointer, and into
// embedded structs) whose JSON name is name.
func jsonField(v reflect.Value, name string) reflect.Value {
	if v.Kind() == reflect.Pointer {
		v = v.Elem()
	}
	for i := range v.NumField() {
		f := v.Type().Field(i)
		if !f.IsExported() {
			continue
		}
		n, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if n == name {
			return v.Field(i)
		}
		if f.Anonymous && n == "" {
			if w := jsonField(v.Field(i), name); w.IsValid() {
				return w
			}
		}
	}
	return reflect.Value{}
}

// surelyValid answers false for every record that breaks one rule of one
// field, for every field and rule the types declare (and Validate
// agrees: the case does break a rule).
func TestSurelyValidKnowsEveryRule(t *testing.T) {
	rng := rand.New(rand.NewPCG(20, 1))
	if u := datafile.FastCheckUnknown(); u != "" {
		t.Fatalf("the fast check cannot check the rule %s: teach fastcheck.go", u)
	}
	base := suppliertest.FullRecord(rng)
	if err := base.Validate(); err != nil {
		t.Fatalf("the full record is not valid: %v", err)
	}
	if !datafile.SurelyValid(&base) {
		t.Fatal("surelyValid refuses the full record, which is valid")
	}
	var cases []breaking
	breakings(t, reflect.ValueOf(&base).Elem(), "", "", &cases)
	paths := map[string]bool{}
	for _, c := range cases {
		r := base.Clone()
		c.apply(fieldAt(reflect.ValueOf(&r), c.path))
		if r.Validate() == nil {
			t.Fatalf("%s, %s: the case breaks no rule of Validate", c.path, c.rule)
		}
		if datafile.SurelyValid(&r) {
			t.Errorf("%s: surelyValid accepts a value that breaks %q", c.path, c.rule)
		}
		paths[c.path] = true
	}
	if len(paths) < 80 {
		t.Errorf("only %d fields: the walk missed some", len(paths))
	}
	// Ids unique within the supplier: a rule of Validate beyond the tags.
	for _, change := range []func(r *supplier.Record){
		func(r *supplier.Record) { r.Contacts[1].ID = r.Contacts[0].ID },
		func(r *supplier.Record) { r.RemittanceAddresses[1].ID = r.RemittanceAddresses[0].ID },
	} {
		r := base.Clone()
		change(&r)
		if r.Validate() == nil || datafile.SurelyValid(&r) {
			t.Errorf("a repeated id: Validate %v, surelyValid %v", r.Validate(), datafile.SurelyValid(&r))
		}
	}
}

// decodeRecord takes the fast path for a record with every field set and
// gives what json.Unmarshal gives, every optional text "" too; a key it
// does not know sends a record to the slow path, so a field added to a
// type fails here.
func TestDecodeRecordKnowsEveryField(t *testing.T) {
	rng := rand.New(rand.NewPCG(20, 2))
	for i := range 20 {
		r := suppliertest.FullRecord(rng)
		if i%2 == 1 {
			// Every optional text "": a value of its own, kept.
			suppliertest.BlankTexts(&r)
		}
		raw, err := json.Marshal(&r)
		if err != nil {
			t.Fatal(err)
		}
		var want, got supplier.Record
		if err := json.Unmarshal(raw, &want); err != nil {
			t.Fatal(err)
		}
		if !datafile.DecodeRecord(raw, &got) {
			t.Fatalf("record %d: a record with every field set takes the slow path: a key fastdecode.go does not know?\n%s", i, raw)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("record %d: decodeRecord differs from json.Unmarshal (-want +got):\n%s", i, diff)
		}
	}
}
