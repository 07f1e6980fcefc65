package budget

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/procurekit/procure/internal/jsontext"
)

// ProcedureParam names one value passed to the stored-procedure SQL.
type ProcedureParam string

// The values a stored-procedure call can receive. Optional values that the
// request does not carry are passed as SQL NULL.
const (
	ParamLines            ProcedureParam = "lines"             // the lines as JSON text (always present)
	ParamUsername         ProcedureParam = "username"          // the purchasing user
	ParamOrganisationUnit ProcedureParam = "organisation_unit" // the user's organisation unit
	ParamFinanceYear      ProcedureParam = "finance_year"      // the financial year, as text
	ParamRequisitionID    ProcedureParam = "requisition_id"    // the requisition's id
	ParamCurrency         ProcedureParam = "currency"          // the ISO 4217 code of the amounts, always present at a connector
)

// DefaultProcedureParams is the parameter list used when none is
// configured: the lines and the three optional inputs of docs: account-codes.md "Request message", in the
// order the spec names them. With PostgreSQL the SQL reads them as $1..$4,
// e.g. "SELECT check_budget($1, $2, $3, $4)"; with a driver that uses ?
// placeholders, as ?, ?, ?, ?.
var DefaultProcedureParams = []ProcedureParam{ParamLines, ParamUsername, ParamOrganisationUnit, ParamFinanceYear}

// ParseProcedureParams reads a comma-separated parameter list such as
// "lines,username,finance_year". Each name may appear once; "lines" must
// appear.
func ParseProcedureParams(s string) ([]ProcedureParam, error) {
	var out []ProcedureParam
	for _, name := range strings.Split(s, ",") {
		p := ProcedureParam(strings.TrimSpace(name))
		switch p {
		case ParamLines, ParamUsername, ParamOrganisationUnit, ParamFinanceYear, ParamRequisitionID, ParamCurrency:
		default:
			return nil, fmt.Errorf("unknown parameter %s (want lines, username, organisation_unit, finance_year, requisition_id or currency)", quoteShort(string(p)))
		}
		for _, q := range out {
			if q == p {
				return nil, fmt.Errorf("parameter %s is listed twice", p)
			}
		}
		out = append(out, p)
	}
	if err := checkParams(out); err != nil {
		return nil, err
	}
	return out, nil
}

func checkParams(ps []ProcedureParam) error {
	for _, p := range ps {
		if p == ParamLines {
			return nil
		}
	}
	return errors.New("the parameters must include lines")
}

// ProcedureConfig configures a ProcedureValidator.
type ProcedureConfig struct {
	// DB is the customer's database, opened with any database/sql driver.
	DB *sql.DB

	// Query is the SQL that calls the procedure, written by the operator
	// in the database's own dialect. It receives Params as positional
	// arguments and must return exactly one row of one column: the
	// verdicts as JSON text (or json/jsonb), e.g.
	// [{"line_number":1,"status":"Valid","message":""}].
	Query string

	// Params lists the values passed to Query, in placeholder order;
	// nil means DefaultProcedureParams.
	Params []ProcedureParam

	// Timeout, when positive, bounds each call.
	Timeout time.Duration
}

// ProcedureValidator is the stored-procedure option of the connector
// (docs: account-codes.md "Flow"; docs: account-codes.md "Stored procedure option"): the customer's own
// logic, in its database, decides each line; budget figures never leave
// the database.
//
// The lines are passed as JSON text (AppendLinesJSON):
//
//	[{"line_number":1,"account":"6100-200","amount":125.50}]
//
// where amount is a JSON number written exactly from the decimal (its
// scale kept, never through a float); a split line carries its splits with
// their allocated amounts instead of an account. The reply is checked strictly: JSON
// that is not an array of objects with an integer line_number and a string
// status, or that does not answer every line exactly once with Valid,
// Invalid or Warning, is an error matching ErrMalformedReply; a failing
// call (SQL error, lost connection) matches ErrUnavailable, and a timeout
// ErrTimeout. message may be absent or null, meaning empty.
type ProcedureValidator struct {
	db      *sql.DB
	query   string
	params  []ProcedureParam
	timeout time.Duration
}

var _ Validator = (*ProcedureValidator)(nil)

// NewProcedureValidator returns a validator calling cfg.Query on cfg.DB.
func NewProcedureValidator(cfg ProcedureConfig) (*ProcedureValidator, error) {
	if cfg.DB == nil {
		return nil, errors.New("budget: NewProcedureValidator: no database")
	}
	if strings.TrimSpace(cfg.Query) == "" {
		return nil, errors.New("budget: NewProcedureValidator: no SQL to call the procedure")
	}
	params := cfg.Params
	if params == nil {
		params = DefaultProcedureParams
	}
	if err := checkParams(params); err != nil {
		return nil, fmt.Errorf("budget: NewProcedureValidator: %w", err)
	}
	return &ProcedureValidator{db: cfg.DB, query: cfg.Query, params: append([]ProcedureParam(nil), params...), timeout: cfg.Timeout}, nil
}

// Validate calls the procedure for req.
func (p *ProcedureValidator) Validate(ctx context.Context, req Request) ([]Result, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	if p.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, p.timeout)
		defer cancel()
	}
	args := make([]any, len(p.params))
	for i, param := range p.params {
		switch param {
		case ParamLines:
			args[i] = string(AppendLinesJSON(nil, req.Lines, req.Currency))
		case ParamUsername:
			args[i] = nullable(req.Username)
		case ParamOrganisationUnit:
			args[i] = nullable(req.OrganisationUnit)
		case ParamFinanceYear:
			args[i] = nullable(req.FinanceYear)
		case ParamRequisitionID:
			args[i] = nullable(req.RequisitionID)
		case ParamCurrency:
			args[i] = nullable(req.Currency)
		}
	}
	reply, err := p.call(ctx, args)
	if err != nil {
		if ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return nil, fmt.Errorf("%w: stored procedure: %w", ErrTimeout, err)
		}
		return nil, err
	}
	results, err := ParseResultsJSON(reply)
	if err != nil {
		return nil, fmt.Errorf("stored procedure: %w", err)
	}
	if err := CheckReply(req, results); err != nil {
		return nil, fmt.Errorf("stored procedure: %w", err)
	}
	return results, nil
}

