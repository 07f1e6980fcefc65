// Package budget implements account code validation (Interface C, spec
// 2.10, 3 and 4.3): the verdict per requisition line, the Validator
// interface that finance systems and connectors implement, and the checkout
// gate that turns verdicts into what the buyer may do.
package budget

import (
	"context"

	"github.com/shopspring/decimal"
)

// Status is a finance system's verdict on one line.
type Status string

// The statuses, exactly as the exchange spells them.
const (
	Valid   Status = "Valid"
	Invalid Status = "Invalid"
	Warning Status = "Warning"
)

// Line is one requisition line to validate.
type Line struct {
	Number  int
	Account string
	Amount  decimal.Decimal
}

// Request is one validation request: the lines of a requisition and the
// optional context the finance system may use.
type Request struct {
	RequisitionID    string
	Username         string
	OrganisationUnit string
	FinanceYear      string
	Lines            []Line
}

// Result is the verdict on one line.
type Result struct {
	LineNumber int
	Status     Status
	Message    string
}

// Validator decides a verdict for every line of a request. It returns one
// Result per request line (CheckReply enforces that) or an error.
type Validator interface {
	Validate(ctx context.Context, req Request) ([]Result, error)
}
