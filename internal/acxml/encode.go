package acxml

import (
	"bytes"
	"encoding/xml"
	"strconv"

	"github.com/procurekit/procure/budget"
)

// The documents as written. encoding/xml escapes the text: &, <, >, quotes,
// tab, line feed and carriage return become references (a carriage return
// so survives line-end normalisation), and characters XML 1.0 does not
// allow (most control characters, invalid UTF-8, U+FFFE, U+FFFF) become
// U+FFFD.

type requestOut struct {
	XMLName          xml.Name        `xml:"AccountCodeValidationRequest"`
	RequisitionID    string          `xml:"RequisitionId,omitempty"`
	Username         string          `xml:"Username,omitempty"`
	OrganisationUnit string          `xml:"OrganisationUnit,omitempty"`
	FinanceYear      string          `xml:"FinanceYear,omitempty"`
	Currency         string          `xml:"Currency,omitempty"`
	Lines            requestLinesOut `xml:"Lines"`
}

type requestLinesOut struct {
	Line []requestLineOut `xml:"Line"`
}

// requestLineOut is one Line: Account for an unsplit line, Splits for a
// split one.
type requestLineOut struct {
	LineNumber int        `xml:"LineNumber"`
	Account    string     `xml:"Account,omitempty"`
	Amount     string     `xml:"Amount"`
	Splits     *splitsOut `xml:"Splits"`
}

type splitsOut struct {
	Split []splitOut `xml:"Split"`
}

type splitOut struct {
	Account    string `xml:"Account"`
	Percentage string `xml:"Percentage,omitempty"`
	Amount     string `xml:"Amount,omitempty"`
}

type responseOut struct {
	XMLName xml.Name         `xml:"AccountCodeValidationResponse"`
	Lines   responseLinesOut `xml:"Lines"`
}

type responseLinesOut struct {
	Line []responseLineOut `xml:"Line"`
}

// responseLineOut has the fields of budget.Result, so that one converts
// to the other.
type responseLineOut struct {
	LineNumber int           `xml:"LineNumber"`
	Status     budget.Status `xml:"Status"`
	Message    string        `xml:"Message"` // written even when empty
}

type errorOut struct {
	XMLName xml.Name `xml:"AccountCodeValidationError"`
	Code    string   `xml:"Code"`
	Message string   `xml:"Message"`
}

// appendDoc appends the XML declaration, v and a line end to b.
func appendDoc(b []byte, v any) []byte {
	w := bytes.NewBuffer(b)
	w.WriteString(xml.Header)
	if err := xml.NewEncoder(w).Encode(v); err != nil {
		// The documents hold strings and integers only: encoding/xml
		// cannot fail on them.
		panic("acxml: " + err.Error())
	}
	w.WriteByte('\n')
	return w.Bytes()
}

// AppendRequest appends req as an AccountCodeValidationRequest to b;
// empty optional fields are left out, and so is the Account of a line with
// Splits. Amounts and percentages keep their scale (budget.FormatAmount).
func AppendRequest(b []byte, req *budget.Request) []byte {
	doc := requestOut{
		RequisitionID:    req.RequisitionID,
		Username:         req.Username,
		OrganisationUnit: req.OrganisationUnit,
		FinanceYear:      req.FinanceYear,
		Currency:         req.Currency,
		Lines:            requestLinesOut{Line: make([]requestLineOut, len(req.Lines))},
	}
	for i, l := range req.Lines {
		out := requestLineOut{LineNumber: l.Number, Account: l.Account, Amount: budget.FormatAmount(l.Amount)}
		if l.Splits != nil {
			out.Splits = &splitsOut{Split: make([]splitOut, len(l.Splits))}
			for k, s := range l.Splits {
				so := splitOut{Account: s.Account}
				if s.Percentage.Valid {
					so.Percentage = budget.FormatAmount(s.Percentage.Decimal)
				}
				if s.Amount.Valid {
					so.Amount = budget.FormatAmount(s.Amount.Decimal)
				}
				out.Splits.Split[k] = so
			}
		}
		doc.Lines.Line[i] = out
	}
	return appendDoc(b, &doc)
}

// AppendResponse appends results as an AccountCodeValidationResponse to
// b, in their order. Every Line carries a Message element, empty when
// there is no message.
//
// The reply is written by hand: through encoding/xml's Encoder, writing
// it cost a connector as much CPU as reading the check (httpapi's
// BenchmarkAccountCodeCheckHolds). The Encoder's document,
// appendResponseEncoder, stays the definition: text is escaped by
// xml.EscapeText unless it is plain ASCII that needs no escaping, and
// TestAppendResponse and FuzzAppendResponse hold the two to the same
// bytes.
func AppendResponse(b []byte, results []budget.Result) []byte {
	b = append(b, xml.Header...)
	b = append(b, "<AccountCodeValidationResponse><Lines>"...)
	for _, r := range results {
		b = append(b, "<Line><LineNumber>"...)
		b = strconv.AppendInt(b, int64(r.LineNumber), 10)
		b = append(b, "</LineNumber><Status>"...)
		b = appendEscaped(b, string(r.Status))
		b = append(b, "</Status><Message>"...)
		b = appendEscaped(b, r.Message)
		b = append(b, "</Message></Line>"...)
	}
	return append(b, "</Lines></AccountCodeValidationResponse>\n"...)
}

// appendEscaped appends s as element text, escaped as the Encoder escapes
// it.
func appendEscaped(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '&' || c == '<' || c == '>' || c == '"' || c == '\'' {
			w := bytes.NewBuffer(b)
			_ = xml.EscapeText(w, []byte(s)) // a bytes.Buffer does not fail
			return w.Bytes()
		}
	}
	return append(b, s...)
}

// appendResponseEncoder is AppendResponse by encoding/xml's Encoder, the
// definition of the reply's bytes.
func appendResponseEncoder(b []byte, results []budget.Result) []byte {
	doc := responseOut{Lines: responseLinesOut{Line: make([]responseLineOut, len(results))}}
	for i, r := range results {
		doc.Lines.Line[i] = responseLineOut(r)
	}
	return appendDoc(b, &doc)
}

// AppendError appends the connector's error body to b:
// <AccountCodeValidationError><Code>...</Code><Message>...</Message></AccountCodeValidationError>.
func AppendError(b []byte, code, message string) []byte {
	return appendDoc(b, &errorOut{Code: code, Message: message})
}
