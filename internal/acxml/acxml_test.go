package acxml

import (
	"bytes"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"

	"github.com/procurekit/procure/budget"
)

// The HTTP tests of both sides (httpapi's AccountCodeHandler tests,
// accountcodeapi's client tests) hold the codec to the messages a client
// or an operator sees; these hold the points of the codec itself: lines
// named in multi-line documents, and what may surround the root.
func TestDecodeMalformed(t *testing.T) {
	line := `<Line><LineNumber>1</LineNumber><Account>A</Account><Amount>1</Amount></Line>`
	cases := []struct {
		name, doc, want string
	}{
		{"mismatched tags name their line", "<AccountCodeValidationRequest>\n<Lines>\n<Line><LineNumber>1</Account>", "line 3: element <LineNumber> closed by </Account>"},
		{"end of input names its line", "<AccountCodeValidationRequest>\n<Lines>\n" + line, "line 3: unexpected EOF"},
		{"a bad entity names its line", "<AccountCodeValidationRequest>\n\n<Lines>&bad;</Lines>", "line 3: invalid character entity &bad;"},
		{"depth names its line", "<AccountCodeValidationRequest>\n" + strings.Repeat("<X>", MaxDepth), "line 2: elements nest deeper than 64 levels"},
		{"an end tag first", "</Lines><AccountCodeValidationRequest/>", "an end tag before the root element"},
		{"an end tag after the root", "<AccountCodeValidationRequest><Lines>" + line + "</Lines></AccountCodeValidationRequest></Lines>", "an unmatched end tag </Lines> follows the root element"},
		{"text after the root", "<AccountCodeValidationRequest><Lines>" + line + "</Lines></AccountCodeValidationRequest>x", "text follows the root element"},
		{"a second root", "<AccountCodeValidationRequest><Lines>" + line + "</Lines></AccountCodeValidationRequest><AccountCodeValidationRequest/>", `a second element "AccountCodeValidationRequest" follows the root element`},
		{"a directive inside", "<AccountCodeValidationRequest><!ENTITY a 'b'><Lines>" + line + "</Lines></AccountCodeValidationRequest>", "a DOCTYPE or other directive is not allowed"},
		{"a directive after", "<AccountCodeValidationRequest><Lines>" + line + "</Lines></AccountCodeValidationRequest><!DOCTYPE x>", "a DOCTYPE or other directive is not allowed"},
		{"text in the root", "<AccountCodeValidationRequest>x<Lines>" + line + "</Lines></AccountCodeValidationRequest>", "AccountCodeValidationRequest holds text outside its elements"},
		{"text in Lines", "<AccountCodeValidationRequest><Lines>x" + line + "</Lines></AccountCodeValidationRequest>", "Lines holds text outside its elements"},
		{"an element in a field", "<AccountCodeValidationRequest><Username><b/></Username><Lines>" + line + "</Lines></AccountCodeValidationRequest>", `Username must hold text, not the element "b"`},
		{"a duplicate in the second Line", "<AccountCodeValidationRequest><Lines>" + line + "<Line><Account>A</Account><Account>B</Account></Line></Lines></AccountCodeValidationRequest>", "Lines/Line[2] has more than one Account element"},
		{"a namespace's end tag in another space", `<AccountCodeValidationRequest xmlns:a="urn:a" xmlns:b="urn:b"><a:Lines></b:Lines></AccountCodeValidationRequest>`, "line 1: element <Lines> in space a closed by </Lines> in space b"},
		{"UTF-16 declared", `<?xml version="1.0" encoding="UTF-16"?><AccountCodeValidationRequest/>`, `xml: encoding "UTF-16" declared but Decoder.CharsetReader is nil`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := DecodeRequest(strings.NewReader(c.doc))
			if !errors.Is(err, ErrMalformed) || err.Error() != "malformed XML: "+c.want {
				t.Fatalf("error %v\nwant malformed XML: %s", err, c.want)
			}
		})
	}
}

// A read error of the underlying reader (a body over its limit) comes back
// as it is, not as malformed XML, on both sides.
func TestDecodeReadError(t *testing.T) {
	errLimit := errors.New("fixture: over the limit")
	doc := "<AccountCodeValidationRequest><Lines><Line><LineNumber>1</LineNumber><Account>A"
	if _, err := DecodeRequest(&failing{doc, errLimit}); err != errLimit {
		t.Errorf("DecodeRequest: %v; want the read error", err)
	}
	if _, err := DecodeResponse(&failing{"<AccountCodeValidationResponse><Lines>", errLimit}); err != errLimit {
		t.Errorf("DecodeResponse: %v; want the read error", err)
	}
}

// failing reads s, then fails with err.
type failing struct {
	s   string
	err error
}

func (f *failing) Read(p []byte) (int, error) {
	if f.s == "" {
		return 0, f.err
	}
	n := copy(p, f.s)
	f.s = f.s[n:]
	return n, nil
}

