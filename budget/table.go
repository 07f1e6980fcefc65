package budget

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/shopspring/decimal"
)

// ErrBadTable is matched by every error about the content of a budget table
// (a CSV file or the rows of a query): a missing column, a blank or
// duplicate account, a budget that is not a decimal number, no rows.
var ErrBadTable = errors.New("bad budget table")

// Table is a budget table (docs: account-codes.md "Request message"): the budget of each account. A Table
// is immutable once built and safe for concurrent use. Budgets may be
// negative. Account codes are compared exactly (case and inner spaces
// matter); surrounding white space is trimmed when a table is read.
type Table struct {
	budgets map[string]figure
}

// figure is a budget kept without a pointer when its coefficient fits an
// int64 (nearly always), so that a table of millions of accounts costs the
// garbage collector little. line is where the figure came from (a file
// line or a row number), for the duplicate-account error.
type figure struct {
	coef int64
	exp  int32
	line int32
	big  *decimal.Decimal // set when the coefficient needs more than 18 digits
	ext  *rowExtras       // the optional columns, when the row has any
}

// rowExtras are a row's optional columns (docs: account-codes.md
// "Tolerance"): nil pointers and a zero time where a cell is empty.
type rowExtras struct {
	warn      *decimal.Decimal // warn_percent
	tolerance *decimal.Decimal // tolerance_percent
	asOf      time.Time        // as_of
}

func figureOf(d decimal.Decimal) figure {
	if d.NumDigits() <= 18 {
		return figure{coef: d.CoefficientInt64(), exp: d.Exponent()}
	}
	return figure{big: &d}
}

func (f figure) decimal() decimal.Decimal {
	if f.big != nil {
		return *f.big
	}
	return decimal.New(f.coef, f.exp)
}

// NewTable returns a table of budgets. An account code that is blank, or
// that has surrounding white space, is an error matching ErrBadTable.
func NewTable(budgets map[string]decimal.Decimal) (*Table, error) {
	t := &Table{budgets: make(map[string]figure, len(budgets))}
	for account, b := range budgets {
		if strings.TrimSpace(account) == "" {
			return nil, fmt.Errorf("%w: an account code is blank", ErrBadTable)
		}
		if strings.TrimSpace(account) != account {
			return nil, fmt.Errorf("%w: account %s has surrounding white space", ErrBadTable, quoteShort(account))
		}
		t.budgets[account] = figureOf(b)
	}
	return t, nil
}

// Len returns the number of accounts in t.
func (t *Table) Len() int { return len(t.budgets) }

// Budget returns the budget of account and whether the table has it.
func (t *Table) Budget(account string) (decimal.Decimal, bool) {
	f, ok := t.budgets[account]
	if !ok {
		return decimal.Decimal{}, false
	}
	return f.decimal(), true
}

// Messages of the budget table check. They name the account, never a
// budget figure: the buyer must not learn the budget from them.
func absentMessage(account string) string {
	return "Account " + account + " has no budget."
}

func overMessage(account string) string {
	return "The lines on account " + account + " exceed its available budget."
}

// warnMessage states the row's own warn_percent, a share the customer
// chose, not a budget figure.
func warnMessage(account string, percent decimal.Decimal) string {
	return "The lines on account " + account + " take it past " + percent.String() + "% of its budget."
}

func toleranceMessage(account string) string {
	return "The lines on account " + account + " exceed its available budget, within its tolerance."
}

// Check returns the verdict on every line of req, in the order of its lines
// (docs: account-codes.md "Budget table option"). What each line charges
// each account (Line.Shares, in req.Currency: the whole amount of an
// unsplit line, the allocated part of each split) is summed per account
// over the request; each account's verdict is on its sum: Invalid when the
// table does not have the account, Valid when the sum is within the budget
// (sum <= budget), and overBudget (Invalid or Warning) when the sum is over
// it; the row's warn_percent and tolerance_percent, when it has them, turn
// a Valid or an over-budget verdict into a Warning (see CheckOptions). A
// line's verdict is the worst of its accounts' (Invalid, then Warning, then
// Valid), with the message of the first account, in the order of its
// splits, that has it. Check does not validate req (see Request.Validate);
// an empty or unknown overBudget means Invalid. It holds nothing: see
// TableValidator for holds.
func (t *Table) Check(req Request, overBudget Status) []Result {
	tl := t.tally(req)
	tl.decide(t, CheckOptions{OverBudget: overBudget}, nil)
	return tl.results(req)
}

// CheckOptions are the connector's settings of a table check.
type CheckOptions struct {
	// OverBudget is the status of an account whose sum is over its budget
	// (beyond its tolerance): Invalid (also when empty) or Warning.
	OverBudget Status
	// ShowAvailable puts what is available on the account (its budget less
	// what other requisitions hold) in the messages of its lines; without
	// it no message shows a budget figure.
	ShowAvailable bool
}

