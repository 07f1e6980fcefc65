package datafile

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/procurekit/procure/internal/check"
	"github.com/procurekit/procure/supplier"
)

// surelyValid reports whether r keeps every rule of supplier.Record.Validate,
// without the validator's cost (most of the cost of reading a large file).
// It may answer false for a valid record (an email address of an unusual
// shape): the caller then runs Validate, which words the errors. It never
// answers true for a record that Validate rejects.
//
// It reads the same rules: the validator tags of the supplier types,
// compiled once into a plan of the fields to check (recordPlan), plus the
// rules Validate adds beyond the tags (every id non-nil, every text
// storable, contact and address ids unique within the supplier). A tag
// rule the plan does not know makes it answer false for every record
// (TestSurelyValidKnowsEveryRule then fails: a full record must pass), so
// nothing is ever admitted unchecked.
//
// Why it exists: go-playground/validator's generality is most of the cost
// of checking a large file, and the 1,000,000-supplier startup has a
// target that it would miss with it (BenchmarkCheckSupplier, beside it,
// and the startup figures in bench/README.md).
func surelyValid(r *supplier.Record) bool {
	p := recordPlan()
	if p.unknown != "" || !p.check(reflect.ValueOf(r).Elem()) {
		return false
	}
	for i := range r.Contacts {
		id := r.Contacts[i].ID
		if slices.ContainsFunc(r.Contacts[:i], func(c supplier.Contact) bool { return c.ID == id }) {
			return false
		}
	}
	for i := range r.RemittanceAddresses {
		id := r.RemittanceAddresses[i].ID
		if slices.ContainsFunc(r.RemittanceAddresses[:i], func(a supplier.RemittanceAddress) bool { return a.ID == id }) {
			return false
		}
	}
	return true
}

// plan is what to check of the fields of one struct type.
type plan struct {
	fields  []fieldPlan
	unknown string // a rule it cannot check, if any (anywhere below)
}

// fieldPlan is one field and its rules.
type fieldPlan struct {
	index int
	kind  fieldKind
	// The rules of its tag (for a slice, of its elements after dive).
	max                                 int // -1: none
	required, omitempty, email, instant bool
	enum                                bool
	elem                                *plan // a struct, or what a pointer or slice holds
	elemText                            bool  // a slice of supplier.Text (else of strings, when elem is nil)
}

type fieldKind int

const (
	kindString fieldKind = iota // a string or an enum
	kindText                    // supplier.Text
	kindTime
	kindTimePtr
	kindUUID
	kindStruct
	kindPtr   // to a struct
	kindSlice // of structs or strings
	kindOther // no rule (a bool, an int, a *int)
)

// honoured are the rules check applies to a field of each kind (for a
// slice of texts, to its elements).
var honoured = map[fieldKind][]string{
	kindString:  {"omitempty", "required", "max", "email", "enum"},
	kindText:    {"omitempty", "required", "max", "email", "enum"},
	kindSlice:   {"omitempty", "required", "max", "email", "enum"},
	kindTime:    {"required", "instant"},
	kindTimePtr: {"omitempty", "instant"},
	kindUUID:    {"required"},
}

var recordPlan = sync.OnceValue(func() *plan { return compile(reflect.TypeFor[supplier.Record]()) })

var (
	textType = reflect.TypeFor[supplier.Text]()
	timeType = reflect.TypeFor[time.Time]()
	uuidType = reflect.TypeFor[uuid.UUID]()
)

