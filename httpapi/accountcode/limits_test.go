package accountcode_test

import (
	"encoding/xml"
	"strconv"
	"strings"
	"testing"

	"github.com/procurekit/procure/budget"
	"github.com/procurekit/procure/httpapi/accountcode"
)

// Tests of docs: limits.md (issue 11): each bound at the limit and
// one past it.

// nested is n unknown elements nested in one another.
func nested(n int) string {
	return strings.Repeat("<X>", n) + strings.Repeat("</X>", n)
}

func TestAccountCodeXMLDepth(t *testing.T) {
	srv := newConnector(t, echoValidator, accountcode.Options{})
	url := srv.URL + accountcode.Path
	line := xmlLine("1", "A", "1")
	// The root is at depth 1, so an unknown element right under the root
	// is at depth 2, one in a Line at depth 4.
	cases := []struct {
		name  string
		depth int // of the deepest element
		doc   string
	}{
		{"under the root", 64, `<AccountCodeValidationRequest>` + nested(63) + `<Lines>` + line + `</Lines></AccountCodeValidationRequest>`},
		{"under the root", 65, `<AccountCodeValidationRequest>` + nested(64) + `<Lines>` + line + `</Lines></AccountCodeValidationRequest>`},
		{"under Lines", 64, reqDoc(nested(62) + line)},
		{"under Lines", 65, reqDoc(nested(63) + line)},
		{"in a Line", 64, reqDoc(`<Line>` + nested(61) + `<LineNumber>1</LineNumber><Account>A</Account><Amount>1</Amount></Line>`)},
		{"in a Line", 65, reqDoc(`<Line>` + nested(62) + `<LineNumber>1</LineNumber><Account>A</Account><Amount>1</Amount></Line>`)},
		// Nearly 1 MiB of nesting is refused as soon as it is too deep.
		{"a megabyte of nesting", 100_000, reqDoc(line)[:len(`<AccountCodeValidationRequest>`)] + strings.Repeat("<X>", 100_000)},
	}
	for _, c := range cases {
		t.Run(c.name+" depth "+strconv.Itoa(c.depth), func(t *testing.T) {
			a := send(t, "POST", url, "application/xml", strings.NewReader(c.doc))
			if c.depth <= accountcode.MaxXMLDepth {
				if a.status != 200 {
					t.Fatalf("status %d; want 200\n%s", a.status, a.body)
				}
				return
			}
			if a.status != 400 {
				t.Fatalf("status %d; want 400\n%.300s", a.status, a.body)
			}
			var doc errorDoc
			if err := xml.Unmarshal([]byte(a.body), &doc); err != nil {
				t.Fatal(err)
			}
			if doc.Code != "MALFORMED_REQUEST" || !strings.Contains(doc.Message, "elements nest deeper than 64 levels") {
				t.Errorf("error %s %q; want MALFORMED_REQUEST naming the depth of 64", doc.Code, doc.Message)
			}
		})
	}
}

// manyLines is n request lines numbered from 1.
func manyLines(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		b.WriteString(xmlLine(strconv.Itoa(i), "A", "1"))
	}
	return b.String()
}

func TestAccountCodeMaxLines(t *testing.T) {
	// docs: limits.md: 10,000 lines per validation request; both
	// fit in the default 1 MiB body.
	srv := newConnector(t, echoValidator, accountcode.Options{})
	url := srv.URL + accountcode.Path
	at := reqDoc(manyLines(budget.MaxLines))
	past := reqDoc(manyLines(budget.MaxLines + 1))
	if len(past) > accountcode.DefaultMaxBody {
		t.Fatalf("the test body is %d bytes, over the default limit", len(past))
	}
	a := send(t, "POST", url, "application/xml", strings.NewReader(at))
	if a.status != 200 || strings.Count(a.body, "<Line>") != budget.MaxLines {
		t.Fatalf("%d lines: status %d with %d lines; want 200 with every line", budget.MaxLines, a.status, strings.Count(a.body, "<Line>"))
	}
	a = send(t, "POST", url, "application/xml", strings.NewReader(past))
	var doc errorDoc
	if err := xml.Unmarshal([]byte(a.body), &doc); err != nil {
		t.Fatal(err)
	}
	if a.status != 400 || doc.Code != "INVALID_FIELD" || doc.Message != "Lines: at most 10000 Line elements per request" {
		t.Fatalf("%d lines: %d %s %q; want 400 INVALID_FIELD naming the limit", budget.MaxLines+1, a.status, doc.Code, doc.Message)
	}
}

func TestAccountCodeDefaultMaxBody(t *testing.T) {
	// The connector's default bound is 1 MiB: exactly that is read, one
	// byte more is 413.
	srv := newConnector(t, echoValidator, accountcode.Options{})
	url := srv.URL + accountcode.Path
	doc := reqDoc(xmlLine("1", "A", "1"))
	at := doc + strings.Repeat(" ", accountcode.DefaultMaxBody-len(doc))
	if a := send(t, "POST", url, "application/xml", strings.NewReader(at)); a.status != 200 {
		t.Fatalf("a body of exactly 1 MiB: %d; want 200\n%.300s", a.status, a.body)
	}
	if a := send(t, "POST", url, "application/xml", strings.NewReader(at+" ")); a.status != 413 || !strings.Contains(a.body, "PAYLOAD_TOO_LARGE") {
		t.Fatalf("a body of 1 MiB + 1 byte: %d; want 413\n%.300s", a.status, a.body)
	}
}

func TestAccountCodeErrorDetailsBounded(t *testing.T) {
	// docs: limits.md: at most 20 field errors per 400, then "and N
	// more" (the connector collects 20 and counts the rest).
	srv := newConnector(t, echoValidator, accountcode.Options{})
	var lines strings.Builder
	for i := 1; i <= 30; i++ {
		lines.WriteString(xmlLine(strconv.Itoa(i), "A", "x")) // 30 bad amounts
	}
	a := send(t, "POST", srv.URL+accountcode.Path, "application/xml", strings.NewReader(reqDoc(lines.String())))
	var doc errorDoc
	if err := xml.Unmarshal([]byte(a.body), &doc); err != nil {
		t.Fatal(err)
	}
	if a.status != 400 || strings.Count(doc.Message, "/Amount: ") != 20 || !strings.HasSuffix(doc.Message, "; and 10 more") {
		t.Fatalf("30 bad lines: %d %q; want 20 errors named and \"; and 10 more\"", a.status, doc.Message)
	}
}
