package budget_test

import (
	"errors"
	"math/big"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"

	"github.com/procurekit/procure"
	"github.com/procurekit/procure/budget"
)

// pct is a split by percentage.
func pct(tb testing.TB, account, p string) budget.Split {
	tb.Helper()
	return budget.Split{Account: account, Percentage: decimal.NewNullDecimal(amount(tb, p))}
}

// amt is a split by amount.
func amt(tb testing.TB, account, a string) budget.Split {
	tb.Helper()
	return budget.Split{Account: account, Amount: decimal.NewNullDecimal(amount(tb, a))}
}

func splitLine(tb testing.TB, n int, total string, splits ...budget.Split) budget.Line {
	tb.Helper()
	return budget.Line{Number: n, Amount: amount(tb, total), Splits: splits}
}

func TestMinorUnits(t *testing.T) {
	cases := []struct {
		code  string
		units int
		ok    bool
	}{
		{"NZD", 2, true}, {"AUD", 2, true}, {"USD", 2, true}, {"EUR", 2, true},
		{"JPY", 0, true}, {"KRW", 0, true}, {"XOF", 0, true},
		{"KWD", 3, true}, {"BHD", 3, true}, {"OMR", 3, true}, {"JOD", 3, true},
		{"TND", 3, true}, {"LYD", 3, true}, {"IQD", 3, true},
		{"CLF", 4, true}, {"UYW", 4, true},
		{"nzd", 0, false}, {"NZ", 0, false}, {"NZDD", 0, false}, {"", 0, false},
		{"XAU", 0, false}, {"XXX", 0, false}, {"HRK", 0, false}, {"ZZZ", 0, false},
	}
	for _, c := range cases {
		units, ok := budget.MinorUnits(c.code)
		if units != c.units || ok != c.ok {
			t.Errorf("MinorUnits(%q) = %d, %v; want %d, %v", c.code, units, ok, c.units, c.ok)
		}
	}
}

