package accountcode_test

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"

	"github.com/procurekit/procure/accountcodeapi"
	"github.com/procurekit/procure/budget"
	"github.com/procurekit/procure/httpapi/accountcode"
)

// exactDecimal compares decimals by value and scale: the exchange carries
// amounts exactly as written.
var exactDecimal = cmp.Comparer(func(a, b decimal.Decimal) bool {
	return budget.FormatAmount(a) == budget.FormatAmount(b)
})

func acLine(tb testing.TB, n int, account, amount string) budget.Line {
	tb.Helper()
	d, err := budget.ParseAmount(amount)
	if err != nil {
		tb.Fatalf("ParseAmount(%q): %v", amount, err)
	}
	return budget.Line{Number: n, Account: account, Amount: d}
}

// echoValidator answers Valid for every line, with the account and the
// exact amount as the message, so that tests see what the handler parsed.
var echoValidator = budget.ValidatorFunc(func(_ context.Context, req budget.Request) ([]budget.Result, error) {
	out := make([]budget.Result, len(req.Lines))
	for i, l := range req.Lines {
		out[i] = budget.Result{LineNumber: l.Number, Status: budget.Valid, Message: l.Account + "|" + budget.FormatAmount(l.Amount)}
	}
	return out, nil
})

// logBuffer is a slog sink safe for concurrent handlers.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// newConnector serves an AccountCodeHandler on a loopback test server.
// Without a Token in opts it serves without authentication (the tests of
// the exchange itself); auth_test.go tests the authentication.
func newConnector(tb testing.TB, v budget.Validator, opts accountcode.Options) *httptest.Server {
	tb.Helper()
	if opts.Token == "" {
		opts.InsecureNoAuth = true
	}
	mux := http.NewServeMux()
	accountcode.NewHandler(v, opts).Mount(mux)
	srv := httptest.NewServer(mux)
	tb.Cleanup(srv.Close)
	return srv
}

type answer struct {
	status int
	header http.Header
	body   string
}

func send(tb testing.TB, method, url, contentType string, body io.Reader) answer {
	tb.Helper()
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		tb.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatal(err)
	}
	return answer{status: resp.StatusCode, header: resp.Header, body: string(b)}
}

// errorDoc is the connector's XML error body.
type errorDoc struct {
	XMLName xml.Name `xml:"AccountCodeValidationError"`
	Code    string   `xml:"Code"`
	Message string   `xml:"Message"`
}

func reqDoc(lines string) string {
	return `<AccountCodeValidationRequest><Lines>` + lines + `</Lines></AccountCodeValidationRequest>`
}

func xmlLine(n, account, amount string) string {
	return `<Line><LineNumber>` + n + `</LineNumber><Account>` + account + `</Account><Amount>` + amount + `</Amount></Line>`
}

