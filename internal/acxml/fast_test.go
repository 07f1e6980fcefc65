package acxml

import (
	"bytes"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/procurekit/procure/budget"
)

// agree checks the fast path against encoding/xml's reading of data: where
// fastRequest answers, decodeSlow reads the same check; and DecodeMessage
// (fast path, or the fallback to the Decoder over the buffered body) gives
// what decodeSlow gives, message or error, to the letter. It reports
// whether the fast path answered.
func agree(t *testing.T, data []byte) bool {
	t.Helper()
	slow, slowErr := decodeSlow(bytes.NewReader(data), "")
	fast, ok := fastRequest(data)
	if ok {
		if slowErr != nil {
			t.Fatalf("the fast path read %+v; encoding/xml refuses the document: %v\n%q", fast, slowErr, data)
		}
		if slow.Kind != Check {
			t.Fatalf("the fast path read a check; encoding/xml a %s\n%q", slow.Kind.Root(), data)
		}
		if diff := cmp.Diff(slow.Request, fast, decimalEq); diff != "" {
			t.Fatalf("fast path against encoding/xml (-slow +fast):\n%s\n%q", diff, data)
		}
	}
	got, err := DecodeMessage(bytes.NewReader(data))
	switch {
	case (err == nil) != (slowErr == nil):
		t.Fatalf("DecodeMessage: %v; encoding/xml: %v\n%q", err, slowErr, data)
	case err != nil:
		if err.Error() != slowErr.Error() || errors.Is(err, ErrMalformed) != errors.Is(slowErr, ErrMalformed) {
			t.Fatalf("DecodeMessage: %v; encoding/xml: %v\n%q", err, slowErr, data)
		}
	default:
		if diff := cmp.Diff(slow, got, decimalEq); diff != "" {
			t.Fatalf("DecodeMessage against encoding/xml (-slow +got):\n%s\n%q", diff, data)
		}
	}
	return ok
}

const (
	fastLine  = `<Line><LineNumber>1</LineNumber><Account>A</Account><Amount>1</Amount></Line>`
	fastSplit = `<Line><LineNumber>2</LineNumber><Amount>10.01</Amount><Splits><Split><Account>B</Account><Percentage>50</Percentage></Split><Split><Account>C</Account><Percentage>50</Percentage></Split></Splits></Line>`
)

// fastDoc is a request with the given lines.
func fastDoc(lines string) string {
	return `<AccountCodeValidationRequest><RequisitionId>REQ-1</RequisitionId><Lines>` + lines + `</Lines></AccountCodeValidationRequest>`
}

