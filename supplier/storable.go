package supplier

import (
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/procurekit/procure"
	"github.com/procurekit/procure/internal/check"
)

// checkStorable adds to verr every text of v, by JSON path,
// that breaks check.StorableRule (docs: values.md "Text"), unless verr already names its field. It walks
// every string by reflection, so a field added to a type is checked with
// no change here.
func checkStorable(verr *procure.ValidationError, v any) {
	walkText(reflect.ValueOf(v), "", func(path, s string) {
		if check.Storable(s) {
			return
		}
		for _, f := range verr.Fields {
			if f.Field == path {
				return
			}
		}
		verr.Add(path, check.StorableRule)
	})
}

var (
	timeType = reflect.TypeFor[time.Time]()
	textType = reflect.TypeFor[Text]()
)

// walkText calls visit with the JSON path and value of every string in v.
func walkText(v reflect.Value, path string, visit func(path, s string)) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			walkText(v.Elem(), path, visit)
		}
	case reflect.String:
		visit(path, v.String())
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return // bytes, such as a UUID
		}
		for i := range v.Len() {
			walkText(v.Index(i), path+"["+strconv.Itoa(i)+"]", visit)
		}
	case reflect.Struct:
		t := v.Type()
		switch t {
		case timeType:
			return
		case textType:
			visit(path, v.Interface().(Text).String())
			return
		}
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			switch {
			case name == "-":
				continue
			case f.Anonymous && name == "":
				walkText(v.Field(i), path, visit)
				continue
			case name == "":
				name = f.Name
			}
			if path != "" {
				name = path + "." + name
			}
			walkText(v.Field(i), name, visit)
		}
	}
}
