package acxml

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/procurekit/procure"
	"github.com/procurekit/procure/budget"
)

// requestDoc is an AccountCodeValidationRequest as read.
type requestDoc struct {
	RequisitionID    text         `xml:"RequisitionId"`
	Username         text         `xml:"Username"`
	OrganisationUnit text         `xml:"OrganisationUnit"`
	FinanceYear      text         `xml:"FinanceYear"`
	Currency         text         `xml:"Currency"`
	Lines            requestLines `xml:"Lines"`
	Outside          outside      `xml:",chardata"`
}

func (d *requestDoc) textOutside() bool { return bool(d.Outside) }

// requestLine is one Line of a request as read.
type requestLine struct {
	LineNumber text    `xml:"LineNumber"`
	Account    text    `xml:"Account"`
	Amount     text    `xml:"Amount"`
	Splits     splits  `xml:"Splits"`
	Outside    outside `xml:",chardata"`
}

func (l *requestLine) reset() {
	l.LineNumber.reset()
	l.Account.reset()
	l.Amount.reset()
	l.Splits.reset()
	l.Outside = false
}

// splits reads a line's Splits element: each Split in order (other
// elements are skipped). Its buffers are reused by reset.
type splits struct {
	list []splitDoc
	n    int // Split elements read into list
	set  bool
}

// splitDoc is one Split as read.
type splitDoc struct {
	Account    text    `xml:"Account"`
	Percentage text    `xml:"Percentage"`
	Amount     text    `xml:"Amount"`
	Outside    outside `xml:",chardata"`
}

func (s *splits) reset() { s.n, s.set = 0, false }

func (s *splits) UnmarshalXML(d *xml.Decoder, start xml.StartElement) error {
	if s.set {
		return duplicate(start.Name.Local)
	}
	s.set = true
	for {
		tok, err := d.Token()
		if err != nil {
			return err
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			if tok.Name.Local != "Split" {
				if err := d.Skip(); err != nil {
					return err
				}
				continue
			}
			if s.n == len(s.list) {
				s.list = append(s.list, splitDoc{})
			}
			doc := &s.list[s.n]
			doc.Account.reset()
			doc.Percentage.reset()
			doc.Amount.reset()
			doc.Outside = false
			s.n++
			if err := d.DecodeElement(doc, &tok); err != nil {
				var dup duplicate
				if errors.As(err, &dup) {
					return nestedDuplicate{"Splits/Split[" + strconv.Itoa(s.n) + "]", string(dup)}
				}
				return err
			}
			if doc.Outside {
				return malformed("Split holds text outside its elements")
			}
		case xml.CharData:
			if len(bytes.TrimSpace(tok)) > 0 {
				return malformed("Splits holds text outside its elements")
			}
		case xml.EndElement:
			return nil
		}
	}
}

func (l *requestLine) textOutside() bool { return bool(l.Outside) }

// requestLines reads the Lines of a request into lines, checking each
// Line as it comes: the field errors go to v, at most MaxFieldErrors of
// them named.
type requestLines struct {
	v     *procure.ValidationError
	lines []budget.Line
	set   bool

	// Line numbers usually increase, and then cannot repeat; a map of
	// the numbers seen is made only when they stop increasing.
	seen    []numbered
	firstAt map[int]int // line number -> position of its first Line
}

type numbered struct{ n, pos int }

func (ls *requestLines) UnmarshalXML(d *xml.Decoder, start xml.StartElement) error {
	if ls.set {
		return duplicate(start.Name.Local)
	}
	ls.set = true
	var line requestLine // reused for every Line
	tooMany := func() error {
		// The request is refused whatever follows: stop reading.
		return procure.Invalid(procure.SourceBody, "Lines", "at most "+strconv.Itoa(budget.MaxLines)+" Line elements per request")
	}
	return eachLine(d, start, &line, tooMany, func(pos int) error {
		ls.add(pos, &line)
		return nil
	})
}

