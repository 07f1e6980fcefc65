package httpapi

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/procurekit/procure"
	"github.com/procurekit/procure/budget"
)

// The XML exchange of Interface C (docs: account-codes.md).
// One codec serves both sides: the client writes requests and reads
// replies, the connector handler reads requests and writes replies.
//
// Reading is strict where it matters and tolerant where it cannot hurt:
//   - the root element's name is checked; namespaces are ignored (local
//     names are compared); a DOCTYPE is refused;
//   - every known element may appear at most once per parent (two Amount
//     elements in one Line is an error, not "the last one wins"), and
//     LineNumber, Account, Amount (request) and LineNumber, Status
//     (reply) must appear; Message may be omitted, meaning empty;
//   - unknown elements are skipped, for forward compatibility;
//   - text outside the leaf elements must be white space; surrounding
//     white space of a leaf's text is trimmed (pretty-printed XML reads
//     the same as compact XML);
//   - nothing but comments and processing instructions may follow the root.

// Element names of the exchange.
const (
	xmlRequestRoot  = "AccountCodeValidationRequest"
	xmlResponseRoot = "AccountCodeValidationResponse"
	xmlErrorRoot    = "AccountCodeValidationError"
)

// maxFieldErrors bounds the field errors collected from one request, so
// that an error body stays short.
const maxFieldErrors = 20

// errMalformedXML marks a message that is not the expected XML document
// (as opposed to a well-formed one with a bad field).
var errMalformedXML = errors.New("malformed XML")

func malformed(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errMalformedXML, fmt.Sprintf(format, args...))
}

// malformedAt is malformed with the line the tokenizer has reached.
func (x *xmlReader) malformedAt(format string, args ...any) error {
	line, _ := x.d.InputPos()
	return fmt.Errorf("%w: line %d: %s", errMalformedXML, line, fmt.Sprintf(format, args...))
}

