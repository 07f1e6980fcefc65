package budget_test

import (
	"fmt"

	"github.com/shopspring/decimal"

	"github.com/procurekit/procure/budget"
)

// A line of 100.00 split in thirds: the cent left over goes to the split
// with the largest remainder. In yen, the same split is in whole yen.
func ExampleLine_Shares() {
	third := func(account, p string) budget.Split {
		return budget.Split{Account: account, Percentage: decimal.NewNullDecimal(decimal.RequireFromString(p))}
	}
	l := budget.Line{Number: 1, Amount: decimal.RequireFromString("100.00"), Splits: []budget.Split{
		third("6100-200", "33.3333"), third("6100-300", "33.3333"), third("6100-400", "33.3334"),
	}}
	req := budget.Request{Currency: "NZD", Lines: []budget.Line{l}}
	fmt.Println("valid:", req.Validate() == nil)
	for _, s := range l.Shares("NZD") {
		fmt.Println(s.Account, budget.FormatAmount(s.Amount))
	}
	l.Amount = decimal.RequireFromString("1000")
	for _, s := range l.Shares("JPY") {
		fmt.Println(s.Account, budget.FormatAmount(s.Amount))
	}
	// Output:
	// valid: true
	// 6100-200 33.33
	// 6100-300 33.33
	// 6100-400 33.34
	// 6100-200 333
	// 6100-300 333
	// 6100-400 334
}
