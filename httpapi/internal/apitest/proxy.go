package apitest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/mail"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/google/uuid"
)

// A validating proxy for the tests, as Prism runs one in front of a
// server: every request and response that passes through a test server is
// checked against the served OpenAPI document of its route, so that every
// HTTP test also tests the documents. A mismatch fails the test with the
// document, the exchange and what did not match:
//
//   - a path no document has must answer 404, a method its path lacks 405
//     (or 501 on SCIM, RFC 7644's status for an unsupported operation);
//   - the status must be one the operation lists;
//   - a response's content type, headers and body must match what the
//     document gives for that status;
//   - a request the document calls invalid (a parameter, a body, missing
//     credentials) must not succeed: a server that answers it with 2xx
//     takes what its document refuses.
//
// A request the document calls valid may still fail (a username taken, a
// stale If-Match): the documents cannot say everything, and a 4xx for a
// valid-looking request is the server's to give.

// proxyBodyLimit bounds the copy of a request body kept for validation:
// an import streams far more, and holding it all would change the memory
// the tests measure. A longer body is not validated.
const proxyBodyLimit = 1 << 20

// Doc is one served document, ready to route requests.
type Doc struct {
	name   string
	spec   *openapi3.T
	prefix string // the path of the document's server URL, "" for "/"
	routes []docRoute
}

type docRoute struct {
	path  string   // the template, e.g. /suppliers/{id}
	segs  []string // its segments
	fixed int      // how many are not parameters
	item  *openapi3.PathItem
}

var (
	apiDocsMu sync.Mutex
	apiDocs   = map[string]*Doc{}
)

// DocFor loads and indexes the served document doc once.
func DocFor(tb testing.TB, name string, doc []byte) *Doc {
	tb.Helper()
	spec := LoadDoc(tb, name, doc)
	apiDocsMu.Lock()
	defer apiDocsMu.Unlock()
	if d, ok := apiDocs[string(doc)]; ok {
		return d
	}
	d := &Doc{name: name, spec: spec}
	if len(spec.Servers) == 1 {
		u, err := url.Parse(spec.Servers[0].URL)
		if err != nil {
			tb.Fatalf("%s: server URL: %v", name, err)
		}
		d.prefix = strings.TrimSuffix(u.Path, "/")
	}
	for path, item := range spec.Paths.Map() {
		r := docRoute{path: path, segs: strings.Split(path, "/"), item: item}
		for _, s := range r.segs {
			if !strings.HasPrefix(s, "{") {
				r.fixed++
			}
		}
		d.routes = append(d.routes, r)
	}
	apiDocs[string(doc)] = d
	return d
}

// Document returns the loader of the served document doc, named name
// (its file name, e.g. "suppliers.json"), for ValidatedBy and Under.
func Document(name string, doc []byte) func(testing.TB) *Doc {
	return func(tb testing.TB) *Doc { return DocFor(tb, name, doc) }
}

// Under is d as an API's Handler serves it behind a router that strips
// mount: the mount takes the place of the document's server URL, as in
// the document the Handler then serves.
func Under(mount string, d func(testing.TB) *Doc) func(testing.TB) *Doc {
	return func(tb testing.TB) *Doc {
		c := *d(tb)
		c.prefix = strings.TrimSuffix(mount, "/")
		return &c
	}
}

// route finds the operation of a request path: the document, its route
// and the path parameters. Of several matching templates the one with
// the most fixed segments wins, as OpenAPI says.
func route(docs []*Doc, escapedPath string) (*Doc, *docRoute, map[string]string) {
	var (
		bestDoc   *Doc
		best      *docRoute
		bestParam map[string]string
	)
	for _, d := range docs {
		rest, ok := strings.CutPrefix(escapedPath, d.prefix)
		if !ok || (rest != "" && rest[0] != '/') {
			continue
		}
		segs := strings.Split(rest, "/")
		for i := range d.routes {
			r := &d.routes[i]
			if len(r.segs) != len(segs) || (best != nil && r.fixed <= best.fixed) {
				continue
			}
			params := map[string]string{}
			match := true
			for j, s := range r.segs {
				if name, ok := strings.CutPrefix(s, "{"); ok {
					v, err := url.PathUnescape(segs[j])
					if err != nil || v == "" {
						match = false
						break
					}
					params[strings.TrimSuffix(name, "}")] = v
				} else if s != segs[j] {
					match = false
					break
				}
			}
			if match {
				bestDoc, best, bestParam = d, r, params
			}
		}
	}
	return bestDoc, best, bestParam
}

