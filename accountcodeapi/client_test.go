package accountcodeapi_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/procurekit/procure/accountcodeapi"
	"github.com/procurekit/procure/budget"
	"github.com/procurekit/procure/httpapi"
)

func acLine(tb testing.TB, n int, account, amount string) budget.Line {
	tb.Helper()
	d, err := budget.ParseAmount(amount)
	if err != nil {
		tb.Fatalf("ParseAmount(%q): %v", amount, err)
	}
	return budget.Line{Number: n, Account: account, Amount: d}
}

// echoValidator answers Valid for every line.
var echoValidator = budget.ValidatorFunc(func(_ context.Context, req budget.Request) ([]budget.Result, error) {
	out := make([]budget.Result, len(req.Lines))
	for i, l := range req.Lines {
		out[i] = budget.Result{LineNumber: l.Number, Status: budget.Valid}
	}
	return out, nil
})

// newConnector serves httpapi's AccountCodeHandler, the connector's side,
// on a loopback test server.
func newConnector(tb testing.TB, v budget.Validator, opts httpapi.AccountCodeHandlerOptions) *httptest.Server {
	tb.Helper()
	mux := http.NewServeMux()
	httpapi.NewAccountCodeHandler(v, opts).Mount(mux)
	srv := httptest.NewServer(mux)
	tb.Cleanup(srv.Close)
	return srv
}

const connectorToken = "fixture-connector-token-0123456789" // a test fixture, not a real secret

// nested is n unknown elements nested in one another.
func nested(n int) string {
	return strings.Repeat("<X>", n) + strings.Repeat("</X>", n)
}

func TestClientRequest(t *testing.T) {
	// The exact outbound message of docs: account-codes.md.
	type seen struct {
		method, path, contentType, accept, auth, body string
	}
	got := make(chan seen, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- seen{r.Method, r.URL.Path, r.Header.Get("Content-Type"), r.Header.Get("Accept"), r.Header.Get("Authorization"), string(b)}
		w.Header().Set("Content-Type", "application/xml")
		io.WriteString(w, `<AccountCodeValidationResponse><Lines><Line><LineNumber>1</LineNumber><Status>Valid</Status></Line></Lines></AccountCodeValidationResponse>`)
	}))
	t.Cleanup(srv.Close)
	client, err := accountcodeapi.New(srv.URL+"/finance/acv", accountcodeapi.Options{
		Header: http.Header{"Authorization": {"Basic ZGVtbzpkZW1v"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	req := budget.Request{RequisitionID: "REQ-1001", Username: "jdoe", OrganisationUnit: "OU-SCI", FinanceYear: "2026",
		Lines: []budget.Line{acLine(t, 1, "6100-200", "125.50")}}
	res, err := client.Validate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]budget.Result{{LineNumber: 1, Status: budget.Valid}}, res); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}
	s := <-got
	want := seen{
		method: "POST", path: "/finance/acv", contentType: "application/xml; charset=utf-8", accept: "application/xml", auth: "Basic ZGVtbzpkZW1v",
		body: `<?xml version="1.0" encoding="UTF-8"?>` + "\n" +
			`<AccountCodeValidationRequest><RequisitionId>REQ-1001</RequisitionId><Username>jdoe</Username>` +
			`<OrganisationUnit>OU-SCI</OrganisationUnit><FinanceYear>2026</FinanceYear>` +
			`<Lines><Line><LineNumber>1</LineNumber><Account>6100-200</Account><Amount>125.50</Amount></Line></Lines>` +
			`</AccountCodeValidationRequest>` + "\n",
	}
	if diff := cmp.Diff(want, s, cmp.AllowUnexported(seen{})); diff != "" {
		t.Errorf("request (-want +got):\n%s", diff)
	}
}

// reply returns a handler answering with status, content type and body.
func reply(status int, contentType, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if contentType != "" {
			w.Header().Set("Content-Type", contentType)
		}
		w.WriteHeader(status)
		io.WriteString(w, body)
	}
}

func respDoc(lines ...string) string {
	return `<AccountCodeValidationResponse><Lines>` + strings.Join(lines, "") + `</Lines></AccountCodeValidationResponse>`
}

func respLine(n, status, msg string) string {
	return `<Line><LineNumber>` + n + `</LineNumber><Status>` + status + `</Status><Message>` + msg + `</Message></Line>`
}

