package scim

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"

	filterparser "github.com/scim2/filter-parser/v2"
)

// The filter parser reads every filter as scim2/filter-parser (the parser
// of elimity-com/scim, one of the validators of issue 19) does: the same
// tree, or both refuse. Both are rendered as one prefix notation, so a
// difference in grouping or precedence shows as a different string.
// (One deliberate difference: filter-parser refuses a \u escape in a
// string, which RFC 8259 allows; TestSCIMListUsers covers escapes.)

// render writes a parsed filter in prefix notation.
func (n *filterNode) render() string {
	switch n.kind {
	case filterAnd:
		return "(and " + n.left.render() + " " + n.right.render() + ")"
	case filterOr:
		return "(or " + n.left.render() + " " + n.right.render() + ")"
	case filterNot:
		return "(not " + n.left.render() + ")"
	case filterValuePath:
		return "(path " + strings.ToLower(n.cmp.attr) + " " + n.left.render() + ")"
	}
	return renderComparison(n.cmp.attr, n.cmp.op, n.cmp.value)
}

func renderComparison(attr, op string, value any) string {
	s := "(" + strings.ToLower(op) + " " + strings.ToLower(attr)
	switch v := value.(type) {
	case nil:
		if op != "pr" {
			s += " null"
		}
	case string:
		s += " " + strconv.Quote(v)
	case float64:
		s += " " + strconv.FormatFloat(v, 'f', -1, 64) // 1e+06 and 1000000 alike
	case int:
		s += " " + strconv.Itoa(v)
	default:
		s += " " + fmt.Sprint(v)
	}
	return s + ")"
}

