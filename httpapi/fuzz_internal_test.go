package httpapi

import (
	"bytes"
	"errors"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"

	"github.com/procurekit/procure"
	"github.com/procurekit/procure/budget"
)

// Fuzz targets of the parsers of httpapi that read outside input (issue
// 11): the XML request and reply of Interface C, and the query parameters
// of the supplier list. CI runs the seed corpora (testdata/fuzz); run one
// with
//
//	go test -run='^$' -fuzz='^FuzzXMLRequest$' -fuzztime=2m -parallel=1 ./httpapi/

var decimalEq = cmp.Comparer(func(a, b decimal.Decimal) bool { return a.Equal(b) && a.Exponent() == b.Exponent() })

// checkXMLRejected asserts the shape of a refusal: malformed XML, or a
// ValidationError whose every field is named.
func checkXMLRejected(t *testing.T, err error) {
	t.Helper()
	var ve *procure.ValidationError
	switch {
	case errors.Is(err, errMalformedXML):
	case errors.As(err, &ve):
		if len(ve.Fields) == 0 {
			t.Fatalf("a ValidationError without fields: %v", err)
		}
		for _, f := range ve.Fields {
			if f.Field == "" || f.Rule == "" {
				t.Fatalf("a field error without a field or a rule: %+v", f)
			}
		}
		if len(ve.Fields) > maxFieldErrors+1 {
			t.Fatalf("%d field errors; want at most %d", len(ve.Fields), maxFieldErrors+1)
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
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		req, err := decodeRequest(bytes.NewReader(data))
		if err != nil {
			checkXMLRejected(t, err)
			return
		}
		if len(req.Lines) == 0 || len(req.Lines) > budget.MaxLines {
			t.Fatalf("accepted %d lines", len(req.Lines))
		}
		// Accepted input round-trips: written by the client's encoder, it
		// reads back the same.
		out := appendRequest(nil, &req)
		back, err := decodeRequest(bytes.NewReader(out))
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
		results, err := decodeResponse(bytes.NewReader(data))
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
		out := appendResponse(nil, results)
		back, err := decodeResponse(bytes.NewReader(out))
		if err != nil {
			t.Fatalf("the reply written back does not read: %v\n%s", err, out)
		}
		if !slices.Equal(results, back) && !(len(results) == 0 && len(back) == 0) {
			t.Fatalf("round trip:\n%+v\n%+v\n%s", results, back, out)
		}
	})
}

func FuzzModifiedSince(f *testing.F) {
	for _, s := range []string{"2026-05-01", "2026-05-01T09:30:00+12:00", "2026-05-01T09:30:00Z", "2026-05-01t09:30:00.123456789123z",
		"2026-05-01T09:30:00 12:00", "2026-05-01T09:30:00", "2026-02-29", "2024-02-29", "2026-13-01", "2026-05-01T24:00:00Z",
		"2026-05-01T09:30:60Z", "2026-05-01T09:30:00+24:00", "0000-01-01T00:00:00-23:59", "9999-12-31T23:59:59.9999999999+00:00", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		ts, rule := parseModifiedSince(v)
		if rule != "" {
			if !ts.IsZero() {
				t.Fatalf("parseModifiedSince(%q) = %v with rule %q", v, ts, rule)
			}
			return
		}
		// Accepted input round-trips: the instant written as RFC 3339
		// (and as a date when it is midnight UTC) reads back equal.
		for _, s := range []string{ts.Format(time.RFC3339Nano), ts.In(time.FixedZone("", 12*3600+45*60)).Format(time.RFC3339Nano)} {
			if s[0] == '-' || s[4] != '-' {
				// A year RFC 3339 cannot write: the offset or the
				// rounding up of a fraction beyond nanoseconds (at
				// 9999-12-31T23:59:59.9999999999Z) moved the instant out
				// of 0000-9999. As a filter it is still exact.
				continue
			}
			back, rule := parseModifiedSince(s)
			if rule != "" || !back.Equal(ts) {
				t.Fatalf("parseModifiedSince(%q) = %v; %q reads back as %v (%q)", v, ts, s, back, rule)
			}
		}
		// time.Parse agrees, where it can read the value, up to the
		// rounding: it cuts digits beyond nanoseconds, parseModifiedSince
		// rounds them up (so that modifiedDate >= value stays exact).
		if len(v) > 10 && !strings.ContainsAny(v, " tz") {
			p, err := time.Parse(time.RFC3339Nano, v)
			if d := ts.Sub(p); err == nil && (d < 0 || d > time.Nanosecond) {
				t.Fatalf("parseModifiedSince(%q) = %v; time.Parse says %v", v, ts, p)
			}
		}
	})
}

func FuzzSupplierListQuery(f *testing.F) {
	for _, s := range []string{"", "query=acme&modifiedSince=2026-05-01&page=1&size=50&sort=name,desc", "query=%00", "query=%ff",
		"page=9223372036854775807&query=a", "query=" + strings.Repeat("a", 256), "modifiedSince=2026-05-01T09:30:00+12:00",
		"modifiedSince=2026-05-01T09:30:00%2012:00", "sort=modifiedDate,DESC&sort=name", "size=0&page=-1&sort=x"} {
		f.Add(s)
	}
	fields := []string{"query", "modifiedSince", "page", "size", "sort"}
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		lq, err := parseListQuery(q)
		if err != nil {
			var ve *procure.ValidationError
			if !errors.As(err, &ve) || ve.Source != procure.SourceQuery || len(ve.Fields) == 0 {
				t.Fatalf("parseListQuery(%q): %v; want a query ValidationError", raw, err)
			}
			for _, fe := range ve.Fields {
				if !slices.Contains(fields, fe.Field) || fe.Rule == "" {
					t.Fatalf("parseListQuery(%q): field error %+v", raw, fe)
				}
			}
			return
		}
		if strings.IndexByte(lq.Query, 0) >= 0 || len([]rune(lq.Query)) > 255 {
			t.Fatalf("accepted query %q", lq.Query)
		}
		if lq.Page.Offset()+lq.Page.Size < 0 {
			t.Fatalf("offset overflows: %+v", lq.Page)
		}
		// Accepted input round-trips: the query written back parses to
		// the same ListQuery.
		dir := "asc"
		if lq.Page.Sort.Desc {
			dir = "desc"
		}
		back := url.Values{"page": {strconv.Itoa(lq.Page.Page)}, "size": {strconv.Itoa(lq.Page.Size)}, "sort": {lq.Page.Sort.Field + "," + dir}}
		if lq.Query != "" {
			back.Set("query", lq.Query)
		}
		if !lq.ModifiedSince.IsZero() {
			if ms := lq.ModifiedSince.UTC().Format(time.RFC3339Nano); ms[4] == '-' {
				back.Set("modifiedSince", ms)
			} else {
				return // a year RFC 3339 cannot write (see FuzzModifiedSince)
			}
		}
		lq2, err := parseListQuery(back)
		if err != nil || lq2.Query != lq.Query || !lq2.ModifiedSince.Equal(lq.ModifiedSince) || lq2.Page != lq.Page {
			t.Fatalf("parseListQuery(%q) = %+v; written back as %s it parses to %+v, %v", raw, lq, back.Encode(), lq2, err)
		}
	})
}
