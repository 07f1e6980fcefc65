// Package acxml is the XML codec of Interface C, account code validation
// (docs/account-codes.md): the request the platform sends, the reply the
// finance system or connector answers, and the connector's error body.
// One codec serves both sides: package accountcodeapi (the platform's
// client) writes requests and reads replies, httpapi's AccountCodeHandler
// (the connector) reads requests and writes replies and errors.
//
// Reading is encoding/xml's Decoder decoding into structs, strict where it
// matters and tolerant where it cannot hurt:
//   - the root element's name is checked; namespaces are ignored (local
//     names are compared); a DOCTYPE or any other directive is refused, so
//     no entity can be declared;
//   - every known element may appear at most once per parent (two Amount
//     elements in one Line is an error, not "the last one wins"), and
//     LineNumber, Account or Splits, Amount (request) and LineNumber,
//     Status (reply) must appear; Message may be omitted, meaning empty;
//   - a request read is checked by package budget's rules (splits,
//     currency, minor units, the requisition id), its fields named by
//     element path (ValidateRequest);
//   - one reader (DecodeMessage) takes a check, a release or a confirm,
//     told apart by the root element, as the connector's one endpoint
//     does;
//   - unknown elements are skipped, for forward compatibility, but no
//     element may nest deeper than MaxDepth (docs/limits.md);
//   - text outside the leaf elements must be white space, and a leaf holds
//     text only; surrounding white space of a leaf's text is trimmed
//     (pretty-printed XML reads the same as compact XML);
//   - nothing but comments, processing instructions and white space may
//     follow the root;
//   - at most budget.MaxLines Line elements are read: reading stops at the
//     one past the limit.
//
// The size of a message is bounded by the caller's reader (the
// connector's body limit, the client's reply limit); errors of that
// reader come back as they are, so that the caller can tell a body over
// its limit from a malformed one.
//
// Writing is encoding/xml's Encoder. Both ways are the library's, with two
// exceptions that issue 21's per-check CPU target needs (httpapi's
// BenchmarkAccountCodeCheckHolds shows the library missing it): a check
// in the plain subset of XML clients write is read by a hand-written
// reader that gives up, to the Decoder, on anything else (fast.go), and a
// reply is written by hand (AppendResponse). In both the library's
// reading and writing stay the definition, and differential tests and fuzz
// targets (fast_test.go) hold the hand-written code to them.
// BenchmarkDecodeRequest and BenchmarkEncode (acxml_test.go) give the
// figures; bench/README.md keeps them.
package acxml

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"

	"github.com/procurekit/procure"
	"github.com/procurekit/procure/budget"
)

// Root element names of the exchange.
const (
	RequestRoot  = "AccountCodeValidationRequest"
	ResponseRoot = "AccountCodeValidationResponse"
	ErrorRoot    = "AccountCodeValidationError"
)

// MaxDepth is the deepest element nesting read (docs/limits.md), the root
// element being at depth 1. Unknown elements are skipped, but a document
// nesting them deeper is malformed, so that a message cannot make the
// reader keep a stack of its choosing.
const MaxDepth = 64

// MaxFieldErrors bounds the field errors collected from one request, so
// that an error body stays short; the rest are counted
// (procure.ValidationError.Omitted, "; and N more").
const MaxFieldErrors = 20

// ErrMalformed marks a message that is not the expected XML document (as
// opposed to a well-formed one with a bad field).
var ErrMalformed = errors.New("malformed XML")

func malformed(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrMalformed, fmt.Sprintf(format, args...))
}

// readErr remembers the last error of the underlying reader, so that a
// failure to read (a body over its limit, a dropped connection) is told
// apart from a document that is not well-formed.
type readErr struct {
	r   io.Reader
	err error
}

func (e *readErr) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil && err != io.EOF {
		e.err = err
	}
	return n, err
}

