package httpapi

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/procurekit/procure/budget"
)

// The library path the hand-walked reader of accountcode_xml.go is
// measured against: encoding/xml's Decoder.Decode into structs, with the
// same depth bound (a TokenReader that counts nesting) and the same checks
// done on the decoded values (one element of each kind, required leaves,
// integers, amounts).

type stdLeaves struct {
	LineNumber []string `xml:"LineNumber"`
	Account    []string `xml:"Account"`
	Amount     []string `xml:"Amount"`
}

type stdRequest struct {
	XMLName          xml.Name
	RequisitionID    []string `xml:"RequisitionId"`
	Username         []string `xml:"Username"`
	OrganisationUnit []string `xml:"OrganisationUnit"`
	FinanceYear      []string `xml:"FinanceYear"`
	Lines            []struct {
		Line []stdLeaves `xml:"Line"`
	} `xml:"Lines"`
}

// depthLimit refuses documents nesting deeper than MaxXMLDepth.
type depthLimit struct {
	d     *xml.Decoder
	depth int
}

func (l *depthLimit) Token() (xml.Token, error) {
	t, err := l.d.RawToken()
	switch t.(type) {
	case xml.StartElement:
		if l.depth++; l.depth > MaxXMLDepth {
			return nil, errors.New("too deep")
		}
	case xml.EndElement:
		l.depth--
	case xml.Directive:
		return nil, errors.New("a DOCTYPE")
	}
	return t, err
}

func stdOne(vs []string, what string) (string, error) {
	if len(vs) > 1 {
		return "", errors.New("more than one " + what)
	}
	if len(vs) == 0 {
		return "", nil
	}
	return strings.TrimSpace(vs[0]), nil
}

func decodeRequestStd(r io.Reader) (budget.Request, error) {
	var doc stdRequest
	dec := xml.NewTokenDecoder(&depthLimit{d: xml.NewDecoder(r)})
	if err := dec.Decode(&doc); err != nil {
		return budget.Request{}, err
	}
	if doc.XMLName.Local != xmlRequestRoot {
		return budget.Request{}, errors.New("root")
	}
	var req budget.Request
	var err error
	for _, f := range []struct {
		dst *string
		vs  []string
	}{{&req.RequisitionID, doc.RequisitionID}, {&req.Username, doc.Username}, {&req.OrganisationUnit, doc.OrganisationUnit}, {&req.FinanceYear, doc.FinanceYear}} {
		if *f.dst, err = stdOne(f.vs, "field"); err != nil {
			return req, err
		}
	}
	if len(doc.Lines) != 1 {
		return req, errors.New("Lines")
	}
	for i, l := range doc.Lines[0].Line {
		num, err := stdOne(l.LineNumber, "LineNumber")
		if err != nil {
			return req, err
		}
		n, err := strconv.Atoi(num)
		if err != nil {
			return req, err
		}
		acc, err := stdOne(l.Account, "Account")
		if err != nil || acc == "" {
			return req, errors.New("Account")
		}
		amt, err := stdOne(l.Amount, "Amount")
		if err != nil {
			return req, err
		}
		d, err := budget.ParseAmount(amt)
		if err != nil {
			return req, errors.New("line " + strconv.Itoa(i) + ": " + err.Error())
		}
		req.Lines = append(req.Lines, budget.Line{Number: n, Account: acc, Amount: d})
	}
	return req, nil
}

func benchRequestXML(n int) []byte {
	req := budget.Request{RequisitionID: "REQ-1001", Username: "jdoe", OrganisationUnit: "OU-SCI", FinanceYear: "2026"}
	for i := range n {
		req.Lines = append(req.Lines, budget.Line{Number: i + 1, Account: "6100-" + strconv.Itoa(i*7%10_000), Amount: decimal.New(12550+int64(i), -2)})
	}
	return appendRequest(nil, &req)
}

// TestDecodeRequestStdAgrees holds the two readers to the same result on
// the requests the client writes, so that the benchmark compares like
// with like.
func TestDecodeRequestStdAgrees(t *testing.T) {
	doc := benchRequestXML(50)
	a, err := decodeRequest(bytes.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	b, err := decodeRequestStd(bytes.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	if a.RequisitionID != b.RequisitionID || a.Username != b.Username || len(a.Lines) != len(b.Lines) {
		t.Fatalf("hand %+v\nstd %+v", a, b)
	}
	for i := range a.Lines {
		if a.Lines[i].Number != b.Lines[i].Number || a.Lines[i].Account != b.Lines[i].Account || !a.Lines[i].Amount.Equal(b.Lines[i].Amount) {
			t.Fatalf("line %d: hand %+v, std %+v", i, a.Lines[i], b.Lines[i])
		}
	}
}

// BenchmarkDecodeRequest compares the hand-walked reader with
// encoding/xml's Decode into structs on a request of 20 lines and one at
// the 10,000-line limit: the figures accountcode_xml.go's doc quotes.
func BenchmarkDecodeRequest(b *testing.B) {
	for _, n := range []int{20, 10_000} {
		doc := benchRequestXML(n)
		for _, c := range []struct {
			name   string
			decode func(io.Reader) (budget.Request, error)
		}{{"hand", decodeRequest}, {"encoding-xml", decodeRequestStd}} {
			b.Run(c.name+"/"+strconv.Itoa(n), func(b *testing.B) {
				b.SetBytes(int64(len(doc)))
				b.ReportAllocs()
				for b.Loop() {
					if req, err := c.decode(bytes.NewReader(doc)); err != nil || len(req.Lines) != n {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