// xmlReader walks a document with encoding/xml's raw tokenizer, which
// checks the syntax (legal characters, entities, attribute quoting). The
// walker checks the nesting itself: every end tag must close the element
// it expects. RawToken is used rather than Token because it allocates far
// less; namespaces are not translated (local names are compared).
type xmlReader struct {
	d     *xml.Decoder
	src   *readErr
	buf   []byte     // the text of the current leaf
	stack []xml.Name // open elements while skipping
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

func newXMLReader(r io.Reader) *xmlReader {
	src := &readErr{r: r}
	d := xml.NewDecoder(src)
	d.Strict = true
	// Only UTF-8 (and its ASCII subset) is accepted: with no CharsetReader,
	// encoding/xml refuses any other declared encoding.
	return &xmlReader{d: d, src: src}
}

// next returns the next raw token. A read error is returned as it is,
// the end of input as io.EOF, and anything else (a syntax error, an
// unsupported encoding) as errMalformedXML.
func (x *xmlReader) next() (xml.Token, error) {
	t, err := x.d.RawToken()
	if t != nil {
		return t, nil // an error that came with it returns on the next call
	}
	if x.src.err != nil {
		return nil, x.src.err
	}
	if errors.Is(err, io.EOF) {
		return nil, io.EOF
	}
	var syn *xml.SyntaxError
	if errors.As(err, &syn) {
		return nil, malformed("line %d: %s", syn.Line, syn.Msg)
	}
	return nil, malformed("%v", err)
}

// token returns the next token inside the root element, where the end of
// input means a malformed document.
func (x *xmlReader) token() (xml.Token, error) {
	t, err := x.next()
	if err == io.EOF {
		return nil, x.malformedAt("unexpected EOF: the document ends inside an element")
	}
	return t, err
}

// root reads up to the root element and checks its local name.
func (x *xmlReader) root(want string) (xml.Name, error) {
	for {
		t, err := x.next()
		if err == io.EOF {
			return xml.Name{}, malformed("the document is empty; want a %s element", want)
		}
		if err != nil {
			return xml.Name{}, err
		}
		switch t := t.(type) {
		case xml.StartElement:
			if t.Name.Local != want {
				return xml.Name{}, malformed("the root element is %s; want %s", shortName(t.Name.Local), want)
			}
			return t.Name, nil
		case xml.EndElement:
			return xml.Name{}, malformed("an end tag before the root element")
		case xml.CharData:
			if len(bytes.TrimSpace(t)) > 0 {
				return xml.Name{}, malformed("text before the root element; want a %s element", want)
			}
		case xml.Directive:
			return xml.Name{}, malformed("a DOCTYPE or other directive is not allowed")
		}
	}
}

// closes checks that an end tag closes the element that is open.
func (x *xmlReader) closes(end xml.EndElement, open xml.Name) error {
	if end.Name != open {
		return x.malformedAt("element <%s> closed by </%s>", qualified(open), qualified(end.Name))
	}
	return nil
}

func qualified(n xml.Name) string {
	if n.Space != "" {
		return n.Space + ":" + n.Local
	}
	return n.Local
}

// child returns the next child element of the open element parent, or ok
// false at parent's end tag.
func (x *xmlReader) child(parent xml.Name) (name xml.Name, ok bool, err error) {
	for {
		t, err := x.token()
		if err != nil {
			return xml.Name{}, false, err
		}
		switch t := t.(type) {
		case xml.StartElement:
			return t.Name, true, nil
		case xml.EndElement:
			return xml.Name{}, false, x.closes(t, parent)
		case xml.CharData:
			if len(bytes.TrimSpace(t)) > 0 {
				return xml.Name{}, false, malformed("%s holds text outside its elements", parent.Local)
			}
		case xml.Directive:
			return xml.Name{}, false, malformed("a directive is not allowed inside %s", parent.Local)
		}
	}
}

// text reads the text of the leaf element el up to its end tag and returns
// it trimmed. The bytes are valid until the next call of the reader.
func (x *xmlReader) text(el xml.Name) ([]byte, error) {
	x.buf = x.buf[:0]
	for {
		t, err := x.token()
		if err != nil {
			return nil, err
		}
		switch t := t.(type) {
		case xml.CharData:
			x.buf = append(x.buf, t...)
		case xml.StartElement:
			return nil, malformed("%s must hold text, not the element %s", el.Local, shortName(t.Name.Local))
		case xml.EndElement:
			if err := x.closes(t, el); err != nil {
				return nil, err
			}
			return bytes.TrimSpace(x.buf), nil
		case xml.Directive:
			return nil, malformed("a directive is not allowed inside %s", el.Local)
		}
	}
}

// MaxXMLDepth is the deepest element nesting the exchange reads
// (docs: limits.md), the root element being at depth 1: unknown
// elements are skipped, but a document nesting them deeper is malformed,
// so that a request cannot make the reader keep a stack of its choosing.
const MaxXMLDepth = 64

// skip skips the rest of the element el, whose start was just read at
// depth (the root element is at 1). Nesting beyond MaxXMLDepth is
// malformed.
func (x *xmlReader) skip(el xml.Name, depth int) error {
	x.stack = append(x.stack[:0], el)
	for len(x.stack) > 0 {
		t, err := x.token()
		if err != nil {
			return err
		}
		switch t := t.(type) {
		case xml.StartElement:
			if depth+len(x.stack) > MaxXMLDepth {
				return x.malformedAt("elements nest deeper than %d levels", MaxXMLDepth)
			}
			x.stack = append(x.stack, t.Name)
		case xml.EndElement:
			if err := x.closes(t, x.stack[len(x.stack)-1]); err != nil {
				return err
			}
			x.stack = x.stack[:len(x.stack)-1]
		case xml.Directive:
			return malformed("a directive is not allowed inside %s", el.Local)
		}
	}
	return nil
}

// end checks that nothing but comments, processing instructions and white
// space follows the root element.
func (x *xmlReader) end() error {
	for {
		t, err := x.next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		switch t := t.(type) {
		case xml.StartElement:
			return malformed("a second element %s follows the root element", shortName(t.Name.Local))
		case xml.EndElement:
			return malformed("an unmatched end tag </%s> follows the root element", qualified(t.Name))
		case xml.CharData:
			if len(bytes.TrimSpace(t)) > 0 {
				return malformed("text follows the root element")
			}
		case xml.Directive:
			return malformed("a directive is not allowed")
		}
	}
}

func shortName(s string) string {
	if utf8.RuneCountInString(s) > 40 {
		r := []rune(s)
		s = string(r[:40]) + "..."
	}
	return strconv.Quote(s)
}

// fields records which single-occurrence children an element has had.
type fields uint16

const (
	hasLines fields = 1 << iota
	hasRequisitionID
	hasUsername
	hasOrganisationUnit
	hasFinanceYear
)

func (f *fields) first(bit fields, parent, name string) error {
	if *f&bit != 0 {
		return malformed("%s has more than one %s element", parent, name)
	}
	*f |= bit
	return nil
}

// The child elements of a Line that are read, in the order of the texts
// leaves fills; any other child is skipped.
var (
	requestLeaves  = [3]string{"LineNumber", "Account", "Amount"}
	responseLeaves = [3]string{"LineNumber", "Status", "Message"}
)

// Bits of the leaves seen, by index in requestLeaves or responseLeaves.
const (
	leaf0 uint8 = 1 << iota
	leaf1
	leaf2
)

// leaves reads the children of el, the pos-th Line: the text of each child
// named in names goes to the same index of texts (a name met twice is
// malformed); other children are skipped. Bit i of have is set when
// names[i] was met. texts' buffers are reused, so callers copy what they
// keep.
func (x *xmlReader) leaves(el xml.Name, pos int, names *[3]string, texts *[3][]byte) (have uint8, err error) {
	for {
		f, ok, err := x.child(el)
		if err != nil {
			return 0, err
		}
		if !ok {
			return have, nil
		}
		i := slices.Index(names[:], f.Local)
		if i < 0 {
			if err := x.skip(f, 4); err != nil { // root, Lines, Line, f
				return 0, err
			}
			continue
		}
		if have&(1<<i) != 0 {
			return 0, malformed("%s has more than one %s element", lineAt(pos), f.Local)
		}
		have |= 1 << i
		text, err := x.text(f)
		if err != nil {
			return 0, err
		}
		texts[i] = append(texts[i][:0], text...)
	}
}

// lineAt names the pos-th Line (counted from 1, as in XPath).
func lineAt(pos int) string { return "Lines/Line[" + strconv.Itoa(pos) + "]" }

// atoi parses a decimal integer (optional sign) without allocating.
func atoi(b []byte) (int, bool) {
	s := b
	neg := false
	if len(s) > 0 && (s[0] == '-' || s[0] == '+') {
		neg = s[0] == '-'
		s = s[1:]
	}
	if len(s) == 0 || len(s) > 18 { // 18 digits cannot overflow
		if len(s) > 18 {
			n, err := strconv.Atoi(string(b))
			return n, err == nil
		}
		return 0, false
	}
	n := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	if neg {
		n = -n
	}
	return n, true
}

// decodeRequest reads an AccountCodeValidationRequest. A document that is
// not the expected XML is an error wrapping errMalformedXML; a well-formed
// one with bad fields is a *procure.ValidationError naming each field by
// its path ("Lines/Line[2]/Amount", Line counted from 1 as in XPath).
// Errors reading r are returned as they are.
func decodeRequest(r io.Reader) (budget.Request, error) {
	x := newXMLReader(r)
	var req budget.Request
	root, err := x.root(xmlRequestRoot)
	if err != nil {
		return req, err
	}
	v := &procure.ValidationError{Source: procure.SourceBody}
	var have fields
	for {
		el, ok, err := x.child(root)
		if err != nil {
			return req, err
		}
		if !ok {
			break
		}
		var dst *string
		var bit fields
		switch el.Local {
		case "RequisitionId":
			dst, bit = &req.RequisitionID, hasRequisitionID
		case "Username":
			dst, bit = &req.Username, hasUsername
		case "OrganisationUnit":
			dst, bit = &req.OrganisationUnit, hasOrganisationUnit
		case "FinanceYear":
			dst, bit = &req.FinanceYear, hasFinanceYear
		case "Lines":
			if err := have.first(hasLines, xmlRequestRoot, "Lines"); err != nil {
				return req, err
			}
			lines, err := decodeRequestLines(x, el, v)
			if err != nil {
				return req, err
			}
			req.Lines = lines
			continue
		default:
			if err := x.skip(el, 2); err != nil {
				return req, err
			}
			continue
		}
		if err := have.first(bit, xmlRequestRoot, el.Local); err != nil {
			return req, err
		}
		s, err := x.text(el)
		if err != nil {
			return req, err
		}
		*dst = string(s)
	}
	if err := x.end(); err != nil {
		return req, err
	}
	switch {
	case have&hasLines == 0:
		v.Add("Lines", "is required")
	case len(req.Lines) == 0 && len(v.Fields) == 0:
		v.Add("Lines", "at least one Line is required")
	}
	return req, v.Err()
}

// decodeRequestLines reads the Line elements of Lines, adding field errors
// to v (at most maxFieldErrors) and returning syntax errors.
func decodeRequestLines(x *xmlReader, linesEl xml.Name, v *procure.ValidationError) ([]budget.Line, error) {
	var lines []budget.Line
	// Line numbers usually increase, and then cannot repeat; a map of the
	// numbers seen is made only when they stop increasing.
	type numbered struct{ n, pos int }
	var seen []numbered
	var firstAt map[int]int // line number -> position of its first Line
	var texts [3][]byte     // reused for every Line
	pos := 0
	bad := func(field, rule string) {
		if len(v.Fields) < maxFieldErrors {
			v.Add(field, rule)
		} else {
			v.Omitted++ // counted, for "and N more" (docs: limits.md)
		}
	}
	for {
		el, ok, err := x.child(linesEl)
		if err != nil {
			return nil, err
		}
		if !ok {
			return lines, nil
		}
		if el.Local != "Line" {
			if err := x.skip(el, 3); err != nil {
				return nil, err
			}
			continue
		}
		pos++
		if pos > budget.MaxLines {
			// Stop reading: the request is refused whatever follows.
			return nil, procure.Invalid(procure.SourceBody, "Lines", "at most "+strconv.Itoa(budget.MaxLines)+" Line elements per request")
		}
		have, err := x.leaves(el, pos, &requestLeaves, &texts)
		if err != nil {
			return nil, err
		}
		var line budget.Line
		if have&leaf1 != 0 {
			line.Account = string(texts[1])
		}
		number, amount := texts[0], texts[2]
		at := ""
		if len(v.Fields) < maxFieldErrors {
			at = lineAt(pos)
		}
		lineOK := true
		if have&leaf0 == 0 {
			bad(at+"/LineNumber", "is required")
			lineOK = false
		} else if n, ok := atoi(number); !ok {
			bad(at+"/LineNumber", "must be an integer (got "+quoteText(string(number))+")")
			lineOK = false
		} else {
			if firstAt == nil && len(seen) > 0 && n <= seen[len(seen)-1].n {
				firstAt = make(map[int]int, 2*len(seen))
				for _, s := range seen {
					firstAt[s.n] = s.pos
				}
			}
			if first, dup := firstAt[n]; dup {
				bad(at+"/LineNumber", "line number "+strconv.Itoa(n)+" appears more than once (first in Line["+strconv.Itoa(first)+"])")
				lineOK = false
			} else {
				if firstAt != nil {
					firstAt[n] = pos
				} else {
					seen = append(seen, numbered{n, pos})
				}
				line.Number = n
			}
		}
		if line.Account == "" {
			bad(at+"/Account", "is required")
			lineOK = false
		}
		if have&leaf2 == 0 {
			bad(at+"/Amount", "is required")
			lineOK = false
		} else if d, err := budget.ParseAmount(string(amount)); err != nil {
			bad(at+"/Amount", err.Error())
			lineOK = false
		} else {
			line.Amount = d
		}
		if lineOK {
			lines = append(lines, line)
		}
	}
}

func quoteText(s string) string {
	if utf8.RuneCountInString(s) > 40 {
		s = string([]rune(s)[:40]) + "..."
	}
	return strconv.Quote(s)
}

// decodeResponse reads an AccountCodeValidationResponse into results in
// document order. Errors match budget.ErrMalformedReply, except errors
// reading r, which are returned as they are. Statuses are read as text:
// budget.CheckReply judges them.
func decodeResponse(r io.Reader) ([]budget.Result, error) {
	results, err := decodeResponseDoc(r)
	if err != nil && errors.Is(err, errMalformedXML) {
		return nil, fmt.Errorf("%w: %w", budget.ErrMalformedReply, err)
	}
	return results, err
}

func decodeResponseDoc(r io.Reader) ([]budget.Result, error) {
	x := newXMLReader(r)
	root, err := x.root(xmlResponseRoot)
	if err != nil {
		return nil, err
	}
	var results []budget.Result
	var have fields
	for {
		el, ok, err := x.child(root)
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		if el.Local != "Lines" {
			if err := x.skip(el, 2); err != nil {
				return nil, err
			}
			continue
		}
		if err := have.first(hasLines, xmlResponseRoot, "Lines"); err != nil {
			return nil, err
		}
		if results, err = decodeResponseLines(x, el); err != nil {
			return nil, err
		}
	}
	if err := x.end(); err != nil {
		return nil, err
	}
	if have&hasLines == 0 {
		return nil, malformed("%s has no Lines element", xmlResponseRoot)
	}
	return results, nil
}

// status returns the status spelled by b without allocating for the three
// known ones (anything else is kept for CheckReply to reject).
func status(b []byte) budget.Status {
	switch string(b) { // no allocation: the conversion is only compared
	case string(budget.Valid):
		return budget.Valid
	case string(budget.Invalid):
		return budget.Invalid
	case string(budget.Warning):
		return budget.Warning
	}
	return budget.Status(b)
}

func decodeResponseLines(x *xmlReader, linesEl xml.Name) ([]budget.Result, error) {
	var results []budget.Result
	var texts [3][]byte // reused for every Line
	pos := 0
	for {
		el, ok, err := x.child(linesEl)
		if err != nil {
			return nil, err
		}
		if !ok {
			return results, nil
		}
		if el.Local != "Line" {
			if err := x.skip(el, 3); err != nil {
				return nil, err
			}
			continue
		}
		pos++
		if pos > budget.MaxLines {
			return nil, malformed("more than %d Line elements", budget.MaxLines)
		}
		have, err := x.leaves(el, pos, &responseLeaves, &texts)
		if err != nil {
			return nil, err
		}
		var r budget.Result
		if have&leaf1 != 0 {
			r.Status = status(texts[1])
		}
		if have&leaf2 != 0 && len(texts[2]) > 0 {
			r.Message = string(texts[2])
		}
		number := texts[0]
		if have&leaf0 == 0 {
			return nil, malformed("%s has no LineNumber", lineAt(pos))
		}
		n, ok := atoi(number)
		if !ok {
			return nil, malformed("%s/LineNumber must be an integer (got %s)", lineAt(pos), quoteText(string(number)))
		}
		r.LineNumber = n
		if have&leaf1 == 0 {
			return nil, malformed("%s (line %d) has no Status", lineAt(pos), n)
		}
		results = append(results, r)
	}
}

// xmlHeader starts every document we write.
const xmlHeader = `<?xml version="1.0" encoding="UTF-8"?>` + "\n"

// appendRequest writes req as an AccountCodeValidationRequest; empty
// optional fields are left out.
func appendRequest(b []byte, req *budget.Request) []byte {
	b = append(b, xmlHeader...)
	b = append(b, "<"+xmlRequestRoot+">"...)
	b = appendOptional(b, "RequisitionId", req.RequisitionID)
	b = appendOptional(b, "Username", req.Username)
	b = appendOptional(b, "OrganisationUnit", req.OrganisationUnit)
	b = appendOptional(b, "FinanceYear", req.FinanceYear)
	b = append(b, "<Lines>"...)
	for _, l := range req.Lines {
		b = append(b, "<Line><LineNumber>"...)
		b = strconv.AppendInt(b, int64(l.Number), 10)
		b = append(b, "</LineNumber><Account>"...)
		b = appendXMLText(b, l.Account)
		b = append(b, "</Account><Amount>"...)
		b = budget.AppendAmount(b, l.Amount)
		b = append(b, "</Amount></Line>"...)
	}
	return append(b, "</Lines></"+xmlRequestRoot+">\n"...)
}

func appendOptional(b []byte, name, value string) []byte {
	if value == "" {
		return b
	}
	b = append(b, '<')
	b = append(b, name...)
	b = append(b, '>')
	b = appendXMLText(b, value)
	b = append(b, '<', '/')
	b = append(b, name...)
	return append(b, '>')
}

// appendResponse writes results as an AccountCodeValidationResponse. Every
// Line carries a Message element, empty when there is no message.
func appendResponse(b []byte, results []budget.Result) []byte {
	b = append(b, xmlHeader...)
	b = append(b, "<"+xmlResponseRoot+"><Lines>"...)
	for _, r := range results {
		b = append(b, "<Line><LineNumber>"...)
		b = strconv.AppendInt(b, int64(r.LineNumber), 10)
		b = append(b, "</LineNumber><Status>"...)
		b = appendXMLText(b, string(r.Status))
		b = append(b, "</Status><Message>"...)
		b = appendXMLText(b, r.Message)
		b = append(b, "</Message></Line>"...)
	}
	return append(b, "</Lines></"+xmlResponseRoot+">\n"...)
}

// appendErrorDoc writes the connector's error body:
// <AccountCodeValidationError><Code>...</Code><Message>...</Message></AccountCodeValidationError>.
func appendErrorDoc(b []byte, code, message string) []byte {
	b = append(b, xmlHeader...)
	b = append(b, "<"+xmlErrorRoot+"><Code>"...)
	b = appendXMLText(b, code)
	b = append(b, "</Code><Message>"...)
	b = appendXMLText(b, message)
	return append(b, "</Message></"+xmlErrorRoot+">\n"...)
}

// decodeErrorDoc reads the connector's error body; ok is false when body is
// not one.
func decodeErrorDoc(body []byte) (code, message string, ok bool) {
	var doc struct {
		XMLName xml.Name `xml:"AccountCodeValidationError"`
		Code    string   `xml:"Code"`
		Message string   `xml:"Message"`
	}
	if err := xml.Unmarshal(body, &doc); err != nil || doc.Code == "" {
		return "", "", false
	}
	return strings.TrimSpace(doc.Code), strings.TrimSpace(doc.Message), true
}

// appendXMLText appends s as XML character data. Characters XML 1.0 does
// not allow (most control characters, invalid UTF-8, U+FFFE, U+FFFF) become
// U+FFFD; a carriage return is written as a reference so that it survives
// line-end normalisation.
func appendXMLText(b []byte, s string) []byte {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '&':
				b = append(b, "&amp;"...)
			case c == '<':
				b = append(b, "&lt;"...)
			case c == '>':
				b = append(b, "&gt;"...)
			case c == '\r':
				b = append(b, "&#xD;"...)
			case c == '\n' || c == '\t' || c >= 0x20:
				b = append(b, c)
			default:
				b = append(b, "\uFFFD"...)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || r == 0xFFFE || r == 0xFFFF {
			b = append(b, "\uFFFD"...)
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return b
}
