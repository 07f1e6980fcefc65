package acxml

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/procurekit/procure"
	"github.com/procurekit/procure/budget"
)

// Root elements of release and confirm (docs/account-codes.md "Release
// and confirm"): the platform sends them to the same endpoint as a check,
// and the connector tells them apart by the root element.
const (
	ReleaseRoot         = "AccountCodeReleaseRequest"
	ReleaseResponseRoot = "AccountCodeReleaseResponse"
	ConfirmRoot         = "AccountCodeConfirmRequest"
	ConfirmResponseRoot = "AccountCodeConfirmResponse"
)

// Kind is what a message to the connector asks for.
type Kind int

// The kinds of message, by root element.
const (
	Check   Kind = iota + 1 // AccountCodeValidationRequest
	Release                 // AccountCodeReleaseRequest
	Confirm                 // AccountCodeConfirmRequest
)

// Root returns the root element of a message of kind k.
func (k Kind) Root() string {
	switch k {
	case Release:
		return ReleaseRoot
	case Confirm:
		return ConfirmRoot
	}
	return RequestRoot
}

// responseRoot returns the root element of the reply to kind k.
func (k Kind) responseRoot() string {
	switch k {
	case Release:
		return ReleaseResponseRoot
	case Confirm:
		return ConfirmResponseRoot
	}
	return ResponseRoot
}

// Message is one message to the connector: a check (Request) or a release
// or confirm of a requisition (RequisitionID).
type Message struct {
	Kind          Kind
	Request       budget.Request // for Check
	RequisitionID string         // for Release and Confirm
}

// MessageRoots names the roots DecodeMessage accepts, for messages.
const MessageRoots = RequestRoot + ", " + ReleaseRoot + " or " + ConfirmRoot

// DecodeMessage reads a message to the connector, whichever its root
// element: an AccountCodeValidationRequest (as DecodeRequest), an
// AccountCodeReleaseRequest or an AccountCodeConfirmRequest. Errors are
// DecodeRequest's; a release or confirm without a RequisitionId, or with
// one over budget.MaxRequisitionIDLength characters, is a
// *procure.ValidationError naming "RequisitionId".
func DecodeMessage(r io.Reader) (Message, error) {
	return decodeMessage(r, "")
}

// decodeMessage is DecodeMessage; a non-empty only refuses every root but
// that one. A check is read by the fast path when it can (fast.go), by
// decodeSlow otherwise.
func decodeMessage(r io.Reader, only string) (Message, error) {
	if only == "" || only == RequestRoot {
		fast, ok, rest, done := decodeFast(r)
		if ok {
			return fast, nil
		}
		defer done()
		r = rest
	}
	return decodeSlow(r, only)
}

// decodeSlow is decodeMessage by encoding/xml's Decoder, the definition of
// what a message says.
func decodeSlow(r io.Reader, only string) (Message, error) {
	var (
		m      Message
		check  *requestDoc
		commit *commitDoc
	)
	want := MessageRoots
	if only != "" {
		want = only
	}
	err := decodeAny(r, want, func(name string) (any, error) {
		if only != "" && name != only {
			return nil, malformed("the root element is %s; want %s", Quote(name), only)
		}
		switch name {
		case RequestRoot:
			m.Kind = Check
			check = &requestDoc{Lines: requestLines{v: &procure.ValidationError{Source: procure.SourceBody}}}
			return check, nil
		case ReleaseRoot, ConfirmRoot:
			m.Kind = Release
			if name == ConfirmRoot {
				m.Kind = Confirm
			}
			commit = &commitDoc{}
			return commit, nil
		}
		return nil, malformed("the root element is %s; want %s", Quote(name), want)
	})
	if err != nil {
		return Message{}, err
	}
	if check != nil {
		m.Request, err = requestOf(check)
		if err != nil {
			return Message{}, err
		}
		return m, nil
	}
	m.RequisitionID = commit.RequisitionID.String()
	if err := budget.ValidateRequisitionID(m.RequisitionID); err != nil {
		return Message{}, ElementPaths(err)
	}
	return m, nil
}

// commitDoc is an AccountCodeReleaseRequest or AccountCodeConfirmRequest
// as read.
type commitDoc struct {
	RequisitionID text    `xml:"RequisitionId"`
	Outside       outside `xml:",chardata"`
}

func (d *commitDoc) textOutside() bool { return bool(d.Outside) }

// ValidateRequest checks req by budget's rules (budget.Request.Validate)
// and names the fields of its error by their element paths:
// "Lines/Line[2]/Splits/Split[1]/Percentage" for
// "lines[1].splits[0].percentage" (Line and Split counted from 1 as in
// XPath), "Currency", "RequisitionId".
func ValidateRequest(req *budget.Request) error {
	return ElementPaths(req.Validate())
}

