package budget

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/shopspring/decimal"

	"github.com/procurekit/procure"
)

// Errors of a validation. Every validator of the library and the XML client
// wrap one of them with %w; check them with errors.Is.
var (
	// ErrMalformedReply: the reply broke the exchange's rules (a missing,
	// extra or duplicate line, an unknown status, a reply that is not the
	// expected XML or JSON, or one over the size limit).
	ErrMalformedReply = errors.New("malformed reply")

	// ErrUnavailable: the finance system (or the database behind a
	// connector) could not be asked or answered with an error.
	ErrUnavailable = errors.New("finance system unavailable")

	// ErrTimeout: the finance system did not answer in time. It matches
	// ErrUnavailable as well.
	ErrTimeout = fmt.Errorf("%w: timed out", ErrUnavailable)
)

// MaxMessageLength is the longest message, in characters, shown to a buyer
// (docs: account-codes.md: a longer one from a finance system is cut, not rejected).
const MaxMessageLength = 255

// MaxAmountLength bounds the text of an amount or a budget figure, so that
// hostile input cannot make decimal arithmetic slow. 50 characters hold any
// real amount with room to spare.
const MaxAmountLength = 50

// Status is a finance system's verdict on one line (docs: account-codes.md "Request message"; account-codes.md "Verdicts").
type Status string

// The statuses, exactly as the exchange spells them (case matters).
const (
	Valid   Status = "Valid"   // checkout proceeds
	Invalid Status = "Invalid" // hard stop: the buyer must change the accounting data
	Warning Status = "Warning" // soft stop: the buyer sees the message and may check out again
)

// Known reports whether s is one of the three statuses.
func (s Status) Known() bool { return s == Valid || s == Invalid || s == Warning }

// ParseStatus returns the status spelled exactly s, or an error for
// anything else ("valid" in lower case is not a status).
func ParseStatus(s string) (Status, error) {
	if st := Status(s); st.Known() {
		return st, nil
	}
	return "", fmt.Errorf("unknown status %s (want Valid, Invalid or Warning)", quoteShort(s))
}

// MaxLines is the most lines one validation request may hold
// (docs: limits.md): Request.Validate refuses more, and the
// connector answers a longer request 400.
const MaxLines = 10_000

// Line is one requisition line to validate.
type Line struct {
	// Number identifies the line within its request; numbers are unique
	// within a request but need not be contiguous or in order.
	Number int
	// Account is the line's account code, compared exactly. A split
	// line has no Account.
	Account string
	// Amount is the value checked out for the line; any sign (a negative
	// amount is a credit).
	Amount decimal.Decimal
	// Splits, when not nil, spread the line over several accounts
	// (docs: account-codes.md "Splits and currency"); a line carries
	// either Account or Splits. An empty, non-nil Splits is a request
	// that named splits but gave none, which Validate refuses.
	Splits []Split
}

// Request is one validation request: the lines of a requisition and the
// optional context a finance system may use (docs: account-codes.md "Request message": to check the user's
// permission to purchase against the account and to select the budget
// year). Empty optional fields are not sent.
type Request struct {
	RequisitionID    string
	Username         string
	OrganisationUnit string
	FinanceYear      string
	// Currency is the ISO 4217 code of the amounts (see MinorUnits);
	// empty means the connector's default (DefaultCurrency unless
	// configured otherwise).
	Currency string
	Lines    []Line
}