// ValidatedBy wraps h in the validating proxy for the documents docs;
// mismatches fail tb.
func ValidatedBy(tb testing.TB, h http.Handler, docs ...func(testing.TB) *Doc) http.Handler {
	tb.Helper()
	var loaded []*Doc
	for _, d := range docs {
		loaded = append(loaded, d(tb))
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body *teeBody
		if r.Body != nil && r.Body != http.NoBody {
			body = &teeBody{rc: r.Body}
			r.Body = body
		}
		rec := &recordingWriter{ResponseWriter: w, status: http.StatusOK}
		h.ServeHTTP(rec, r)
		if msg := checkExchange(loaded, r, body, rec); msg != "" {
			tb.Errorf("OpenAPI proxy: %s %s answered %d: %s", r.Method, r.URL.RequestURI(), rec.status, msg)
		}
	})
}

// checkExchange validates one exchange; it returns "" when it matches the
// documents, otherwise what did not.
func checkExchange(docs []*Doc, r *http.Request, body *teeBody, rec *recordingWriter) string {
	doc, rt, params := route(docs, r.URL.EscapedPath())
	status := rec.status
	if rt == nil {
		if status != http.StatusNotFound {
			return "no document has this path (" + docNames(docs) + "), yet the answer is not 404"
		}
		return ""
	}
	where := doc.name + " " + rt.path
	method := r.Method
	if method == http.MethodHead {
		method = http.MethodGet
	}
	op := rt.item.GetOperation(method)
	if op == nil {
		switch {
		case status == http.StatusMethodNotAllowed && rec.Header().Get("Allow") != "":
		case status == http.StatusMethodNotAllowed:
			return where + ": 405 without an Allow header"
		case status == http.StatusNotImplemented && doc.name == "scim.json":
		default:
			return where + " has no " + r.Method + " operation, yet the answer is not 405"
		}
		return ""
	}
	where = doc.name + " " + strings.ToLower(method) + " " + rt.path

	route := &routers.Route{Spec: doc.spec, Path: rt.path, PathItem: rt.item, Method: method, Operation: op}
	if len(doc.spec.Servers) > 0 {
		route.Server = doc.spec.Servers[0]
	}
	in := &openapi3filter.RequestValidationInput{
		Request:    requestCopy(r, body, op),
		PathParams: params,
		Route:      route,
		Options: &openapi3filter.Options{
			MultiError:              true,
			AuthenticationFunc:      credentialsPresent,
			ExcludeRequestBody:      body != nil && !body.whole(),
			SchemaValidationOptions: formatOptions,
		},
	}
	var problems []string
	if err := openapi3filter.ValidateRequest(context.Background(), in); err != nil && status < 400 {
		problems = append(problems, "the document refuses the request, yet the server accepted it: "+oneLine(err))
	}

	resp := op.Responses.Status(status)
	if resp == nil {
		resp = op.Responses.Default()
	}
	if resp == nil {
		return strings.Join(append(problems, where+" does not list status "+fmt.Sprint(status)), "; ")
	}
	out := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: in,
		Status:                 status,
		Header:                 rec.Header(),
		Options:                &openapi3filter.Options{MultiError: true, IncludeResponseStatus: true, SchemaValidationOptions: formatOptions},
	}
	out.SetBodyBytes(rec.body.Bytes())
	switch {
	case r.Method == http.MethodHead, status == http.StatusNotModified, status == http.StatusNoContent:
		// kin-openapi checks none of these; what the document promises
		// still holds. (A handler may write a body for HEAD: net/http
		// drops it.)
		if r.Method != http.MethodHead {
			if rec.body.Len() != 0 {
				problems = append(problems, fmt.Sprintf("a %d answer with a body", status))
			}
			if resp.Value != nil && len(resp.Value.Content) != 0 {
				problems = append(problems, where+" gives a body for "+fmt.Sprint(status))
			}
		}
		if resp.Value != nil {
			for name, h := range resp.Value.Headers {
				if h.Value != nil && h.Value.Required && rec.Header().Get(name) == "" {
					problems = append(problems, "no "+name+" header, which "+where+" requires for "+fmt.Sprint(status))
				}
			}
		}
	default:
		if err := openapi3filter.ValidateResponse(context.Background(), out); err != nil {
			problems = append(problems, where+": "+oneLine(err))
		}
	}
	return strings.Join(problems, "; ")
}