func TestAccountCodeHandlerAccepts(t *testing.T) {
	srv := newConnector(t, echoValidator, accountcode.Options{})
	cases := []struct {
		name        string
		contentType string
		body        string
		want        []budget.Result
	}{
		{
			name:        "the layout of docs/account-codes.md",
			contentType: "application/xml; charset=utf-8",
			body: `<AccountCodeValidationRequest>
  <RequisitionId>REQ-1001</RequisitionId>
  <Username>jdoe</Username>
  <OrganisationUnit>OU-SCI</OrganisationUnit>
  <FinanceYear>2026</FinanceYear>
  <Lines>
    <Line><LineNumber>1</LineNumber><Account>6100-200</Account><Amount>125.50</Amount></Line>
  </Lines>
</AccountCodeValidationRequest>`,
			want: []budget.Result{{LineNumber: 1, Status: budget.Valid, Message: "6100-200|125.50"}},
		},
		{
			name:        "text/xml, declaration, comments, white space around values",
			contentType: "text/xml",
			body: `<?xml version="1.0" encoding="UTF-8"?>
<!-- from the platform -->
<AccountCodeValidationRequest><Lines>
  <Line>
    <LineNumber> 7 </LineNumber>
    <Account>
      6100-300
    </Account>
    <Amount>-0.05</Amount>
  </Line>
  <!-- a comment between lines -->
  <Line><LineNumber>2</LineNumber><Account>A</Account><Amount>+10</Amount></Line>
</Lines></AccountCodeValidationRequest>
<!-- trailing comment -->`,
			want: []budget.Result{{LineNumber: 7, Status: budget.Valid, Message: "6100-300|-0.05"}, {LineNumber: 2, Status: budget.Valid, Message: "A|10"}},
		},
		{
			name:        "entities, CDATA and namespaces",
			contentType: "application/xml",
			body: `<p:AccountCodeValidationRequest xmlns:p="urn:example"><p:Lines>` +
				`<p:Line><p:LineNumber>1</p:LineNumber><p:Account>R&amp;D &lt;1&gt; &#233;</p:Account><p:Amount>1</p:Amount></p:Line>` +
				`<p:Line><p:LineNumber>2</p:LineNumber><p:Account><![CDATA[a<b&c]]></p:Account><p:Amount>2.00</p:Amount></p:Line>` +
				`</p:Lines></p:AccountCodeValidationRequest>`,
			want: []budget.Result{{LineNumber: 1, Status: budget.Valid, Message: "R&D <1> é|1"}, {LineNumber: 2, Status: budget.Valid, Message: "a<b&c|2.00"}},
		},
		{
			name:        "unknown elements are skipped",
			contentType: "application/xml",
			body: `<AccountCodeValidationRequest><Currency>NZD</Currency><Lines><Note><Deep>x</Deep></Note>` +
				`<Line><Description>Pens</Description><LineNumber>1</LineNumber><Account>A</Account><Amount>3</Amount></Line></Lines></AccountCodeValidationRequest>`,
			want: []budget.Result{{LineNumber: 1, Status: budget.Valid, Message: "A|3"}},
		},
		{
			name:        "huge amounts and line numbers keep their digits",
			contentType: "application/xml",
			body:        reqDoc(xmlLine("-3", "A", "123456789012345678901234567890.07")),
			want:        []budget.Result{{LineNumber: -3, Status: budget.Valid, Message: "A|123456789012345678901234567890.07"}},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := send(t, http.MethodPost, srv.URL+accountcode.Path, c.contentType, strings.NewReader(c.body))
			if a.status != http.StatusOK {
				t.Fatalf("status %d; want 200\n%s", a.status, a.body)
			}
			if ct := a.header.Get("Content-Type"); ct != "application/xml; charset=utf-8" {
				t.Errorf("Content-Type %q", ct)
			}
			var doc struct {
				XMLName xml.Name `xml:"AccountCodeValidationResponse"`
				Lines   []struct {
					LineNumber int    `xml:"LineNumber"`
					Status     string `xml:"Status"`
					Message    string `xml:"Message"`
				} `xml:"Lines>Line"`
			}
			if err := xml.Unmarshal([]byte(a.body), &doc); err != nil {
				t.Fatalf("reply is not the response XML: %v\n%s", err, a.body)
			}
			var got []budget.Result
			for _, l := range doc.Lines {
				got = append(got, budget.Result{LineNumber: l.LineNumber, Status: budget.Status(l.Status), Message: l.Message})
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("reply lines (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAccountCodeHandlerReplyBody(t *testing.T) {
	// The exact reply layout of docs: account-codes.md, in request order, every
	// Line with a Message element (empty when there is none). The text is
	// escaped by encoding/xml: quotes and line ends as character
	// references, so that a carriage return survives line-end
	// normalisation.
	v := budget.ValidatorFunc(func(_ context.Context, req budget.Request) ([]budget.Result, error) {
		return []budget.Result{
			{LineNumber: 2, Status: budget.Warning, Message: `Over budget: "R&D" <soon>` + "\r\n"},
			{LineNumber: 1, Status: budget.Valid},
		}, nil
	})
	srv := newConnector(t, v, accountcode.Options{})
	a := send(t, http.MethodPost, srv.URL+accountcode.Path, "application/xml",
		strings.NewReader(reqDoc(xmlLine("1", "A", "1")+xmlLine("2", "B", "2"))))
	want := `<?xml version="1.0" encoding="UTF-8"?>` + "\n" +
		`<AccountCodeValidationResponse><Lines>` +
		`<Line><LineNumber>1</LineNumber><Status>Valid</Status><Message></Message></Line>` +
		`<Line><LineNumber>2</LineNumber><Status>Warning</Status><Message>Over budget: &#34;R&amp;D&#34; &lt;soon&gt;&#xD;&#xA;</Message></Line>` +
		`</Lines></AccountCodeValidationResponse>` + "\n"
	if a.status != http.StatusOK || a.body != want {
		t.Fatalf("status %d body\n%s\nwant\n%s", a.status, a.body, want)
	}
	if a.header.Get("Cache-Control") != "no-store" {
		t.Errorf("Cache-Control %q; want no-store", a.header.Get("Cache-Control"))
	}
}

func TestAccountCodeHandlerRejects(t *testing.T) {
	srv := newConnector(t, echoValidator, accountcode.Options{MaxBodyBytes: 2048})
	url := srv.URL + accountcode.Path
	big := reqDoc(strings.Repeat(xmlLine("1", "A", "1"), 50)) // over 2048 bytes
	cases := []struct {
		name        string
		method      string
		contentType string
		body        io.Reader
		status      int
		code        string
		message     string // the error message starts with this
	}{
		// docs: account-codes.md: a malformed message, duplicate line numbers, a line
		// number that is not an integer, or an amount that is empty or not
		// a decimal number: 400.
		{"not XML", "POST", "application/xml", strings.NewReader("line_number=1"), 400, "MALFORMED_REQUEST", "the body is not an AccountCodeValidationRequest, AccountCodeReleaseRequest or AccountCodeConfirmRequest document"},
		{"empty body", "POST", "application/xml", strings.NewReader(""), 400, "MALFORMED_REQUEST", "the body is not an AccountCodeValidationRequest, AccountCodeReleaseRequest or AccountCodeConfirmRequest document: the document is empty"},
		{"JSON", "POST", "application/xml", strings.NewReader(`[{"line_number":1}]`), 400, "MALFORMED_REQUEST", "the body is not an AccountCodeValidationRequest, AccountCodeReleaseRequest or AccountCodeConfirmRequest document: text before the root element"},
		{"wrong root", "POST", "application/xml", strings.NewReader(`<AccountCodeValidationResponse/>`), 400, "MALFORMED_REQUEST", `the body is not an AccountCodeValidationRequest, AccountCodeReleaseRequest or AccountCodeConfirmRequest document: the root element is "AccountCodeValidationResponse"; want AccountCodeValidationRequest`},
		{"unclosed element", "POST", "application/xml", strings.NewReader(`<AccountCodeValidationRequest><Lines>`), 400, "MALFORMED_REQUEST", "the body is not an AccountCodeValidationRequest, AccountCodeReleaseRequest or AccountCodeConfirmRequest document: line 1: unexpected EOF"},
		{"mismatched tags", "POST", "application/xml", strings.NewReader(reqDoc(`<Line><LineNumber>1</Account></Line>`)), 400, "MALFORMED_REQUEST", "the body is not an AccountCodeValidationRequest, AccountCodeReleaseRequest or AccountCodeConfirmRequest document: line 1: element <LineNumber> closed by </Account>"},
		{"unknown entity", "POST", "application/xml", strings.NewReader(reqDoc(xmlLine("1", "&nbsp;", "1"))), 400, "MALFORMED_REQUEST", "the body is not an AccountCodeValidationRequest, AccountCodeReleaseRequest or AccountCodeConfirmRequest document: line 1: invalid character entity &nbsp;"},
		{"a DOCTYPE", "POST", "application/xml", strings.NewReader(`<!DOCTYPE x [<!ENTITY a "b">]>` + reqDoc(xmlLine("1", "A", "1"))), 400, "MALFORMED_REQUEST", "the body is not an AccountCodeValidationRequest, AccountCodeReleaseRequest or AccountCodeConfirmRequest document: a DOCTYPE or other directive is not allowed"},
		{"another encoding", "POST", "application/xml", strings.NewReader(`<?xml version="1.0" encoding="ISO-8859-1"?>` + reqDoc(xmlLine("1", "A", "1"))), 400, "MALFORMED_REQUEST", "the body is not an AccountCodeValidationRequest, AccountCodeReleaseRequest or AccountCodeConfirmRequest document"},
		{"a second root", "POST", "application/xml", strings.NewReader(reqDoc(xmlLine("1", "A", "1")) + `<x/>`), 400, "MALFORMED_REQUEST", `the body is not an AccountCodeValidationRequest, AccountCodeReleaseRequest or AccountCodeConfirmRequest document: a second element "x" follows the root element`},
		{"text in a Line", "POST", "application/xml", strings.NewReader(reqDoc(`<Line>1<LineNumber>1</LineNumber><Account>A</Account><Amount>1</Amount></Line>`)), 400, "MALFORMED_REQUEST", "the body is not an AccountCodeValidationRequest, AccountCodeReleaseRequest or AccountCodeConfirmRequest document: Line holds text outside its elements"},
		{"an element in a value", "POST", "application/xml", strings.NewReader(reqDoc(xmlLine("1", "<b>A</b>", "1"))), 400, "MALFORMED_REQUEST", `the body is not an AccountCodeValidationRequest, AccountCodeReleaseRequest or AccountCodeConfirmRequest document: Account must hold text, not the element "b"`},
		{"two Amount elements", "POST", "application/xml", strings.NewReader(reqDoc(`<Line><LineNumber>1</LineNumber><Account>A</Account><Amount>1</Amount><Amount>2</Amount></Line>`)), 400, "MALFORMED_REQUEST", "the body is not an AccountCodeValidationRequest, AccountCodeReleaseRequest or AccountCodeConfirmRequest document: Lines/Line[1] has more than one Amount element"},
		{"two Lines elements", "POST", "application/xml", strings.NewReader(`<AccountCodeValidationRequest><Lines>` + xmlLine("1", "A", "1") + `</Lines><Lines/></AccountCodeValidationRequest>`), 400, "MALFORMED_REQUEST", "the body is not an AccountCodeValidationRequest, AccountCodeReleaseRequest or AccountCodeConfirmRequest document: AccountCodeValidationRequest has more than one Lines element"},
		{"two Username elements", "POST", "application/xml", strings.NewReader(`<AccountCodeValidationRequest><Username>a</Username><Username>b</Username><Lines>` + xmlLine("1", "A", "1") + `</Lines></AccountCodeValidationRequest>`), 400, "MALFORMED_REQUEST", "the body is not an AccountCodeValidationRequest, AccountCodeReleaseRequest or AccountCodeConfirmRequest document: AccountCodeValidationRequest has more than one Username element"},

		{"no Lines", "POST", "application/xml", strings.NewReader(`<AccountCodeValidationRequest><Username>x</Username></AccountCodeValidationRequest>`), 400, "INVALID_FIELD", "Lines: is required"},
		{"no Line", "POST", "application/xml", strings.NewReader(reqDoc("")), 400, "INVALID_FIELD", "Lines: at least one Line is required"},
		{"duplicate line numbers", "POST", "application/xml", strings.NewReader(reqDoc(xmlLine("1", "A", "1") + xmlLine("2", "A", "1") + xmlLine("1", "B", "1"))), 400, "INVALID_FIELD", "Lines/Line[3]/LineNumber: line number 1 appears more than once (first in Line[1])"},
		{"fractional line number", "POST", "application/xml", strings.NewReader(reqDoc(xmlLine("1.5", "A", "1"))), 400, "INVALID_FIELD", `Lines/Line[1]/LineNumber: must be an integer (got "1.5")`},
		{"word for a line number", "POST", "application/xml", strings.NewReader(reqDoc(xmlLine("one", "A", "1"))), 400, "INVALID_FIELD", `Lines/Line[1]/LineNumber: must be an integer (got "one")`},
		{"empty line number", "POST", "application/xml", strings.NewReader(reqDoc(xmlLine("", "A", "1"))), 400, "INVALID_FIELD", `Lines/Line[1]/LineNumber: must be an integer (got "")`},
		{"line number out of range", "POST", "application/xml", strings.NewReader(reqDoc(xmlLine("99999999999999999999", "A", "1"))), 400, "INVALID_FIELD", `Lines/Line[1]/LineNumber: must be an integer`},
		{"missing LineNumber", "POST", "application/xml", strings.NewReader(reqDoc(`<Line><Account>A</Account><Amount>1</Amount></Line>`)), 400, "INVALID_FIELD", "Lines/Line[1]/LineNumber: is required"},
		{"empty amount", "POST", "application/xml", strings.NewReader(reqDoc(xmlLine("1", "A", " "))), 400, "INVALID_FIELD", "Lines/Line[1]/Amount: must not be empty"},
		{"missing amount", "POST", "application/xml", strings.NewReader(reqDoc(`<Line><LineNumber>1</LineNumber><Account>A</Account></Line>`)), 400, "INVALID_FIELD", "Lines/Line[1]/Amount: is required"},
		{"non-decimal amount", "POST", "application/xml", strings.NewReader(reqDoc(xmlLine("1", "A", "12,50"))), 400, "INVALID_FIELD", `Lines/Line[1]/Amount: must be a decimal number such as 125.50 (got "12,50")`},
		{"exponent amount", "POST", "application/xml", strings.NewReader(reqDoc(xmlLine("1", "A", "1e3"))), 400, "INVALID_FIELD", `Lines/Line[1]/Amount: must be a decimal number such as 125.50 (got "1e3")`},
		{"NaN amount", "POST", "application/xml", strings.NewReader(reqDoc(xmlLine("1", "A", "NaN"))), 400, "INVALID_FIELD", `Lines/Line[1]/Amount: must be a decimal number`},
		{"blank account", "POST", "application/xml", strings.NewReader(reqDoc(xmlLine("1", "  ", "1"))), 400, "INVALID_FIELD", "Lines/Line[1]/Account: is required"},
		{"every bad field listed", "POST", "application/xml", strings.NewReader(reqDoc(xmlLine("1", "", "x") + xmlLine("1", "B", "1"))), 400, "INVALID_FIELD",
			`Lines/Line[1]/Account: is required; Lines/Line[1]/Amount: must be a decimal number such as 125.50 (got "x"); Lines/Line[2]/LineNumber: line number 1 appears more than once (first in Line[1])`},

		{"GET", "GET", "", nil, 405, "METHOD_NOT_ALLOWED", "method GET is not allowed on this path; allowed: POST"},
		{"PUT", "PUT", "application/xml", strings.NewReader(reqDoc(xmlLine("1", "A", "1"))), 405, "METHOD_NOT_ALLOWED", "method PUT is not allowed"},
		{"no content type", "POST", "", strings.NewReader(reqDoc(xmlLine("1", "A", "1"))), 415, "UNSUPPORTED_MEDIA_TYPE", "the Content-Type header is missing"},
		{"JSON content type", "POST", "application/json", strings.NewReader(`{}`), 415, "UNSUPPORTED_MEDIA_TYPE", "the body must be XML"},
		{"form content type", "POST", "application/x-www-form-urlencoded", strings.NewReader(`a=b`), 415, "UNSUPPORTED_MEDIA_TYPE", "the body must be XML"},
		{"another charset", "POST", "application/xml; charset=iso-8859-1", strings.NewReader(reqDoc(xmlLine("1", "A", "1"))), 415, "UNSUPPORTED_MEDIA_TYPE", `the charset "iso-8859-1" is not supported`},
		{"too large with a length", "POST", "application/xml", strings.NewReader(big), 413, "PAYLOAD_TOO_LARGE", "the body is larger than 2048 bytes"},
		{"too large, chunked", "POST", "application/xml", io.MultiReader(strings.NewReader(big)), 413, "PAYLOAD_TOO_LARGE", "the body is larger than 2048 bytes"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := send(t, c.method, url, c.contentType, c.body)
			if a.status != c.status {
				t.Fatalf("status %d; want %d\n%s", a.status, c.status, a.body)
			}
			if ct := a.header.Get("Content-Type"); ct != "application/xml; charset=utf-8" {
				t.Errorf("Content-Type %q", ct)
			}
			var doc errorDoc
			if err := xml.Unmarshal([]byte(a.body), &doc); err != nil {
				t.Fatalf("error body is not the XML error document: %v\n%s", err, a.body)
			}
			if doc.Code != c.code || !strings.HasPrefix(doc.Message, c.message) {
				t.Errorf("error %s %q\nwant  %s %q...", doc.Code, doc.Message, c.code, c.message)
			}
			if c.status == 405 && a.header.Get("Allow") != "POST" {
				t.Errorf("Allow %q; want POST", a.header.Get("Allow"))
			}
		})
	}
}

func TestAccountCodeHandlerValidatorFailure(t *testing.T) {
	cases := []struct {
		name string
		v    budget.Validator
		log  string
	}{
		{"an error", budget.ValidatorFunc(func(context.Context, budget.Request) ([]budget.Result, error) {
			return nil, errors.New("dial tcp 10.0.0.5:5432: password authentication failed for user erp")
		}), "password authentication failed"},
		{"a missing line", budget.ValidatorFunc(func(context.Context, budget.Request) ([]budget.Result, error) {
			return []budget.Result{{LineNumber: 1, Status: budget.Valid}}, nil
		}), "no result for line 2"},
		{"an unknown status", budget.ValidatorFunc(func(_ context.Context, req budget.Request) ([]budget.Result, error) {
			return []budget.Result{{LineNumber: 1, Status: "Valid"}, {LineNumber: 2, Status: "Maybe"}}, nil
		}), `unknown status \"Maybe\"`},
		{"a panic", budget.ValidatorFunc(func(context.Context, budget.Request) ([]budget.Result, error) {
			panic("secret internals")
		}), "secret internals"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var logs logBuffer
			srv := newConnector(t, c.v, accountcode.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			a := send(t, http.MethodPost, srv.URL+accountcode.Path, "application/xml",
				strings.NewReader(reqDoc(xmlLine("1", "A", "1")+xmlLine("2", "B", "2"))))
			if a.status != http.StatusBadGateway && a.status != http.StatusInternalServerError {
				t.Fatalf("status %d; want 502 or 500\n%s", a.status, a.body)
			}
			for _, secret := range []string{"password", "10.0.0.5", "Maybe", "secret", "line 2"} {
				if strings.Contains(a.body, secret) {
					t.Errorf("the body shows internals (%q):\n%s", secret, a.body)
				}
			}
			if !strings.Contains(logs.String(), c.log) {
				t.Errorf("the log does not have the cause %q:\n%s", c.log, logs.String())
			}
		})
	}
}

func TestAccountCodeRoundTrip(t *testing.T) {
	// One codec serves client and handler: what the platform sends is
	// exactly what the connector's validator receives, and its results come
	// back unchanged.
	var mu sync.Mutex
	var received budget.Request
	results := []budget.Result{
		{LineNumber: 10, Status: budget.Valid},
		{LineNumber: 2, Status: budget.Warning, Message: "Près du plafond <80%> & \"bientôt\"\ttab\r\nCRLF"},
		{LineNumber: -1, Status: budget.Invalid, Message: "  leading and trailing spaces are trimmed  "},
	}
	v := budget.ValidatorFunc(func(_ context.Context, req budget.Request) ([]budget.Result, error) {
		mu.Lock()
		received = req
		mu.Unlock()
		return append([]budget.Result(nil), results...), nil
	})
	srv := newConnector(t, v, accountcode.Options{})
	client, err := accountcodeapi.New(srv.URL+accountcode.Path, accountcodeapi.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sent := budget.Request{
		RequisitionID: "REQ-1001", Username: "o'brien & <sons>", OrganisationUnit: "OU-SCI", FinanceYear: "2026/27",
		Currency: "KWD", // three decimals: -0.005 is a whole number of fils
		Lines: []budget.Line{
			acLine(t, 10, "6100-200", "125.50"),
			acLine(t, 2, "R&D <lab> \"x\" 'y' é 日本", "-0.005"),
			acLine(t, -1, "7200-100", "123456789012345678901234567890.25"),
		},
	}
	got, err := client.Validate(context.Background(), sent)
	if err != nil {
		t.Fatalf("Validate: %v", err)
	}
	last := func() budget.Request {
		mu.Lock()
		defer mu.Unlock()
		return received
	}
	if diff := cmp.Diff(sent, last(), exactDecimal); diff != "" {
		t.Errorf("request received by the connector (-sent +received):\n%s", diff)
	}
	want := append([]budget.Result(nil), results...)
	want[2].Message = "leading and trailing spaces are trimmed"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}

	t.Run("optional fields left out", func(t *testing.T) {
		sent := budget.Request{Lines: []budget.Line{acLine(t, 10, "A", "1"), acLine(t, 2, "B", "2"), acLine(t, -1, "C", "3")}}
		if _, err := client.Validate(context.Background(), sent); err != nil {
			t.Fatal(err)
		}
		// The validator sees the currency in effect: the connector's
		// default.
		sent.Currency = budget.DefaultCurrency
		if diff := cmp.Diff(sent, last(), exactDecimal); diff != "" {
			t.Errorf("(-sent +received):\n%s", diff)
		}
	})
}