func TestShares(t *testing.T) {
	cases := []struct {
		name     string
		line     budget.Line
		currency string
		want     []string // account=amount
	}{
		{"unsplit", line(t, 1, "A", "125.50"), "", []string{"A=125.50"}},
		{"thirds: the leftover cent to the largest remainder",
			splitLine(t, 1, "100.00", pct(t, "A", "33.3333"), pct(t, "B", "33.3333"), pct(t, "C", "33.3334")), "NZD",
			[]string{"A=33.33", "B=33.33", "C=33.34"}},
		{"equal remainders: ties to the earlier split",
			splitLine(t, 1, "100", pct(t, "A", "50"), pct(t, "B", "25"), pct(t, "C", "25")), "NZD",
			[]string{"A=50.00", "B=25.00", "C=25.00"}},
		{"one cent over three: the first split gets it",
			splitLine(t, 1, "0.01", pct(t, "A", "33.3333"), pct(t, "B", "33.3333"), pct(t, "C", "33.3334")), "NZD",
			[]string{"A=0.00", "B=0.00", "C=0.01"}},
		{"two cents over three equal-ish: largest remainders first",
			splitLine(t, 1, "0.02", pct(t, "A", "33.3334"), pct(t, "B", "33.3333"), pct(t, "C", "33.3333")), "NZD",
			[]string{"A=0.01", "B=0.01", "C=0.00"}},
		{"ties among equal shares go to the earlier splits",
			splitLine(t, 1, "10.00", pct(t, "A", "25"), pct(t, "B", "25"), pct(t, "C", "25"), pct(t, "D", "25")), "",
			[]string{"A=2.50", "B=2.50", "C=2.50", "D=2.50"}},
		{"ties: three cents over four quarters of 0.03",
			splitLine(t, 1, "0.03", pct(t, "A", "25"), pct(t, "B", "25"), pct(t, "C", "25"), pct(t, "D", "25")), "",
			[]string{"A=0.01", "B=0.01", "C=0.01", "D=0.00"}},
		{"yen has no minor unit",
			splitLine(t, 1, "1000", pct(t, "A", "33.3333"), pct(t, "B", "33.3333"), pct(t, "C", "33.3334")), "JPY",
			[]string{"A=333", "B=333", "C=334"}},
		{"dinar has three",
			splitLine(t, 1, "1", pct(t, "A", "33.3333"), pct(t, "B", "66.6667")), "KWD",
			[]string{"A=0.333", "B=0.667"}},
		{"a credit mirrors its debit",
			splitLine(t, 1, "-100.00", pct(t, "A", "33.3333"), pct(t, "B", "33.3333"), pct(t, "C", "33.3334")), "NZD",
			[]string{"A=-33.33", "B=-33.33", "C=-33.34"}},
		{"amount splits are taken as given",
			splitLine(t, 1, "100", amt(t, "A", "60.10"), amt(t, "B", "39.90")), "NZD",
			[]string{"A=60.10", "B=39.90"}},
		{"an amount beyond an int64 of cents",
			splitLine(t, 1, "123456789012345678901234.56", pct(t, "A", "50"), pct(t, "B", "50")), "NZD",
			[]string{"A=61728394506172839450617.28", "B=61728394506172839450617.28"}},
		{"beyond an int64, with a leftover",
			splitLine(t, 1, "123456789012345678901234.57", pct(t, "A", "50"), pct(t, "B", "50")), "NZD",
			[]string{"A=61728394506172839450617.29", "B=61728394506172839450617.28"}},
		{"one split of 100", splitLine(t, 1, "7.77", pct(t, "A", "100")), "", []string{"A=7.77"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got []string
			for _, s := range c.line.Shares(c.currency) {
				got = append(got, s.Account+"="+budget.FormatAmount(s.Amount))
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("Shares (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSharesSumToTheLine allocates random lines at random valid
// percentages and checks the rules against a brute-force reference: the
// shares sum to the line exactly, each is its exact share rounded down or
// up by one unit, and the units go to the largest remainders, ties first.
// Each line is allocated again times 10^18, beyond an int64 of cents, to
// check the math/big path alike.
func TestSharesSumToTheLine(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 1))
	million := big.NewInt(1_000_000)
	for range 2000 {
		n := 1 + rng.IntN(7)
		// Random percentages in units of 0.0001 summing to 100.
		parts := make([]int64, n)
		left := int64(1_000_000)
		for i := range n - 1 {
			parts[i] = 1 + rng.Int64N(left-int64(n-1-i))
			left -= parts[i]
		}
		parts[n-1] = left
		cents := big.NewInt(rng.Int64N(10_000_000) - 5_000_000)
		for _, shift := range []int64{0, 18} {
			c := new(big.Int).Mul(cents, new(big.Int).Exp(big.NewInt(10), big.NewInt(shift), nil))
			l := budget.Line{Number: 1, Amount: decimal.NewFromBigInt(c, -2)}
			for i, p := range parts {
				l.Splits = append(l.Splits, budget.Split{Account: "A" + strconv.Itoa(i), Percentage: decimal.NewNullDecimal(decimal.New(p, -4))})
			}
			// Reference: floors and remainders of |c| * p / 10^6, the
			// leftover to the largest remainders, the earlier first.
			abs := new(big.Int).Abs(c)
			floors := make([]*big.Int, n)
			rems := make([]*big.Int, n)
			given := new(big.Int)
			for i, p := range parts {
				floors[i], rems[i] = new(big.Int).QuoRem(new(big.Int).Mul(abs, big.NewInt(p)), million, new(big.Int))
				given.Add(given, floors[i])
			}
			for k := new(big.Int).Sub(abs, given).Int64(); k > 0; k-- {
				best := -1
				for i := range n {
					if rems[i].Sign() >= 0 && (best < 0 || rems[i].Cmp(rems[best]) > 0) {
						best = i
					}
				}
				floors[best].Add(floors[best], big.NewInt(1))
				rems[best] = big.NewInt(-1)
			}
			sum := decimal.Zero
			for i, s := range l.Shares("NZD") {
				sum = sum.Add(s.Amount)
				want := floors[i]
				if c.Sign() < 0 {
					want.Neg(want)
				}
				if !s.Amount.Equal(decimal.NewFromBigInt(want, -2)) {
					t.Fatalf("%v at %v: share %d = %v; want %v", l.Amount, parts, i, s.Amount, decimal.NewFromBigInt(want, -2))
				}
			}
			if !sum.Equal(l.Amount) {
				t.Fatalf("%v at %v: shares sum to %v", l.Amount, parts, sum)
			}
		}
	}
}

func TestRequestValidateSplits(t *testing.T) {
	many := make([]budget.Split, budget.MaxSplits+1)
	for i := range many {
		many[i] = budget.Split{Account: "A" + strconv.Itoa(i), Amount: decimal.NewNullDecimal(decimal.New(1, 0))}
	}
	hundred := make([]budget.Split, budget.MaxSplits)
	for i := range hundred {
		hundred[i] = budget.Split{Account: "A" + strconv.Itoa(i), Percentage: decimal.NewNullDecimal(decimal.New(1, 0))}
	}
	cases := []struct {
		name      string
		req       budget.Request
		wantField string // "" means valid
		wantRule  string
	}{
		{"percentages", budget.Request{Currency: "NZD", Lines: []budget.Line{
			splitLine(t, 1, "100.00", pct(t, "A", "33.3333"), pct(t, "B", "33.3333"), pct(t, "C", "33.3334"))}}, "", ""},
		{"amounts", budget.Request{Lines: []budget.Line{
			splitLine(t, 1, "100.00", amt(t, "A", "60"), amt(t, "B", "40.00"))}}, "", ""},
		{"a credit split by amounts", budget.Request{Lines: []budget.Line{
			splitLine(t, 1, "-10", amt(t, "A", "-6"), amt(t, "B", "-4"))}}, "", ""},
		{"trailing zeros do not count as decimals", budget.Request{Currency: "NZD", Lines: []budget.Line{
			splitLine(t, 1, "100.0000", pct(t, "A", "50.000000"), pct(t, "B", "50"))}}, "", ""},
		{"a percentage with many trailing zeros", budget.Request{Lines: []budget.Line{
			splitLine(t, 1, "1", pct(t, "A", "50.000000000000000000000000"), pct(t, "B", "50"))}}, "", ""},
		{"exactly MaxSplits", budget.Request{Lines: []budget.Line{{Number: 1, Amount: decimal.New(1, 0), Splits: hundred}}}, "", ""},
		{"percentages short of 100", budget.Request{Lines: []budget.Line{
			splitLine(t, 1, "100", pct(t, "A", "33.3333"), pct(t, "B", "33.3333"), pct(t, "C", "33.3333"))}},
			"lines[0].splits", "the percentages must sum to exactly 100 (got 99.9999)"},
		{"percentages over 100", budget.Request{Lines: []budget.Line{
			splitLine(t, 1, "100", pct(t, "A", "60"), pct(t, "B", "40.0001"))}},
			"lines[0].splits", "must sum to exactly 100"},
		{"amounts short of the line", budget.Request{Lines: []budget.Line{
			splitLine(t, 1, "100", amt(t, "A", "60"), amt(t, "B", "39.99"))}},
			"lines[0].splits", "the split amounts must sum to exactly the line's amount 100 (got 99.99)"},
		{"a zero percentage", budget.Request{Lines: []budget.Line{
			splitLine(t, 1, "100", pct(t, "A", "0"), pct(t, "B", "100"))}},
			"lines[0].splits[0].percentage", "must be more than 0 and at most 100 (got 0)"},
		{"a negative percentage", budget.Request{Lines: []budget.Line{
			splitLine(t, 1, "100", pct(t, "A", "-10"), pct(t, "B", "110"))}},
			"lines[0].splits[0].percentage", "must be more than 0 and at most 100"},
		{"a percentage over 100", budget.Request{Lines: []budget.Line{
			splitLine(t, 1, "100", pct(t, "A", "100.0001"))}},
			"lines[0].splits[0].percentage", "must be more than 0 and at most 100 (got 100.0001)"},
		{"five decimals", budget.Request{Lines: []budget.Line{
			splitLine(t, 1, "100", pct(t, "A", "33.33333"), pct(t, "B", "66.66667"))}},
			"lines[0].splits[0].percentage", "must have at most 4 decimals (got 33.33333)"},
		{"both account and splits", budget.Request{Lines: []budget.Line{
			{Number: 1, Account: "A", Amount: decimal.New(1, 0), Splits: []budget.Split{pct(t, "B", "100")}}}},
			"lines[0].splits", "a line carries either account or splits, not both"},
		{"empty splits", budget.Request{Lines: []budget.Line{{Number: 1, Amount: decimal.New(1, 0), Splits: []budget.Split{}}}},
			"lines[0].splits", "at least one split is required"},
		{"more than MaxSplits", budget.Request{Lines: []budget.Line{{Number: 1, Amount: decimal.New(101, 0), Splits: many}}},
			"lines[0].splits", "at most 100 splits per line (got 101)"},
		{"the same account twice", budget.Request{Lines: []budget.Line{
			line(t, 1, "X", "1"),
			splitLine(t, 2, "100", pct(t, "A", "50"), pct(t, "A", "50"))}},
			"lines[1].splits[1].account", `account "A" appears more than once in the line's splits (it is also split number 1, counted from 1)`},
		{"the same account twice on a long line", budget.Request{Lines: []budget.Line{{Number: 1, Amount: decimal.New(100, 0),
			Splits: append(append([]budget.Split(nil), hundred[:20]...), pct(t, "A3", "1"))}}},
			"lines[0].splits[20].account", `account "A3" appears more than once in the line's splits (it is also split number 4, counted from 1)`},
		{"a blank split account", budget.Request{Lines: []budget.Line{
			splitLine(t, 1, "100", pct(t, " ", "100"))}},
			"lines[0].splits[0].account", "is required"},
		{"a split with both", budget.Request{Lines: []budget.Line{
			splitLine(t, 1, "100", budget.Split{Account: "A", Percentage: decimal.NewNullDecimal(decimal.New(100, 0)), Amount: decimal.NewNullDecimal(decimal.New(100, 0))})}},
			"lines[0].splits[0]", "a split carries either percentage or amount, not both"},
		{"a split with neither", budget.Request{Lines: []budget.Line{
			splitLine(t, 1, "100", budget.Split{Account: "A"})}},
			"lines[0].splits[0]", "a split needs a percentage or an amount"},
		{"mixed kinds", budget.Request{Lines: []budget.Line{
			splitLine(t, 1, "100", pct(t, "A", "50"), amt(t, "B", "50"))}},
			"lines[0].splits[1]", "the splits of a line must all use percentage or all use amount"},
		{"a split amount against the line's sign", budget.Request{Lines: []budget.Line{
			splitLine(t, 1, "100", amt(t, "A", "150"), amt(t, "B", "-50"))}},
			"lines[0].splits[1].amount", "must have the sign of the line's amount 100 (got -50)"},
		{"a split amount finer than the currency", budget.Request{Currency: "NZD", Lines: []budget.Line{
			splitLine(t, 1, "100", amt(t, "A", "50.005"), amt(t, "B", "49.995"))}},
			"lines[0].splits[0].amount", "must be a whole number of NZD minor units (at most 2 decimals; got 50.005)"},
		{"an unknown currency", budget.Request{Currency: "ABC", Lines: []budget.Line{line(t, 1, "A", "1")}},
			"currency", `must be an active ISO 4217 currency code such as NZD (got "ABC")`},
		{"a lower-case currency", budget.Request{Currency: "nzd", Lines: []budget.Line{line(t, 1, "A", "1")}},
			"currency", "must be an active ISO 4217 currency code"},
		{"a line amount finer than the currency", budget.Request{Currency: "JPY", Lines: []budget.Line{line(t, 1, "A", "100.5")}},
			"lines[0].amount", "must be a whole number of JPY minor units (at most 0 decimals; got 100.5)"},
		{"no currency: no minor-unit check", budget.Request{Lines: []budget.Line{line(t, 1, "A", "100.005")}}, "", ""},
		{"a requisition id of 255 characters", budget.Request{RequisitionID: strings.Repeat("é", 255), Lines: []budget.Line{line(t, 1, "A", "1")}}, "", ""},
		{"a requisition id over 255 characters", budget.Request{RequisitionID: strings.Repeat("é", 256), Lines: []budget.Line{line(t, 1, "A", "1")}},
			"requisitionId", "must be at most 255 characters (got 256)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.req.Validate()
			if c.wantField == "" {
				if err != nil {
					t.Fatalf("Validate: %v; want nil", err)
				}
				return
			}
			var ve *procure.ValidationError
			if !errors.Is(err, procure.ErrInvalid) || !errors.As(err, &ve) {
				t.Fatalf("Validate = %v; want a *procure.ValidationError", err)
			}
			if ve.Fields[0].Field != c.wantField || !strings.Contains(ve.Fields[0].Rule, c.wantRule) {
				t.Errorf("Validate = %v; want first %s: ...%s...", err, c.wantField, c.wantRule)
			}
		})
	}
}

func TestRequestValidateBoundsFieldErrors(t *testing.T) {
	req := budget.Request{}
	for i := range 30 {
		req.Lines = append(req.Lines, splitLine(t, i, "1", pct(t, "A", "50")))
	}
	var ve *procure.ValidationError
	if err := req.Validate(); !errors.As(err, &ve) {
		t.Fatalf("Validate = %v; want a *procure.ValidationError", err)
	}
	if len(ve.Fields) != budget.MaxFieldErrors || ve.Omitted != 30-budget.MaxFieldErrors {
		t.Errorf("Validate: %d fields, %d omitted; want %d and %d", len(ve.Fields), ve.Omitted, budget.MaxFieldErrors, 30-budget.MaxFieldErrors)
	}
}

func TestTableCheckSplits(t *testing.T) {
	tab := testTable(t) // 6100-200: 987.65, 6100-300: 4747.47, 7200-100: -383.83
	absent := func(acc string) budget.Result {
		return budget.Result{Status: budget.Invalid, Message: "Account " + acc + " has no budget."}
	}
	over := func(s budget.Status, acc string) budget.Result {
		return budget.Result{Status: s, Message: "The lines on account " + acc + " exceed its available budget."}
	}
	valid := budget.Result{Status: budget.Valid}
	cases := []struct {
		name       string
		req        budget.Request
		overBudget budget.Status
		want       []budget.Result
	}{
		{"a split line within both budgets", budget.Request{Lines: []budget.Line{
			splitLine(t, 1, "1000", pct(t, "6100-200", "50"), pct(t, "6100-300", "50"))}}, "",
			[]budget.Result{valid}},
		{"the worst split decides and names its account", budget.Request{Lines: []budget.Line{
			splitLine(t, 1, "100", pct(t, "6100-200", "50"), pct(t, "9999-999", "25"), pct(t, "6100-300", "25"))}}, "",
			[]budget.Result{absent("9999-999")}},
		{"Invalid beats Warning whatever the order", budget.Request{Lines: []budget.Line{
			splitLine(t, 1, "2000", pct(t, "6100-200", "60"), pct(t, "9999-999", "40"))}}, budget.Warning,
			[]budget.Result{absent("9999-999")}},
		{"Warning beats Valid", budget.Request{Lines: []budget.Line{
			splitLine(t, 1, "2000", pct(t, "6100-300", "40"), pct(t, "6100-200", "60"))}}, budget.Warning,
			[]budget.Result{over(budget.Warning, "6100-200")}},
		{"between equals the first split decides", budget.Request{Lines: []budget.Line{
			splitLine(t, 1, "10", pct(t, "1111-111", "50"), pct(t, "2222-222", "50"))}}, "",
			[]budget.Result{absent("1111-111")}},
		// 987.65 on 6100-200: 900 unsplit plus 87.66 allocated is a cent over.
		{"allocated parts add to the account's sum over lines", budget.Request{Lines: []budget.Line{
			line(t, 1, "6100-200", "900"),
			splitLine(t, 2, "175.32", pct(t, "6100-200", "50"), pct(t, "6100-300", "50")),
			line(t, 3, "6100-300", "1")}}, "",
			[]budget.Result{over(budget.Invalid, "6100-200"), over(budget.Invalid, "6100-200"), valid}},
		{"a cent less is within", budget.Request{Lines: []budget.Line{
			line(t, 1, "6100-200", "900"),
			splitLine(t, 2, "175.30", pct(t, "6100-200", "50"), pct(t, "6100-300", "50"))}}, "",
			[]budget.Result{valid, valid}},
		// The allocation, not the exact share, is what counts: 87.655 of
		// 175.31 rounds to 87.66 for the first split (ties to the earlier).
		{"the leftover cent counts on its account", budget.Request{Lines: []budget.Line{
			line(t, 1, "6100-200", "900"),
			splitLine(t, 2, "175.31", pct(t, "6100-200", "50"), pct(t, "6100-300", "50"))}}, "",
			[]budget.Result{over(budget.Invalid, "6100-200"), over(budget.Invalid, "6100-200")}},
		{"the leftover cent on the other account", budget.Request{Lines: []budget.Line{
			line(t, 1, "6100-200", "900"),
			splitLine(t, 2, "175.31", pct(t, "6100-300", "50"), pct(t, "6100-200", "50"))}}, "",
			[]budget.Result{valid, valid}},
		{"amount splits", budget.Request{Lines: []budget.Line{
			splitLine(t, 1, "1000", amt(t, "6100-200", "987.66"), amt(t, "6100-300", "12.34"))}}, "",
			[]budget.Result{over(budget.Invalid, "6100-200")}},
		{"a credit split frees budget", budget.Request{Lines: []budget.Line{
			line(t, 1, "6100-200", "1000"),
			splitLine(t, 2, "-20", pct(t, "6100-200", "90"), pct(t, "6100-300", "10"))}}, "",
			[]budget.Result{valid, valid}},
		{"yen allocation", budget.Request{Currency: "JPY", Lines: []budget.Line{
			line(t, 1, "6100-200", "654"),
			splitLine(t, 2, "1001", pct(t, "6100-200", "33.3333"), pct(t, "6100-300", "66.6667"))}}, "",
			[]budget.Result{over(budget.Invalid, "6100-200"), over(budget.Invalid, "6100-200")}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if err := c.req.Validate(); err != nil {
				t.Fatalf("Validate: %v", err)
			}
			got := tab.Check(c.req, c.overBudget)
			for i := range c.want {
				c.want[i].LineNumber = c.req.Lines[i].Number
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("Check (-want +got):\n%s", diff)
			}
		})
	}
}

// An amount written with more decimals than its currency has, all zeros,
// is allocated in the currency's unit.
func TestSharesTrailingZeros(t *testing.T) {
	l := splitLine(t, 1, "100.00", pct(t, "A", "33.3333"), pct(t, "B", "66.6667"))
	var got []string
	for _, s := range l.Shares("JPY") {
		got = append(got, budget.FormatAmount(s.Amount))
	}
	if diff := cmp.Diff([]string{"33", "67"}, got); diff != "" {
		t.Errorf("Shares in JPY (-want +got):\n%s", diff)
	}
}

// FuzzShares checks the allocation's invariants on any line Validate
// accepts: one share per split, in order, each a whole number of the
// currency's minor units with the line's sign, summing to the line exactly,
// and each within one unit of its exact share.
//
//	go test -run='^$' -fuzz='^FuzzShares$' -fuzztime=1m ./budget/
func FuzzShares(f *testing.F) {
	f.Add("100.00", "33.3333", "33.3333", "33.3334", "NZD")
	f.Add("-0.03", "25", "25", "50", "NZD")
	f.Add("1000", "0.0001", "99.9998", "0.0001", "JPY")
	f.Add("1.001", "12.5", "12.5", "75", "KWD")
	f.Add("123456789012345678901234.56", "50", "49.9999", "0.0001", "CLF")
	f.Fuzz(func(t *testing.T, total, p1, p2, p3, currency string) {
		amount, err := budget.ParseAmount(total)
		if err != nil {
			return
		}
		l := budget.Line{Number: 1, Amount: amount}
		for i, p := range []string{p1, p2, p3} {
			d, err := budget.ParseAmount(p)
			if err != nil {
				return
			}
			l.Splits = append(l.Splits, budget.Split{Account: "A" + strconv.Itoa(i), Percentage: decimal.NewNullDecimal(d)})
		}
		req := budget.Request{Currency: currency, Lines: []budget.Line{l}}
		if req.Validate() != nil {
			return
		}
		in := currency
		if in == "" {
			in = budget.DefaultCurrency
		}
		minor, _ := budget.MinorUnits(in)
		places := int32(minor)
		if !amount.Equal(amount.Truncate(places)) {
			// No currency was named, so none was checked: the line is
			// allocated in its own smallest unit.
			places = -amount.Exponent()
		}
		unit := decimal.New(1, -places)
		shares := l.Shares(currency)
		if len(shares) != len(l.Splits) {
			t.Fatalf("%d shares for %d splits", len(shares), len(l.Splits))
		}
		sum := decimal.Zero
		for i, s := range shares {
			if s.Account != l.Splits[i].Account {
				t.Fatalf("share %d is for %q", i, s.Account)
			}
			if !s.Amount.Equal(s.Amount.Truncate(places)) {
				t.Fatalf("share %d = %v: not a whole number of 10^-%d", i, s.Amount, places)
			}
			if s.Amount.Sign()*amount.Sign() < 0 {
				t.Fatalf("share %d = %v against the line's %v", i, s.Amount, amount)
			}
			exact := amount.Mul(l.Splits[i].Percentage.Decimal).Shift(-2)
			if s.Amount.Sub(exact).Abs().Cmp(unit) >= 0 {
				t.Fatalf("share %d = %v; exact %v", i, s.Amount, exact)
			}
			sum = sum.Add(s.Amount)
		}
		if !sum.Equal(amount) {
			t.Fatalf("%v at %s/%s/%s %s: shares sum to %v", amount, p1, p2, p3, currency, sum)
		}
	})
}