// twoLines is the request of the client fault tests.
func twoLines(tb testing.TB) budget.Request {
	return budget.Request{Lines: []budget.Line{acLine(tb, 1, "6100-200", "10"), acLine(tb, 2, "6100-300", "20")}}
}

func TestClientReplies(t *testing.T) {
	long := strings.Repeat("ü", 300)
	cases := []struct {
		name    string
		handler http.HandlerFunc
		want    []budget.Result
	}{
		{"in request order", reply(200, "application/xml; charset=utf-8", respDoc(respLine("1", "Valid", ""), respLine("2", "Warning", "close"))),
			[]budget.Result{{LineNumber: 1, Status: budget.Valid}, {LineNumber: 2, Status: budget.Warning, Message: "close"}}},
		{"in another order, put in request order", reply(200, "text/xml", respDoc(respLine("2", "Invalid", "no"), respLine("1", "Valid", ""))),
			[]budget.Result{{LineNumber: 1, Status: budget.Valid}, {LineNumber: 2, Status: budget.Invalid, Message: "no"}}},
		{"Message omitted, no content type, pretty-printed with a namespace", reply(200, "", `<?xml version="1.0"?>
<r:AccountCodeValidationResponse xmlns:r="urn:finance">
  <r:Lines>
    <r:Line><r:LineNumber>1</r:LineNumber><r:Status>Valid</r:Status></r:Line>
    <r:Line><r:LineNumber>2</r:LineNumber><r:Status> Valid </r:Status><r:Message/></r:Line>
  </r:Lines>
</r:AccountCodeValidationResponse>`),
			[]budget.Result{{LineNumber: 1, Status: budget.Valid}, {LineNumber: 2, Status: budget.Valid}}},
		{"a long message is cut to 255 characters", reply(200, "application/xml", respDoc(respLine("1", "Valid", ""), respLine("2", "Warning", long))),
			[]budget.Result{{LineNumber: 1, Status: budget.Valid}, {LineNumber: 2, Status: budget.Warning, Message: strings.Repeat("ü", 255)}}},
		{"201 is a 2xx", reply(201, "application/xml", respDoc(respLine("1", "Valid", ""), respLine("2", "Valid", ""))),
			[]budget.Result{{LineNumber: 1, Status: budget.Valid}, {LineNumber: 2, Status: budget.Valid}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(c.handler)
			t.Cleanup(srv.Close)
			client, err := accountcodeapi.New(srv.URL, accountcodeapi.Options{})
			if err != nil {
				t.Fatal(err)
			}
			got, err := client.Validate(context.Background(), twoLines(t))
			if err != nil {
				t.Fatalf("Validate: %v", err)
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// stall keeps a handler from answering until the client gives up (or, as a
// bound, ten seconds pass). It reads the request body first: only then does
// net/http notice a client that hangs up and cancel r's context.
func stall(r *http.Request) {
	io.Copy(io.Discard, r.Body)
	select {
	case <-r.Context().Done():
	case <-time.After(10 * time.Second):
	}
}

func TestClientFaults(t *testing.T) {
	// docs: account-codes.md "Flow" / docs: account-codes.md: a finance system that times out, errors or
	// replies malformed never lets a checkout proceed.
	big := respDoc(respLine("1", "Valid", strings.Repeat("x", 3000)), respLine("2", "Valid", ""))
	cases := []struct {
		name    string
		handler http.HandlerFunc
		opts    accountcodeapi.Options
		want    error
		wantMsg string
	}{
		{"5xx", reply(503, "text/plain", "down for maintenance"), accountcodeapi.Options{}, budget.ErrUnavailable, "the finance system answered 503 Service Unavailable"},
		{"500 from a connector", reply(502, "application/xml; charset=utf-8", `<AccountCodeValidationError><Code>UPSTREAM_FAILED</Code><Message>the budget check failed</Message></AccountCodeValidationError>`),
			accountcodeapi.Options{}, budget.ErrUnavailable, `answered 502 Bad Gateway: UPSTREAM_FAILED: "the budget check failed"`},
		{"400 from a connector", reply(400, "application/xml", `<AccountCodeValidationError><Code>INVALID_FIELD</Code><Message>Lines/Line[1]/Amount: bad</Message></AccountCodeValidationError>`),
			accountcodeapi.Options{}, budget.ErrUnavailable, `answered 400 Bad Request: INVALID_FIELD: "Lines/Line[1]/Amount: bad"`},
		{"a redirect", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/elsewhere", http.StatusFound) },
			accountcodeapi.Options{}, budget.ErrUnavailable, "answered 302 Found"},
		{"non-XML reply", reply(200, "text/html", "<html><body>Login</body></html>"), accountcodeapi.Options{}, budget.ErrMalformedReply, `the reply's content type is "text/html", not XML`},
		{"non-XML body with an XML type", reply(200, "application/xml", "all lines valid"), accountcodeapi.Options{}, budget.ErrMalformedReply, "text before the root element"},
		{"JSON body", reply(200, "application/json", `[{"line_number":1,"status":"Valid"}]`), accountcodeapi.Options{}, budget.ErrMalformedReply, `the reply's content type is "application/json", not XML`},
		{"an empty 200", reply(200, "application/xml", ""), accountcodeapi.Options{}, budget.ErrMalformedReply, "the document is empty"},
		{"a truncated reply", reply(200, "application/xml", respDoc(respLine("1", "Valid", ""))[:60]), accountcodeapi.Options{}, budget.ErrMalformedReply, "unexpected EOF"},
		{"wrong root element", reply(200, "application/xml", `<AccountCodeValidationRequest><Lines/></AccountCodeValidationRequest>`), accountcodeapi.Options{}, budget.ErrMalformedReply, `the root element is "AccountCodeValidationRequest"; want AccountCodeValidationResponse`},
		{"no Lines element", reply(200, "application/xml", `<AccountCodeValidationResponse/>`), accountcodeapi.Options{}, budget.ErrMalformedReply, "AccountCodeValidationResponse has no Lines element"},
		{"missing line", reply(200, "application/xml", respDoc(respLine("1", "Valid", ""))), accountcodeapi.Options{}, budget.ErrMalformedReply, "no result for line 2"},
		{"extra line", reply(200, "application/xml", respDoc(respLine("1", "Valid", ""), respLine("2", "Valid", ""), respLine("3", "Valid", ""))), accountcodeapi.Options{}, budget.ErrMalformedReply, "line 3 is not a line of the request"},
		{"duplicate line", reply(200, "application/xml", respDoc(respLine("1", "Valid", ""), respLine("1", "Valid", ""), respLine("2", "Valid", ""))), accountcodeapi.Options{}, budget.ErrMalformedReply, "line 1 is answered more than once"},
		{"unknown status", reply(200, "application/xml", respDoc(respLine("1", "Valid", ""), respLine("2", "Approved", ""))), accountcodeapi.Options{}, budget.ErrMalformedReply, `line 2: unknown status "Approved"`},
		{"status in lower case", reply(200, "application/xml", respDoc(respLine("1", "valid", ""), respLine("2", "Valid", ""))), accountcodeapi.Options{}, budget.ErrMalformedReply, `line 1: unknown status "valid"`},
		{"no Status element", reply(200, "application/xml", respDoc(respLine("1", "Valid", ""), `<Line><LineNumber>2</LineNumber></Line>`)), accountcodeapi.Options{}, budget.ErrMalformedReply, "Lines/Line[2] (line 2) has no Status"},
		{"no LineNumber element", reply(200, "application/xml", respDoc(`<Line><Status>Valid</Status></Line>`)), accountcodeapi.Options{}, budget.ErrMalformedReply, "Lines/Line[1] has no LineNumber"},
		{"a non-integer LineNumber", reply(200, "application/xml", respDoc(respLine("1.0", "Valid", ""))), accountcodeapi.Options{}, budget.ErrMalformedReply, `Lines/Line[1]/LineNumber must be an integer (got "1.0")`},
		{"two Status elements", reply(200, "application/xml", respDoc(`<Line><LineNumber>1</LineNumber><Status>Invalid</Status><Status>Valid</Status></Line>`)), accountcodeapi.Options{}, budget.ErrMalformedReply, "Lines/Line[1] has more than one Status element"},
		{"two Lines elements", reply(200, "application/xml", `<AccountCodeValidationResponse><Lines/><Lines/></AccountCodeValidationResponse>`), accountcodeapi.Options{}, budget.ErrMalformedReply, "more than one Lines element"},
		{"oversized reply with a length", reply(200, "application/xml", big), accountcodeapi.Options{MaxReplyBytes: 1024}, budget.ErrMalformedReply, "the reply is larger than 1024 bytes"},
		{"oversized reply, chunked", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/xml")
			io.WriteString(w, big[:500])
			w.(http.Flusher).Flush() // no Content-Length: chunked
			io.WriteString(w, big[500:])
		}, accountcodeapi.Options{MaxReplyBytes: 1024}, budget.ErrMalformedReply, "the reply is larger than 1024 bytes"},
		{"timeout before the answer", func(w http.ResponseWriter, r *http.Request) {
			stall(r)
		}, accountcodeapi.Options{Timeout: 50 * time.Millisecond}, budget.ErrTimeout, "context deadline exceeded"},
		{"timeout inside the reply", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/xml")
			io.WriteString(w, `<AccountCodeValidationResponse><Lines>`)
			w.(http.Flusher).Flush()
			stall(r)
		}, accountcodeapi.Options{Timeout: 50 * time.Millisecond}, budget.ErrTimeout, "reading the reply"},
		{"a dropped connection", func(w http.ResponseWriter, r *http.Request) {
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close()
			}
		}, accountcodeapi.Options{}, budget.ErrUnavailable, "EOF"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(c.handler)
			t.Cleanup(srv.Close)
			client, err := accountcodeapi.New(srv.URL+"/acv", c.opts)
			if err != nil {
				t.Fatal(err)
			}
			res, err := client.Validate(context.Background(), twoLines(t))
			if err == nil {
				t.Fatalf("Validate = %v, nil; want an error", res)
			}
			if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.wantMsg) {
				t.Fatalf("error %v\nwant one matching %v containing %q", err, c.want, c.wantMsg)
			}
			if !strings.Contains(err.Error(), srv.URL+"/acv") {
				t.Errorf("the error does not name the finance system: %v", err)
			}
			// None of them may let a checkout proceed.
			g, err := budget.NewGate(client, budget.GateConfig{Community: "c-test"})
			if err != nil {
				t.Fatal(err)
			}
			d, err := g.Checkout(context.Background(), twoLines(t), "")
			if err != nil || d.Outcome != budget.Unavailable || d.Message != budget.UnavailableMessage {
				t.Errorf("checkout: %v %q, %v; want unavailable", d.Outcome, d.Message, err)
			}
		})
	}

	t.Run("connection refused", func(t *testing.T) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close()
		client, err := accountcodeapi.New("http://"+addr+"/acv", accountcodeapi.Options{})
		if err != nil {
			t.Fatal(err)
		}
		_, err = client.Validate(context.Background(), twoLines(t))
		if !errors.Is(err, budget.ErrUnavailable) || errors.Is(err, budget.ErrTimeout) || !strings.Contains(err.Error(), "refused") {
			t.Fatalf("error %v; want ErrUnavailable (connection refused), not a timeout", err)
		}
		g, _ := budget.NewGate(client, budget.GateConfig{Community: "c-test"})
		if d, _ := g.Checkout(context.Background(), twoLines(t), ""); d.Outcome != budget.Unavailable {
			t.Errorf("checkout: %v; want unavailable", d.Outcome)
		}
	})

	t.Run("the caller's deadline", func(t *testing.T) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			stall(r)
		}))
		t.Cleanup(srv.Close)
		client, err := accountcodeapi.New(srv.URL, accountcodeapi.Options{Timeout: -1})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		if _, err := client.Validate(ctx, twoLines(t)); !errors.Is(err, budget.ErrTimeout) {
			t.Fatalf("error %v; want ErrTimeout", err)
		}
	})
}

