package acxml

import (
	"bytes"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"

	"github.com/procurekit/procure"
	"github.com/procurekit/procure/budget"
)

func splitsRequest(currency, lines string) string {
	c := ""
	if currency != "" {
		c = "<Currency>" + currency + "</Currency>"
	}
	return "<AccountCodeValidationRequest><RequisitionId>REQ-1</RequisitionId>" + c + "<Lines>" + lines + "</Lines></AccountCodeValidationRequest>"
}

func TestDecodeSplits(t *testing.T) {
	doc := splitsRequest("JPY", `
<Line><LineNumber>1</LineNumber><Amount>1000</Amount>
  <Splits>
    <Split><Account>6100-200</Account><Percentage>33.3333</Percentage></Split>
    <Unknown><x/></Unknown>
    <Split><Account>6100-300</Account><Percentage>66.6667</Percentage></Split>
  </Splits>
</Line>
<Line><LineNumber>2</LineNumber><Amount>-30</Amount><Splits><Split><Account>A</Account><Amount>-10</Amount></Split><Split><Account>B</Account><Amount>-20</Amount></Split></Splits></Line>
<Line><LineNumber>3</LineNumber><Account>7000</Account><Amount>5</Amount></Line>`)
	req, err := DecodeRequest(strings.NewReader(doc))
	if err != nil {
		t.Fatalf("DecodeRequest: %v", err)
	}
	p := func(s string) decimal.NullDecimal { return decimal.NewNullDecimal(decimal.RequireFromString(s)) }
	want := budget.Request{RequisitionID: "REQ-1", Currency: "JPY", Lines: []budget.Line{
		{Number: 1, Amount: decimal.RequireFromString("1000"), Splits: []budget.Split{
			{Account: "6100-200", Percentage: p("33.3333")}, {Account: "6100-300", Percentage: p("66.6667")}}},
		{Number: 2, Amount: decimal.RequireFromString("-30"), Splits: []budget.Split{
			{Account: "A", Amount: p("-10")}, {Account: "B", Amount: p("-20")}}},
		{Number: 3, Account: "7000", Amount: decimal.RequireFromString("5")},
	}}
	if diff := cmp.Diff(want, req, decimalEq); diff != "" {
		t.Fatalf("DecodeRequest (-want +got):\n%s", diff)
	}
	// Written back, it reads the same: the client and the connector speak
	// one format.
	back, err := DecodeRequest(bytes.NewReader(AppendRequest(nil, &req)))
	if err != nil {
		t.Fatalf("DecodeRequest(AppendRequest): %v", err)
	}
	if diff := cmp.Diff(req, back, decimalEq); diff != "" {
		t.Errorf("round trip (-first +second):\n%s", diff)
	}
}