func TestAppend(t *testing.T) {
	req := budget.Request{Username: "o'brien & <sons>", Lines: []budget.Line{{Number: 2, Account: "A\x01", Amount: decimal.New(12550, -2)}}}
	if got, want := string(AppendRequest([]byte("x"), &req)), `x<?xml version="1.0" encoding="UTF-8"?>`+"\n"+
		`<AccountCodeValidationRequest><Username>o&#39;brien &amp; &lt;sons&gt;</Username><Lines><Line><LineNumber>2</LineNumber><Account>A`+"\uFFFD"+`</Account><Amount>125.50</Amount></Line></Lines></AccountCodeValidationRequest>`+"\n"; got != want {
		t.Errorf("AppendRequest:\n%s\nwant\n%s", got, want)
	}
	// A reply without lines still has its Lines element: it reads back.
	if got, want := string(AppendResponse(nil, nil)), `<?xml version="1.0" encoding="UTF-8"?>`+"\n"+
		`<AccountCodeValidationResponse><Lines></Lines></AccountCodeValidationResponse>`+"\n"; got != want {
		t.Errorf("AppendResponse(nil):\n%s\nwant\n%s", got, want)
	}
	body := AppendError(nil, "INVALID_FIELD", `Lines/Line[1]/Amount: must be a decimal number (got "x")`)
	if code, msg, ok := DecodeError(body); !ok || code != "INVALID_FIELD" || msg != `Lines/Line[1]/Amount: must be a decimal number (got "x")` {
		t.Errorf("DecodeError(AppendError(...)) = %q, %q, %v\n%s", code, msg, ok, body)
	}
	if _, _, ok := DecodeError([]byte(`<html>502 Bad Gateway</html>`)); ok {
		t.Error("DecodeError read an HTML page")
	}
}

func benchRequest(n int) budget.Request {
	req := budget.Request{RequisitionID: "REQ-1001", Username: "jdoe", OrganisationUnit: "OU-SCI", FinanceYear: "2026"}
	for i := range n {
		req.Lines = append(req.Lines, budget.Line{Number: i + 1, Account: "6100-" + strconv.Itoa(i*7%10_000), Amount: decimal.New(12550+int64(i), -2)})
	}
	return req
}

func benchResults(n int) []budget.Result {
	res := make([]budget.Result, n)
	for i := range res {
		res[i] = budget.Result{LineNumber: i + 1, Status: budget.Valid}
		if i%3 == 2 {
			res[i] = budget.Result{LineNumber: i + 1, Status: budget.Warning, Message: "Account 6100-" + strconv.Itoa(i) + " is over its budget"}
		}
	}
	return res
}

// BenchmarkDecodeRequest reads a request of 20 lines and one at the limit
// of 10,000 lines (about 1 MiB, the connector's default body limit): the
// figures of the package doc.
func BenchmarkDecodeRequest(b *testing.B) {
	for _, n := range []int{20, budget.MaxLines} {
		req := benchRequest(n)
		doc := AppendRequest(nil, &req)
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			b.SetBytes(int64(len(doc)))
			b.ReportAllocs()
			for b.Loop() {
				got, err := DecodeRequest(bytes.NewReader(doc))
				if err != nil || len(got.Lines) != n {
					b.Fatal(err)
				}
			}
		})
	}
	// The reading agrees with what was written.
	req := benchRequest(50)
	got, err := DecodeRequest(bytes.NewReader(AppendRequest(nil, &req)))
	if diff := cmp.Diff(req, got, cmp.Comparer(func(x, y decimal.Decimal) bool { return x.Equal(y) && x.Exponent() == y.Exponent() })); err != nil || diff != "" {
		b.Fatalf("%v (-written +read):\n%s", err, diff)
	}
}

// BenchmarkDecodeResponse reads replies of 20 and 10,000 lines.
func BenchmarkDecodeResponse(b *testing.B) {
	for _, n := range []int{20, budget.MaxLines} {
		doc := AppendResponse(nil, benchResults(n))
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			b.SetBytes(int64(len(doc)))
			b.ReportAllocs()
			for b.Loop() {
				got, err := DecodeResponse(bytes.NewReader(doc))
				if err != nil || len(got) != n {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkEncode writes requests and replies of 20 and 10,000 lines: the
// figures of the package doc.
func BenchmarkEncode(b *testing.B) {
	for _, n := range []int{20, budget.MaxLines} {
		req, res := benchRequest(n), benchResults(n)
		b.Run("request/"+strconv.Itoa(n), func(b *testing.B) {
			b.ReportAllocs()
			var buf []byte
			for b.Loop() {
				buf = AppendRequest(buf[:0], &req)
			}
			b.SetBytes(int64(len(buf)))
		})
		b.Run("response/"+strconv.Itoa(n), func(b *testing.B) {
			b.ReportAllocs()
			var buf []byte
			for b.Loop() {
				buf = AppendResponse(buf[:0], res)
			}
			b.SetBytes(int64(len(buf)))
		})
	}
}
