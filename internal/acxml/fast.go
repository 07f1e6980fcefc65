package acxml

import (
	"bytes"
	"io"
	"sync"

	"github.com/procurekit/procure"
	"github.com/procurekit/procure/budget"
)

// The fast path of reading a check. encoding/xml's Decoder spends most of
// a connector's CPU on a check (a token, a name and an interface value per
// element: httpapi's BenchmarkAccountCodeCheckHolds shows the library's
// reader alone over issue 21's per-check budget), so a request written in
// the plain subset of XML every client writes is read here by hand, into
// the same documents (requestDoc, requestLine, splitDoc) and through the
// same checks (requestLines.add, requestOf) as the Decoder fills.
//
// encoding/xml stays the definition: fastRequest reads only what it fully
// understands and gives up (ok false) on anything else, and the caller then
// reads the document with the Decoder, which gives the answer, error
// messages included. It gives up on: a byte order mark, an XML declaration
// other than the usual three spellings, comments, processing
// instructions, CDATA, DOCTYPE and other directives, attributes (so
// namespaces too), names outside ASCII letters, digits, '_', '.' and '-',
// white space inside tags, non-ASCII or control characters in text, a
// carriage return inside a field's text (the Decoder normalises line
// ends), references other than the five predefined entities, "]]>" in
// text, and every document the Decoder would refuse (bad nesting, a
// duplicate element, text outside the leaf elements, nesting deeper than
// MaxDepth, more than budget.MaxLines Line elements, a second root) or
// whose fields break a rule. FuzzFastRequest checks that wherever it
// answers, its answer is the Decoder's.

// bodyPool holds the buffers a message is read into before it is parsed.
var bodyPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// maxPooledBody bounds the buffers kept for reuse, so that one large body
// does not stay alive.
const maxPooledBody = 1 << 20

// decodeFast reads all of r and answers the message from the fast path
// when it can. Otherwise it returns a reader that gives the slow path the
// same bytes followed by r's read error, if any, and done, which returns
// the buffer to its pool once the slow path has finished.
func decodeFast(r io.Reader) (m Message, ok bool, rest io.Reader, done func()) {
	buf := bodyPool.Get().(*bytes.Buffer)
	buf.Reset()
	done = func() {
		if buf.Cap() <= maxPooledBody {
			bodyPool.Put(buf)
		}
	}
	_, err := buf.ReadFrom(r)
	if err == nil {
		if req, ok := fastRequest(buf.Bytes()); ok {
			done()
			return Message{Kind: Check, Request: req}, true, nil, func() {}
		}
		return Message{}, false, bytes.NewReader(buf.Bytes()), done
	}
	return Message{}, false, io.MultiReader(bytes.NewReader(buf.Bytes()), readFailure{err}), done
}

// readFailure is a reader that fails with err, after the bytes read before a
// read error.
type readFailure struct{ err error }

func (f readFailure) Read([]byte) (int, error) { return 0, f.err }

// fastRequest reads data as an AccountCodeValidationRequest checked by
// requestOf, when data is in the subset of XML it reads and is a good
// request; ok is false otherwise (see above).
func fastRequest(data []byte) (req budget.Request, ok bool) {
	s := scanner{b: data}
	s.decl()
	s.space()
	name, empty, ok := s.startTag()
	if !ok || empty || string(name) != RequestRoot {
		return budget.Request{}, false
	}
	doc := requestDoc{Lines: requestLines{v: &procure.ValidationError{Source: procure.SourceBody}}}
	if !s.request(&doc) {
		return budget.Request{}, false
	}
	s.space()
	if s.i != len(s.b) {
		return budget.Request{}, false
	}
	req, err := requestOf(&doc)
	if err != nil {
		return budget.Request{}, false
	}
	return req, true
}

// scanner reads the plain subset of XML of fastRequest; every method
// returning ok false means "not understood", never an answer.
type scanner struct {
	b     []byte
	i     int
	depth int // of the element whose content is being read
}