// Every rule of docs/account-codes.md "Bad input" that the XML can break
// is a field error naming the element by its path.
func TestDecodeSplitsBadInput(t *testing.T) {
	split := func(acc, kind, v string) string {
		return "<Split><Account>" + acc + "</Account><" + kind + ">" + v + "</" + kind + "></Split>"
	}
	line := func(n int, amount, splits string) string {
		return "<Line><LineNumber>" + strconv.Itoa(n) + "</LineNumber><Amount>" + amount + "</Amount><Splits>" + splits + "</Splits></Line>"
	}
	plain := "<Line><LineNumber>9</LineNumber><Account>X</Account><Amount>1</Amount></Line>"
	var many strings.Builder
	for i := range budget.MaxSplits + 1 {
		many.WriteString(split("A"+strconv.Itoa(i), "Amount", "1"))
	}
	cases := []struct {
		name, currency, lines string
		field, rule           string
	}{
		{"percentages short of 100", "", plain + line(1, "100", split("A", "Percentage", "50")+split("B", "Percentage", "49.9999")),
			"Lines/Line[2]/Splits", "the percentages must sum to exactly 100 (got 99.9999)"},
		{"amounts short of the line", "", line(1, "100", split("A", "Amount", "50")+split("B", "Amount", "49.99")),
			"Lines/Line[1]/Splits", "the split amounts must sum to exactly the line's amount 100 (got 99.99)"},
		{"a zero percentage", "", line(1, "100", split("A", "Percentage", "0")+split("B", "Percentage", "100")),
			"Lines/Line[1]/Splits/Split[1]/Percentage", "must be more than 0 and at most 100 (got 0)"},
		{"a percentage over 100", "", line(1, "100", split("A", "Percentage", "100.5")),
			"Lines/Line[1]/Splits/Split[1]/Percentage", "must be more than 0 and at most 100 (got 100.5)"},
		{"five decimals", "", line(1, "100", split("A", "Percentage", "0.00001")+split("B", "Percentage", "99.99999")),
			"Lines/Line[1]/Splits/Split[1]/Percentage", "must have at most 4 decimals (got 0.00001)"},
		{"a percentage that is not a number", "", line(1, "100", split("A", "Percentage", "50%")),
			"Lines/Line[1]/Splits/Split[1]/Percentage", "must be a decimal number"},
		{"a split amount that is not a number", "", line(1, "100", split("A", "Amount", "1e2")),
			"Lines/Line[1]/Splits/Split[1]/Amount", "must be a decimal number"},
		{"both Account and Splits", "", "<Line><LineNumber>1</LineNumber><Account>A</Account><Amount>1</Amount><Splits>" + split("B", "Percentage", "100") + "</Splits></Line>",
			"Lines/Line[1]/Splits", "a line carries either account or splits, not both"},
		{"an empty Splits", "", "<Line><LineNumber>1</LineNumber><Amount>1</Amount><Splits/></Line>",
			"Lines/Line[1]/Splits", "at least one split is required"},
		{"more than 100 splits", "", line(1, "101", many.String()),
			"Lines/Line[1]/Splits", "at most 100 splits per line (got 101)"},
		{"the same account twice", "", line(1, "100", split("A", "Percentage", "50")+split("A", "Percentage", "50")),
			"Lines/Line[1]/Splits/Split[2]/Account", `account "A" appears more than once in the line's splits (it is also split number 1, counted from 1)`},
		{"a split without an account", "", line(1, "100", "<Split><Percentage>100</Percentage></Split>"),
			"Lines/Line[1]/Splits/Split[1]/Account", "is required"},
		{"a split with both", "", line(1, "100", "<Split><Account>A</Account><Percentage>100</Percentage><Amount>100</Amount></Split>"),
			"Lines/Line[1]/Splits/Split[1]", "a split carries either percentage or amount, not both"},
		{"an unknown currency", "XYZ", plain,
			"Currency", `must be an active ISO 4217 currency code such as NZD (got "XYZ")`},
		{"an empty currency", " ", plain, "Currency", "must not be empty"},
		{"an amount finer than the currency", "KWD", "<Line><LineNumber>1</LineNumber><Account>A</Account><Amount>1.0005</Amount></Line>",
			"Lines/Line[1]/Amount", "must be a whole number of KWD minor units (at most 3 decimals; got 1.0005)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := DecodeRequest(strings.NewReader(splitsRequest(c.currency, c.lines)))
			var ve *procure.ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("DecodeRequest: %v; want a ValidationError", err)
			}
			if ve.Fields[0].Field != c.field || !strings.Contains(ve.Fields[0].Rule, c.rule) {
				t.Errorf("DecodeRequest: %v\nwant first %s: ...%s...", err, c.field, c.rule)
			}
		})
	}
}

func TestDecodeSplitsMalformed(t *testing.T) {
	cases := []struct{ name, doc, want string }{
		{"two Splits", splitsRequest("", "<Line><LineNumber>1</LineNumber><Amount>1</Amount><Splits/><Splits/></Line>"),
			"Lines/Line[1] has more than one Splits element"},
		{"two Percentages in a Split", splitsRequest("", "<Line><LineNumber>1</LineNumber><Amount>1</Amount><Splits><Split><Account>A</Account><Percentage>1</Percentage><Percentage>2</Percentage></Split></Splits></Line>"),
			"Lines/Line[1]/Splits/Split[1] has more than one Percentage element"},
		{"text in Splits", splitsRequest("", "<Line><LineNumber>1</LineNumber><Amount>1</Amount><Splits>x</Splits></Line>"),
			"Splits holds text outside its elements"},
		{"text in a Split", splitsRequest("", "<Line><LineNumber>1</LineNumber><Amount>1</Amount><Splits><Split>x<Account>A</Account></Split></Splits></Line>"),
			"Split holds text outside its elements"},
		{"two Currencies", "<AccountCodeValidationRequest><Currency>NZD</Currency><Currency>AUD</Currency><Lines/></AccountCodeValidationRequest>",
			"AccountCodeValidationRequest has more than one Currency element"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := DecodeRequest(strings.NewReader(c.doc))
			if !errors.Is(err, ErrMalformed) || err.Error() != "malformed XML: "+c.want {
				t.Fatalf("error %v\nwant malformed XML: %s", err, c.want)
			}
		})
	}
}

