package httpx

import (
	"bytes"
	"mime"
	"net/http"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/procurekit/procure"
)

// IsJSONContentType accepts application/json with an optional charset
// parameter of utf-8 (RFC 8259: JSON is UTF-8), in any case. The common
// spellings are matched without parsing.
func IsJSONContentType(ct string) bool {
	if strings.EqualFold(ct, "application/json") || strings.EqualFold(ct, "application/json; charset=utf-8") {
		return true
	}
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil || mt != "application/json" {
		return false
	}
	for k, v := range params {
		if k != "charset" || !(strings.EqualFold(v, "utf-8") || strings.EqualFold(v, "utf8")) {
			return false
		}
	}
	return true
}

func JSONTypeName(k reflect.Kind) string {
	switch k {
	case reflect.Bool:
		return "boolean"
	case reflect.Slice, reflect.Array:
		return "array"
	case reflect.Struct, reflect.Map:
		return "object"
	case reflect.String:
		return "string"
	}
	return "number"
}

func Article(jsonType string) string {
	switch jsonType {
	case "array", "object":
		return "an " + jsonType
	case "null":
		return "null"
	}
	return "a " + jsonType
}

// LineColumn renders the 1-based line and column of the byte at offset
// off (a SyntaxError's Offset is just past the offending byte).
func LineColumn(data []byte, off int64) string {
	off = max(0, min(off, int64(len(data))))
	before := data[:off]
	line := bytes.Count(before, []byte("\n")) + 1
	col := int(off) - (bytes.LastIndexByte(before, '\n') + 1) + 1
	return "line " + strconv.Itoa(line) + ", column " + strconv.Itoa(col)
}

// PathID reads a path parameter that must be a UUID.
//
// Only the standard 36-character hyphenated form is accepted (hex digits in
// either case): the spellings uuid.Parse also allows - {braces},
// urn:uuid: and 32 bare hex digits - are a 400. One supplier then has
// exactly one URL (caches and logs agree), and the rule matches the
// OpenAPI document's format "uuid" (RFC 9562's string form).
func PathID(r *http.Request, name string) (uuid.UUID, error) {
	v := r.PathValue(name)
	if len(v) == 36 {
		if id, err := uuid.Parse(v); err == nil {
			return id, nil
		}
	}
	return uuid.Nil, procure.Invalid(procure.SourcePath, name,
		"must be a UUID such as 3f2b8a4e-1c2d-4e5f-8a9b-0c1d2e3f4a5b (got "+QuoteParam(v)+")")
}

// QuoteParam quotes a parameter value for an error message, cut short so
// that a huge value cannot blow up the response.
func QuoteParam(s string) string {
	const max = 64
	if len(s) > max {
		cut := max
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		return strconv.Quote(s[:cut]) + "..."
	}
	return strconv.Quote(s)
}

// MaxBodyBytes is the largest request body the JSON APIs read
// (docs: limits.md); a larger one is a 413. The admin API's import has a
// bound of its own.
const MaxBodyBytes = 1 << 20

// Header values shared by every response of the APIs; set by assigning the
// canonical key directly, which costs no allocation per request.
var (
	// Supplier data (bank accounts, tax ids) and personal data must not
	// linger in shared caches.
	HdrNoStore = []string{"no-store"}
	HdrNoSniff = []string{"nosniff"}
	// HdrXFF is the canonical header name, looked up without allocating.
	HdrXFF = http.CanonicalHeaderKey("X-Forwarded-For")
)

// QueryValues parses the query string. A malformed one (a bad %-escape, a
// semicolon separator) is a 400 rather than silently dropping the pair, as
// url.URL.Query would: a dropped "size=%3" must not quietly become size 20.
func QueryValues(r *http.Request) (url.Values, error) {
	if r.URL.RawQuery == "" {
		return nil, nil
	}
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return nil, NewError(http.StatusBadRequest, CodeInvalidParameter, "malformed query string: "+err.Error())
	}
	return q, nil
}
