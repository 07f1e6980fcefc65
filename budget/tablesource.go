package budget

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/shopspring/decimal"
)

// A TableLoader reads a whole budget table from its source. It returns an
// error matching ErrBadTable when the content is wrong, and another error
// when the source cannot be read.
type TableLoader func(ctx context.Context) (*Table, error)

// StaticTable returns a loader that always returns t.
func StaticTable(t *Table) TableLoader {
	return func(context.Context) (*Table, error) { return t, nil }
}

// CSVFile returns a loader that reads the CSV file at path with ReadCSV
// each time it is called (so a refresh picks up a changed file).
func CSVFile(path string) TableLoader {
	return func(context.Context) (*Table, error) { return ReadCSVFile(path) }
}

// ReadCSVFile reads a budget table from the CSV file at path (see ReadCSV).
// Errors name the file and, for bad content, the line.
func ReadCSVFile(path string) (*Table, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("budget table: %w", err)
	}
	defer f.Close()
	return ReadCSV(f, path)
}

// ReadCSV reads a budget table in CSV form (RFC 4180, comma-separated,
// UTF-8, an optional byte-order mark). The first line is a header that names
// the columns account and budget (case-insensitive; in any order; other
// columns are ignored, as the spec asks for "minimum two columns"); every
// further line is one account. Blank lines are skipped. Surrounding white
// space of a value is trimmed. A budget is a plain decimal number ("1500",
// "-20.50"; no exponent, no thousands separator).
//
// Errors match ErrBadTable and read "NAME:LINE: what is wrong", for a
// missing column, a blank or duplicate account, a budget that is not a
// decimal number or malformed CSV; a table with no accounts is an error
// too. name is the file name used in errors.
func ReadCSV(r io.Reader, name string) (*Table, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	if bom, err := br.Peek(3); err == nil && string(bom) == "\uFEFF" {
		br.Discard(3) // cannot fail: the bytes are buffered
	}
	cr := csv.NewReader(br)
	cr.FieldsPerRecord = -1 // counted here, for a clearer message
	cr.ReuseRecord = true
	b := newTableBuilder(name, "line", 0)

	header, err := cr.Read()
	switch {
	case errors.Is(err, io.EOF):
		return nil, b.errorf(0, "the file is empty; it needs a header line account,budget")
	case err != nil:
		return nil, csvError(b, err)
	}
	accountCol, budgetCol := -1, -1
	for i, h := range header {
		switch strings.ToLower(strings.TrimSpace(h)) {
		case "account":
			if accountCol >= 0 {
				return nil, b.errorf(1, "the header names the column account twice")
			}
			accountCol = i
		case "budget":
			if budgetCol >= 0 {
				return nil, b.errorf(1, "the header names the column budget twice")
			}
			budgetCol = i
		}
	}
	if accountCol < 0 || budgetCol < 0 {
		return nil, b.errorf(1, "the header must name the columns account and budget (got %s)", quoteShort(strings.Join(header, ",")))
	}
	need := max(accountCol, budgetCol) + 1

	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, csvError(b, err)
		}
		line, _ := cr.FieldPos(0)
		if len(rec) < need {
			missing := "budget"
			if accountCol >= len(rec) {
				missing = "account"
			}
			return nil, b.errorf(line, "%s: the column is missing (the line has %d of the header's %d columns)", missing, len(rec), len(header))
		}
		f, err := parseFigure(rec[budgetCol])
		if err != nil {
			return nil, b.errorf(line, "budget: %v", err)
		}
		if err := b.add(line, rec[accountCol], f); err != nil {
			return nil, err
		}
	}
	return b.table()
}

func csvError(b *tableBuilder, err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return b.errorf(pe.Line, "malformed CSV: %v", pe.Err)
	}
	return fmt.Errorf("budget table %s: %w", b.where, err)
}

// SQLQuery returns a loader that runs query (with args) on db and reads
// each row as (account, budget): exactly two columns, the account code as
// text and the budget as a number or text that reads as a decimal (NUMERIC
// is best; a floating-point column is read through its shortest decimal
// form). It works with any database/sql driver.
//
// A NULL, a blank or duplicate account, a NULL or non-decimal budget, or no
// rows at all is an error matching ErrBadTable that names the row (the
// first row is 1); a failing query is returned wrapped.
func SQLQuery(db *sql.DB, query string, args ...any) TableLoader {
	return func(ctx context.Context) (*Table, error) {
		return loadSQLTable(ctx, db, query, args)
	}
}

func loadSQLTable(ctx context.Context, db *sql.DB, query string, args []any) (*Table, error) {
	rows, err := db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("budget table query: %w", err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, fmt.Errorf("budget table query: %w", err)
	}
	b := newTableBuilder("budget table query", "row", 0)
	if len(cols) != 2 {
		return nil, b.errorf(0, "it must return two columns (account, budget); it returns %d", len(cols))
	}
	var (
		account sql.NullString
		budget  decimal.NullDecimal
		row     int
	)
	for rows.Next() {
		row++
		if err := rows.Scan(&account, &budget); err != nil {
			return nil, b.errorf(row, "%v", err)
		}
		if !account.Valid {
			return nil, b.errorf(row, "account: is NULL")
		}
		if !budget.Valid {
			return nil, b.errorf(row, "budget: is NULL (account %s)", quoteShort(account.String))
		}
		if err := b.add(row, account.String, figureOf(budget.Decimal)); err != nil {
			return nil, err
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("budget table query: after row %s: %w", strconv.Itoa(row), err)
	}
	return b.table()
}

// LiveTable returns a Validator that loads the table at every call, so a
// store whose table changes under it (a re-import) is seen at once, and
// checks the request against it (Table.Check). overBudget is the status of
// an account whose lines sum over its budget: Invalid (also when empty) or
// Warning. A load failure is returned wrapped in ErrUnavailable.
func LiveTable(load TableLoader, overBudget Status) Validator {
	return ValidatorFunc(func(ctx context.Context, req Request) ([]Result, error) {
		if err := req.Validate(); err != nil {
			return nil, err
		}
		t, err := load(ctx)
		if err != nil {
			return nil, fmt.Errorf("%w: loading the budget table: %w", ErrUnavailable, err)
		}
		return t.Check(req, overBudget), nil
	})
}
