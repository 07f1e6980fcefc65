package budget_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/procurekit/procure"
	"github.com/procurekit/procure/budget"
)

// ValidateAmount counts digits as the amount is written out: every amount
// ParseAmount reads passes, and one digit more does not.
func TestValidateAmount(t *testing.T) {
	nines := func(n int) string { return strings.Repeat("9", n) }
	tests := []struct {
		name   string
		amount decimal.Decimal
		ok     bool
	}{
		{"zero", decimal.Zero, true},
		{"50 integer digits", decimal.RequireFromString(nines(50)), true},
		{"51 integer digits", decimal.RequireFromString(nines(51)), false},
		{"negative, 50 digits", decimal.RequireFromString("-" + nines(50)), true},
		{"49 decimals", decimal.RequireFromString("0." + nines(49)), true},             // 0.999...: 50 digits
		{"50 decimals", decimal.RequireFromString("0." + nines(50)), false},            // 51 digits
		{"exponent makes zeros", decimal.New(1, 49), true},                             // 1 and 49 zeros
		{"exponent makes too many zeros", decimal.New(1, 50), false},                   // 51 digits
		{"small", decimal.New(1, -49), true},                                           // 0.000...1
		{"too small", decimal.New(-1, -50), false},                                     // -0.000...01
		{"huge exponent", decimal.New(1, 1<<30), false},                                // never written out
		{"longest ParseAmount reads", mustParse(t, "-"+nines(24)+"."+nines(24)), true}, // 50 characters
		{"scale kept", mustParse(t, "125.50"), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := budget.ValidateAmount(tt.amount)
			if tt.ok {
				if err != nil {
					t.Errorf("ValidateAmount(%s) = %v, want nil", tt.amount, err)
				}
				return
			}
			var v *procure.ValidationError
			if !errors.As(err, &v) || v.Fields[0].Field != "budget" {
				t.Errorf("ValidateAmount = %v, want a validation error on budget", err)
			}
		})
	}
}

func mustParse(t *testing.T, s string) decimal.Decimal {
	t.Helper()
	d, err := budget.ParseAmount(s)
	if err != nil {
		t.Fatal(err)
	}
	return d
}