// limiter is the token stream the struct decoder reads: the raw tokens of
// the document (encoding/xml's tokenizer checks the syntax: legal
// characters, entities, attribute quoting), with the nesting bounded to
// MaxDepth and directives refused. The Decoder reading it checks that end
// tags match and translates namespaces.
type limiter struct {
	d      *xml.Decoder
	depth  int
	rooted bool // the root element has started
}

func (l *limiter) Token() (xml.Token, error) {
	t, err := l.d.RawToken()
	switch t := t.(type) {
	case xml.StartElement:
		if l.depth++; l.depth > MaxDepth {
			return nil, l.malformedAt("elements nest deeper than %d levels", MaxDepth)
		}
		l.rooted = true
	case xml.EndElement:
		if l.depth == 0 {
			// The Decoder would say "unexpected end element"; say where.
			if !l.rooted {
				return nil, malformed("an end tag before the root element")
			}
			return nil, malformed("an unmatched end tag </%s> follows the root element", t.Name.Local)
		}
		l.depth--
	case xml.Directive:
		return nil, malformed("a DOCTYPE or other directive is not allowed")
	}
	return t, err
}

// malformedAt is malformed with the line the tokenizer has reached.
func (l *limiter) malformedAt(format string, args ...any) error {
	line, _ := l.d.InputPos()
	return fmt.Errorf("%w: line %d: %s", ErrMalformed, line, fmt.Sprintf(format, args...))
}

// decode reads the document of r, whose root element must be named root,
// into v. A read error of r is returned as it is; every other failure
// matches ErrMalformed, except the errors of v's own decoding (a
// *procure.ValidationError from a request's lines).
func decode(r io.Reader, root string, v any) error {
	return decodeAny(r, root, func(name string) (any, error) {
		if name != root {
			return nil, malformed("the root element is %s; want %s", Quote(name), root)
		}
		return v, nil
	})
}

// decodeAny is decode for a document whose root element may be one of
// several: pick returns what the root element named name decodes into, or
// the error refusing it; want names the expected roots in messages.
func decodeAny(r io.Reader, want string, pick func(name string) (any, error)) error {
	src := &readErr{r: r}
	raw := xml.NewDecoder(src) // Strict; with no CharsetReader, only UTF-8 (and ASCII) is read
	lim := &limiter{d: raw}
	root := want
	err := decodeRoot(xml.NewTokenDecoder(lim), want, func(name string) (any, error) {
		root = name
		return pick(name)
	})
	switch {
	case err == nil:
		return nil
	case src.err != nil:
		return src.err
	}
	var syn *xml.SyntaxError
	if errors.As(err, &syn) {
		// The Decoder over lim counts no lines: the tokenizer's line is
		// the one reached.
		return lim.malformedAt("%s", syn.Msg)
	}
	var dup duplicate
	var ve *procure.ValidationError
	switch {
	case errors.As(err, &dup):
		return malformed("%s has more than one %s element", root, string(dup))
	case errors.Is(err, ErrMalformed), errors.As(err, &ve):
		return err
	}
	return malformed("%v", err) // an unsupported encoding
}

// decodeRoot reads up to the root element, has pick choose what it decodes
// into by its local name, decodes it and checks what follows it.
func decodeRoot(d *xml.Decoder, want string, pick func(name string) (any, error)) error {
	var v any
	for {
		t, err := d.Token()
		if err == io.EOF {
			return malformed("the document is empty; want a %s element", want)
		}
		if err != nil {
			return err
		}
		if start, ok := t.(xml.StartElement); ok {
			if v, err = pick(start.Name.Local); err != nil {
				return err
			}
			if err := d.DecodeElement(v, &start); err != nil {
				return err
			}
			if o, ok := v.(interface{ textOutside() bool }); ok && o.textOutside() {
				return malformed("%s holds text outside its elements", start.Name.Local)
			}
			break
		}
		if text, ok := t.(xml.CharData); ok && len(bytes.TrimSpace(text)) > 0 {
			return malformed("text before the root element; want a %s element", want)
		}
	}
	for {
		t, err := d.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		switch t := t.(type) {
		case xml.StartElement:
			return malformed("a second element %s follows the root element", Quote(t.Name.Local))
		case xml.CharData:
			if len(bytes.TrimSpace(t)) > 0 {
				return malformed("text follows the root element")
			}
		}
	}
}

