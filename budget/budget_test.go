package budget_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"

	"github.com/procurekit/procure"
	"github.com/procurekit/procure/budget"
)

func amount(tb testing.TB, s string) decimal.Decimal {
	tb.Helper()
	d, err := budget.ParseAmount(s)
	if err != nil {
		tb.Fatalf("ParseAmount(%q): %v", s, err)
	}
	return d
}

func line(tb testing.TB, n int, account, amt string) budget.Line {
	tb.Helper()
	return budget.Line{Number: n, Account: account, Amount: amount(tb, amt)}
}

func TestParseStatus(t *testing.T) {
	// docs: account-codes.md: Status is exactly Valid, Invalid or Warning.
	for _, s := range []string{"Valid", "Invalid", "Warning"} {
		got, err := budget.ParseStatus(s)
		if err != nil || string(got) != s {
			t.Errorf("ParseStatus(%q) = %q, %v; want %q, nil", s, got, err, s)
		}
	}
	for _, s := range []string{"", "valid", "VALID", "Ok", " Valid", "Warning "} {
		if got, err := budget.ParseStatus(s); err == nil {
			t.Errorf("ParseStatus(%q) = %q, nil; want an error", s, got)
		}
	}
}

func TestParseAmount(t *testing.T) {
	good := []struct{ in, want string }{
		{"125.50", "125.50"}, // the scale is kept
		{"10.5", "10.5"},
		{"0", "0"},
		{"-3", "-3"},
		{"+0.5", "0.5"},
		{"-0.05", "-0.05"},
		{"007.10", "7.10"},
		{"  42.00\n", "42.00"}, // surrounding white space is ignored
		{"123456789012345678", "123456789012345678"},                                   // 18 digits: the int64 path
		{"1234567890123456789012345.123456789", "1234567890123456789012345.123456789"}, // the big.Int path
		{"-99999999999999999999.99", "-99999999999999999999.99"},
	}
	for _, c := range good {
		d, err := budget.ParseAmount(c.in)
		if err != nil {
			t.Errorf("ParseAmount(%q): %v", c.in, err)
			continue
		}
		if got := budget.FormatAmount(d); got != c.want {
			t.Errorf("FormatAmount(ParseAmount(%q)) = %q; want %q", c.in, got, c.want)
		}
	}
	// docs: account-codes.md: an amount that is empty or not a decimal number is
	// rejected.
	bad := []struct{ in, wantErr string }{
		{"", "must not be empty"},
		{"   ", "must not be empty"},
		{"1e3", "must be a decimal number"},
		{"1,5", "must be a decimal number"},
		{"1 000", "must be a decimal number"},
		{".5", "must be a decimal number"},
		{"5.", "must be a decimal number"},
		{"-", "must be a decimal number"},
		{"+-1", "must be a decimal number"},
		{"NaN", "must be a decimal number"},
		{"Infinity", "must be a decimal number"},
		{"0x10", "must be a decimal number"},
		{"１２", "must be a decimal number"}, // full-width digits
		{"1.2.3", "must be a decimal number"},
		{strings.Repeat("9", budget.MaxAmountLength+1), "at most 50 characters"},
	}
	for _, c := range bad {
		d, err := budget.ParseAmount(c.in)
		if err == nil {
			t.Errorf("ParseAmount(%q) = %v, nil; want an error", c.in, d)
			continue
		}
		if !strings.Contains(err.Error(), c.wantErr) {
			t.Errorf("ParseAmount(%q) error %q; want it to contain %q", c.in, err, c.wantErr)
		}
	}
}

func TestFormatAmount(t *testing.T) {
	cases := []struct {
		name string
		d    decimal.Decimal
		want string
	}{
		{"zero", decimal.Decimal{}, "0"},
		{"scale kept", decimal.New(12550, -2), "125.50"},
		{"leading zeros after the point", decimal.New(-5, -3), "-0.005"},
		{"positive exponent", decimal.New(12, 3), "12000"},
		{"big coefficient", decimal.RequireFromString("-123456789012345678901234.5"), "-123456789012345678901234.5"},
		{"min int64 coefficient", decimal.New(-9223372036854775808, -2), "-92233720368547758.08"},
		{"from a float", decimal.NewFromFloat(0.1).Add(decimal.NewFromFloat(0.2)), "0.3"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := budget.FormatAmount(c.d); got != c.want {
				t.Errorf("FormatAmount = %q; want %q", got, c.want)
			}
		})
	}
}

