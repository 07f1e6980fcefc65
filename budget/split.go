package budget

import (
	"math/big"
	"math/bits"
	"slices"

	"github.com/shopspring/decimal"
)

// MaxSplits is the most splits one line may carry (docs: account-codes.md "Splits and currency").
const MaxSplits = 100

// MaxPercentageDecimals is the most decimal places a split's percentage
// may have.
const MaxPercentageDecimals = 4

// Split is one account's part of a split line (docs: account-codes.md
// "Splits and currency"). Exactly one of Percentage and Amount is set
// (Valid), and every split of a line uses the same one.
type Split struct {
	// Account is the split's account code, compared exactly; unique
	// within its line.
	Account string
	// Percentage is the account's share of the line, in percent: more
	// than 0, at most 100, at most MaxPercentageDecimals decimals; a
	// line's percentages sum to exactly 100.
	Percentage decimal.NullDecimal
	// Amount is the account's part of the line itself; a line's split
	// amounts sum to exactly its Amount.
	Amount decimal.NullDecimal
}

// Share is what one account is charged for a line: the line's whole
// amount for an unsplit line, a split's amount, or a split's allocated
// part of the line.
type Share struct {
	Account string
	Amount  decimal.Decimal
}

// Shares returns what each account of l is charged, in the order of its
// splits, in the minor units of currency ("" means DefaultCurrency).
// An unsplit line is one share: its Account with its Amount. Amount splits
// are their amounts as given. Percentage splits are allocated exactly, so
// that the shares sum to the line's amount: each split gets its percentage
// of the line rounded down to a minor unit, and the units left over go
// one each to the splits with the largest remainders, ties to the earlier
// split (100.00 at 33.3333, 33.3333 and 33.3334 percent is 33.33, 33.33
// and 33.34). A credit (a negative amount) is allocated as its absolute
// value and negated, so it mirrors the debit it reverses.
//
// Shares does not validate l (see Request.Validate): an amount with more
// decimals than the currency has is allocated in its own smallest unit,
// and percentages that do not sum to 100 give shares that do not sum to
// the line.
func (l *Line) Shares(currency string) []Share {
	return l.AppendShares(nil, currency)
}

// AppendShares appends l.Shares(currency) to dst.
func (l *Line) AppendShares(dst []Share, currency string) []Share {
	if len(l.Splits) == 0 {
		return append(dst, Share{Account: l.Account, Amount: l.Amount})
	}
	if !l.Splits[0].Percentage.Valid {
		for _, s := range l.Splits {
			dst = append(dst, Share{Account: s.Account, Amount: s.Amount.Decimal})
		}
		return dst
	}
	if currency == "" {
		currency = DefaultCurrency
	}
	minor, _ := MinorUnits(currency)
	start := len(dst)
	for _, s := range l.Splits {
		dst = append(dst, Share{Account: s.Account})
	}
	allocate(dst[start:], l.Amount, l.Splits, minor)
	return dst
}

// allocate sets out[i].Amount to split i's part of amount, by the largest
// remainder method in units of 10^-places, where places is the currency's
// minor units, or the amount's own decimals when it is finer than that (an
// unvalidated request).
func allocate(out []Share, amount decimal.Decimal, splits []Split, minor int) {
	places := int32(minor)
	if !hasPlaces(amount, places) {
		places = -amount.Exponent()
	}
	if allocateSmall(out, amount, splits, places) {
		return
	}
	units := new(big.Int).Abs(amount.Coefficient())
	switch shift := places + amount.Exponent(); {
	case shift > 0:
		units.Mul(units, pow10(shift))
	case shift < 0: // trailing zeros beyond the minor unit: 100.00 yen
		units.Quo(units, pow10(-shift))
	}
	negative := amount.Sign() < 0
	// Percentages as integers over a common scale: 33.3333 is 333333 of
	// 1000000 (100 at four decimals).
	pscale := int32(0)
	for _, s := range splits {
		pscale = max(pscale, -s.Percentage.Decimal.Exponent())
	}
	parts := make([]*big.Int, len(splits))
	for i, s := range splits {
		p := s.Percentage.Decimal
		parts[i] = p.Coefficient()
		if shift := pscale + p.Exponent(); shift > 0 {
			parts[i].Mul(parts[i], pow10(shift))
		}
	}
	total := new(big.Int).Mul(big.NewInt(100), pow10(pscale))

	quot := make([]uint64, len(splits))
	rem := make([]uint64, len(splits))
	if fast(units, parts, total, quot, rem) {
		var given uint64
		for _, q := range quot {
			given += q
		}
		left := units.Uint64() - given
		for _, i := range largest(len(splits), left, func(a, b int) int { return cmpUint(rem[b], rem[a]) }) {
			quot[i]++
		}
		for i, q := range quot {
			c := int64(q)
			if negative {
				c = -c
			}
			out[i].Amount = decimal.New(c, -places)
		}
		return
	}

	// Amounts beyond an int64 of minor units: the same method on big.Int.
	bq := make([]*big.Int, len(splits))
	br := make([]*big.Int, len(splits))
	given := new(big.Int)
	for i := range splits {
		bq[i], br[i] = new(big.Int).QuoRem(new(big.Int).Mul(units, parts[i]), total, new(big.Int))
		given.Add(given, bq[i])
	}
	left := new(big.Int).Sub(units, given)
	n := uint64(0)
	if left.Sign() > 0 && left.IsUint64() {
		n = left.Uint64()
	}
	for _, i := range largest(len(splits), n, func(a, b int) int { return br[b].Cmp(br[a]) }) {
		bq[i].Add(bq[i], big.NewInt(1))
	}
	for i, q := range bq {
		if negative {
			q.Neg(q)
		}
		out[i].Amount = decimal.NewFromBigInt(q, -places)
	}
}