// add checks the pos-th Line and keeps it when it is good.
func (ls *requestLines) add(pos int, l *requestLine) {
	v := ls.v
	at := ""
	if len(v.Fields) < MaxFieldErrors {
		at = lineAt(pos)
	}
	bad := func(field, rule string) {
		if len(v.Fields) < MaxFieldErrors {
			v.Add(at+field, rule)
		} else {
			v.Omitted++ // counted, for "and N more" (docs/limits.md)
		}
	}
	line := budget.Line{Account: l.Account.String()}
	ok := true
	if !l.LineNumber.set {
		bad("/LineNumber", "is required")
		ok = false
	} else if n, err := strconv.Atoi(l.LineNumber.String()); err != nil {
		bad("/LineNumber", "must be an integer (got "+Quote(l.LineNumber.String())+")")
		ok = false
	} else if first, dup := ls.number(n, pos); dup {
		bad("/LineNumber", "line number "+strconv.Itoa(n)+" appears more than once (first in Line["+strconv.Itoa(first)+"])")
		ok = false
	} else {
		line.Number = n
	}
	if line.Account == "" && !l.Splits.set {
		bad("/Account", "is required")
		ok = false
	}
	if l.Splits.set {
		line.Splits = make([]budget.Split, l.Splits.n) // not nil: an empty Splits is refused by budget's rules
		for k, sd := range l.Splits.list[:l.Splits.n] {
			at := "/Splits/Split[" + strconv.Itoa(k+1) + "]"
			sp := &line.Splits[k]
			sp.Account = sd.Account.String()
			if sd.Percentage.set {
				if d, err := budget.ParseAmount(sd.Percentage.String()); err != nil {
					bad(at+"/Percentage", err.Error())
					ok = false
				} else {
					sp.Percentage = decimal.NewNullDecimal(d)
				}
			}
			if sd.Amount.set {
				if d, err := budget.ParseAmount(sd.Amount.String()); err != nil {
					bad(at+"/Amount", err.Error())
					ok = false
				} else {
					sp.Amount = decimal.NewNullDecimal(d)
				}
			}
		}
	}
	if !l.Amount.set {
		bad("/Amount", "is required")
		ok = false
	} else if d, err := budget.ParseAmount(l.Amount.String()); err != nil {
		bad("/Amount", err.Error())
		ok = false
	} else {
		line.Amount = d
	}
	if ok {
		ls.lines = append(ls.lines, line)
	}
}

// number records line number n at position pos, or reports the position
// of the Line that had it first.
func (ls *requestLines) number(n, pos int) (first int, dup bool) {
	if ls.firstAt == nil && len(ls.seen) > 0 && n <= ls.seen[len(ls.seen)-1].n {
		ls.firstAt = make(map[int]int, 2*len(ls.seen))
		for _, s := range ls.seen {
			ls.firstAt[s.n] = s.pos
		}
	}
	if ls.firstAt == nil {
		ls.seen = append(ls.seen, numbered{n, pos})
		return 0, false
	}
	if first, dup := ls.firstAt[n]; dup {
		return first, true
	}
	ls.firstAt[n] = pos
	return 0, false
}

// DecodeRequest reads an AccountCodeValidationRequest. A document that is
// not the expected XML is an error matching ErrMalformed; a well-formed
// one with bad fields is a *procure.ValidationError naming each field by
// its path ("Lines/Line[2]/Amount", Line counted from 1 as in XPath).
// Errors reading r are returned as they are. The request is checked by
// ValidateRequest too; a connector that fills in its default Currency
// afterwards checks it again.
func DecodeRequest(r io.Reader) (budget.Request, error) {
	m, err := decodeMessage(r, RequestRoot)
	return m.Request, err
}