// Validate checks what every validator relies on (docs: account-codes.md
// "Bad input"): at least one line and at most MaxLines, line numbers unique,
// a RequisitionID of at most MaxRequisitionIDLength characters, a known
// Currency when one is given, and on every line either a non-blank Account
// or Splits by the rules of Split (at most MaxSplits, accounts unique
// within the line, all by percentage summing to exactly 100 or all by
// amount summing to exactly the line's amount, each amount of the line's
// sign). When Currency is set, the line's amount and its split amounts must
// be whole numbers of the currency's minor units (125.50 NZD, not 125.505);
// without it there is no unit to check against, so a connector sets its
// default before validating. It returns nil or a *procure.ValidationError
// (matching procure.ErrInvalid) of at most MaxFieldErrors fields, named
// like "lines[2].splits[0].percentage" (the indexes are positions in the
// slices).
func (r *Request) Validate() error {
	if len(r.Lines) == 0 {
		return procure.Invalid(procure.SourceBody, "lines", "at least one line is required")
	}
	if len(r.Lines) > MaxLines {
		return procure.Invalid(procure.SourceBody, "lines", "at most "+strconv.Itoa(MaxLines)+" lines per request (got "+strconv.Itoa(len(r.Lines))+")")
	}
	v := fieldErrors{v: procure.ValidationError{Source: procure.SourceBody}}
	if rule := requisitionIDRule(r.RequisitionID); rule != "" {
		v.add("requisitionId", rule)
	}
	places := int32(-1) // no currency: amounts are not checked for minor units
	if r.Currency != "" {
		if minor, ok := MinorUnits(r.Currency); ok {
			places = int32(minor)
		} else {
			v.add("currency", "must be an active ISO 4217 currency code such as NZD (got "+quoteShort(r.Currency)+")")
		}
	}
	// Line numbers usually increase; then they cannot repeat, and no map
	// is needed to tell.
	var seen map[int]struct{}
	if !increasing(r.Lines) {
		seen = make(map[int]struct{}, len(r.Lines))
	}
	for i := range r.Lines {
		l := &r.Lines[i]
		if seen != nil {
			if _, dup := seen[l.Number]; dup {
				v.add(lineField(i, "number"), "line number "+strconv.Itoa(l.Number)+" appears more than once")
			}
			seen[l.Number] = struct{}{}
		}
		if places >= 0 && !hasPlaces(l.Amount, places) {
			v.add(lineField(i, "amount"), unitRule(r.Currency, places, l.Amount))
		}
		switch {
		case l.Splits != nil && l.Account != "":
			v.add(lineField(i, "splits"), "a line carries either account or splits, not both")
		case l.Splits != nil:
			l.validateSplits(&v, i, r.Currency, places)
		case strings.TrimSpace(l.Account) == "":
			v.add(lineField(i, "account"), "is required")
		}
	}
	return v.err()
}

// MaxFieldErrors is the most field errors one Validate reports; the rest
// are counted (procure.ValidationError.Omitted, "and N more";
// docs: limits.md).
const MaxFieldErrors = 20

// fieldErrors collects at most MaxFieldErrors field errors.
type fieldErrors struct{ v procure.ValidationError }

func (f *fieldErrors) add(field, rule string) {
	if len(f.v.Fields) < MaxFieldErrors {
		f.v.Add(field, rule)
	} else {
		f.v.Omitted++
	}
}

func (f *fieldErrors) err() error {
	if len(f.v.Fields) == 0 {
		return nil
	}
	return &f.v
}

func lineField(i int, name string) string {
	return "lines[" + strconv.Itoa(i) + "]." + name
}

func splitField(i, j int, name string) string {
	f := "lines[" + strconv.Itoa(i) + "].splits[" + strconv.Itoa(j) + "]"
	if name != "" {
		f += "." + name
	}
	return f
}

func unitRule(currency string, places int32, d decimal.Decimal) string {
	return "must be a whole number of " + currency + " minor units (at most " + strconv.Itoa(int(places)) +
		" decimals; got " + FormatAmount(d) + ")"
}

var hundred = decimal.New(100, 0)

