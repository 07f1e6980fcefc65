package budget

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/shopspring/decimal"

	"github.com/procurekit/procure"
)

// ErrNotFound is matched by the error of DeleteBudget for an account the
// community's table does not hold.
var ErrNotFound = errors.New("budget not found")

// Writer is the write side of a store's budget tables (docs: live-data.md).
// Every method returns an error matching procure.ErrUnknownCommunity for an
// unknown community, is atomic, and is seen by the next check on the same
// node (other nodes: within one second).
type Writer interface {
	// PutBudget sets the budget of one account of the community's table,
	// creating the row when absent. The account is trimmed of white space
	// and must then pass ValidateAccount, and the amount ValidateAmount
	// (a *procure.ValidationError naming "account" or "budget"
	// otherwise).
	PutBudget(ctx context.Context, community, account string, amount decimal.Decimal) error

	// DeleteBudget removes an account from the community's table; lines
	// against it are Invalid from then on. An absent account matches
	// ErrNotFound.
	DeleteBudget(ctx context.Context, community, account string) error
}

// ValidateAccount checks an account code written on its own (PutBudget):
// not blank, at most 255 characters, valid UTF-8 without control
// characters. It returns nil or a *procure.ValidationError naming
// "account".
func ValidateAccount(account string) error {
	rule := ""
	switch {
	case strings.TrimSpace(account) == "":
		rule = "is required"
	case strings.TrimSpace(account) != account:
		rule = "must not have surrounding white space"
	case utf8.RuneCountInString(account) > 255:
		rule = "must be at most 255 characters"
	case !utf8.ValidString(account) || strings.ContainsFunc(account, unicode.IsControl):
		rule = "must be valid UTF-8 without control characters"
	default:
		return nil
	}
	return procure.Invalid(procure.SourceBody, "account", rule)
}

// ValidateAmount checks a budget written on its own (PutBudget): at most
// MaxAmountLength digits in all, as ParseAmount reads them, so that every
// store holds it exactly (PostgreSQL's numeric included) and no figure
// makes decimal arithmetic slow. It returns nil or a
// *procure.ValidationError naming "budget".
func ValidateAmount(amount decimal.Decimal) error {
	// The coefficient's digits, and the zeros the exponent adds on either
	// side of the point: 12.5 is 125e-1 (3), 1e3 is 1000 (4), 5e-4 is
	// 0.0005 (5).
	digits := int64(len(amount.Coefficient().Text(10)))
	if amount.Sign() < 0 {
		digits-- // the minus sign
	}
	exp := int64(amount.Exponent())
	switch {
	case exp > 0:
		digits += exp
	case -exp >= digits:
		digits = -exp + 1
	}
	if digits > MaxAmountLength {
		return procure.Invalid(procure.SourceBody, "budget", "must have at most "+strconv.Itoa(MaxAmountLength)+" digits")
	}
	return nil
}

// Rows returns a copy of t's budgets, for a store that builds the next
// table from this one after a write.
func (t *Table) Rows() map[string]decimal.Decimal {
	rows := make(map[string]decimal.Decimal, len(t.budgets))
	for a, f := range t.budgets {
		rows[a] = f.decimal()
	}
	return rows
}
