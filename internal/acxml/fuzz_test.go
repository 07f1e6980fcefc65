package acxml

import (
	"bytes"
	"errors"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"

	"github.com/procurekit/procure"
	"github.com/procurekit/procure/budget"
)

// Fuzz targets of the codec, which reads outside input on both sides of
// Interface C (issue 11). CI runs the seed corpora (testdata/fuzz); run
// one with
//
//	go test -run='^$' -fuzz='^FuzzXMLRequest$' -fuzztime=2m -parallel=1 ./internal/acxml/

var decimalEq = cmp.Comparer(func(a, b decimal.Decimal) bool { return a.Equal(b) && a.Exponent() == b.Exponent() })

// checkXMLRejected asserts the shape of a refusal: malformed XML, or a
// ValidationError whose every field is named.
func checkXMLRejected(t *testing.T, err error) {
	t.Helper()
	var ve *procure.ValidationError
	switch {
	case errors.Is(err, ErrMalformed):
	case errors.As(err, &ve):
		if len(ve.Fields) == 0 {
			t.Fatalf("a ValidationError without fields: %v", err)
		}
		for _, f := range ve.Fields {
			if f.Field == "" || f.Rule == "" {
				t.Fatalf("a field error without a field or a rule: %+v", f)
			}
		}
		if len(ve.Fields) > MaxFieldErrors+1 {
			t.Fatalf("%d field errors; want at most %d", len(ve.Fields), MaxFieldErrors+1)
		}
	default:
		t.Fatalf("error %v (%T): neither malformed XML nor a ValidationError", err, err)
	}
}

func FuzzXMLRequest(f *testing.F) {
	for _, s := range []string{
		`<AccountCodeValidationRequest><RequisitionId>REQ-1001</RequisitionId><Username>jdoe</Username><OrganisationUnit>OU-SCI</OrganisationUnit><FinanceYear>2026</FinanceYear><Lines><Line><LineNumber>1</LineNumber><Account>6100-200</Account><Amount>125.50</Amount></Line></Lines></AccountCodeValidationRequest>`,
		`<?xml version="1.0" encoding="UTF-8"?>
<r:AccountCodeValidationRequest xmlns:r="urn:x"><r:Lines>
  <r:Line><r:LineNumber> 2 </r:LineNumber><r:Account>A &amp; B</r:Account><r:Amount>-0.5</r:Amount><r:Extra><x/></r:Extra></r:Line>
</r:Lines></r:AccountCodeValidationRequest>`,
		`<AccountCodeValidationRequest><Lines><Line><LineNumber>1</LineNumber><Account>A</Account><Amount>1</Amount></Line><Line><LineNumber>1</LineNumber><Account></Account><Amount>x</Amount></Line></Lines></AccountCodeValidationRequest>`,
		`<AccountCodeValidationRequest><X><X><X></X></X></X><Lines/></AccountCodeValidationRequest>`,
		`<AccountCodeValidationRequest><Lines><Line><LineNumber>1</LineNumber><Account>&#xD;A&#x9;</Account><Amount>1e3</Amount></Line></Lines></AccountCodeValidationRequest>`,
		`<!DOCTYPE x><AccountCodeValidationRequest/>`,
		`<AccountCodeValidationRequest><Lines>`,
		``,
		`<AccountCodeValidationRequest><Currency>JPY</Currency><Lines><Line><LineNumber>1</LineNumber><Amount>1000</Amount><Splits><Split><Account>A</Account><Percentage>33.3333</Percentage></Split><Split><Account>B</Account><Percentage>66.6667</Percentage></Split></Splits></Line></Lines></AccountCodeValidationRequest>`,
		`<AccountCodeValidationRequest><Currency>KWD</Currency><Lines><Line><LineNumber>1</LineNumber><Amount>-1.5</Amount><Splits><Split><Account>A</Account><Amount>-1.000</Amount></Split><Split><Account>B</Account><Amount>-0.5</Amount></Split></Splits></Line></Lines></AccountCodeValidationRequest>`,
		`<AccountCodeValidationRequest><Currency>xyz</Currency><Lines><Line><LineNumber>1</LineNumber><Account>A</Account><Amount>1</Amount><Splits><Split><Account>A</Account><Percentage>100</Percentage><Amount>1</Amount></Split></Splits></Line></Lines></AccountCodeValidationRequest>`,
		`<AccountCodeValidationRequest><Lines><Line><LineNumber>1</LineNumber><Amount>1</Amount><Splits/></Line></Lines></AccountCodeValidationRequest>`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		req, err := DecodeRequest(bytes.NewReader(data))
		if err != nil {
			checkXMLRejected(t, err)
			return
		}
		if len(req.Lines) == 0 || len(req.Lines) > budget.MaxLines {
			t.Fatalf("accepted %d lines", len(req.Lines))
		}
		// Accepted input round-trips: written by the client's encoder, it
		// reads back the same.
		out := AppendRequest(nil, &req)
		back, err := DecodeRequest(bytes.NewReader(out))
		if err != nil {
			t.Fatalf("the request written back does not read: %v\n%s", err, out)
		}
		if diff := cmp.Diff(req, back, decimalEq); diff != "" {
			t.Fatalf("round trip (-first +second):\n%s\n%s", diff, out)
		}
	})
}

