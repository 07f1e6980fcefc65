package scim

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/procurekit/procure/user"
)

// A SCIM filter (RFC 7644 3.4.2.2): comparisons "attr op value" (or "attr
// pr"), value paths "emails[type eq \"work\"]", "not (...)", "and", "or"
// and grouping parentheses, with not binding tighter than and, and and
// tighter than or. Attribute names, operators and the logical words
// compare case-insensitively; a value is a JSON literal. The whole grammar
// is parsed, so that a filter is read as the RFC reads it (the
// differential test checks the reading against scim2/filter-parser);
// what /Users can then answer (userFilter) and what a PATCH path may
// select (conjunction) are narrower, each refusal naming what it lacks.
//
// The parser is written here rather than taken from filter-parser because
// PATCH paths need the same comparisons, the error messages name the
// position for a client, and the two uses need the parts of a filter, not
// a general evaluator.

// scimComparison is one "attr op value" of a filter.
type scimComparison struct {
	attr  string // as written, without a core schema URN prefix
	op    string // lower case
	value any    // string, bool, float64 or nil, as JSON decodes it
}

// filterNode is a parsed filter: a comparison, a logical node (and, or,
// with left and right), a not (left), or a value path (cmp.attr with its
// filter in left).
type filterNode struct {
	kind        filterKind
	cmp         scimComparison
	left, right *filterNode
}

type filterKind uint8

const (
	filterCompare filterKind = iota
	filterAnd
	filterOr
	filterNot
	filterValuePath
)

// maxFilterDepth bounds the nesting of parentheses, not and value paths,
// so that a filter of a few kilobytes cannot recurse without end.
const maxFilterDepth = 32

// parseSCIMFilter parses a whole filter. An error, for a 400
// invalidFilter, names the position.
func parseSCIMFilter(s string) (*filterNode, error) {
	p := filterParser{s: s}
	n, err := p.or(0, false)
	if err != nil {
		return nil, err
	}
	if p.skipSpace(); p.i < len(p.s) {
		return nil, filterError("expected \"and\", \"or\" or the end of the filter at " + p.rest())
	}
	return n, nil
}

type filterParser struct {
	s string
	i int
}

func (p *filterParser) rest() string { return quoteFilter(p.s[p.i:]) }

func (p *filterParser) skipSpace() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t' || p.s[p.i] == '\r' || p.s[p.i] == '\n') {
		p.i++
	}
}

// keyword consumes word (case-insensitive) when it stands at the position
// followed by white space or, for not, a parenthesis.
func (p *filterParser) keyword(word string) bool {
	save := p.i
	p.skipSpace()
	end := p.i + len(word)
	if end < len(p.s) && strings.EqualFold(p.s[p.i:end], word) {
		if c := p.s[end]; c == ' ' || c == '\t' || c == '\r' || c == '\n' || (c == '(' && word == "not") {
			p.i = end
			return true
		}
	}
	p.i = save
	return false
}

// or parses terms joined by or; inValue is true inside a value path's
// brackets, where no value path may nest.
func (p *filterParser) or(depth int, inValue bool) (*filterNode, error) {
	left, err := p.and(depth, inValue)
	if err != nil {
		return nil, err
	}
	for p.keyword("or") {
		right, err := p.and(depth, inValue)
		if err != nil {
			return nil, err
		}
		left = &filterNode{kind: filterOr, left: left, right: right}
	}
	return left, nil
}

func (p *filterParser) and(depth int, inValue bool) (*filterNode, error) {
	left, err := p.unary(depth, inValue)
	if err != nil {
		return nil, err
	}
	for p.keyword("and") {
		right, err := p.unary(depth, inValue)
		if err != nil {
			return nil, err
		}
		left = &filterNode{kind: filterAnd, left: left, right: right}
	}
	return left, nil
}

// unary parses "not (filter)", "(filter)", a value path or a comparison.
func (p *filterParser) unary(depth int, inValue bool) (*filterNode, error) {
	if depth >= maxFilterDepth {
		return nil, filterError("nested more than " + strconv.Itoa(maxFilterDepth) + " levels deep")
	}
	save := p.i
	not := p.keyword("not")
	p.skipSpace()
	if not && (p.i >= len(p.s) || p.s[p.i] != '(') {
		p.i, not = save, false // an attribute named not
		p.skipSpace()
	}
	if p.i < len(p.s) && p.s[p.i] == '(' {
		p.i++
		n, err := p.or(depth+1, inValue)
		if err != nil {
			return nil, err
		}
		if p.skipSpace(); p.i >= len(p.s) || p.s[p.i] != ')' {
			return nil, filterError("expected ) at " + p.rest())
		}
		p.i++
		if not {
			n = &filterNode{kind: filterNot, left: n}
		}
		return n, nil
	}
	return p.comparison(depth, inValue)
}

