package procure

import (
	"errors"
	"strconv"
	"strings"
)

// ErrInvalid is matched (with errors.Is) by every *ValidationError: input
// that broke a rule of the contract. The HTTP layer answers it with 400.
var ErrInvalid = errors.New("invalid input")

// ErrUnavailable is matched (with errors.Is) by an error of a backend that
// could not answer now but may soon: a database that is down, refuses
// connections, or did not answer within its statement timeout. The HTTP
// layer answers it with 503 UNAVAILABLE and a Retry-After header
// (docs: limits.md).
var ErrUnavailable = errors.New("backend unavailable")

// Source says where a field that broke a rule came from. The HTTP layer uses
// it to choose the error code; it does not change the message.
type Source string

// The sources of a field.
const (
	SourceQuery Source = "query" // a query-string parameter
	SourcePath  Source = "path"  // a path parameter
	SourceBody  Source = "body"  // a field of a request body
	SourceData  Source = "data"  // a field of a stored record or data file
)

// FieldError is one broken rule on one field. Field is the JSON name (a path
// such as "roles[1].code" for nested values) and Rule says what the value
// must be, in words meant for the person reading the error.
type FieldError struct {
	Field string
	Rule  string
}

func (e FieldError) Error() string { return e.Field + ": " + e.Rule }

// ValidationError lists every rule a value broke, in field order. It matches
// ErrInvalid with errors.Is.
type ValidationError struct {
	Source Source
	Fields []FieldError

	// Omitted counts further broken rules that a reader chose not to
	// collect (to bound its work on hostile input); messages end "and N
	// more" for them.
	Omitted int
}

// Invalid returns a ValidationError for one field.
func Invalid(src Source, field, rule string) *ValidationError {
	return &ValidationError{Source: src, Fields: []FieldError{{Field: field, Rule: rule}}}
}

func (e *ValidationError) Error() string {
	var b strings.Builder
	for i, f := range e.Fields {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(f.Field)
		b.WriteString(": ")
		b.WriteString(f.Rule)
	}
	if e.Omitted > 0 {
		b.WriteString("; and " + strconv.Itoa(e.Omitted) + " more")
	}
	return b.String()
}

// Is reports whether target is ErrInvalid.
func (e *ValidationError) Is(target error) bool { return target == ErrInvalid }

// Add appends a field error and returns e, so a caller can collect several.
func (e *ValidationError) Add(field, rule string) *ValidationError {
	e.Fields = append(e.Fields, FieldError{Field: field, Rule: rule})
	return e
}

// Err returns e when it holds at least one field error, and nil otherwise, so
// that collecting code can end with `return v.Err()` without a typed nil.
func (e *ValidationError) Err() error {
	if e == nil || len(e.Fields) == 0 {
		return nil
	}
	return e
}

// Prefix returns a copy of e whose field names start with prefix (joined
// with a dot, or directly when the field is an index such as "[2]").
func (e *ValidationError) Prefix(prefix string) *ValidationError {
	out := &ValidationError{Source: e.Source, Fields: make([]FieldError, len(e.Fields)), Omitted: e.Omitted}
	for i, f := range e.Fields {
		switch {
		case prefix == "":
		case f.Field == "":
			f.Field = prefix
		case strings.HasPrefix(f.Field, "["):
			f.Field = prefix + f.Field
		default:
			f.Field = prefix + "." + f.Field
		}
		out.Fields[i] = f
	}
	return out
}