// compile makes the plan of struct type t from its fields' validate tags.
func compile(t reflect.Type) *plan {
	p := &plan{}
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		fp := fieldPlan{index: i, max: -1}
		rules := f.Tag.Get("validate")
		ft := f.Type
		switch {
		case ft == textType:
			fp.kind = kindText
		case ft == timeType:
			fp.kind = kindTime
		case ft.Kind() == reflect.Pointer && ft.Elem() == timeType:
			fp.kind = kindTimePtr
		case ft == uuidType:
			fp.kind = kindUUID
		case ft.Kind() == reflect.String:
			fp.kind = kindString
		case ft.Kind() == reflect.Struct:
			fp.kind, fp.elem = kindStruct, compile(ft)
		case ft.Kind() == reflect.Pointer && ft.Elem().Kind() == reflect.Struct:
			fp.kind, fp.elem = kindPtr, compile(ft.Elem())
		case ft.Kind() == reflect.Slice && (ft.Elem() == textType || ft.Elem().Kind() == reflect.String):
			fp.kind, fp.elemText = kindSlice, ft.Elem() == textType
			rules = strings.TrimPrefix(strings.TrimPrefix(rules, "dive"), ",")
		case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct:
			fp.kind, fp.elem = kindSlice, compile(ft.Elem())
			if rules = strings.TrimPrefix(rules, "dive"); rules != "" {
				p.unknown = f.Name + ": " + rules // a rule on the elements themselves
			}
		default:
			fp.kind = kindOther
		}
		for _, rule := range strings.Split(rules, ",") {
			name, param, _ := strings.Cut(rule, "=")
			if name != "" && !slices.Contains(honoured[fp.kind], name) {
				p.unknown = f.Name + ": " + rule
				continue
			}
			switch name {
			case "":
			case "omitempty":
				fp.omitempty = true
			case "required":
				fp.required = true
			case "max":
				n, err := strconv.Atoi(param)
				if err != nil {
					p.unknown = fmt.Sprintf("%s: max=%s", f.Name, param)
				}
				fp.max = n
			case "email":
				fp.email = true
			case "enum":
				fp.enum = true
			case "instant":
				fp.instant = true
			default:
				p.unknown = f.Name + ": " + rule
			}
		}
		if fp.elem != nil && fp.elem.unknown != "" {
			p.unknown = fp.elem.unknown
		}
		p.fields = append(p.fields, fp)
	}
	if len(p.fields) == 0 {
		// A struct this plan does not know inside (such as a time in a
		// slice): nothing of it would be checked.
		p.unknown = t.String()
	}
	return p
}

// check reports whether v, a struct of the plan's type, surely keeps its
// rules.
func (p *plan) check(v reflect.Value) bool {
	for i := range p.fields {
		fp := &p.fields[i]
		f := v.Field(fp.index)
		switch fp.kind {
		case kindString:
			if !fp.text(f.String(), f) {
				return false
			}
		case kindText:
			if !fp.text(f.Addr().Interface().(*supplier.Text).String(), f) {
				return false
			}
		case kindTime:
			t := f.Addr().Interface().(*time.Time)
			if fp.required && t.IsZero() || fp.instant && !check.Instant(*t) {
				return false
			}
		case kindTimePtr:
			if t := f.Interface().(*time.Time); t != nil && fp.instant && !check.Instant(*t) {
				return false
			}
		case kindUUID:
			if *f.Addr().Interface().(*uuid.UUID) == uuid.Nil {
				return false // every id of a supplier is required
			}
		case kindStruct:
			if !fp.elem.check(f) {
				return false
			}
		case kindPtr:
			if !f.IsNil() && !fp.elem.check(f.Elem()) {
				return false
			}
		case kindSlice:
			for j := range f.Len() {
				e := f.Index(j)
				switch {
				case fp.elem != nil:
					if !fp.elem.check(e) {
						return false
					}
				case fp.elemText:
					if !fp.text(e.Addr().Interface().(*supplier.Text).String(), e) {
						return false
					}
				default:
					if !fp.text(e.String(), e) {
						return false
					}
				}
			}
		}
	}
	return true
}

// text checks a text value s (the field f holds it) against fp's rules:
// lengths in characters, the plain e-mail shape (check.PlainEmail: any
// other shape goes to the validator), enum values, and storable text (an
// address of the plain shape and an enum value are storable).
func (fp *fieldPlan) text(s string, f reflect.Value) bool {
	switch {
	case s == "":
		return !fp.required && !(fp.enum && !fp.omitempty)
	case fp.email:
		return (fp.max < 0 || len(s) <= fp.max) && check.PlainEmail(s)
	case fp.enum:
		return f.Addr().Interface().(check.Enum).Valid()
	}
	return (fp.max < 0 || len(s) <= fp.max || utf8.RuneCountInString(s) <= fp.max) && check.Storable(s)
}