func TestRequestValidate(t *testing.T) {
	cases := []struct {
		name    string
		lines   []budget.Line
		wantErr string // "" means valid
	}{
		{"one line", []budget.Line{line(t, 1, "6100-200", "1")}, ""},
		{"numbers need not be contiguous or ordered", []budget.Line{line(t, 7, "A", "1"), line(t, 2, "A", "1"), line(t, -1, "B", "0")}, ""},
		{"no lines", nil, "lines: at least one line is required"},
		{"duplicate number", []budget.Line{line(t, 1, "A", "1"), line(t, 2, "A", "1"), line(t, 1, "B", "1")}, "lines[2].number: line number 1 appears more than once"},
		{"blank account", []budget.Line{line(t, 1, " ", "1")}, "lines[0].account: is required"},
		{"every problem listed", []budget.Line{line(t, 1, "", "1"), line(t, 1, "A", "1")}, "lines[0].account: is required; lines[1].number: line number 1 appears more than once"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req := budget.Request{Lines: c.lines}
			err := req.Validate()
			if c.wantErr == "" {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			if err == nil || err.Error() != c.wantErr {
				t.Fatalf("Validate error %v; want %q", err, c.wantErr)
			}
			if !errors.Is(err, procure.ErrInvalid) {
				t.Errorf("error does not match procure.ErrInvalid")
			}
		})
	}
}