// stringFormats asserts the formats the documents use, as JSON Schema
// 2020-12 and RFC 3339 define them (kin-openapi's own patterns want an
// upper-case T and Z, which RFC 3339 does not).
var stringFormats = map[string]openapi3.StringFormatValidator{
	"uuid": openapi3.NewCallbackValidator(func(s string) error {
		if len(s) != 36 || strings.Count(s, "-") != 4 {
			return errors.New("not a UUID in its hyphenated form")
		}
		_, err := uuid.Parse(s)
		return err
	}),
	"date-time": openapi3.NewCallbackValidator(func(s string) error {
		_, err := time.Parse(time.RFC3339Nano, strings.ToUpper(s))
		return err
	}),
	"date": openapi3.NewCallbackValidator(func(s string) error {
		_, err := time.Parse(time.DateOnly, s)
		return err
	}),
	"email": openapi3.NewCallbackValidator(func(s string) error {
		a, err := mail.ParseAddress(s)
		if err == nil && a.Address != s {
			err = errors.New("not a bare address")
		}
		return err
	}),
}

// formatOptions make schema validation assert the formats.
var formatOptions = []openapi3.SchemaValidationOption{
	openapi3.EnableFormatValidation(), openapi3.WithStringFormatValidators(stringFormats),
}

// credentialsPresent is what a proxy can check of a security scheme:
// that the request carries the credential in the place the scheme names.
func credentialsPresent(_ context.Context, in *openapi3filter.AuthenticationInput) error {
	s := in.SecurityScheme
	h := in.RequestValidationInput.Request.Header
	switch {
	case s.Type == "http" && strings.EqualFold(s.Scheme, "bearer"):
		scheme, token, _ := strings.Cut(h.Get("Authorization"), " ")
		if !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(token) == "" {
			return errors.New("no bearer token in Authorization")
		}
	case s.Type == "apiKey" && s.In == "header":
		if h.Get(s.Name) == "" {
			return errors.New("no " + s.Name + " header")
		}
	default:
		return errors.New("the proxy cannot check security scheme " + s.Type)
	}
	return nil
}

// requestCopy is r with the body the handler read, for validation after
// the handler is done with r.
func requestCopy(r *http.Request, body *teeBody, op *openapi3.Operation) *http.Request {
	c := r.Clone(context.Background())
	// A body sent without a Content-Type is read as the one media type the
	// operation takes, as the import does with a data file.
	if rb := op.RequestBody; body != nil && c.Header.Get("Content-Type") == "" && rb != nil && rb.Value != nil && len(rb.Value.Content) == 1 {
		for mt := range rb.Value.Content {
			c.Header.Set("Content-Type", mt)
		}
	}
	c.Body = http.NoBody
	if body != nil {
		c.Body = io.NopCloser(bytes.NewReader(body.buf.Bytes()))
	}
	return c
}

func docNames(docs []*Doc) string {
	var names []string
	for _, d := range docs {
		names = append(names, d.name)
	}
	return strings.Join(names, ", ")
}

// oneLine shortens a validation error to its first lines: the schema
// errors of kin-openapi repeat the whole schema.
func oneLine(err error) string {
	var lines []string
	for _, l := range strings.Split(err.Error(), "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "Schema:") || strings.HasPrefix(l, "Value:") {
			continue
		}
		if strings.HasPrefix(l, "{") || strings.HasPrefix(l, "\"") || strings.HasPrefix(l, "}") || strings.HasPrefix(l, "]") {
			continue // a line of a printed schema or value
		}
		lines = append(lines, l)
		if len(lines) == 6 {
			break
		}
	}
	return strings.Join(lines, " | ")
}

// teeBody keeps a copy of what the handler reads of a request body, up to
// proxyBodyLimit, and whether it read it to the end.
type teeBody struct {
	rc   io.ReadCloser
	mu   sync.Mutex
	buf  bytes.Buffer
	eof  bool
	over bool
}

func (b *teeBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.buf.Len()+n > proxyBodyLimit {
		b.over = true
	} else if !b.over {
		b.buf.Write(p[:n])
	}
	if err == io.EOF {
		b.eof = true
	}
	return n, err
}

func (b *teeBody) Close() error { return b.rc.Close() }

// whole reports whether the copy holds the whole body.
func (b *teeBody) whole() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.eof && !b.over
}

// recordingWriter passes a response through and keeps its status and a
// copy of its body. Unwrap lets http.ResponseController reach the
// connection's deadlines and flushing through it.
type recordingWriter struct {
	http.ResponseWriter
	status      int
	wroteHeader bool
	body        bytes.Buffer
}

func (w *recordingWriter) WriteHeader(code int) {
	if !w.wroteHeader && code >= 200 {
		w.status, w.wroteHeader = code, true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *recordingWriter) Write(p []byte) (int, error) {
	w.wroteHeader = true
	w.body.Write(p)
	return w.ResponseWriter.Write(p)
}

func (w *recordingWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