func TestNew(t *testing.T) {
	for _, u := range []string{"", "finance.example.com/acv", "/acv", "ftp://finance.example.com/acv", "http://", "http://[::1"} {
		if _, err := accountcodeapi.New(u, accountcodeapi.Options{}); err == nil {
			t.Errorf("New(%q) accepted", u)
		}
	}
	// A password in the URL never shows in an error.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	client, err := accountcodeapi.New("http://erp:s3cr3t-pw@"+addr+"/acv", accountcodeapi.Options{
		Header: http.Header{"X-Api-Key": {"k3y-v4lue"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	_, err = client.Validate(context.Background(), twoLines(t))
	if err == nil || strings.Contains(err.Error(), "s3cr3t-pw") || strings.Contains(err.Error(), "k3y-v4lue") || !strings.Contains(err.Error(), "erp:xxxxx@") {
		t.Errorf("error %v; want the URL with its password redacted", err)
	}
	if _, err := accountcodeapi.New("http://erp:s3cr3t-pw@ /x", accountcodeapi.Options{}); err == nil || strings.Contains(err.Error(), "s3cr3t") {
		t.Errorf("a bad URL's error shows the password: %v", err)
	}
	// A bad request is refused before anything is sent.
	if _, err := client.Validate(context.Background(), budget.Request{}); err == nil || errors.Is(err, budget.ErrUnavailable) {
		t.Errorf("an empty request: %v; want a validation error", err)
	}
}
func TestClientReplyDepth(t *testing.T) {
	// The client reads the finance system's reply with the same bound.
	for _, c := range []struct {
		depth int
		ok    bool
	}{{64, true}, {65, false}} {
		body := `<AccountCodeValidationResponse>` + nested(c.depth-1) + `<Lines>` + respLine("1", "Valid", "") + respLine("2", "Valid", "") + `</Lines></AccountCodeValidationResponse>`
		srv := httptest.NewServer(reply(200, "application/xml", body))
		client, err := accountcodeapi.New(srv.URL, accountcodeapi.Options{})
		if err != nil {
			t.Fatal(err)
		}
		_, err = client.Validate(context.Background(), twoLines(t))
		srv.Close()
		if c.ok && err != nil {
			t.Errorf("depth %d: %v; want accepted", c.depth, err)
		}
		if !c.ok && (!errors.Is(err, budget.ErrMalformedReply) || !strings.Contains(err.Error(), "deeper than 64")) {
			t.Errorf("depth %d: %v; want ErrMalformedReply naming the depth", c.depth, err)
		}
	}
}

func TestClientMaxLines(t *testing.T) {
	// A request over the limit is refused before it is sent; a reply over
	// the limit is malformed.
	var calls int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls++
		reply(200, "application/xml", `<AccountCodeValidationResponse><Lines>`+strings.Repeat(respLine("1", "Valid", ""), budget.MaxLines+1)+`</Lines></AccountCodeValidationResponse>`)(w, r)
	}))
	t.Cleanup(srv.Close)
	client, err := accountcodeapi.New(srv.URL, accountcodeapi.Options{})
	if err != nil {
		t.Fatal(err)
	}
	req := budget.Request{Lines: make([]budget.Line, budget.MaxLines+1)}
	for i := range req.Lines {
		req.Lines[i] = acLine(t, i+1, "A", "1")
	}
	if _, err := client.Validate(context.Background(), req); err == nil || calls != 0 {
		t.Fatalf("a request of %d lines: %v after %d calls; want refused unsent", len(req.Lines), err, calls)
	}
	req.Lines = req.Lines[:budget.MaxLines]
	_, err = client.Validate(context.Background(), req)
	if !errors.Is(err, budget.ErrMalformedReply) || !strings.Contains(err.Error(), "more than 10000 Line elements") {
		t.Fatalf("a reply of %d lines: %v; want ErrMalformedReply naming the limit", budget.MaxLines+1, err)
	}
}

// A Client sends the connector's secret; without it the
// connector's 401 is an unavailable check, and no error holds the token.
func TestClientSendsToken(t *testing.T) {
	srv := newConnector(t, echoValidator, httpapi.AccountCodeHandlerOptions{Token: connectorToken})
	req := twoLines(t)

	client, err := accountcodeapi.New(srv.URL+httpapi.AccountCodePath, accountcodeapi.Options{Token: connectorToken})
	if err != nil {
		t.Fatal(err)
	}
	if res, err := client.Validate(context.Background(), req); err != nil || len(res) != 2 {
		t.Fatalf("Validate with the token = %v, %v", res, err)
	}

	wrong, err := accountcodeapi.New(srv.URL+httpapi.AccountCodePath, accountcodeapi.Options{Token: "fixture-not-the-token"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = wrong.Validate(context.Background(), req)
	if !errors.Is(err, budget.ErrUnavailable) || !strings.Contains(err.Error(), "401") || strings.Contains(err.Error(), "fixture-not-the-token") {
		t.Fatalf("Validate with a wrong token = %v; want ErrUnavailable naming the 401, without the token", err)
	}
}
