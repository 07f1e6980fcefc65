package datafile

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
)

// location is where a value of a data file failed to decode: its JSON path
// ("communities[0].suppliers[3].profileType"), its byte offset in the file,
// and why.
type location struct {
	path string
	off  int64
	rule string
}

// locate finds the innermost value of data (a JSON document that does not
// decode into a value of type t) that fails to decode on its own, so that an
// error from a type's own UnmarshalJSON (an unknown enum value, a bad UUID
// or date-time), which encoding/json reports without a position, can name
// the entry and its line. It returns false when it cannot narrow the error
// down (the caller then reports the error as it is).
//
// It runs only after decoding failed, so its cost (decoding sub-values
// again on the way down) is paid only for bad files.
func locate(data []byte, t reflect.Type) (location, bool) {
	start := int64(len(data) - len(bytes.TrimLeft(data, " \t\r\n")))
	return locateValue(bytes.TrimSpace(data), start, t, "")
}

// locateValue narrows down a value raw, at offset off of the file, that
// fails to decode into t.
func locateValue(raw []byte, off int64, t reflect.Type, path string) (location, bool) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	err := json.Unmarshal(raw, reflect.New(t).Interface())
	if err == nil {
		return location{}, false
	}
	if !isLeaf(t) {
		var found location
		var ok bool
		switch t.Kind() {
		case reflect.Struct:
			fields := jsonFields(t)
			found, ok = eachMember(raw, off, func(key string) (reflect.Type, string, bool) {
				ft, ok := lookupField(fields, key)
				return ft, joinPath(path, key), ok
			})
		case reflect.Map:
			found, ok = eachMember(raw, off, func(key string) (reflect.Type, string, bool) {
				return t.Elem(), joinPath(path, key), true
			})
		case reflect.Slice, reflect.Array:
			found, ok = eachElement(raw, off, t.Elem(), path)
		}
		if ok {
			return found, true
		}
	}
	return location{path: path, off: off, rule: leafRule(t, raw, err, path)}, true
}

// eachMember walks the members of a JSON object and narrows down the first
// one whose value fails to decode into the type field reports for its key.
func eachMember(raw []byte, off int64, field func(key string) (reflect.Type, string, bool)) (location, bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return location{}, false
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return location{}, false
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return location{}, false
		}
		ft, path, ok := field(key)
		if !ok {
			continue // encoding/json ignores unknown members
		}
		start := off + dec.InputOffset() - int64(len(v))
		if loc, ok := locateValue(v, start, ft, path); ok {
			return loc, true
		}
	}
	return location{}, false
}

// eachElement walks the elements of a JSON array and narrows down the
// first one that fails to decode into elem.
func eachElement(raw []byte, off int64, elem reflect.Type, path string) (location, bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
		return location{}, false
	}
	for i := 0; dec.More(); i++ {
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return location{}, false
		}
		start := off + dec.InputOffset() - int64(len(v))
		if loc, ok := locateValue(v, start, elem, path+"["+strconv.Itoa(i)+"]"); ok {
			return loc, true
		}
	}
	return location{}, false
}

var (
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// isLeaf reports whether t decodes itself (or is a scalar), so that its
// error is the value's own and there is nothing inside to narrow down.
func isLeaf(t reflect.Type) bool {
	p := reflect.PointerTo(t)
	if p.Implements(jsonUnmarshaler) || p.Implements(textUnmarshaler) {
		return true
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Map, reflect.Slice, reflect.Array:
		return false
	}
	return true
}

// leafRule words why raw does not decode into t.
func leafRule(t reflect.Type, raw []byte, err error, path string) string {
	got := string(raw)
	if len(got) > 60 {
		got = got[:60] + "..."
	}
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &typ):
		return fmt.Sprintf("must be a JSON %s (got %s)", jsonType(typ.Type.Kind().String()), typ.Value)
	case t == reflect.TypeFor[uuid.UUID]():
		return "must be a UUID such as 3f2b8a4e-1c2d-4e5f-8a9b-0c1d2e3f4a5b (got " + got + ")"
	case t == reflect.TypeFor[time.Time]():
		return "must be an RFC 3339 date-time such as 2026-05-01T09:30:00Z (got " + got + ")"
	case t == reflect.TypeFor[decimal.Decimal]():
		return "must be a decimal number (got " + got + ")"
	}
	// The library's enums name their field in their error ("profileType:
	// must be one of ..."); the path already does.
	last := path[strings.LastIndexAny(path, ".]")+1:]
	return strings.TrimPrefix(err.Error(), last+": ")
}

// fieldInfo is a struct field as encoding/json sees it.
type fieldInfo struct {
	name  string
	typ   reflect.Type
	depth int
}

// jsonFields lists the JSON members of struct type t, with the fields of
// embedded structs promoted as encoding/json promotes them.
func jsonFields(t reflect.Type) []fieldInfo {
	var out []fieldInfo
	for _, f := range reflect.VisibleFields(t) {
		tag := f.Tag.Get("json")
		name, _, _ := strings.Cut(tag, ",")
		if name == "-" && !strings.HasPrefix(tag, "-,") {
			continue
		}
		ft := f.Type
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if f.Anonymous && name == "" && ft.Kind() == reflect.Struct {
			continue // its fields are promoted; VisibleFields lists them
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out = append(out, fieldInfo{name: name, typ: f.Type, depth: len(f.Index)})
	}
	return out
}

// lookupField finds the field a JSON key decodes into: an exact name first,
// then a case-insensitive one, as encoding/json does; the shallowest wins.
func lookupField(fields []fieldInfo, key string) (reflect.Type, bool) {
	var best *fieldInfo
	for i := range fields {
		f := &fields[i]
		if f.name == key && (best == nil || f.depth < best.depth) {
			best = f
		}
	}
	if best == nil {
		for i := range fields {
			f := &fields[i]
			if strings.EqualFold(f.name, key) && (best == nil || f.depth < best.depth) {
				best = f
			}
		}
	}
	if best == nil {
		return nil, false
	}
	return best.typ, true
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// jsonType names a Go kind as the JSON type that decodes into it.
func jsonType(kind string) string {
	switch {
	case strings.HasPrefix(kind, "int"), strings.HasPrefix(kind, "uint"), strings.HasPrefix(kind, "float"):
		return "number"
	case kind == "slice", kind == "array":
		return "array"
	case kind == "struct", kind == "map":
		return "object"
	case kind == "bool":
		return "boolean"
	}
	return kind
}