// maxSmallSplits bounds the splits allocateSmall handles on the stack.
const maxSmallSplits = MaxSplits

// allocateSmall is allocate without math/big, for amounts and percentages
// whose coefficients fit an int64 (every real one): 128-bit products and
// quotients, the remainders on the stack. It reports false, having done
// nothing, for anything else.
func allocateSmall(out []Share, amount decimal.Decimal, splits []Split, places int32) bool {
	if len(splits) > maxSmallSplits || amount.NumDigits() > 18 {
		return false
	}
	c := amount.CoefficientInt64()
	negative := c < 0
	if negative {
		c = -c
	}
	// units: |amount| in 10^-places (exact: places covers its decimals,
	// or its extra decimals are zeros).
	var ok bool
	switch shift := places + amount.Exponent(); {
	case shift > 0:
		if c, ok = scale(c, shift); !ok {
			return false
		}
	case shift < 0:
		for ; shift < 0; shift++ {
			c /= 10
		}
	}
	units := uint64(c)
	pscale := int32(0)
	for i := range splits {
		p := &splits[i].Percentage.Decimal
		if p.NumDigits() > 18 || p.Sign() < 0 {
			return false
		}
		pscale = max(pscale, -p.Exponent())
	}
	if pscale > 16 {
		return false
	}
	total := uint64(100)
	for range pscale {
		total *= 10
	}
	var quot, rem [maxSmallSplits]uint64
	var given uint64
	for i := range splits {
		p := &splits[i].Percentage.Decimal
		part, ok := scale(p.CoefficientInt64(), pscale+p.Exponent())
		if !ok || uint64(part) > total {
			return false
		}
		hi, lo := bits.Mul64(units, uint64(part))
		quot[i], rem[i] = bits.Div64(hi, lo, total) // hi < total, as part <= total
		given += quot[i]
	}
	// The leftover units (fewer than the splits when the percentages sum
	// to 100) go one each to the largest remainders, ties to the earlier
	// split: pick the largest one left each time.
	var taken [maxSmallSplits]bool
	left := uint64(0)
	if given < units {
		left = min(units-given, uint64(len(splits)))
	}
	for ; left > 0; left-- {
		best := -1
		for i := range splits {
			if !taken[i] && (best < 0 || rem[i] > rem[best]) {
				best = i
			}
		}
		taken[best] = true
		quot[best]++
	}
	for i := range splits {
		q := int64(quot[i])
		if negative {
			q = -q
		}
		out[i].Amount = decimal.New(q, -places)
	}
	return true
}

// fast divides units*parts[i] by total into quot and rem with 128-bit
// products when every number fits (nearly always), and reports whether it
// did.
func fast(units *big.Int, parts []*big.Int, total *big.Int, quot, rem []uint64) bool {
	if !units.IsUint64() || !total.IsUint64() || units.Uint64() > 1<<63-1 {
		return false
	}
	u, t := units.Uint64(), total.Uint64()
	for _, p := range parts {
		// A part over the total (an unvalidated percentage over 100)
		// could overflow the quotient.
		if p.Sign() < 0 || !p.IsUint64() || p.Uint64() > t {
			return false
		}
	}
	for i, p := range parts {
		hi, lo := bits.Mul64(u, p.Uint64())
		quot[i], rem[i] = bits.Div64(hi, lo, t) // hi < t, as p <= t
	}
	return true
}

// largest returns the positions, up to n of them, that get one more unit:
// ordered by cmp (largest remainder first), ties to the earlier position.
func largest(count int, n uint64, cmp func(a, b int) int) []int {
	if n == 0 {
		return nil
	}
	order := make([]int, count)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, cmp)
	return order[:min(uint64(count), n)]
}

func cmpUint(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func pow10(n int32) *big.Int {
	return new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(n)), nil)
}

// hasPlaces reports whether d is a whole number of 10^-places: 125.50 and
// 125.500 have two places, 125.505 does not.
func hasPlaces(d decimal.Decimal, places int32) bool {
	if -d.Exponent() <= places {
		return true
	}
	return d.Equal(d.Truncate(places))
}

// worse reports whether a is a worse verdict than b: Invalid, then Warning,
// then Valid.
func worse(a, b Status) bool { return severity(a) > severity(b) }

func severity(s Status) int {
	switch s {
	case Invalid:
		return 2
	case Warning:
		return 1
	}
	return 0
}