func TestDecodeMessage(t *testing.T) {
	cases := []struct {
		name string
		doc  string
		want Message
	}{
		{"a check", splitsRequest("", "<Line><LineNumber>1</LineNumber><Account>A</Account><Amount>1</Amount></Line>"),
			Message{Kind: Check, Request: budget.Request{RequisitionID: "REQ-1", Lines: []budget.Line{{Number: 1, Account: "A", Amount: decimal.New(1, 0)}}}}},
		{"a release", "<AccountCodeReleaseRequest><RequisitionId> REQ-1 </RequisitionId></AccountCodeReleaseRequest>",
			Message{Kind: Release, RequisitionID: "REQ-1"}},
		{"a confirm in a namespace", `<c:AccountCodeConfirmRequest xmlns:c="urn:x"><c:RequisitionId>REQ-2</c:RequisitionId><c:Note>x</c:Note></c:AccountCodeConfirmRequest>`,
			Message{Kind: Confirm, RequisitionID: "REQ-2"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := DecodeMessage(strings.NewReader(c.doc))
			if err != nil {
				t.Fatalf("DecodeMessage: %v", err)
			}
			if diff := cmp.Diff(c.want, got, decimalEq); diff != "" {
				t.Errorf("DecodeMessage (-want +got):\n%s", diff)
			}
		})
	}
	for _, k := range []Kind{Release, Confirm} {
		// Written by the client, read by the connector.
		got, err := DecodeMessage(bytes.NewReader(AppendCommitRequest(nil, k, "R & D <1>")))
		if err != nil || got.Kind != k || got.RequisitionID != "R & D <1>" {
			t.Errorf("%s round trip: %+v, %v", k.Root(), got, err)
		}
	}

	bad := []struct{ name, doc, field, rule string }{
		{"a release without RequisitionId", "<AccountCodeReleaseRequest/>", "RequisitionId", "is required"},
		{"a confirm with a blank one", "<AccountCodeConfirmRequest><RequisitionId> </RequisitionId></AccountCodeConfirmRequest>", "RequisitionId", "is required"},
		{"a release with one over 255 characters", "<AccountCodeReleaseRequest><RequisitionId>" + strings.Repeat("x", 256) + "</RequisitionId></AccountCodeReleaseRequest>",
			"RequisitionId", "must be at most 255 characters (got 256)"},
		{"a check with one over 255 characters", "<AccountCodeValidationRequest><RequisitionId>" + strings.Repeat("x", 256) + "</RequisitionId><Lines><Line><LineNumber>1</LineNumber><Account>A</Account><Amount>1</Amount></Line></Lines></AccountCodeValidationRequest>",
			"RequisitionId", "must be at most 255 characters (got 256)"},
	}
	for _, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			_, err := DecodeMessage(strings.NewReader(c.doc))
			var ve *procure.ValidationError
			if !errors.As(err, &ve) || len(ve.Fields) != 1 || ve.Fields[0].Field != c.field || ve.Fields[0].Rule != c.rule {
				t.Errorf("DecodeMessage: %v; want %s: %s", err, c.field, c.rule)
			}
		})
	}
	malformedCases := []struct{ name, doc, want string }{
		{"another root", "<AccountCodeCancelRequest/>", `the root element is "AccountCodeCancelRequest"; want ` + MessageRoots},
		{"a reply sent as a request", "<AccountCodeReleaseResponse/>", `the root element is "AccountCodeReleaseResponse"; want ` + MessageRoots},
		{"two RequisitionIds", "<AccountCodeReleaseRequest><RequisitionId>a</RequisitionId><RequisitionId>b</RequisitionId></AccountCodeReleaseRequest>",
			"AccountCodeReleaseRequest has more than one RequisitionId element"},
		{"text in a release", "<AccountCodeReleaseRequest>x<RequisitionId>a</RequisitionId></AccountCodeReleaseRequest>",
			"AccountCodeReleaseRequest holds text outside its elements"},
		{"empty", "", "the document is empty; want a " + MessageRoots + " element"},
	}
	for _, c := range malformedCases {
		t.Run(c.name, func(t *testing.T) {
			_, err := DecodeMessage(strings.NewReader(c.doc))
			if !errors.Is(err, ErrMalformed) || err.Error() != "malformed XML: "+c.want {
				t.Errorf("error %v\nwant malformed XML: %s", err, c.want)
			}
		})
	}
	// DecodeRequest still takes only a check.
	if _, err := DecodeRequest(strings.NewReader("<AccountCodeReleaseRequest><RequisitionId>a</RequisitionId></AccountCodeReleaseRequest>")); !errors.Is(err, ErrMalformed) {
		t.Errorf("DecodeRequest of a release: %v; want malformed", err)
	}
}