// renderTheirs writes filter-parser's tree in the same notation.
func renderTheirs(e filterparser.Expression) string {
	switch e := e.(type) {
	case *filterparser.LogicalExpression:
		return "(" + strings.ToLower(string(e.Operator)) + " " + renderTheirs(e.Left) + " " + renderTheirs(e.Right) + ")"
	case *filterparser.NotExpression:
		return "(not " + renderTheirs(e.Expression) + ")"
	case *filterparser.ValuePath:
		return "(path " + strings.ToLower(theirPath(e.AttributePath)) + " " + renderTheirs(e.ValueFilter) + ")"
	case *filterparser.AttributeExpression:
		v := e.CompareValue
		if s, ok := v.(string); ok && strings.Contains(s, `\`) {
			// filter-parser keeps a string's escapes as sent; RFC 7644
			// compares JSON values, so ours decodes them (RFC 8259 7).
			if err := json.Unmarshal([]byte(`"`+s+`"`), &v); err != nil {
				return "(undecodable " + strconv.Quote(s) + ")"
			}
		}
		return renderComparison(theirPath(e.AttributePath), string(e.Operator), v)
	}
	return fmt.Sprintf("(? %T)", e)
}

// theirPath is an attribute path as parseSCIMFilter keeps it: the core
// User URN dropped, any other kept.
func theirPath(p filterparser.AttributePath) string {
	s := p.AttributeName
	if p.SubAttribute != nil {
		s += "." + *p.SubAttribute
	}
	if p.URIPrefix != nil {
		s = *p.URIPrefix + ":" + s
	}
	return stripCoreURN(s)
}

func TestFilterParserAgreesWithFilterParser(t *testing.T) {
	for _, f := range []string{
		// RFC 7644 3.4.2.2's examples that identity providers and the
		// validators send, and the groupings of issue 19 item 12.
		`userName eq "bjensen"`,
		`USERNAME EQ "bjensen"`,
		`(userName eq "x")`,
		`userName eq "x" and (id eq "y")`,
		`userName eq "x" and id eq "y" and externalId eq "z"`,
		`((userName eq "x"))`,
		`(userName eq "x" and (id eq "y")) and externalId eq "z"`,
		`userName eq "x" or id eq "y" and externalId eq "z"`,
		`userName eq "x" and id eq "y" or externalId eq "z"`,
		`(userName eq "x" or id eq "y") and externalId eq "z"`,
		`not (userName eq "x")`,
		`userName eq "x" and not (id eq "y" or id eq "z")`,
		`name.familyName co "O'Malley"`,
		`urn:ietf:params:scim:schemas:core:2.0:User:userName sw "J"`,
		`title pr`,
		`title pr and userType eq "Employee"`,
		`title pr or userType eq "Intern"`,
		`meta.lastModified gt "2011-05-13T04:42:34Z"`,
		`meta.lastModified ge "2011-05-13T04:42:34Z" and meta.lastModified le "2011-05-14T04:42:34Z"`,
		`userType eq "Employee" and (emails co "example.com" or emails.value co "example.org")`,
		`userType ne "Employee" and not (emails co "example.com" or emails.value co "example.org")`,
		`userType eq "Employee" and emails[type eq "work" and value co "@example.com"]`,
		`emails[type eq "work" and value co "@example.com"] or ims[type eq "xmpp" and value co "@foo.com"]`,
		`active eq true`,
		`active eq false and id eq "a"`,
		`externalId eq null`,
		`id eq "a\"b"`,
		`userName eq "bob\/ops"`,
		// Refused by both.
		`userName eq`,
		`userName eq "x`,
		`(userName eq "x"`,
		`userName eq "x")`,
		`userName xx "x"`,
		`userName eq "x" and`,
		`and userName eq "x"`,
		`()`,
		`not userName eq "x"`,
		`emails[type eq "work"`,
		`userName eq "x" userName eq "y"`,
		``,
	} {
		t.Run(f, func(t *testing.T) {
			theirs, theirErr := filterparser.ParseFilter([]byte(f))
			ours, ourErr := parseSCIMFilter(f)
			switch {
			case theirErr != nil && ourErr != nil:
				return
			case theirErr != nil:
				t.Fatalf("filter-parser refuses it (%v); ours reads %s", theirErr, ours.render())
			case ourErr != nil:
				t.Fatalf("ours refuses it (%v); filter-parser reads %s", ourErr, renderTheirs(theirs))
			}
			if got, want := ours.render(), renderTheirs(theirs); got != want {
				t.Errorf("ours reads\n\t%s\nfilter-parser reads\n\t%s", got, want)
			}
		})
	}
}

// A refused filter names what it lacks, for a 400 invalidFilter.
func TestFilterErrors(t *testing.T) {
	for _, tt := range []struct{ filter, want string }{
		{`userName eq "a" or userName eq "b"`, "or is not supported"},
		{`not (userName eq "a")`, "not is not supported"},
		{`emails[type eq "work"]`, "a value path"},
		{`userName sw "a"`, "operator sw is not supported"},
		{`title eq "a"`, "cannot filter on 'title'"},
		{`(userName eq "a"`, "expected )"},
		{"userName eq \"a\xad\"", "not valid UTF-8"},
		{strings.Repeat("(", maxFilterDepth+1) + `id eq "a"` + strings.Repeat(")", maxFilterDepth+1), "nested more than"},
	} {
		n, err := parseSCIMFilter(tt.filter)
		if err == nil {
			_, err = userFilter(n)
		}
		if se, ok := err.(*scimError); !ok || se.scimType != "invalidFilter" || !strings.Contains(se.detail, tt.want) {
			t.Errorf("%s: %v; want invalidFilter naming %q", tt.filter, err, tt.want)
		}
	}
}

// Where both parsers read a filter, they read it alike.
func FuzzFilterAgreesWithFilterParser(f *testing.F) {
	for _, s := range []string{`userName eq "x" and (id eq "y" or not (externalId pr))`, `a eq 1 or b eq 2 and c eq 3`,
		`emails[type eq "work" and value co "@x"] or ims[type eq "xmpp"]`, `((a eq "b"))`, `not (a eq true) and b ne null`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		// Ours first: filter-parser backtracks, and some inputs ours
		// refuses at once take it seconds.
		ours, err := parseSCIMFilter(s)
		if err != nil {
			return
		}
		theirs, err := filterparser.ParseFilter([]byte(s))
		if err != nil {
			return
		}
		if got, want := ours.render(), renderTheirs(theirs); got != want {
			t.Errorf("%q: ours reads\n\t%s\nfilter-parser reads\n\t%s", s, got, want)
		}
	})
}
