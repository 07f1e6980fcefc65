// Package check runs go-playground/validator over the library's types and
// turns its findings into procure.ValidationError values that name each field
// by its JSON path and say the rule in words.
//
// String lengths (max, min, len) are counted in characters, not bytes: that
// is how validator measures strings (utf8.RuneCountInString).
package check

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/go-playground/validator/v10"

	"github.com/procurekit/procure"
)

// newValidator builds a validator set up for the library's types. A
// validator caches the parsed tags of every struct type it has seen, so
// one instance per Checker is how it is meant to be used; it is never
// changed after it is built. Values of the types of texts are checked as
// the string their String method returns.
func newValidator(texts []fmt.Stringer) *validator.Validate {
	v := validator.New(validator.WithRequiredStructEnabled())
	v.RegisterTagNameFunc(func(f reflect.StructField) string {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch name {
		case "-":
			return ""
		case "":
			if f.Anonymous {
				// An embedded struct's fields are members of the outer
				// object in JSON; mark its name so that fieldPath drops it.
				return embeddedMark + f.Name
			}
			return f.Name
		}
		return name
	})
	v.RegisterValidation("enum", func(fl validator.FieldLevel) bool {
		e, ok := fl.Field().Interface().(Enum)
		return ok && e.Valid()
	})
	v.RegisterValidation("instant", func(fl validator.FieldLevel) bool {
		t, ok := fl.Field().Interface().(time.Time)
		return ok && Instant(t)
	})
	if len(texts) > 0 {
		types := make([]any, len(texts))
		for i, t := range texts {
			types[i] = t
		}
		v.RegisterCustomTypeFunc(func(f reflect.Value) any { return f.Interface().(fmt.Stringer).String() }, types...)
	}
	return v
}

// Checker validates structs with go-playground/validator, the tags of
// their fields being the rules.
type Checker struct {
	validate func() *validator.Validate
}

// NewChecker returns a Checker that also checks the values of the types
// of texts (such as supplier.Text) as the string their String method
// returns: the rules of a string (max, email, ...) apply to them. It builds
// its validator on first use.
func NewChecker(texts ...fmt.Stringer) *Checker {
	return &Checker{validate: sync.OnceValue(func() *validator.Validate { return newValidator(texts) })}
}

// std is the Checker of Struct.
var std = NewChecker()

// Enum is implemented by the library's typed string enums. The "enum" tag
// accepts a value whose Valid method reports true.
type Enum interface {
	Valid() bool
	Allowed() []string
}

// Struct validates s (a struct or a pointer to one) and returns nil or a
// *procure.ValidationError with one entry per broken rule. Field paths are
// JSON names relative to s, e.g. "defaultContact.phone.prefix".
func Struct(src procure.Source, s any) error { return std.Struct(src, s) }

// Struct is the package's Struct with c's validator.
func (c *Checker) Struct(src procure.Source, s any) error {
	err := c.validate().Struct(s)
	if err == nil {
		return nil
	}
	var verrs validator.ValidationErrors
	if !errors.As(err, &verrs) {
		// An InvalidValidationError: a programming mistake, not bad input.
		return fmt.Errorf("check: %w", err)
	}
	out := &procure.ValidationError{Source: src}
	for _, fe := range verrs {
		out.Add(fieldPath(fe.Namespace()), Rule(fe))
	}
	return out
}

// fieldPath drops the leading struct type name of a validator namespace:
// "Detail.emails.ordersEmailAddress" becomes "emails.ordersEmailAddress".
// Names of embedded structs ("Detail.Summary.name") are dropped too, as
// encoding/json flattens them: "name".
func fieldPath(ns string) string {
	_, rest, ok := strings.Cut(ns, ".")
	if !ok {
		return ns
	}
	if !strings.Contains(rest, embeddedMark) {
		return rest
	}
	parts := strings.Split(rest, ".")
	kept := parts[:0]
	for _, p := range parts {
		if !strings.HasPrefix(p, embeddedMark) {
			kept = append(kept, p)
		}
	}
	return strings.Join(kept, ".")
}

// embeddedMark starts the name the validator knows an embedded struct by.
const embeddedMark = "\x00embedded:"

// Rule words the rule a validator finding broke.
func Rule(fe validator.FieldError) string {
	kind := fe.Kind()
	switch fe.Tag() {
	case "required", "required_with", "required_without":
		return "is required"
	case "max":
		if kind == reflect.String {
			return "must be at most " + fe.Param() + " characters"
		}
		if kind == reflect.Slice || kind == reflect.Map {
			return "must have at most " + fe.Param() + " entries"
		}
		return "must be at most " + fe.Param()
	case "min":
		if kind == reflect.String {
			return "must be at least " + fe.Param() + " characters"
		}
		if kind == reflect.Slice || kind == reflect.Map {
			return "must have at least " + fe.Param() + " entries"
		}
		return "must be at least " + fe.Param()
	case "len":
		return "must be exactly " + fe.Param() + " characters"
	case "email":
		return "must be a valid email address"
	case "uuid", "uuid4":
		return "must be a UUID"
	case "unique":
		if fe.Param() != "" {
			return "entries must be unique by " + lowerFirst(fe.Param())
		}
		return "entries must be unique"
	case "oneof":
		return "must be one of " + strings.Join(strings.Fields(fe.Param()), ", ")
	case "enum":
		if e, ok := fe.Value().(Enum); ok {
			return fmt.Sprintf("must be one of %s (got %q)", strings.Join(e.Allowed(), ", "), fe.Value())
		}
		return "is not an allowed value"
	case "gte":
		return "must be at least " + fe.Param()
	case "lte":
		return "must be at most " + fe.Param()
	case "instant":
		return InstantRule
	case "cidr", "cidrv4", "cidrv6":
		return "must be an IP address range in CIDR notation"
	}
	return "breaks the rule " + fe.Tag()
}

// lowerFirst turns a Go field name ("Code") into its JSON spelling ("code").
func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
}