// validateSplits checks the splits of line i (docs: account-codes.md
// "Bad input"). The sum rule is checked only when every split is good on
// its own, so that one mistake is reported once.
func (l *Line) validateSplits(v *fieldErrors, i int, currency string, places int32) {
	switch {
	case len(l.Splits) == 0:
		v.add(lineField(i, "splits"), "at least one split is required")
		return
	case len(l.Splits) > MaxSplits:
		v.add(lineField(i, "splits"), "at most "+strconv.Itoa(MaxSplits)+" splits per line (got "+strconv.Itoa(len(l.Splits))+")")
		return
	}
	byPercent := l.Splits[0].Percentage.Valid
	good := true
	var first map[string]int // account -> first split; only for longer lines
	if len(l.Splits) > 8 {
		first = make(map[string]int, len(l.Splits))
	}
	for j := range l.Splits {
		s := &l.Splits[j]
		if strings.TrimSpace(s.Account) == "" {
			v.add(splitField(i, j, "account"), "is required")
			good = false
		} else if k, dup := firstAccount(l.Splits[:j], first, s.Account, j); dup {
			v.add(splitField(i, j, "account"), "account "+quoteShort(s.Account)+" appears more than once in the line's splits (it is also split number "+strconv.Itoa(k+1)+", counted from 1)")
			good = false
		}
		switch {
		case s.Percentage.Valid && s.Amount.Valid:
			v.add(splitField(i, j, ""), "a split carries either percentage or amount, not both")
			good = false
		case !s.Percentage.Valid && !s.Amount.Valid:
			v.add(splitField(i, j, ""), "a split needs a percentage or an amount")
			good = false
		case s.Percentage.Valid != byPercent:
			v.add(splitField(i, j, ""), "the splits of a line must all use percentage or all use amount")
			good = false
		case s.Percentage.Valid:
			p := s.Percentage.Decimal
			if u, ok := percentUnits(p); ok && u > 0 && u <= 100*percentScale {
				continue // the usual case, decided without math/big
			}
			switch {
			case p.Sign() <= 0 || p.Cmp(hundred) > 0:
				v.add(splitField(i, j, "percentage"), "must be more than 0 and at most 100 (got "+FormatAmount(p)+")")
				good = false
			case !hasPlaces(p, MaxPercentageDecimals):
				v.add(splitField(i, j, "percentage"), "must have at most "+strconv.Itoa(MaxPercentageDecimals)+" decimals (got "+FormatAmount(p)+")")
				good = false
			}
		default:
			a := s.Amount.Decimal
			switch {
			case a.Sign() != l.Amount.Sign():
				v.add(splitField(i, j, "amount"), "must have the sign of the line's amount "+FormatAmount(l.Amount)+" (got "+FormatAmount(a)+")")
				good = false
			case places >= 0 && !hasPlaces(a, places):
				v.add(splitField(i, j, "amount"), unitRule(currency, places, a))
				good = false
			}
		}
	}
	if !good {
		return
	}
	if byPercent {
		// Every percentage is now a whole number of percentScale.
		var units int64
		for _, s := range l.Splits {
			u, _ := percentUnits(s.Percentage.Decimal)
			units += u // at most MaxSplits * 100 * percentScale: no overflow
		}
		if units != 100*percentScale {
			v.add(lineField(i, "splits"), "the percentages must sum to exactly 100 (got "+FormatAmount(decimal.New(units, -MaxPercentageDecimals))+")")
		}
		return
	}
	var sum runningSum
	sum.set(l.Splits[0].Amount.Decimal)
	for _, s := range l.Splits[1:] {
		sum.add(s.Amount.Decimal)
	}
	if total := sum.decimal(); !total.Equal(l.Amount) {
		v.add(lineField(i, "splits"), "the split amounts must sum to exactly the line's amount "+FormatAmount(l.Amount)+" (got "+FormatAmount(total)+")")
	}
}

// percentScale is one percent in the units percentUnits counts.
const percentScale = 10_000 // 10^MaxPercentageDecimals

// percentUnits returns p in units of 10^-MaxPercentageDecimals percent
// (33.3333 is 333333) and whether that is exact and fits an int64 without
// math/big.
func percentUnits(p decimal.Decimal) (int64, bool) {
	if p.NumDigits() > 18 {
		// Many trailing zeros (50.000000000000000000000): exact only if
		// the units are a whole number that fits.
		u := p.Shift(MaxPercentageDecimals)
		if !u.IsInteger() || u.Abs().Cmp(decimal.New(1<<62, 0)) > 0 {
			return 0, false
		}
		return u.IntPart(), true
	}
	c, e := p.CoefficientInt64(), p.Exponent()+MaxPercentageDecimals
	for ; e < 0; e++ { // more decimals than allowed: exact only if they are zeros
		if c%10 != 0 {
			return 0, false
		}
		c /= 10
	}
	return scale(c, e)
}

// firstAccount finds account among the splits before position j: by a scan
// for a short line, through first (kept up to date) for a longer one.
func firstAccount(before []Split, first map[string]int, account string, j int) (int, bool) {
	if first == nil {
		for k, s := range before {
			if s.Account == account {
				return k, true
			}
		}
		return 0, false
	}
	if k, ok := first[account]; ok {
		return k, true
	}
	first[account] = j
	return 0, false
}