// tally is a request's amounts summed per account, and after decide each
// account's verdict.
type tally struct {
	accounts []tallied
	// of[k] is the account of the k-th share; line i's shares are
	// of[ends[i-1]:ends[i]].
	of   []int32
	ends []int32
}

type tallied struct {
	name   string
	sum    runningSum
	status Status
	msg    string
	// available is the budget less the holds of other requisitions, set
	// by decide when the table has the account.
	available decimal.Decimal
	row       figure
	inTable   bool
}

func (t *Table) tally(req Request) *tally {
	tl := &tally{
		accounts: make([]tallied, 0, len(req.Lines)),
		of:       make([]int32, 0, len(req.Lines)),
		ends:     make([]int32, len(req.Lines)),
	}
	at := make(map[string]int32, len(req.Lines)) // account -> index in accounts
	var shares []Share                           // reused for every split line
	for i := range req.Lines {
		l := &req.Lines[i]
		if len(l.Splits) == 0 {
			shares = append(shares[:0], Share{Account: l.Account, Amount: l.Amount})
		} else {
			shares = l.AppendShares(shares[:0], req.Currency)
		}
		for _, sh := range shares {
			a, ok := at[sh.Account]
			if !ok {
				a = int32(len(tl.accounts))
				at[sh.Account] = a
				tl.accounts = append(tl.accounts, tallied{name: sh.Account})
				tl.accounts[a].sum.set(sh.Amount)
			} else {
				tl.accounts[a].sum.add(sh.Amount)
			}
			tl.of = append(tl.of, a)
		}
		tl.ends[i] = int32(len(tl.of))
	}
	for i := range tl.accounts {
		a := &tl.accounts[i]
		a.row, a.inTable = t.budgets[a.name]
	}
	return tl
}

// claims returns what the request asks of each account in the table, for
// a HoldStore; an account absent from the table is claimed at nothing
// (the check is Invalid and holds nothing anyway).
func (tl *tally) claims() []Claim {
	out := make([]Claim, len(tl.accounts))
	for i := range tl.accounts {
		a := &tl.accounts[i]
		out[i] = Claim{Account: a.name, Amount: a.sum.decimal()}
		if a.row.ext != nil {
			out[i].AsOf = a.row.ext.asOf
		}
	}
	return out
}

// decide gives every account its verdict; held[i], when held is not nil,
// is what other requisitions hold on account i.
func (tl *tally) decide(t *Table, opts CheckOptions, held []decimal.Decimal) {
	over := opts.OverBudget
	if over != Warning {
		over = Invalid
	}
	hundred := decimal.New(100, 0)
	for i := range tl.accounts {
		a := &tl.accounts[i]
		a.status, a.msg = Valid, ""
		if !a.inTable {
			a.status, a.msg = Invalid, absentMessage(a.name)
			continue
		}
		var others decimal.Decimal
		if held != nil {
			others = held[i]
		}
		ext := a.row.ext
		if ext == nil && !opts.ShowAvailable {
			// The common case needs no decimal arithmetic.
			total := a.sum
			if held != nil {
				total.add(others)
			}
			if !total.within(a.row) {
				a.status, a.msg = over, overMessage(a.name)
			}
			continue
		}
		budget := a.row.decimal()
		a.available = budget.Sub(others)
		total := others.Add(a.sum.decimal())
		switch {
		case total.Cmp(budget) <= 0:
			if ext != nil && ext.warn != nil && total.Mul(hundred).GreaterThan(budget.Mul(*ext.warn)) {
				a.status, a.msg = Warning, warnMessage(a.name, *ext.warn)
			}
		case ext != nil && ext.tolerance != nil &&
			total.Mul(hundred).Cmp(budget.Mul(hundred.Add(*ext.tolerance))) <= 0 && budget.Sign() >= 0:
			a.status, a.msg = Warning, toleranceMessage(a.name)
		default:
			a.status, a.msg = over, overMessage(a.name)
		}
		if opts.ShowAvailable && a.msg != "" {
			a.msg += " Available: " + FormatAmount(a.available) + "."
		}
	}
	for i := range tl.accounts {
		tl.accounts[i].msg = TruncateMessage(tl.accounts[i].msg)
	}
}

// invalid reports whether an account (and so a line) is Invalid.
func (tl *tally) invalid() bool {
	for i := range tl.accounts {
		if tl.accounts[i].status == Invalid {
			return true
		}
	}
	return false
}

func (tl *tally) results(req Request) []Result {
	results := make([]Result, len(req.Lines))
	start := int32(0)
	for i, l := range req.Lines {
		decider := &tl.accounts[tl.of[start]]
		for _, a := range tl.of[start+1 : tl.ends[i]] {
			if worse(tl.accounts[a].status, decider.status) {
				decider = &tl.accounts[a]
			}
		}
		results[i] = Result{LineNumber: l.Number, Status: decider.status, Message: decider.msg}
		start = tl.ends[i]
	}
	return results
}