func FuzzXMLReply(f *testing.F) {
	for _, s := range []string{
		`<AccountCodeValidationResponse><Lines><Line><LineNumber>1</LineNumber><Status>Valid</Status><Message></Message></Line><Line><LineNumber>2</LineNumber><Status>Warning</Status><Message>close &lt; 10%</Message></Line></Lines></AccountCodeValidationResponse>`,
		`<r:AccountCodeValidationResponse xmlns:r="urn:finance"><r:Lines><r:Line><r:LineNumber>1</r:LineNumber><r:Status> Valid </r:Status></r:Line></r:Lines></r:AccountCodeValidationResponse>`,
		`<AccountCodeValidationResponse><Lines><Line><LineNumber>x</LineNumber><Status>Maybe</Status></Line></Lines></AccountCodeValidationResponse>`,
		`<AccountCodeValidationResponse><Y><Y/></Y></AccountCodeValidationResponse>`,
		`<AccountCodeValidationRequest/>`,
		`<AccountCodeValidationResponse>`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		results, err := DecodeResponse(bytes.NewReader(data))
		if err != nil {
			if !errors.Is(err, budget.ErrMalformedReply) {
				t.Fatalf("reply error %v; want one matching budget.ErrMalformedReply", err)
			}
			return
		}
		if len(results) > budget.MaxLines {
			t.Fatalf("accepted %d lines", len(results))
		}
		// Accepted input round-trips: written by the connector's encoder,
		// it reads back the same.
		out := AppendResponse(nil, results)
		back, err := DecodeResponse(bytes.NewReader(out))
		if err != nil {
			t.Fatalf("the reply written back does not read: %v\n%s", err, out)
		}
		if !slices.Equal(results, back) && !(len(results) == 0 && len(back) == 0) {
			t.Fatalf("round trip:\n%+v\n%+v\n%s", results, back, out)
		}
	})
}

func FuzzXMLMessage(f *testing.F) {
	for _, s := range []string{
		`<AccountCodeReleaseRequest><RequisitionId>REQ-1001</RequisitionId></AccountCodeReleaseRequest>`,
		`<c:AccountCodeConfirmRequest xmlns:c="urn:x"><c:RequisitionId> R &amp; D </c:RequisitionId><c:X/></c:AccountCodeConfirmRequest>`,
		`<AccountCodeReleaseRequest/>`,
		`<AccountCodeConfirmRequest><RequisitionId>a</RequisitionId><RequisitionId>b</RequisitionId></AccountCodeConfirmRequest>`,
		`<AccountCodeValidationRequest><Lines><Line><LineNumber>1</LineNumber><Account>A</Account><Amount>1</Amount></Line></Lines></AccountCodeValidationRequest>`,
		`<AccountCodeReleaseResponse><Changed>1</Changed></AccountCodeReleaseResponse>`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := DecodeMessage(bytes.NewReader(data))
		if err != nil {
			checkXMLRejected(t, err)
			return
		}
		// Accepted input round-trips through the client's encoders.
		var out []byte
		switch m.Kind {
		case Check:
			out = AppendRequest(nil, &m.Request)
		case Release, Confirm:
			if m.RequisitionID == "" {
				t.Fatalf("accepted a %s without a requisition", m.Kind.Root())
			}
			out = AppendCommitRequest(nil, m.Kind, m.RequisitionID)
		default:
			t.Fatalf("kind %d", m.Kind)
		}
		back, err := DecodeMessage(bytes.NewReader(out))
		if err != nil {
			t.Fatalf("the message written back does not read: %v\n%s", err, out)
		}
		if diff := cmp.Diff(m, back, decimalEq); diff != "" {
			t.Fatalf("round trip (-first +second):\n%s\n%s", diff, out)
		}
	})
}