// ElementPaths renames the fields of a *procure.ValidationError from
// package budget's names to element paths (ElementPath); other errors come
// back as they are.
func ElementPaths(err error) error {
	var ve *procure.ValidationError
	if !errors.As(err, &ve) {
		return err
	}
	out := &procure.ValidationError{Source: ve.Source, Fields: make([]procure.FieldError, len(ve.Fields)), Omitted: ve.Omitted}
	for i, f := range ve.Fields {
		out.Fields[i] = procure.FieldError{Field: ElementPath(f.Field), Rule: f.Rule}
	}
	return out
}

// elements maps package budget's field names to the exchange's elements;
// a name with an index is a container of repeated elements.
var elements = map[string]string{
	"lines":         "Lines/Line",
	"splits":        "Splits/Split",
	"number":        "LineNumber",
	"account":       "Account",
	"amount":        "Amount",
	"percentage":    "Percentage",
	"currency":      "Currency",
	"requisitionId": "RequisitionId",
}

// ElementPath returns the element path of one of package budget's field
// names: "lines[1].splits[0].percentage" is
// "Lines/Line[2]/Splits/Split[1]/Percentage", "lines" is "Lines". A name
// it does not know is returned as it is.
func ElementPath(field string) string {
	var b strings.Builder
	for part := range strings.SplitSeq(field, ".") {
		name, index, indexed := strings.Cut(part, "[")
		el, ok := elements[name]
		if !ok {
			return field
		}
		if b.Len() > 0 {
			b.WriteByte('/')
		}
		if !indexed {
			// A container named without an index is the container
			// itself: "lines" is Lines.
			el, _, _ = strings.Cut(el, "/")
			b.WriteString(el)
			continue
		}
		n, err := strconv.Atoi(strings.TrimSuffix(index, "]"))
		if err != nil || !strings.HasSuffix(index, "]") {
			return field
		}
		b.WriteString(el + "[" + strconv.Itoa(n+1) + "]")
	}
	return b.String()
}

// commitOut is a release or confirm as written; commitReplyOut its reply.
type commitOut struct {
	XMLName       xml.Name
	RequisitionID string `xml:"RequisitionId"`
}

type commitReplyOut struct {
	XMLName       xml.Name
	RequisitionID string `xml:"RequisitionId"`
	Changed       int    `xml:"Changed"`
}

// AppendCommitRequest appends an AccountCodeReleaseRequest (kind Release)
// or AccountCodeConfirmRequest (kind Confirm) for requisition to b.
func AppendCommitRequest(b []byte, kind Kind, requisition string) []byte {
	return appendDoc(b, &commitOut{XMLName: xml.Name{Local: kind.Root()}, RequisitionID: requisition})
}

// AppendCommitResponse appends the reply to a release or confirm to b:
//
//	<AccountCodeReleaseResponse><RequisitionId>REQ-1001</RequisitionId><Changed>2</Changed></AccountCodeReleaseResponse>
//
// (AccountCodeConfirmResponse for a confirm), where Changed is how many
// holds the message changed.
func AppendCommitResponse(b []byte, kind Kind, requisition string, changed int) []byte {
	return appendDoc(b, &commitReplyOut{XMLName: xml.Name{Local: kind.responseRoot()}, RequisitionID: requisition, Changed: changed})
}

// commitReplyDoc is the reply to a release or confirm as read.
type commitReplyDoc struct {
	RequisitionID text    `xml:"RequisitionId"`
	Changed       text    `xml:"Changed"`
	Outside       outside `xml:",chardata"`
}

func (d *commitReplyDoc) textOutside() bool { return bool(d.Outside) }

// DecodeCommitResponse reads the reply to a release (kind Release) or
// confirm (kind Confirm) of requisition and returns how many holds
// changed. A reply with another root, without Changed or with one that is
// not a non-negative integer, or about another requisition, is an error
// matching budget.ErrMalformedReply (and ErrMalformed); errors reading r
// are returned as they are.
func DecodeCommitResponse(r io.Reader, kind Kind, requisition string) (int, error) {
	var doc commitReplyDoc
	root := kind.responseRoot()
	err := decode(r, root, &doc)
	if err == nil {
		err = checkCommitReply(&doc, root, requisition)
	}
	if err != nil {
		if errors.Is(err, ErrMalformed) {
			err = fmt.Errorf("%w: %w", budget.ErrMalformedReply, err)
		}
		return 0, err
	}
	n, _ := strconv.Atoi(doc.Changed.String()) // checked
	return n, nil
}

func checkCommitReply(doc *commitReplyDoc, root, requisition string) error {
	if !doc.Changed.set {
		return malformed("%s has no Changed element", root)
	}
	n, err := strconv.Atoi(doc.Changed.String())
	if err != nil || n < 0 {
		return malformed("%s/Changed must be a non-negative integer (got %s)", root, Quote(doc.Changed.String()))
	}
	if doc.RequisitionID.set && doc.RequisitionID.String() != requisition {
		return malformed("%s is about requisition %s, not %s", root, Quote(doc.RequisitionID.String()), Quote(requisition))
	}
	return nil
}
