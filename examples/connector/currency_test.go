package main

import (
	"errors"
	"io"
	"strings"
	"testing"
)

// -currency is the currency of a request without one: amounts finer than
// its minor units are refused, and split lines are allocated in them
// (docs: account-codes.md "Splits and currency").
func TestConnectorCurrency(t *testing.T) {
	csv := writeCSV(t, "account,budget\nA,100\nB,100\n")
	split := func(currency, amount string) string {
		c := ""
		if currency != "" {
			c = "<Currency>" + currency + "</Currency>"
		}
		return "<AccountCodeValidationRequest>" + c + "<Lines><Line><LineNumber>1</LineNumber><Amount>" + amount + "</Amount><Splits>" +
			"<Split><Account>A</Account><Percentage>50</Percentage></Split><Split><Account>B</Account><Percentage>50</Percentage></Split>" +
			"</Splits></Line></Lines></AccountCodeValidationRequest>"
	}
	cases := []struct {
		name, args, body string
		status           int
		want             string
	}{
		// 200.01 at half each: A gets the leftover cent, 100.01, over its 100.
		{"NZD by default", "", split("", "200.01"), 200, "<Status>Invalid</Status><Message>The lines on account A exceed its available budget.</Message>"},
		{"NZD by default: a cent less is within", "", split("", "200.00"), 200, "<Status>Valid</Status>"},
		{"yen: 201 is 101 and 100", "-currency JPY", split("", "201"), 200, "<Status>Invalid</Status><Message>The lines on account A exceed its available budget.</Message>"},
		{"yen: no cents", "-currency JPY", split("", "200.01"), 400, "Lines/Line[1]/Amount: must be a whole number of JPY minor units (at most 0 decimals; got 200.01)"},
		{"the request's own currency wins", "-currency JPY", split("NZD", "200.00"), 200, "<Status>Valid</Status>"},
		{"an unknown currency", "", split("NZ$", "1"), 400, `Currency: must be an active ISO 4217 currency code such as NZD (got &#34;NZ$&#34;)`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			url, _ := start(t, append([]string{"-table", csv}, strings.Fields(c.args)...)...)
			status, body := xmlPost(t, url, c.body)
			if status != c.status || !strings.Contains(body, c.want) {
				t.Errorf("status %d body\n%s\nwant %d with %s", status, body, c.status, c.want)
			}
		})
	}
}

func TestConnectorCurrencyConfig(t *testing.T) {
	for _, bad := range []string{"nzd", "NZ", "XAU", ""} {
		_, err := parseFlags([]string{"-table", "testdata/budgets.csv", "-currency", bad}, io.Discard)
		var ce *configError
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), "-currency must be an active ISO 4217 currency code") {
			t.Errorf("-currency %q: %v; want a configuration error", bad, err)
		}
	}
	if _, err := parseFlags([]string{"-table", "testdata/budgets.csv", "-currency", "KWD"}, io.Discard); err != nil {
		t.Errorf("-currency KWD: %v", err)
	}
}