func TestCommitResponse(t *testing.T) {
	out := string(AppendCommitResponse(nil, Release, "REQ-1", 3))
	want := `<?xml version="1.0" encoding="UTF-8"?>` + "\n" +
		"<AccountCodeReleaseResponse><RequisitionId>REQ-1</RequisitionId><Changed>3</Changed></AccountCodeReleaseResponse>\n"
	if out != want {
		t.Errorf("AppendCommitResponse = %q; want %q", out, want)
	}
	for _, k := range []Kind{Release, Confirm} {
		n, err := DecodeCommitResponse(bytes.NewReader(AppendCommitResponse(nil, k, "R", 7)), k, "R")
		if err != nil || n != 7 {
			t.Errorf("%v round trip: %d, %v", k, n, err)
		}
	}
	bad := []struct {
		name, doc string
		kind      Kind
		want      string
	}{
		{"the other kind's reply", "<AccountCodeConfirmResponse><Changed>1</Changed></AccountCodeConfirmResponse>", Release,
			`the root element is "AccountCodeConfirmResponse"; want AccountCodeReleaseResponse`},
		{"no Changed", "<AccountCodeReleaseResponse><RequisitionId>R</RequisitionId></AccountCodeReleaseResponse>", Release,
			"AccountCodeReleaseResponse has no Changed element"},
		{"a negative Changed", "<AccountCodeConfirmResponse><Changed>-1</Changed></AccountCodeConfirmResponse>", Confirm,
			`AccountCodeConfirmResponse/Changed must be a non-negative integer (got "-1")`},
		{"Changed not a number", "<AccountCodeConfirmResponse><Changed>two</Changed></AccountCodeConfirmResponse>", Confirm,
			`AccountCodeConfirmResponse/Changed must be a non-negative integer (got "two")`},
		{"another requisition", "<AccountCodeReleaseResponse><RequisitionId>Q</RequisitionId><Changed>1</Changed></AccountCodeReleaseResponse>", Release,
			`AccountCodeReleaseResponse is about requisition "Q", not "R"`},
	}
	for _, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			_, err := DecodeCommitResponse(strings.NewReader(c.doc), c.kind, "R")
			if !errors.Is(err, budget.ErrMalformedReply) || !strings.HasSuffix(err.Error(), "malformed XML: "+c.want) {
				t.Errorf("error %v\nwant a malformed reply: %s", err, c.want)
			}
		})
	}
}

func TestElementPath(t *testing.T) {
	cases := map[string]string{
		"lines":                          "Lines",
		"lines[0].amount":                "Lines/Line[1]/Amount",
		"lines[9].number":                "Lines/Line[10]/LineNumber",
		"lines[1].splits":                "Lines/Line[2]/Splits",
		"lines[1].splits[0]":             "Lines/Line[2]/Splits/Split[1]",
		"lines[1].splits[99].percentage": "Lines/Line[2]/Splits/Split[100]/Percentage",
		"currency":                       "Currency",
		"requisitionId":                  "RequisitionId",
		"something.else":                 "something.else",
		"lines[x].amount":                "lines[x].amount",
	}
	for in, want := range cases {
		if got := ElementPath(in); got != want {
			t.Errorf("ElementPath(%q) = %q; want %q", in, got, want)
		}
	}
}