// Result is the verdict on one line.
type Result struct {
	LineNumber int
	Status     Status
	// Message is shown to the buyer; it may be empty. CheckReply cuts it to
	// MaxMessageLength characters.
	Message string
}

// Validator decides a verdict for every line of a request.
//
// Validate returns exactly one Result per line of req, matched by line
// number (CheckReply states the rule; callers apply it and treat a breach
// as a failed check), or an error. An error that means the check could not
// be made should match ErrUnavailable (or ErrTimeout), and a reply that
// broke the rules ErrMalformedReply; an error never means "proceed".
// Implementations must be safe for concurrent use and must honour ctx.
type Validator interface {
	Validate(ctx context.Context, req Request) ([]Result, error)
}

// ValidatorFunc adapts a function to Validator.
type ValidatorFunc func(ctx context.Context, req Request) ([]Result, error)

// Validate calls f.
func (f ValidatorFunc) Validate(ctx context.Context, req Request) ([]Result, error) {
	return f(ctx, req)
}

// CheckReply checks that results answer req: exactly one result per request
// line, matched by line number, each with a known status. A missing, extra
// or duplicate line, or an unknown status, is an error matching
// ErrMalformedReply - never a pass. A request whose line numbers are not
// unique cannot be answered unambiguously: that is an error matching
// procure.ErrInvalid.
//
// On success CheckReply also normalises results in place: messages longer
// than MaxMessageLength characters are cut to that length (invalid UTF-8 is
// replaced by U+FFFD first), and the results are put in the order of
// req.Lines.
func CheckReply(req Request, results []Result) error {
	n := len(req.Lines)
	// A finance system usually answers in request order; then no map is
	// needed beyond the uniqueness check of the request's numbers.
	inOrder := len(results) == n
	for i := 0; inOrder && i < n; i++ {
		inOrder = results[i].LineNumber == req.Lines[i].Number
	}
	// position finds a line number in req.Lines: by binary search when
	// the numbers increase (the usual case), else through a map, built
	// only when needed.
	var index map[int]int
	sorted := increasing(req.Lines)
	if !sorted {
		index = make(map[int]int, n)
		for i, l := range req.Lines {
			if _, dup := index[l.Number]; dup {
				return procure.Invalid(procure.SourceBody, "lines["+strconv.Itoa(i)+"].number",
					"line number "+strconv.Itoa(l.Number)+" appears more than once")
			}
			index[l.Number] = i
		}
	}
	position := func(number int) (int, bool) {
		if sorted {
			return slices.BinarySearchFunc(req.Lines, number, func(l Line, n int) int { return cmp.Compare(l.Number, n) })
		}
		i, ok := index[number]
		return i, ok
	}
	for i := range results {
		if !results[i].Status.Known() {
			return fmt.Errorf("%w: line %d: unknown status %s (want Valid, Invalid or Warning)",
				ErrMalformedReply, results[i].LineNumber, quoteShort(string(results[i].Status)))
		}
	}
	if !inOrder {
		seen := make([]bool, n)
		for _, r := range results {
			pos, ok := position(r.LineNumber)
			if !ok {
				return fmt.Errorf("%w: line %d is not a line of the request", ErrMalformedReply, r.LineNumber)
			}
			if seen[pos] {
				return fmt.Errorf("%w: line %d is answered more than once", ErrMalformedReply, r.LineNumber)
			}
			seen[pos] = true
		}
		for pos, ok := range seen {
			if !ok {
				return fmt.Errorf("%w: no result for line %d", ErrMalformedReply, req.Lines[pos].Number)
			}
		}
		// Every position is taken exactly once: reorder to request order.
		ordered := make([]Result, n)
		for _, r := range results {
			pos, _ := position(r.LineNumber)
			ordered[pos] = r
		}
		copy(results, ordered)
	}
	for i := range results {
		results[i].Message = TruncateMessage(results[i].Message)
	}
	return nil
}

// increasing reports whether the line numbers strictly increase.
func increasing(lines []Line) bool {
	for i := 1; i < len(lines); i++ {
		if lines[i].Number <= lines[i-1].Number {
			return false
		}
	}
	return true
}