func TestCheckReply(t *testing.T) {
	req := budget.Request{Lines: []budget.Line{line(t, 1, "A", "1"), line(t, 2, "B", "2"), line(t, 5, "C", "3")}}
	r := func(n int, s budget.Status, m string) budget.Result {
		return budget.Result{LineNumber: n, Status: s, Message: m}
	}
	cases := []struct {
		name    string
		results []budget.Result
		want    []budget.Result // after normalisation, when the reply is good
		wantErr string
	}{
		{
			name:    "in order",
			results: []budget.Result{r(1, budget.Valid, ""), r(2, budget.Warning, "w"), r(5, budget.Invalid, "i")},
			want:    []budget.Result{r(1, budget.Valid, ""), r(2, budget.Warning, "w"), r(5, budget.Invalid, "i")},
		},
		{
			name:    "any order is put in request order",
			results: []budget.Result{r(5, budget.Invalid, "i"), r(1, budget.Valid, ""), r(2, budget.Warning, "w")},
			want:    []budget.Result{r(1, budget.Valid, ""), r(2, budget.Warning, "w"), r(5, budget.Invalid, "i")},
		},
		{name: "missing line", results: []budget.Result{r(1, budget.Valid, ""), r(5, budget.Valid, "")}, wantErr: "malformed reply: no result for line 2"},
		{name: "no lines at all", results: nil, wantErr: "malformed reply: no result for line 1"},
		{name: "extra line", results: []budget.Result{r(1, budget.Valid, ""), r(2, budget.Valid, ""), r(5, budget.Valid, ""), r(6, budget.Valid, "")}, wantErr: "malformed reply: line 6 is not a line of the request"},
		{name: "duplicate line", results: []budget.Result{r(1, budget.Valid, ""), r(2, budget.Valid, ""), r(2, budget.Valid, ""), r(5, budget.Valid, "")}, wantErr: "malformed reply: line 2 is answered more than once"},
		{name: "duplicate in place of a missing one", results: []budget.Result{r(1, budget.Valid, ""), r(1, budget.Valid, ""), r(5, budget.Valid, "")}, wantErr: "malformed reply: line 1 is answered more than once"},
		{name: "unknown status", results: []budget.Result{r(1, budget.Valid, ""), r(2, "OK", ""), r(5, budget.Valid, "")}, wantErr: `malformed reply: line 2: unknown status "OK" (want Valid, Invalid or Warning)`},
		{name: "status in the wrong case", results: []budget.Result{r(1, "valid", ""), r(2, budget.Valid, ""), r(5, budget.Valid, "")}, wantErr: `malformed reply: line 1: unknown status "valid"`},
		{name: "empty status", results: []budget.Result{r(1, budget.Valid, ""), r(2, budget.Valid, ""), r(5, "", "")}, wantErr: `malformed reply: line 5: unknown status ""`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := budget.CheckReply(req, c.results)
			if c.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), c.wantErr) {
					t.Fatalf("CheckReply error %v; want one starting %q", err, c.wantErr)
				}
				if !errors.Is(err, budget.ErrMalformedReply) {
					t.Errorf("error does not match ErrMalformedReply")
				}
				return
			}
			if err != nil {
				t.Fatalf("CheckReply: %v", err)
			}
			if diff := cmp.Diff(c.want, c.results); diff != "" {
				t.Errorf("results after CheckReply (-want +got):\n%s", diff)
			}
		})
	}

	t.Run("a request not in line number order", func(t *testing.T) {
		unsorted := budget.Request{Lines: []budget.Line{line(t, 5, "C", "3"), line(t, 1, "A", "1"), line(t, 2, "B", "2")}}
		results := []budget.Result{r(1, budget.Valid, ""), r(2, budget.Warning, "w"), r(5, budget.Invalid, "i")}
		if err := budget.CheckReply(unsorted, results); err != nil {
			t.Fatalf("CheckReply: %v", err)
		}
		want := []budget.Result{r(5, budget.Invalid, "i"), r(1, budget.Valid, ""), r(2, budget.Warning, "w")}
		if diff := cmp.Diff(want, results); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
		for _, bad := range [][]budget.Result{
			{r(1, budget.Valid, ""), r(2, budget.Valid, "")},
			{r(1, budget.Valid, ""), r(2, budget.Valid, ""), r(5, budget.Valid, ""), r(3, budget.Valid, "")},
			{r(1, budget.Valid, ""), r(1, budget.Valid, ""), r(5, budget.Valid, "")},
		} {
			if err := budget.CheckReply(unsorted, bad); !errors.Is(err, budget.ErrMalformedReply) {
				t.Errorf("CheckReply(%v) = %v; want ErrMalformedReply", bad, err)
			}
		}
	})

	t.Run("a request with duplicate line numbers cannot be answered", func(t *testing.T) {
		dup := budget.Request{Lines: []budget.Line{line(t, 1, "A", "1"), line(t, 1, "B", "1")}}
		err := budget.CheckReply(dup, []budget.Result{r(1, budget.Valid, ""), r(1, budget.Valid, "")})
		if !errors.Is(err, procure.ErrInvalid) {
			t.Fatalf("CheckReply error %v; want one matching procure.ErrInvalid", err)
		}
	})

	t.Run("long messages are cut to 255 characters", func(t *testing.T) {
		// docs: account-codes.md: a longer message is cut, not rejected; characters,
		// not bytes: é is two bytes.
		long := strings.Repeat("é", 300)
		results := []budget.Result{r(1, budget.Warning, long), r(2, budget.Valid, "bad \xff byte"), r(5, budget.Valid, strings.Repeat("x", 255))}
		if err := budget.CheckReply(req, results); err != nil {
			t.Fatalf("CheckReply: %v", err)
		}
		if got, want := results[0].Message, strings.Repeat("é", 255); got != want {
			t.Errorf("message has %d characters; want 255", len([]rune(got)))
		}
		if got, want := results[1].Message, "bad \uFFFD byte"; got != want {
			t.Errorf("message %q; want %q", got, want)
		}
		if got := len(results[2].Message); got != 255 {
			t.Errorf("a message of exactly 255 characters became %d", got)
		}
	})
}

func TestTruncateMessage(t *testing.T) {
	cases := []struct{ in, want string }{
		{"", ""},
		{"short", "short"},
		{strings.Repeat("a", 256), strings.Repeat("a", 255)},
		{strings.Repeat("日本", 200), strings.Repeat("日本", 127) + "日"},
	}
	for _, c := range cases {
		if got := budget.TruncateMessage(c.in); got != c.want {
			t.Errorf("TruncateMessage(%d chars) = %d chars; want %d", len([]rune(c.in)), len([]rune(got)), len([]rune(c.want)))
		}
	}
}

func TestValidatorFunc(t *testing.T) {
	var got budget.Request
	v := budget.ValidatorFunc(func(_ context.Context, req budget.Request) ([]budget.Result, error) {
		got = req
		return []budget.Result{{LineNumber: 1, Status: budget.Valid}}, nil
	})
	req := budget.Request{Username: "jdoe", Lines: []budget.Line{line(t, 1, "A", "1")}}
	res, err := v.Validate(context.Background(), req)
	if err != nil || len(res) != 1 || got.Username != "jdoe" {
		t.Fatalf("ValidatorFunc.Validate = %v, %v (saw %+v)", res, err, got)
	}
}
