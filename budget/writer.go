package budget

import (
	"context"
	"errors"

	"github.com/shopspring/decimal"
)

// ErrNotFound is matched by the error of DeleteBudget for an account the
// community's table does not hold.
var ErrNotFound = errors.New("budget not found")

// Writer is the write side of a store's budget tables (docs: "Live data").
// Every method returns an error matching procure.ErrUnknownCommunity for an
// unknown community, is atomic, and is seen by the next check on the same
// node (other nodes: within one second).
type Writer interface {
	// PutBudget sets the budget of one account of the community's table,
	// creating the row when absent. The account is trimmed of white space
	// and must not be empty (a *procure.ValidationError naming "account"
	// otherwise).
	PutBudget(ctx context.Context, community, account string, amount decimal.Decimal) error

	// DeleteBudget removes an account from the community's table; lines
	// against it are Invalid from then on. An absent account matches
	// ErrNotFound.
	DeleteBudget(ctx context.Context, community, account string) error
}