// The fast path answers the documents clients write and leaves everything
// else to encoding/xml; either way the answer is encoding/xml's.
func TestFastRequest(t *testing.T) {
	cases := []struct {
		name string
		doc  string
		fast bool // the fast path answers
	}{
		{"compact", fastDoc(fastLine + fastSplit), true},
		{"declaration and pretty-printing", `<?xml version="1.0" encoding="UTF-8"?>` + "\n<AccountCodeValidationRequest>\n  <Username> jdoe </Username>\n  <Lines>\n    " + fastLine + "\n    " + fastSplit + "\n  </Lines>\n</AccountCodeValidationRequest>\n", true},
		{"lower-case encoding", `<?xml version="1.0" encoding="utf-8"?>` + fastDoc(fastLine), true},
		{"version only", `<?xml version="1.0"?>` + fastDoc(fastLine), true},
		{"CRLF between elements", strings.ReplaceAll("<AccountCodeValidationRequest>\n<Lines>\n"+fastLine+"\n</Lines>\n</AccountCodeValidationRequest>\r\n", "\n", "\r\n"), true},
		{"predefined entities", fastDoc(`<Line><LineNumber>1</LineNumber><Account>R&amp;D &lt;&gt;&quot;&apos;</Account><Amount>1</Amount></Line>`), true},
		{"empty elements", fastDoc(fastLine + `<Line><LineNumber>2</LineNumber><Account>B</Account><Amount>2</Amount><Note/></Line>`), true},
		{"unknown elements skipped", `<AccountCodeValidationRequest><X a-b="">y</X><Extra><Deep><Deeper>t</Deeper></Deep></Extra><Lines><Other/>` + fastLine + `</Lines></AccountCodeValidationRequest>`, false},
		{"unknown elements without attributes", `<AccountCodeValidationRequest><Extra><Deep><Deeper>t &amp; u</Deeper></Deep></Extra><Lines><Other/>` + fastLine + `</Lines></AccountCodeValidationRequest>`, true},
		{"a tab inside a field", fastDoc(`<Line><LineNumber>1</LineNumber><Account>A` + "\t" + `B</Account><Amount>1</Amount></Line>`), true},

		// Left to encoding/xml.
		{"a byte order mark", "\ufeff" + fastDoc(fastLine), false},
		{"a standalone declaration", `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>` + fastDoc(fastLine), false},
		{"UTF-16 declared", `<?xml version="1.0" encoding="UTF-16"?>` + fastDoc(fastLine), false},
		{"space before the declaration", " " + `<?xml version="1.0"?>` + fastDoc(fastLine), false},
		{"a comment", fastDoc("<!-- c -->" + fastLine), false},
		{"a comment after the root", fastDoc(fastLine) + "<!-- c -->", false},
		{"a processing instruction", fastDoc(fastLine + "<?pi x?>"), false},
		{"CDATA", fastDoc(`<Line><LineNumber>1</LineNumber><Account><![CDATA[A]]></Account><Amount>1</Amount></Line>`), false},
		{"a DOCTYPE", "<!DOCTYPE x>" + fastDoc(fastLine), false},
		{"namespaces", `<r:AccountCodeValidationRequest xmlns:r="urn:x"><r:Lines>` + strings.ReplaceAll(strings.ReplaceAll(fastLine, "<", "<r:"), "<r:/", "</r:") + `</r:Lines></r:AccountCodeValidationRequest>`, false},
		{"a default namespace", `<AccountCodeValidationRequest xmlns="urn:x">` + `<Lines>` + fastLine + `</Lines></AccountCodeValidationRequest>`, false},
		{"a space in a tag", fastDoc(`<Line ><LineNumber>1</LineNumber><Account>A</Account><Amount>1</Amount></Line>`), false},
		{"a character reference", fastDoc(`<Line><LineNumber>1</LineNumber><Account>&#65;</Account><Amount>1</Amount></Line>`), false},
		{"an undeclared entity", fastDoc(`<Line><LineNumber>1</LineNumber><Account>&x;</Account><Amount>1</Amount></Line>`), false},
		{"a carriage return in a field", fastDoc(`<Line><LineNumber>1</LineNumber><Account>A` + "\r\n" + `B</Account><Amount>1</Amount></Line>`), false},
		{"a carriage return at a field's end", fastDoc(`<Line><LineNumber>1</LineNumber><Account>A` + "\r" + `</Account><Amount>1</Amount></Line>`), false},
		{"non-ASCII text", fastDoc(`<Line><LineNumber>1</LineNumber><Account>Société</Account><Amount>1</Amount></Line>`), false},
		{"a control character", fastDoc(`<Line><LineNumber>1</LineNumber><Account>A` + "\v" + `</Account><Amount>1</Amount></Line>`), false},
		{"a form feed between elements", fastDoc("\f" + fastLine), false},
		{"]]> in text", fastDoc(`<Line><LineNumber>1</LineNumber><Account>A]]>B</Account><Amount>1</Amount></Line>`), false},
		{"a name outside ASCII", fastDoc(fastLine + "<Égal/>"), false},
		{"a name with a colon", fastDoc(fastLine + "<a:b/>"), false},
		{"mismatched tags", fastDoc(`<Line><LineNumber>1</Account></Line>`), false},
		{"an unclosed root", `<AccountCodeValidationRequest><Lines>` + fastLine, false},
		{"nesting at the limit", `<AccountCodeValidationRequest><Lines>` + fastLine + `</Lines>` + strings.Repeat("<X>", MaxDepth-1) + strings.Repeat("</X>", MaxDepth-1) + `</AccountCodeValidationRequest>`, true},
		{"nesting past the limit", `<AccountCodeValidationRequest><Lines>` + fastLine + `</Lines>` + strings.Repeat("<X>", MaxDepth) + strings.Repeat("</X>", MaxDepth) + `</AccountCodeValidationRequest>`, false},
		{"a duplicate field", fastDoc(`<Line><LineNumber>1</LineNumber><Account>A</Account><Account>B</Account><Amount>1</Amount></Line>`), false},
		{"a duplicate Lines", `<AccountCodeValidationRequest><Lines>` + fastLine + `</Lines><Lines/></AccountCodeValidationRequest>`, false},
		{"a duplicate Splits", fastDoc(`<Line><LineNumber>1</LineNumber><Amount>1</Amount><Splits/><Splits/></Line>`), false},
		{"an element in a field", fastDoc(`<Line><LineNumber>1</LineNumber><Account><b/></Account><Amount>1</Amount></Line>`), false},
		{"text in a container", fastDoc("x" + fastLine), false},
		{"text in a Split", fastDoc(`<Line><LineNumber>2</LineNumber><Amount>10</Amount><Splits><Split>x<Account>B</Account><Percentage>100</Percentage></Split></Splits></Line>`), false},
		{"text after the root", fastDoc(fastLine) + "x", false},
		{"a second root", fastDoc(fastLine) + "<AccountCodeValidationRequest/>", false},
		{"another root", `<AccountCodeReleaseRequest><RequisitionId>R</RequisitionId></AccountCodeReleaseRequest>`, false},
		{"an empty root", `<AccountCodeValidationRequest/>`, false},
		{"no Lines", `<AccountCodeValidationRequest><RequisitionId>R</RequisitionId></AccountCodeValidationRequest>`, false},
		{"a bad amount", fastDoc(`<Line><LineNumber>1</LineNumber><Account>A</Account><Amount>1,5</Amount></Line>`), false},
		{"a duplicate line number", fastDoc(fastLine + fastLine), false},
		{"splits not adding up", fastDoc(`<Line><LineNumber>1</LineNumber><Amount>1</Amount><Splits><Split><Account>B</Account><Percentage>50</Percentage></Split></Splits></Line>`), false},
		{"an empty Currency", `<AccountCodeValidationRequest><Currency></Currency><Lines>` + fastLine + `</Lines></AccountCodeValidationRequest>`, false},
		{"an unknown Currency", `<AccountCodeValidationRequest><Currency>XYZ</Currency><Lines>` + fastLine + `</Lines></AccountCodeValidationRequest>`, false},
		{"empty", ``, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := agree(t, []byte(c.doc)); got != c.fast {
				t.Errorf("the fast path answered: %v; want %v", got, c.fast)
			}
		})
	}
}