// TruncateMessage returns m cut to MaxMessageLength characters (not bytes),
// with invalid UTF-8 replaced by U+FFFD.
func TruncateMessage(m string) string {
	if !utf8.ValidString(m) {
		m = strings.ToValidUTF8(m, "\uFFFD")
	}
	if len(m) <= MaxMessageLength { // bytes >= characters
		return m
	}
	count := 0
	for i := range m {
		if count == MaxMessageLength {
			return m[:i]
		}
		count++
	}
	return m
}

// ParseAmount reads a decimal amount strictly: an optional sign, digits,
// and optionally a point followed by digits ("125.50", "-3", "+0.5").
// Surrounding white space is ignored. Exponents, thousands separators,
// "NaN", a bare point and anything longer than MaxAmountLength characters
// are errors. The scale is kept: "10.50" has two decimal places.
func ParseAmount(s string) (decimal.Decimal, error) {
	f, err := parseFigure(s)
	if err != nil {
		return decimal.Decimal{}, err
	}
	return f.decimal(), nil
}

// parseFigure is ParseAmount without making a big.Int when the digits fit
// an int64.
func parseFigure(s string) (figure, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return figure{}, errors.New("must not be empty")
	}
	if len(s) > MaxAmountLength {
		return figure{}, fmt.Errorf("must be a decimal number of at most %d characters", MaxAmountLength)
	}
	digits := s
	if digits[0] == '-' || digits[0] == '+' {
		digits = digits[1:]
	}
	intPart, frac, hasPoint := strings.Cut(digits, ".")
	if !allDigits(intPart) || (hasPoint && !allDigits(frac)) {
		return figure{}, fmt.Errorf("must be a decimal number such as 125.50 (got %s)", quoteShort(s))
	}
	if len(intPart)+len(frac) <= 18 {
		var coef int64
		for i := 0; i < len(intPart); i++ {
			coef = coef*10 + int64(intPart[i]-'0')
		}
		for i := 0; i < len(frac); i++ {
			coef = coef*10 + int64(frac[i]-'0')
		}
		if s[0] == '-' {
			coef = -coef
		}
		return figure{coef: coef, exp: -int32(len(frac))}, nil
	}
	d, err := decimal.NewFromString(s)
	if err != nil {
		return figure{}, fmt.Errorf("must be a decimal number such as 125.50 (got %s)", quoteShort(s))
	}
	return figure{big: &d}, nil
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// FormatAmount writes d exactly, in plain notation, keeping its scale:
// "125.50" stays "125.50", never "125.5" or "1.255E2", whatever the
// package-level settings of shopspring/decimal.
func FormatAmount(d decimal.Decimal) string {
	return string(AppendAmount(nil, d))
}

// AppendAmount appends FormatAmount(d) to b.
func AppendAmount(b []byte, d decimal.Decimal) []byte {
	exp := d.Exponent()
	// Up to 18 digits fit an int64: format without big.Int's help.
	if d.NumDigits() > 18 || exp > 0 || exp < -18 {
		if exp < 0 {
			return append(b, d.StringFixed(-exp)...)
		}
		return append(b, d.StringFixed(0)...)
	}
	c := d.CoefficientInt64()
	if c < 0 {
		b = append(b, '-')
		c = -c
	}
	var buf [24]byte
	digits := strconv.AppendInt(buf[:0], c, 10)
	if exp == 0 {
		return append(b, digits...)
	}
	places := int(-exp)
	if len(digits) <= places {
		b = append(b, '0', '.')
		for i := len(digits); i < places; i++ {
			b = append(b, '0')
		}
		return append(b, digits...)
	}
	b = append(b, digits[:len(digits)-places]...)
	b = append(b, '.')
	return append(b, digits[len(digits)-places:]...)
}

// quoteShort quotes s for an error message, cut to 40 characters so that a
// hostile value cannot flood a log.
func quoteShort(s string) string {
	const max = 40
	if utf8.RuneCountInString(s) > max {
		n := 0
		for i := range s {
			if n == max {
				return strconv.Quote(s[:i]) + "..."
			}
			n++
		}
	}
	return strconv.Quote(s)
}