// The XML declarations read: encoding/xml accepts each.
var decls = []string{
	`<?xml version="1.0" encoding="UTF-8"?>`,
	`<?xml version="1.0" encoding="utf-8"?>`,
	`<?xml version="1.0"?>`,
}

// decl skips an XML declaration at the start; anything else starting with
// "<?" is left for startTag to refuse.
func (s *scanner) decl() {
	for _, d := range decls {
		if bytes.HasPrefix(s.b, []byte(d)) {
			s.i = len(d)
			return
		}
	}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// space skips white space.
func (s *scanner) space() {
	for s.i < len(s.b) && isSpace(s.b[s.i]) {
		s.i++
	}
}

func isNameStart(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '_' }

func isNameByte(c byte) bool {
	return isNameStart(c) || '0' <= c && c <= '9' || c == '.' || c == '-'
}

// startTag reads "<Name>" or "<Name/>" at s.i, entering the element.
func (s *scanner) startTag() (name []byte, empty, ok bool) {
	b := s.b
	if s.i+1 >= len(b) || b[s.i] != '<' || !isNameStart(b[s.i+1]) {
		return nil, false, false
	}
	j := s.i + 2
	for j < len(b) && isNameByte(b[j]) {
		j++
	}
	name = b[s.i+1 : j]
	switch {
	case j < len(b) && b[j] == '>':
		s.i = j + 1
	case j+1 < len(b) && b[j] == '/' && b[j+1] == '>':
		s.i, empty = j+2, true
	default:
		return nil, false, false
	}
	if s.depth++; s.depth > MaxDepth {
		return nil, false, false
	}
	if empty {
		s.depth--
	}
	return name, empty, true
}

// endTag reads "</name>" at s.i, leaving the element.
func (s *scanner) endTag(name []byte) bool {
	b := s.b[s.i:]
	n := len(name)
	if len(b) < n+3 || b[0] != '<' || b[1] != '/' || !bytes.Equal(b[2:2+n], name) || b[2+n] != '>' {
		return false
	}
	s.i += n + 3
	s.depth--
	return true
}

// The predefined entities, the only references read.
var entities = [...]struct {
	ref string
	c   byte
}{{"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}, {"&quot;", '"'}, {"&apos;", '\''}}

// text appends the text at s.i, up to the next '<', to dst, its entities
// replaced. A carriage return is refused when cr is false (in a field's
// text, where the Decoder would normalise it).
func (s *scanner) text(dst []byte, cr bool) ([]byte, bool) {
	b := s.b
	start := s.i
	for s.i < len(b) {
		c := b[s.i]
		switch {
		case c == '<':
			return append(dst, b[start:s.i]...), true
		case c == '&':
			dst = append(dst, b[start:s.i]...)
			found := false
			for _, e := range entities {
				if bytes.HasPrefix(b[s.i:], []byte(e.ref)) {
					dst = append(dst, e.c)
					s.i += len(e.ref)
					found = true
					break
				}
			}
			if !found {
				return dst, false
			}
			start = s.i
			continue
		case c == ']':
			if bytes.HasPrefix(b[s.i:], []byte("]]>")) {
				return dst, false
			}
		case c == '\r':
			if !cr {
				return dst, false
			}
		case c == '\t' || c == '\n' || (0x20 <= c && c < 0x7f):
		default:
			return dst, false
		}
		s.i++
	}
	return dst, false // the document ends inside an element
}

// leaf reads the rest of a field's element, whose start tag has been read,
// into t.
func (s *scanner) leaf(t *text, name []byte, empty bool) bool {
	if t.set {
		return false // a duplicate
	}
	t.set = true
	if empty {
		return true
	}
	var ok bool
	if t.b, ok = s.text(t.b, false); !ok {
		return false
	}
	t.b = bytes.TrimSpace(t.b)
	return s.endTag(name)
}

// skip reads the rest of an unknown element, whose start tag has been
// read.
func (s *scanner) skip(name []byte, empty bool) bool {
	if empty {
		return true
	}
	for {
		if _, ok := s.text(nil, true); !ok {
			return false
		}
		if s.i+1 < len(s.b) && s.b[s.i+1] == '/' {
			return s.endTag(name)
		}
		child, empty, ok := s.startTag()
		if !ok || !s.skip(child, empty) {
			return false
		}
	}
}

// children reads the content of a container element named name, whose
// start tag has been read: white space between child elements, each
// child handed to child, and the end tag.
func (s *scanner) children(name []byte, child func(name []byte, empty bool) bool) bool {
	for {
		s.space()
		if s.i+1 < len(s.b) && s.b[s.i] == '<' && s.b[s.i+1] == '/' {
			return s.endTag(name)
		}
		c, empty, ok := s.startTag()
		if !ok || !child(c, empty) {
			return false
		}
	}
}

// request reads the content of the root element into doc.
func (s *scanner) request(doc *requestDoc) bool {
	return s.children([]byte(RequestRoot), func(name []byte, empty bool) bool {
		switch string(name) {
		case "RequisitionId":
			return s.leaf(&doc.RequisitionID, name, empty)
		case "Username":
			return s.leaf(&doc.Username, name, empty)
		case "OrganisationUnit":
			return s.leaf(&doc.OrganisationUnit, name, empty)
		case "FinanceYear":
			return s.leaf(&doc.FinanceYear, name, empty)
		case "Currency":
			return s.leaf(&doc.Currency, name, empty)
		case "Lines":
			return s.lines(&doc.Lines, name, empty)
		}
		return s.skip(name, empty)
	})
}

// lines reads a Lines element into ls, each Line checked by ls.add.
func (s *scanner) lines(ls *requestLines, name []byte, empty bool) bool {
	if ls.set {
		return false
	}
	ls.set = true
	if empty {
		return true
	}
	var line requestLine // reused for every Line
	pos := 0
	return s.children(name, func(name []byte, empty bool) bool {
		if string(name) != "Line" {
			return s.skip(name, empty)
		}
		if pos++; pos > budget.MaxLines {
			return false
		}
		line.reset()
		if !empty && !s.line(&line, name) {
			return false
		}
		ls.add(pos, &line)
		return true
	})
}

// line reads the content of a Line element into l.
func (s *scanner) line(l *requestLine, name []byte) bool {
	return s.children(name, func(name []byte, empty bool) bool {
		switch string(name) {
		case "LineNumber":
			return s.leaf(&l.LineNumber, name, empty)
		case "Account":
			return s.leaf(&l.Account, name, empty)
		case "Amount":
			return s.leaf(&l.Amount, name, empty)
		case "Splits":
			return s.splits(&l.Splits, name, empty)
		}
		return s.skip(name, empty)
	})
}

// splits reads a Splits element into sp, as splits.UnmarshalXML does.
func (s *scanner) splits(sp *splits, name []byte, empty bool) bool {
	if sp.set {
		return false
	}
	sp.set = true
	if empty {
		return true
	}
	return s.children(name, func(name []byte, empty bool) bool {
		if string(name) != "Split" {
			return s.skip(name, empty)
		}
		if sp.n == len(sp.list) {
			sp.list = append(sp.list, splitDoc{})
		}
		doc := &sp.list[sp.n]
		doc.Account.reset()
		doc.Percentage.reset()
		doc.Amount.reset()
		doc.Outside = false
		sp.n++
		if empty {
			return true
		}
		return s.children(name, func(name []byte, empty bool) bool {
			switch string(name) {
			case "Account":
				return s.leaf(&doc.Account, name, empty)
			case "Percentage":
				return s.leaf(&doc.Percentage, name, empty)
			case "Amount":
				return s.leaf(&doc.Amount, name, empty)
			}
			return s.skip(name, empty)
		})
	})
}