// The Line past budget.MaxLines is left to encoding/xml, which refuses
// the request; the last allowed one is read by the fast path.
func TestFastRequestMaxLines(t *testing.T) {
	for _, n := range []int{10_000, 10_001} {
		var b strings.Builder
		for i := range n {
			b.WriteString(`<Line><LineNumber>` + strconv.Itoa(i+1) + `</LineNumber><Account>A</Account><Amount>1</Amount></Line>`)
		}
		if got := agree(t, []byte(fastDoc(b.String()))); got != (n == 10_000) {
			t.Errorf("%d lines: the fast path answered: %v", n, got)
		}
	}
}

// A read error after part of the body comes back as it is, as before the
// fast path.
func TestFastRequestReadError(t *testing.T) {
	errLimit := errors.New("fixture: over the limit")
	if _, err := DecodeMessage(&failing{fastDoc(fastLine), errLimit}); err != errLimit {
		t.Fatalf("DecodeMessage: %v; want the read error", err)
	}
}

// FuzzFastRequest: on every input, the fast path answers as encoding/xml
// does, or leaves the input to it.
//
//	go test -run='^$' -fuzz='^FuzzFastRequest$' -fuzztime=2m -parallel=1 ./internal/acxml/
func FuzzFastRequest(f *testing.F) {
	for _, s := range []string{
		fastDoc(fastLine + fastSplit),
		`<?xml version="1.0" encoding="UTF-8"?>` + "\n<AccountCodeValidationRequest>\n  <Currency>JPY</Currency>\n  <Lines>\n    " + fastLine + "\n  </Lines>\n</AccountCodeValidationRequest>\n",
		fastDoc(`<Line><LineNumber>1</LineNumber><Account>R&amp;D</Account><Amount>1</Amount><X><Y/>z</X></Line>`),
		fastDoc(fastLine + `<Line><LineNumber>2</LineNumber><Amount>1</Amount><Splits><Split><Account>A</Account><Amount>0.5</Amount></Split><Split><Account>B</Account><Amount>0.5</Amount></Split></Splits></Line>`),
		fastDoc(`<Line/>`),
		`<AccountCodeValidationRequest><Lines>` + fastLine + `</Lines>` + strings.Repeat("<X>", MaxDepth-1) + strings.Repeat("</X>", MaxDepth-1) + `</AccountCodeValidationRequest>`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		agree(t, data)
	})
}

// The reply written by hand is the Encoder's, byte for byte.
func TestAppendResponse(t *testing.T) {
	cases := [][]budget.Result{
		nil,
		{{LineNumber: 1, Status: budget.Valid}},
		{{LineNumber: -3, Status: budget.Warning, Message: "over budget by 12.50 (available 100.00)"}, {LineNumber: 1 << 40, Status: budget.Invalid, Message: "unknown account"}},
		{{LineNumber: 2, Status: "Odd <&>\"'", Message: "tab\there\nline\r\u00e9 \x01 \xff \ufffe ]]>"}},
	}
	for i, results := range cases {
		got, want := AppendResponse([]byte("prefix"), results), appendResponseEncoder([]byte("prefix"), results)
		if !bytes.Equal(got, want) {
			t.Errorf("case %d:\n got %q\nwant %q", i, got, want)
		}
	}
}

// FuzzAppendResponse: on every status and message, the reply written by
// hand is the Encoder's.
func FuzzAppendResponse(f *testing.F) {
	f.Add(1, "Valid", "")
	f.Add(-7, "Warning", "available <100> & \"more\"\n")
	f.Add(0, "\x00\xff", "\ufffe\U0001F600\r")
	f.Fuzz(func(t *testing.T, n int, status, message string) {
		results := []budget.Result{{LineNumber: n, Status: budget.Status(status), Message: message}, {LineNumber: 1, Status: budget.Valid}}
		if got, want := AppendResponse(nil, results), appendResponseEncoder(nil, results); !bytes.Equal(got, want) {
			t.Fatalf("\n got %q\nwant %q", got, want)
		}
	})
}