// runningSum adds decimals as an int64 coefficient at a common exponent
// while that is exact, and as a decimal.Decimal from the first sum that
// would overflow. Real amounts stay on the int64 path, which allocates
// nothing.
type runningSum struct {
	coef  int64
	exp   int32
	big   decimal.Decimal
	isBig bool
}

func (s *runningSum) set(d decimal.Decimal) {
	if d.NumDigits() <= 18 {
		*s = runningSum{coef: d.CoefficientInt64(), exp: d.Exponent()}
		return
	}
	*s = runningSum{big: d, isBig: true}
}

func (s *runningSum) add(d decimal.Decimal) {
	if !s.isBig && d.NumDigits() <= 18 && s.addCoef(d.CoefficientInt64(), d.Exponent()) {
		return
	}
	s.big = s.decimal().Add(d)
	s.isBig = true
}

// zero reports whether the sum is zero.
func (s *runningSum) zero() bool {
	if s.isBig {
		return s.big.IsZero()
	}
	return s.coef == 0
}

// sub subtracts d, as add adds it.
func (s *runningSum) sub(d decimal.Decimal) {
	if !s.isBig && d.NumDigits() <= 18 && s.addCoef(-d.CoefficientInt64(), d.Exponent()) {
		return
	}
	s.big = s.decimal().Sub(d)
	s.isBig = true
}

// addCoef adds b * 10^be when the result stays exact in an int64, and
// reports whether it did.
func (s *runningSum) addCoef(b int64, be int32) bool {
	a, ae := s.coef, s.exp
	ok := true
	switch {
	case ae > be:
		a, ok = scale(a, ae-be)
		ae = be
	case be > ae:
		b, ok = scale(b, be-ae)
	}
	if r := a + b; ok && (b >= 0) == (r >= a) { // no overflow
		s.coef, s.exp = r, ae
		return true
	}
	return false
}

func (s *runningSum) decimal() decimal.Decimal {
	if s.isBig {
		return s.big
	}
	return decimal.New(s.coef, s.exp)
}

// within reports whether the sum is <= f. Both sides usually fit an int64
// at a common exponent; then no big.Int is made.
func (s *runningSum) within(f figure) bool {
	if !s.isBig && f.big == nil {
		a, ae := s.coef, s.exp
		b, be := f.coef, f.exp
		// Bring both to the smaller exponent, if that stays in range.
		if ae > be {
			if a, ok := scale(a, ae-be); ok {
				return a <= b
			}
		} else if b, ok := scale(b, be-ae); ok {
			return a <= b
		}
	}
	return s.decimal().Cmp(f.decimal()) <= 0
}

// scale returns v * 10^n and whether it fits an int64.
func scale(v int64, n int32) (int64, bool) {
	const limit = 1 << 62 / 10 // well inside int64 after one more *10
	if v == 0 {
		return 0, true
	}
	for ; n > 0; n-- {
		if v > limit || v < -limit {
			return 0, false
		}
		v *= 10
	}
	return v, true
}

// tableError is an error about a table's content, naming where it is.
type tableError struct {
	where string // file name or "budget table query"
	line  int    // line or row number; 0 for the whole table
	msg   string
}

func (e *tableError) Error() string {
	if e.line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.where, e.line, e.msg)
	}
	return e.where + ": " + e.msg
}

func (e *tableError) Is(target error) bool { return target == ErrBadTable }

// tableBuilder collects rows, rejecting blank and duplicate accounts.
type tableBuilder struct {
	where   string
	unit    string // "line" or "row": how positions are named in messages
	budgets map[string]figure
}

func newTableBuilder(where, unit string, sizeHint int) *tableBuilder {
	return &tableBuilder{where: where, unit: unit, budgets: make(map[string]figure, sizeHint)}
}

func (b *tableBuilder) errorf(line int, format string, args ...any) error {
	return &tableError{where: b.where, line: line, msg: fmt.Sprintf(format, args...)}
}

func (b *tableBuilder) add(line int, account string, f figure) error {
	account = strings.TrimSpace(account)
	if account == "" {
		return b.errorf(line, "account: is required")
	}
	if prev, dup := b.budgets[account]; dup {
		return b.errorf(line, "account %s appears more than once (first on %s %d)", quoteShort(account), b.unit, prev.line)
	}
	f.line = int32(min(line, 1<<31-1))
	b.budgets[account] = f
	return nil
}

func (b *tableBuilder) table() (*Table, error) {
	if len(b.budgets) == 0 {
		return nil, b.errorf(0, "the table has no accounts")
	}
	return &Table{budgets: b.budgets}, nil
}