// requestOf turns a decoded request document into a budget.Request,
// checked by ValidateRequest.
func requestOf(doc *requestDoc) (budget.Request, error) {
	v := doc.Lines.v
	switch {
	case !doc.Lines.set:
		v.Add("Lines", "is required")
	case len(doc.Lines.lines) == 0 && len(v.Fields) == 0:
		v.Add("Lines", "at least one Line is required")
	}
	if doc.Currency.set && len(doc.Currency.b) == 0 {
		v.Add("Currency", "must not be empty (leave it out for the connector's default)")
	}
	if err := v.Err(); err != nil {
		return budget.Request{}, err
	}
	req := budget.Request{
		RequisitionID:    doc.RequisitionID.String(),
		Username:         doc.Username.String(),
		OrganisationUnit: doc.OrganisationUnit.String(),
		FinanceYear:      doc.FinanceYear.String(),
		Currency:         doc.Currency.String(),
		Lines:            doc.Lines.lines,
	}
	if err := ValidateRequest(&req); err != nil {
		return budget.Request{}, err
	}
	return req, nil
}

// responseDoc is an AccountCodeValidationResponse as read.
type responseDoc struct {
	Lines   responseLines `xml:"Lines"`
	Outside outside       `xml:",chardata"`
}

func (d *responseDoc) textOutside() bool { return bool(d.Outside) }

// responseLine is one Line of a reply as read.
type responseLine struct {
	LineNumber text    `xml:"LineNumber"`
	Status     text    `xml:"Status"`
	Message    text    `xml:"Message"`
	Outside    outside `xml:",chardata"`
}

func (l *responseLine) reset() {
	l.LineNumber.reset()
	l.Status.reset()
	l.Message.reset()
	l.Outside = false
}

func (l *responseLine) textOutside() bool { return bool(l.Outside) }

// responseLines reads the Lines of a reply into results.
type responseLines struct {
	results []budget.Result
	set     bool
}

func (ls *responseLines) UnmarshalXML(d *xml.Decoder, start xml.StartElement) error {
	if ls.set {
		return duplicate(start.Name.Local)
	}
	ls.set = true
	var line responseLine // reused for every Line
	tooMany := func() error { return malformed("more than %d Line elements", budget.MaxLines) }
	return eachLine(d, start, &line, tooMany, func(pos int) error {
		if !line.LineNumber.set {
			return malformed("%s has no LineNumber", lineAt(pos))
		}
		n, err := strconv.Atoi(line.LineNumber.String())
		if err != nil {
			return malformed("%s/LineNumber must be an integer (got %s)", lineAt(pos), Quote(line.LineNumber.String()))
		}
		if !line.Status.set {
			return malformed("%s (line %d) has no Status", lineAt(pos), n)
		}
		r := budget.Result{LineNumber: n, Status: status(line.Status.b)}
		if len(line.Message.b) > 0 {
			r.Message = line.Message.String()
		}
		ls.results = append(ls.results, r)
		return nil
	})
}

// status returns the status spelled by b without allocating for the three
// known ones (anything else is kept for budget.CheckReply to reject).
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

// DecodeResponse reads an AccountCodeValidationResponse into results in
// document order. Errors match budget.ErrMalformedReply (and
// ErrMalformed), except errors reading r, which are returned as they are.
// Statuses are read as text: budget.CheckReply judges them.
func DecodeResponse(r io.Reader) ([]budget.Result, error) {
	var doc responseDoc
	err := decode(r, ResponseRoot, &doc)
	if err == nil && !doc.Lines.set {
		err = malformed("%s has no Lines element", ResponseRoot)
	}
	if err != nil {
		if errors.Is(err, ErrMalformed) {
			err = fmt.Errorf("%w: %w", budget.ErrMalformedReply, err)
		}
		return nil, err
	}
	return doc.Lines.results, nil
}

// DecodeError reads the connector's error body; ok is false when body is
// not one. It is lenient: the body only adds detail to an error status.
func DecodeError(body []byte) (code, message string, ok bool) {
	var doc struct {
		XMLName xml.Name `xml:"AccountCodeValidationError"`
		Code    string   `xml:"Code"`
		Message string   `xml:"Message"`
	}
	if err := xml.Unmarshal(body, &doc); err != nil || strings.TrimSpace(doc.Code) == "" {
		return "", "", false
	}
	return strings.TrimSpace(doc.Code), strings.TrimSpace(doc.Message), true
}
