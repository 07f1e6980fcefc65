package httpapi_test

import (
	"encoding/xml"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/procurekit/procure/budget"
	"github.com/procurekit/procure/httpapi"
)

// Tests of docs: limits.md (issue 11): each bound at the limit and
// one past it.

// nested is n unknown elements nested in one another.
func nested(n int) string {
	return strings.Repeat("<X>", n) + strings.Repeat("</X>", n)
}

func TestAccountCodeXMLDepth(t *testing.T) {
	srv := newConnector(t, echoValidator, httpapi.AccountCodeHandlerOptions{})
	url := srv.URL + httpapi.AccountCodePath
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
			if c.depth <= httpapi.MaxXMLDepth {
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
	srv := newConnector(t, echoValidator, httpapi.AccountCodeHandlerOptions{})
	url := srv.URL + httpapi.AccountCodePath
	at := reqDoc(manyLines(budget.MaxLines))
	past := reqDoc(manyLines(budget.MaxLines + 1))
	if len(past) > httpapi.DefaultAccountCodeMaxBody {
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

func TestUsersErrorDetailsBounded(t *testing.T) {
	// docs: limits.md: at most 20 field errors per 400, then
	// "and N more"; a list over 1,000 entries is one error.
	s := newUserServer(t)
	attrs := func(n int, entry string) string {
		return `{"username":"x","attributes":[` + strings.TrimSuffix(strings.Repeat(entry+",", n), ",") + `]}`
	}
	t.Run("1000 bad attributes", func(t *testing.T) {
		// Each has no name: 1000 errors, 20 of them named.
		r := req{method: http.MethodPost, path: "/v1/users", body: attrs(1000, `{"name":"","value":"v"}`)}
		got := s.do(t, r)
		checkUserResponse(t, r, got, 400, httpapi.CodeInvalidField)
		m := errorMessage(t, got.body)
		if n := strings.Count(m, "attributes["); n != httpapi.MaxErrorDetails {
			t.Errorf("the message names %d fields; want %d", n, httpapi.MaxErrorDetails)
		}
		if !strings.HasPrefix(m, "attributes[0].name: is required; attributes[1].name: is required;") || !strings.HasSuffix(m, "attributes[19].name: is required; and 980 more") {
			t.Errorf("message %q; want the first 20 errors and \"; and 980 more\"", m)
		}
		if len(got.body) > 4096 {
			t.Errorf("the 400 body is %d bytes; want a few kilobytes at most", len(got.body))
		}
	})
	t.Run("80000 bad attributes", func(t *testing.T) {
		body := attrs(80_000, `{"name":""}`)
		if len(body) > httpapi.MaxUserBodyBytes {
			t.Fatalf("the test body is %d bytes, over 1 MiB", len(body))
		}
		r := req{method: http.MethodPost, path: "/v1/users", body: body}
		got := s.do(t, r)
		checkUserResponse(t, r, got, 400, httpapi.CodeInvalidField)
		if m := errorMessage(t, got.body); m != "attributes: at most 1000 entries (got 80000)" {
			t.Errorf("message %q; want the list limit alone", m)
		}
		if len(got.body) > 4096 {
			t.Errorf("the 400 body is %d bytes; want a few kilobytes at most", len(got.body))
		}
	})
	t.Run("exactly 20 errors have no tail", func(t *testing.T) {
		r := req{method: http.MethodPost, path: "/v1/users", body: attrs(20, `{"name":"","value":"v"}`)}
		got := s.do(t, r)
		checkUserResponse(t, r, got, 400, httpapi.CodeInvalidField)
		if m := errorMessage(t, got.body); strings.Contains(m, "more") || strings.Count(m, "attributes[") != 20 {
			t.Errorf("message %q; want all 20 errors and no tail", m)
		}
	})
	t.Run("21 errors have a tail of 1", func(t *testing.T) {
		r := req{method: http.MethodPost, path: "/v1/users", body: attrs(21, `{"name":"","value":"v"}`)}
		got := s.do(t, r)
		if m := errorMessage(t, got.body); !strings.HasSuffix(m, "attributes[19].name: is required; and 1 more") {
			t.Errorf("message %q; want 20 errors and \"; and 1 more\"", m)
		}
	})
}

func TestUsersListLimits(t *testing.T) {
	// docs: limits.md: 1,000 entries per list, each list alike.
	s := newUserServer(t)
	codes := func(prefix string, n int) string {
		var b strings.Builder
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(`{"code":"` + prefix + strconv.Itoa(i) + `"}`)
		}
		return "[" + b.String() + "]"
	}
	for i, list := range []string{"organisationUnits", "roles", "buyerGroups", "approverGroups"} {
		name := "limit" + strconv.Itoa(i)
		t.Run(list, func(t *testing.T) {
			r := req{method: http.MethodPost, path: "/v1/users", body: `{"username":"` + name + `","` + list + `":` + codes("C", 1001) + `}`}
			got := s.do(t, r)
			checkUserResponse(t, r, got, 400, httpapi.CodeInvalidField)
			if m := errorMessage(t, got.body); m != list+": at most 1000 entries (got 1001)" {
				t.Errorf("1001 entries: message %q", m)
			}
			r.body = `{"username":"` + name + `","` + list + `":` + codes("C", 1000) + `}`
			got = s.do(t, r)
			checkUserResponse(t, r, got, 200, "")
			u := decodeUser(t, got.body)
			n := map[string]int{"organisationUnits": len(u.OrganisationUnits), "roles": len(u.Roles), "buyerGroups": len(u.BuyerGroups), "approverGroups": len(u.ApproverGroups)}[list]
			if list == "roles" {
				n-- // the community's auto-role EMPLOYEE is added
			}
			if n != 1000 {
				t.Errorf("1000 entries stored as %d", n)
			}
		})
	}
	t.Run("attributes", func(t *testing.T) {
		attrs := func(n int) string {
			var b strings.Builder
			for i := range n {
				if i > 0 {
					b.WriteByte(',')
				}
				b.WriteString(`{"name":"n` + strconv.Itoa(i) + `","value":"v"}`)
			}
			return b.String()
		}
		r := req{method: http.MethodPost, path: "/v1/users", body: `{"username":"attrs","attributes":[` + attrs(1001) + `]}`}
		got := s.do(t, r)
		checkUserResponse(t, r, got, 400, httpapi.CodeInvalidField)
		if m := errorMessage(t, got.body); m != "attributes: at most 1000 entries (got 1001)" {
			t.Errorf("1001 entries: message %q", m)
		}
		r.body = `{"username":"attrs","attributes":[` + attrs(1000) + `]}`
		got = s.do(t, r)
		checkUserResponse(t, r, got, 200, "")
		if n := len(decodeUser(t, got.body).Attributes); n != 1000 {
			t.Errorf("1000 entries stored as %d", n)
		}
	})
}

func TestUsersUnstorableText(t *testing.T) {
	// docs: limits.md: text PostgreSQL cannot hold (NUL, invalid
	// UTF-8) is a 400 on every store, never a 500. JSON cannot carry
	// invalid UTF-8 into a string (the decoder replaces it), but it can
	// carry a NUL.
	s := newUserServer(t)
	cases := []struct {
		name, body, message string
	}{
		{"NUL in the username", `{"username":"a\u0000b"}`, "username: must be UTF-8 text without NUL characters"},
		{"NUL in a name", `{"username":"nul1","firstName":"\u0000"}`, "firstName: must be UTF-8 text without NUL characters"},
		{"NUL in a role code", `{"username":"nul2","roles":[{"code":"R\u0000"}]}`, "roles[0].code: must be UTF-8 text without NUL characters"},
		{"NUL in an attribute", `{"username":"nul3","attributes":[{"name":"n","value":"\u0000"}]}`, "attributes[0].value: must be UTF-8 text without NUL characters"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := req{method: http.MethodPost, path: "/v1/users", body: c.body}
			got := s.do(t, r)
			checkUserResponse(t, r, got, 400, httpapi.CodeInvalidField)
			if m := errorMessage(t, got.body); m != c.message {
				t.Errorf("message %q; want %q", m, c.message)
			}
		})
	}
	// A body that is not UTF-8 is not JSON (RFC 8259): refused whole,
	// rather than stored with U+FFFD where the bad bytes were.
	r := req{method: http.MethodPost, path: "/v1/users", body: "{\"username\":\"bad\xffname\"}"}
	got := s.do(t, r)
	checkUserResponse(t, r, got, 400, httpapi.CodeMalformedRequest)
	if m := errorMessage(t, got.body); m != "the request body is not valid UTF-8 (JSON must be UTF-8)" {
		t.Errorf("message %q", m)
	}
	// A lookup by a username no store can hold is simply not found.
	for _, name := range []string{"a%00b", "%FF", "alice%C0%AE"} {
		r := req{method: http.MethodGet, path: "/v1/users/username/" + name}
		checkUserResponse(t, r, s.do(t, r), 404, httpapi.CodeUserNotFound)
	}
}

func TestAccountCodeDefaultMaxBody(t *testing.T) {
	// The connector's default bound is 1 MiB: exactly that is read, one
	// byte more is 413.
	srv := newConnector(t, echoValidator, httpapi.AccountCodeHandlerOptions{})
	url := srv.URL + httpapi.AccountCodePath
	doc := reqDoc(xmlLine("1", "A", "1"))
	at := doc + strings.Repeat(" ", httpapi.DefaultAccountCodeMaxBody-len(doc))
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
	srv := newConnector(t, echoValidator, httpapi.AccountCodeHandlerOptions{})
	var lines strings.Builder
	for i := 1; i <= 30; i++ {
		lines.WriteString(xmlLine(strconv.Itoa(i), "A", "x")) // 30 bad amounts
	}
	a := send(t, "POST", srv.URL+httpapi.AccountCodePath, "application/xml", strings.NewReader(reqDoc(lines.String())))
	var doc errorDoc
	if err := xml.Unmarshal([]byte(a.body), &doc); err != nil {
		t.Fatal(err)
	}
	if a.status != 400 || strings.Count(doc.Message, "/Amount: ") != 20 || !strings.HasSuffix(doc.Message, "; and 10 more") {
		t.Fatalf("30 bad lines: %d %q; want 20 errors named and \"; and 10 more\"", a.status, doc.Message)
	}
}