// duplicate is the error of a known element met twice in one parent: the
// element's name. The parent, which knows its own name or path, reports
// it.
type duplicate string

func (e duplicate) Error() string { return "more than one " + string(e) + " element" }

// nestedDuplicate is a duplicate met below a Line: the path from the Line
// to the parent, and the element's name. eachLine reports it with the
// Line's position.
type nestedDuplicate struct{ path, name string }

func (e nestedDuplicate) Error() string { return e.path + " has more than one " + e.name + " element" }

// text is the text of a leaf element, trimmed. A leaf holds text only; met
// twice, it is a duplicate. Its buffer is reused by reset.
type text struct {
	b   []byte
	set bool
}

func (t *text) reset() { t.b, t.set = t.b[:0], false }

func (t *text) UnmarshalXML(d *xml.Decoder, start xml.StartElement) error {
	if t.set {
		return duplicate(start.Name.Local)
	}
	t.set = true
	for {
		tok, err := d.Token()
		if err != nil {
			return err
		}
		switch tok := tok.(type) {
		case xml.CharData:
			t.b = append(t.b, tok...)
		case xml.StartElement:
			return malformed("%s must hold text, not the element %s", start.Name.Local, Quote(tok.Name.Local))
		case xml.EndElement:
			t.b = bytes.TrimSpace(t.b)
			return nil
		}
	}
}

func (t *text) String() string { return string(t.b) }

// outside is the character data of a container element between its
// children; it must be white space.
type outside bool

func (o *outside) UnmarshalText(b []byte) error {
	*o = len(bytes.TrimSpace(b)) > 0
	return nil
}

// lineDoc is the struct one Line element decodes into.
type lineDoc interface {
	reset()
	textOutside() bool
}

// eachLine reads the children of the Lines element start: each Line is
// decoded into line (reset first) and handed to use with its position,
// counted from 1 as in XPath; other elements are skipped. The Line past
// budget.MaxLines ends the reading with tooMany's error.
func eachLine(d *xml.Decoder, start xml.StartElement, line lineDoc, tooMany func() error, use func(pos int) error) error {
	pos := 0
	for {
		tok, err := d.Token()
		if err != nil {
			return err
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			if tok.Name.Local != "Line" {
				if err := d.Skip(); err != nil {
					return err
				}
				continue
			}
			if pos++; pos > budget.MaxLines {
				return tooMany()
			}
			line.reset()
			if err := d.DecodeElement(line, &tok); err != nil {
				var dup duplicate
				var nested nestedDuplicate
				switch {
				case errors.As(err, &dup):
					return malformed("%s has more than one %s element", lineAt(pos), string(dup))
				case errors.As(err, &nested):
					return malformed("%s/%s has more than one %s element", lineAt(pos), nested.path, nested.name)
				}
				return err
			}
			if line.textOutside() {
				return malformed("%s holds text outside its elements", tok.Name.Local)
			}
			if err := use(pos); err != nil {
				return err
			}
		case xml.CharData:
			if len(bytes.TrimSpace(tok)) > 0 {
				return malformed("%s holds text outside its elements", start.Name.Local)
			}
		case xml.EndElement:
			return nil
		}
	}
}

// lineAt names the pos-th Line (counted from 1, as in XPath).
func lineAt(pos int) string { return "Lines/Line[" + strconv.Itoa(pos) + "]" }

// Quote quotes s for an error message, cut to 40 characters.
func Quote(s string) string {
	if utf8.RuneCountInString(s) > 40 {
		s = string([]rune(s)[:40]) + "..."
	}
	return strconv.Quote(s)
}