// comparison parses "attr op value", "attr pr" or "attr[filter]".
func (p *filterParser) comparison(depth int, inValue bool) (*filterNode, error) {
	start := p.i
	for p.i < len(p.s) && isAttrChar(p.s[p.i]) {
		p.i++
	}
	attr := p.s[start:p.i]
	if attr == "" {
		return nil, filterError("expected an attribute name at " + p.rest())
	}
	attr = stripCoreURN(attr)
	if p.i < len(p.s) && p.s[p.i] == '[' {
		if inValue {
			return nil, filterError("a value path cannot hold another at " + p.rest())
		}
		p.i++
		inner, err := p.or(depth+1, true)
		if err != nil {
			return nil, err
		}
		if p.skipSpace(); p.i >= len(p.s) || p.s[p.i] != ']' {
			return nil, filterError("expected ] at " + p.rest())
		}
		p.i++
		return &filterNode{kind: filterValuePath, cmp: scimComparison{attr: attr}, left: inner}, nil
	}
	p.skipSpace()
	opStart := p.i
	for p.i < len(p.s) && isAttrChar(p.s[p.i]) {
		p.i++
	}
	op := strings.ToLower(p.s[opStart:p.i])
	switch op {
	case "pr":
		return &filterNode{cmp: scimComparison{attr: attr, op: op}}, nil
	case "eq", "ne", "co", "sw", "ew", "gt", "ge", "lt", "le":
	default:
		p.i = opStart
		return nil, filterError("expected an operator (eq, ne, co, sw, ew, gt, ge, lt, le or pr) after " + quoteFilter(attr) + " at " + p.rest())
	}
	if p.i >= len(p.s) || (p.s[p.i] != ' ' && p.s[p.i] != '\t') {
		return nil, filterError("a comparison lacks its value at " + p.rest())
	}
	p.skipSpace()
	value, err := p.value()
	if err != nil {
		return nil, err
	}
	return &filterNode{cmp: scimComparison{attr: attr, op: op, value: value}}, nil
}

// isAttrChar reports whether c may be part of an attribute path: a name,
// a sub-attribute after a dot, or a schema URN with colons (RFC 7644
// ATTRNAME, subAttr, URI prefix).
func isAttrChar(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '$' || c == ':' || c == '.'
}

// value reads a JSON literal: a string (with escapes), true, false, null
// or a number.
func (p *filterParser) value() (any, error) {
	s := p.s[p.i:]
	if s == "" {
		return nil, filterError("a comparison lacks its value")
	}
	end := 0
	if s[0] == '"' {
		end = -1
		for i, esc := 1, false; i < len(s) && end < 0; i++ {
			switch {
			case esc:
				esc = false
			case s[i] == '\\':
				esc = true
			case s[i] == '"':
				end = i + 1
			}
		}
		if end < 0 {
			return nil, filterError("a string value is not closed: " + quoteFilter(s))
		}
	} else {
		for end < len(s) && !strings.ContainsRune(" \t\r\n()[]", rune(s[end])) {
			end++
		}
	}
	lit := s[:end]
	p.i += end
	if !utf8.ValidString(lit) {
		// encoding/json would read the bad bytes as U+FFFD, and the
		// filter would then find a user whose name holds that character.
		return nil, filterError("the value " + quoteFilter(lit) + " is not valid UTF-8")
	}
	if len(lit) >= 2 && lit[0] == '"' && !strings.ContainsAny(lit[1:len(lit)-1], "\\\"") {
		return lit[1 : len(lit)-1], nil // the common case: no escapes to decode
	}
	var v any
	if err := json.Unmarshal([]byte(lit), &v); err != nil {
		return nil, filterError("the value " + quoteFilter(lit) + " is not a JSON string, number, true, false or null")
	}
	if _, ok := v.(map[string]any); ok {
		return nil, filterError("the value " + quoteFilter(lit) + " is not a JSON string, number, true, false or null")
	}
	if _, ok := v.([]any); ok {
		return nil, filterError("the value " + quoteFilter(lit) + " is not a JSON string, number, true, false or null")
	}
	return v, nil
}

// conjunction returns the comparisons of a filter that is comparisons
// joined by and (in any grouping); any other filter is an error naming
// what it holds.
func conjunction(n *filterNode) ([]scimComparison, error) {
	var out []scimComparison
	var walk func(n *filterNode) error
	walk = func(n *filterNode) error {
		switch n.kind {
		case filterAnd:
			if err := walk(n.left); err != nil {
				return err
			}
			return walk(n.right)
		case filterOr:
			return filterError("or is not supported (only comparisons joined by and)")
		case filterNot:
			return filterError("not is not supported (only comparisons joined by and)")
		case filterValuePath:
			return filterError("cannot filter on " + quoteFilter(n.cmp.attr+"[...]") + " (a value path)")
		}
		out = append(out, n.cmp)
		return nil
	}
	if err := walk(n); err != nil {
		return nil, err
	}
	return out, nil
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
// attribute match nobody). Every clause holds: findUsers looks a user up
// by one and checks the others.
type scimUserFilter struct {
	userName, externalID, id *string
	none                     bool // the comparisons contradict each other
}

// userFilter checks a parsed filter against what /Users supports: eq on
// userName, externalId or id, with string values, joined by and.
func userFilter(n *filterNode) (scimUserFilter, error) {
	var f scimUserFilter
	cs, err := conjunction(n)
	if err != nil {
		return f, err
	}
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

// matches reports whether u meets every clause of f.
func (f scimUserFilter) matches(u *user.User) bool {
	return !f.none &&
		(f.id == nil || u.ID == *f.id) &&
		(f.userName == nil || user.UsernameKey(u.Username) == user.UsernameKey(strings.TrimSpace(*f.userName))) &&
		(f.externalID == nil || u.ExternalID == *f.externalID)
}
