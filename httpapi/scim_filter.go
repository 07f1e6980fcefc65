package httpapi

import (
	"encoding/json"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/procurekit/procure/user"
)

// A SCIM filter (RFC 7644 3.4.2.2), the part identity providers use:
// comparisons "attr op value" joined by "and". Attribute names and
// operators compare case-insensitively; a value is a JSON literal.

// scimComparison is one "attr op value" of a filter.
type scimComparison struct {
	attr  string // as written, without a core schema URN prefix
	op    string // lower case
	value any    // string, bool, float64 or nil, as JSON decodes it
}

// parseSCIMFilter parses comparisons joined by "and". Anything else - or,
// not, parentheses, a value path, a missing value - is an error with the
// position, for a 400 invalidFilter.
func parseSCIMFilter(s string) ([]scimComparison, error) {
	var out []scimComparison
	rest := strings.TrimSpace(s)
	for {
		var c scimComparison
		var err error
		c, rest, err = parseComparison(rest)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
		rest = strings.TrimSpace(rest)
		if rest == "" {
			return out, nil
		}
		word, after := nextWord(rest)
		if !strings.EqualFold(word, "and") {
			return nil, filterError("expected \"and\" or the end of the filter at " + quoteFilter(rest) + " (only eq comparisons joined by and are supported)")
		}
		rest = strings.TrimSpace(after)
	}
}

func parseComparison(s string) (scimComparison, string, error) {
	attr, rest := nextWord(s)
	if attr == "" || strings.ContainsAny(attr, "()[]\"") {
		return scimComparison{}, "", filterError("expected an attribute name at " + quoteFilter(s))
	}
	op, rest := nextWord(strings.TrimSpace(rest))
	op = strings.ToLower(op)
	switch op {
	case "eq", "ne", "co", "sw", "ew", "gt", "ge", "lt", "le":
	case "pr":
		return scimComparison{}, "", filterError("the operator pr is not supported (only eq)")
	default:
		return scimComparison{}, "", filterError("expected an operator after " + attr + " (only eq is supported)")
	}
	value, rest, err := nextValue(strings.TrimSpace(rest))
	if err != nil {
		return scimComparison{}, "", err
	}
	return scimComparison{attr: stripCoreURN(attr), op: op, value: value}, rest, nil
}

// nextWord splits s at the first white space.
func nextWord(s string) (word, rest string) {
	i := strings.IndexAny(s, " \t\r\n")
	if i < 0 {
		return s, ""
	}
	return s[:i], s[i:]
}

// nextValue reads a JSON literal at the start of s: a string (with
// escapes), true, false, null or a number.
func nextValue(s string) (any, string, error) {
	if s == "" {
		return nil, "", filterError("a comparison lacks its value")
	}
	end := 0
	if s[0] == '"' {
		esc := false
		end = -1
		for i := 1; i < len(s); i++ {
			switch {
			case esc:
				esc = false
			case s[i] == '\\':
				esc = true
			case s[i] == '"':
				end = i + 1
			}
			if end > 0 {
				break
			}
		}
		if end < 0 {
			return nil, "", filterError("a string value is not closed: " + quoteFilter(s))
		}
	} else {
		word, _ := nextWord(s)
		end = len(word)
	}
	lit := s[:end]
	if len(lit) >= 2 && lit[0] == '"' && !strings.ContainsAny(lit[1:len(lit)-1], "\\\"") && utf8.ValidString(lit) {
		return lit[1 : len(lit)-1], s[end:], nil // the common case: no escapes to decode
	}
	var v any
	if err := json.Unmarshal([]byte(lit), &v); err != nil {
		return nil, "", filterError("the value " + quoteFilter(s[:end]) + " is not a JSON string, number, true, false or null")
	}
	return v, s[end:], nil
}

// stripCoreURN removes the core User schema URN from a fully qualified
// attribute name ("urn:ietf:params:scim:schemas:core:2.0:User:userName").
func stripCoreURN(attr string) string {
	if len(attr) > len(scimUserSchema) && strings.EqualFold(attr[:len(scimUserSchema)], scimUserSchema) && attr[len(scimUserSchema)] == ':' {
		return attr[len(scimUserSchema)+1:]
	}
	return attr
}

func quoteFilter(s string) string {
	if len(s) > 60 {
		s = s[:60] + "..."
	}
	return "'" + s + "'"
}

func filterError(detail string) error {
	return newSCIMError(http.StatusBadRequest, "invalidFilter", "filter: "+detail)
}

// scimUserFilter is a /Users filter reduced to what the store can answer:
// at most one value per attribute (two different values for one
// attribute match nobody).
type scimUserFilter struct {
	userName, externalID, id *string
	none                     bool // the comparisons contradict each other
}

// userFilter checks a parsed filter against what /Users supports: eq on
// userName, externalId or id, with string values.
func userFilter(cs []scimComparison) (scimUserFilter, error) {
	var f scimUserFilter
	for _, c := range cs {
		if c.op != "eq" {
			return f, filterError("the operator " + c.op + " is not supported (only eq on userName, externalId and id)")
		}
		v, ok := c.value.(string)
		if !ok {
			return f, filterError(c.attr + " must be compared with a string")
		}
		var slot **string
		switch {
		case strings.EqualFold(c.attr, "userName"):
			slot = &f.userName
		case strings.EqualFold(c.attr, "externalId"):
			slot = &f.externalID
		case strings.EqualFold(c.attr, "id"):
			slot = &f.id
		default:
			return f, filterError("cannot filter on " + quoteFilter(c.attr) + " (only userName, externalId and id)")
		}
		switch {
		case *slot == nil:
			*slot = &v
		case strings.EqualFold(c.attr, "userName") && user.UsernameKey(**slot) == user.UsernameKey(v):
		case **slot != v:
			f.none = true
		}
	}
	return f, nil
}
