package budget

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/procurekit/procure"
)

// ErrUnsupported is matched by the error of a Release or Confirm sent to a
// validator that keeps no holds (the stored-procedure option, or a table
// validator without holds): the connector answers it 501
// (docs: account-codes.md "Release and confirm").
var ErrUnsupported = errors.New("release and confirm are not supported")

// Committer is an optional capability of a Validator, found by type
// assertion as database/sql/driver's optional interfaces are: a validator
// that holds what a requisition's checks claim (docs: account-codes.md
// "Holds") implements it, and so does the platform's client of a
// connector, which sends the messages.
//
// Release ends every hold and commitment of the requisition (it was
// cancelled, rejected or changed); Confirm turns its holds into
// commitments (a purchase order was issued), which do not expire. Both
// return how many holds changed; a requisition that holds nothing is not
// an error but 0. requisition is not blank and at most
// MaxRequisitionIDLength characters (callers check). An error that means
// the holds could not be reached matches ErrUnavailable, and changes
// nothing. Implementations must be safe for concurrent use and must honour
// ctx.
type Committer interface {
	Release(ctx context.Context, requisition string) (int, error)
	Confirm(ctx context.Context, requisition string) (int, error)
}

// ValidateRequisitionID checks the requisition of a Release or Confirm
// (docs: account-codes.md "Bad input"): not blank, and at most
// MaxRequisitionIDLength characters. It returns nil or a
// *procure.ValidationError on the field "requisitionId".
func ValidateRequisitionID(id string) error {
	if strings.TrimSpace(id) == "" {
		return procure.Invalid(procure.SourceBody, "requisitionId", "is required")
	}
	if rule := requisitionIDRule(id); rule != "" {
		return procure.Invalid(procure.SourceBody, "requisitionId", rule)
	}
	return nil
}

// requisitionIDRule returns the rule a requisition id of a check or a
// release breaks by its length, or "".
func requisitionIDRule(id string) string {
	if len(id) <= MaxRequisitionIDLength { // bytes >= characters
		return ""
	}
	if n := utf8.RuneCountInString(id); n > MaxRequisitionIDLength {
		return "must be at most " + strconv.Itoa(MaxRequisitionIDLength) + " characters (got " + strconv.Itoa(n) + ")"
	}
	return ""
}
