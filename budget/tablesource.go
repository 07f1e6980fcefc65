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
	"time"

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
	cols := [numColumns]int{-1, -1, -1, -1, -1}
	for i, h := range header {
		c := columnIndex(h)
		if c < 0 {
			continue
		}
		if cols[c] >= 0 {
			return nil, b.errorf(1, "the header names the column %s twice", columnNames[c])
		}
		cols[c] = i
	}
	accountCol, budgetCol := cols[colAccount], cols[colBudget]
	if accountCol < 0 || budgetCol < 0 {
		return nil, b.errorf(1, "the header must name the columns account and budget (got %s)", quoteShort(strings.Join(header, ",")))
	}

	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, csvError(b, err)
		}
		line, _ := cr.FieldPos(0)
		for c, at := range cols {
			if at >= len(rec) && (c == colAccount || c == colBudget) {
				return nil, b.errorf(line, "%s: the column is missing (the line has %d of the header's %d columns)", columnNames[c], len(rec), len(header))
			}
		}
		f, err := parseFigure(rec[budgetCol])
		if err != nil {
			return nil, b.errorf(line, "budget: %v", err)
		}
		cell := func(c int) string {
			if cols[c] < 0 || cols[c] >= len(rec) {
				return ""
			}
			return strings.TrimSpace(rec[cols[c]])
		}
		if f.ext, err = parseExtras(cell(colWarn), cell(colTolerance), cell(colAsOf)); err != nil {
			return nil, b.errorf(line, "%v", err)
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
	// Two columns are (account, budget) by position, as before the
	// optional columns; more are told apart by their names.
	order := [numColumns]int{0, 1, -1, -1, -1}
	if len(cols) != 2 {
		order = [numColumns]int{-1, -1, -1, -1, -1}
		for i, name := range cols {
			c := columnIndex(name)
			if c < 0 {
				return nil, b.errorf(0, "column %s: a budget table query returns account, budget and optionally warn_percent, tolerance_percent, as_of", quoteShort(name))
			}
			if order[c] >= 0 {
				return nil, b.errorf(0, "it returns the column %s twice", columnNames[c])
			}
			order[c] = i
		}
		if order[colAccount] < 0 || order[colBudget] < 0 {
			return nil, b.errorf(0, "it must return the columns account and budget (it returns %s)", quoteShort(strings.Join(cols, ",")))
		}
	}
	var (
		account         sql.NullString
		budget          decimal.NullDecimal
		warn, tolerance decimal.NullDecimal
		asOf            sql.NullTime
		row             int
	)
	dest := make([]any, len(cols))
	for c, at := range order {
		if at >= 0 {
			dest[at] = [numColumns]any{&account, &budget, &warn, &tolerance, &asOf}[c]
		}
	}
	for rows.Next() {
		row++
		warn, tolerance, asOf = decimal.NullDecimal{}, decimal.NullDecimal{}, sql.NullTime{}
		if err := rows.Scan(dest...); err != nil {
			return nil, b.errorf(row, "%v", err)
		}
		if !account.Valid {
			return nil, b.errorf(row, "account: is NULL")
		}
		if !budget.Valid {
			return nil, b.errorf(row, "budget: is NULL (account %s)", quoteShort(account.String))
		}
		f := figureOf(budget.Decimal)
		var err error
		if f.ext, err = extrasOf(warn, tolerance, asOf); err != nil {
			return nil, b.errorf(row, "%v (account %s)", err, quoteShort(account.String))
		}
		if err := b.add(row, account.String, f); err != nil {
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
// checks the request against it: a TableValidator with LoadEach and no
// holds, the one engine of every budget table check. overBudget is the
// status of an account whose lines sum over its budget: Warning, or
// Invalid (for any other value too). A load failure is returned wrapped in
// ErrUnavailable; a nil load panics. For holds, use NewTableValidator with
// LoadEach and Holds.
func LiveTable(load TableLoader, overBudget Status) Validator {
	if overBudget != Warning {
		overBudget = Invalid
	}
	// With LoadEach and no holds NewTableValidator loads nothing, starts
	// nothing, and refuses only a missing loader or status.
	v, err := NewTableValidator(context.Background(), TableConfig{Load: load, OverBudget: overBudget, LoadEach: true})
	if err != nil {
		panic("budget: LiveTable: " + err.Error())
	}
	return v
}

// The columns of a budget table; account and budget are required.
const (
	colAccount = iota
	colBudget
	colWarn
	colTolerance
	colAsOf
	numColumns
)

var columnNames = [numColumns]string{"account", "budget", "warn_percent", "tolerance_percent", "as_of"}

// columnIndex returns the column a header names (case-insensitive), or -1.
func columnIndex(name string) int {
	name = strings.ToLower(strings.TrimSpace(name))
	for i, n := range columnNames {
		if n == name {
			return i
		}
	}
	return -1
}

// parseExtras reads a CSV row's optional cells; empty cells are absent.
// as_of is an RFC 3339 time or a date (midnight UTC).
func parseExtras(warn, tolerance, asOf string) (*rowExtras, error) {
	var w, t decimal.NullDecimal
	var a sql.NullTime
	for _, c := range []struct {
		name string
		text string
		dst  *decimal.NullDecimal
	}{{"warn_percent", warn, &w}, {"tolerance_percent", tolerance, &t}} {
		if c.text == "" {
			continue
		}
		d, err := ParseAmount(c.text)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", c.name, err)
		}
		*c.dst = decimal.NullDecimal{Decimal: d, Valid: true}
	}
	if asOf != "" {
		tm, err := time.Parse(time.RFC3339Nano, asOf)
		if err != nil {
			if tm, err = time.Parse(time.DateOnly, asOf); err != nil {
				return nil, fmt.Errorf("as_of: must be a time such as 2026-03-01T09:00:00Z or a date such as 2026-03-01 (got %s)", quoteShort(asOf))
			}
		}
		a = sql.NullTime{Time: tm, Valid: true}
	}
	return extrasOf(w, t, a)
}

// extrasOf checks a row's optional values: warn_percent more than 0 and
// at most 100, tolerance_percent 0 or more. It returns nil when the row
// has none.
func extrasOf(warn, tolerance decimal.NullDecimal, asOf sql.NullTime) (*rowExtras, error) {
	if !warn.Valid && !tolerance.Valid && !asOf.Valid {
		return nil, nil
	}
	e := &rowExtras{}
	if warn.Valid {
		if warn.Decimal.Sign() <= 0 || warn.Decimal.GreaterThan(decimal.New(100, 0)) {
			return nil, fmt.Errorf("warn_percent: must be more than 0 and at most 100 (got %s)", warn.Decimal)
		}
		e.warn = &warn.Decimal
	}
	if tolerance.Valid {
		if tolerance.Decimal.Sign() < 0 {
			return nil, fmt.Errorf("tolerance_percent: must not be negative (got %s)", tolerance.Decimal)
		}
		e.tolerance = &tolerance.Decimal
	}
	if asOf.Valid {
		e.asOf = asOf.Time.UTC()
	}
	return e, nil
}