func (p *ProcedureValidator) call(ctx context.Context, args []any) ([]byte, error) {
	rows, err := p.db.QueryContext(ctx, p.query, args...)
	if err != nil {
		return nil, fmt.Errorf("%w: stored procedure call: %w", ErrUnavailable, err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, fmt.Errorf("%w: stored procedure call: %w", ErrUnavailable, err)
	}
	if len(cols) != 1 {
		return nil, fmt.Errorf("%w: stored procedure SQL returned %d columns; it must return one (the JSON text)", ErrMalformedReply, len(cols))
	}
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("%w: stored procedure call: %w", ErrUnavailable, err)
		}
		return nil, fmt.Errorf("%w: stored procedure SQL returned no row; it must return one", ErrMalformedReply)
	}
	var reply []byte
	if err := rows.Scan(&reply); err != nil {
		return nil, fmt.Errorf("%w: stored procedure reply: %w", ErrMalformedReply, err)
	}
	if rows.Next() {
		return nil, fmt.Errorf("%w: stored procedure SQL returned more than one row; it must return one", ErrMalformedReply)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%w: stored procedure call: %w", ErrUnavailable, err)
	}
	if reply == nil {
		return nil, fmt.Errorf("%w: stored procedure returned NULL", ErrMalformedReply)
	}
	return reply, nil
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// AppendLinesJSON appends the JSON text of lines, in currency, as the
// stored procedure receives it (docs: account-codes.md "Stored procedure
// option"): [{"line_number":1,"account":"6100-200","amount":125.50}] for an
// unsplit line; a split line has "splits" instead of "account", each split
// with its account, its allocated amount (Line.Shares) and, when it was
// split by percentage, that percentage:
//
//	{"line_number":2,"amount":100.00,"splits":[{"account":"6100-200","amount":33.33,"percentage":33.3333},...]}
//
// Amounts and percentages are JSON numbers written exactly (FormatAmount).
func AppendLinesJSON(b []byte, lines []Line, currency string) []byte {
	b = append(b, '[')
	var shares []Share
	for i := range lines {
		l := &lines[i]
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"line_number":`...)
		b = strconv.AppendInt(b, int64(l.Number), 10)
		if len(l.Splits) == 0 {
			b = append(b, `,"account":`...)
			b = jsontext.AppendString(b, l.Account)
		}
		b = append(b, `,"amount":`...)
		b = AppendAmount(b, l.Amount)
		if len(l.Splits) > 0 {
			shares = l.AppendShares(shares[:0], currency)
			b = append(b, `,"splits":[`...)
			for k, sh := range shares {
				if k > 0 {
					b = append(b, ',')
				}
				b = append(b, `{"account":`...)
				b = jsontext.AppendString(b, sh.Account)
				b = append(b, `,"amount":`...)
				b = AppendAmount(b, sh.Amount)
				if p := l.Splits[k].Percentage; p.Valid {
					b = append(b, `,"percentage":`...)
					b = AppendAmount(b, p.Decimal)
				}
				b = append(b, '}')
			}
			b = append(b, ']')
		}
		b = append(b, '}')
	}
	return append(b, ']')
}

// ParseResultsJSON reads the stored procedure's reply:
// [{"line_number":1,"status":"Valid","message":""}]. line_number must be
// an integer and status a string; message may be absent or null (empty).
// Other fields are ignored. Errors match ErrMalformedReply. The statuses
// are not checked here: CheckReply does that.
func ParseResultsJSON(data []byte) ([]Result, error) {
	type item struct {
		LineNumber json.RawMessage `json:"line_number"`
		Status     *string         `json:"status"`
		Message    *string         `json:"message"`
	}
	var items []*item
	if err := json.Unmarshal(data, &items); err != nil {
		return nil, fmt.Errorf("%w: the reply is not a JSON array of results: %v", ErrMalformedReply, err)
	}
	if items == nil {
		return nil, fmt.Errorf("%w: the reply is null, not a JSON array of results", ErrMalformedReply)
	}
	results := make([]Result, len(items))
	for i, it := range items {
		if it == nil {
			return nil, fmt.Errorf("%w: result [%d] is null", ErrMalformedReply, i)
		}
		// RawMessage holds the JSON token itself, so a string "1" or a
		// number 1.0 fails Atoi: line_number must be a JSON integer.
		raw := string(it.LineNumber)
		if raw == "" || raw == "null" {
			return nil, fmt.Errorf("%w: result [%d]: line_number is missing", ErrMalformedReply, i)
		}
		n, err := strconv.Atoi(raw)
		if err != nil {
			return nil, fmt.Errorf("%w: result [%d]: line_number must be an integer (got %s)", ErrMalformedReply, i, quoteShort(raw))
		}
		if it.Status == nil {
			return nil, fmt.Errorf("%w: result [%d] (line %d): status is missing", ErrMalformedReply, i, n)
		}
		results[i] = Result{LineNumber: n, Status: Status(*it.Status)}
		if it.Message != nil {
			results[i].Message = *it.Message
		}
	}
	return results, nil
}
