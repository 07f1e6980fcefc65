package budget

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/shopspring/decimal"
)

// DefaultHoldFor is how long a hold lasts when nothing else is configured
// (docs: account-codes.md "Holds"): a requisition that is neither released
// nor confirmed in that time stops holding budget.
const DefaultHoldFor = 72 * time.Hour

// MaxRequisitionIDLength bounds a requisition id that holds budget.
const MaxRequisitionIDLength = 255

// Claim is what one check asks of one account: the sum over the check's
// lines and splits of the amounts allocated to it.
type Claim struct {
	Account string
	Amount  decimal.Decimal
	// AsOf is when the account's budget figure was taken (the table's
	// as_of column): it already includes the spend of every commitment
	// confirmed at or before AsOf, so only later commitments count against
	// it. Zero means every commitment counts.
	AsOf time.Time
}

// HoldCheck is one check of a requisition against the holds.
type HoldCheck struct {
	// Requisition owns the holds; required (a check without one holds
	// nothing and never reaches a HoldStore).
	Requisition string
	// Claims are the check's accounts, each at most once.
	Claims []Claim
	// For is how long the holds last from now; zero or less means
	// DefaultHoldFor.
	For time.Duration
}

// Decide is called by HoldStore.Hold with the accounts of the check
// locked. held[i] is what every other requisition holds on Claims[i]'s
// account now (unexpired holds, and commitments confirmed after the
// claim's AsOf). It returns whether the check holds its claims (no line
// is Invalid). It must not call the store.
type Decide func(held []decimal.Decimal) (hold bool)

// Hold is one requisition's hold (or commitment) on one account.
type Hold struct {
	Requisition string
	Account     string
	Amount      decimal.Decimal
	// Held is when the check that made it ran.
	Held time.Time
	// Expires is when the hold ends unless released or confirmed; zero for
	// a commitment.
	Expires time.Time
	// Confirmed is when the hold became a commitment; zero for a hold.
	Confirmed time.Time
}

// Committed reports whether h is a commitment (confirmed) rather than a
// hold.
func (h Hold) Committed() bool { return !h.Confirmed.IsZero() }

// HoldStore keeps what pending requisitions hold on accounts
// (docs: account-codes.md "Holds"). MemHolds keeps them in memory;
// package pgholds keeps them in PostgreSQL, shared by several connectors.
// Every method is safe for concurrent use. A store that cannot be reached
// returns an error matching ErrUnavailable and changes nothing: never a
// partial hold.
//
// Times come from the store's clock; stores keep them to the microsecond.
type HoldStore interface {
	// Hold runs one check atomically: it locks the claims' accounts
	// (checks that share an account run one after the other; checks on
	// disjoint accounts may run at once), calls decide with what the other
	// requisitions hold, and then replaces everything the requisition held
	// (holds and commitments) with holds of the claims whose amount is
	// positive when decide returns true, or with nothing when it returns
	// false. It returns decide's answer. A claim of zero or less holds
	// nothing (a credit never frees budget for others).
	Hold(ctx context.Context, c HoldCheck, decide Decide) (bool, error)

	// Held returns what every requisition holds on each claim's account
	// (unexpired holds, and commitments confirmed after the claim's AsOf),
	// in the order of claims, for a check that holds nothing (one without
	// a requisition id). It locks nothing.
	Held(ctx context.Context, claims []Claim) ([]decimal.Decimal, error)

	// Release ends every hold and commitment of requisition and returns how
	// many ended; an unknown requisition is 0 and no error.
	Release(ctx context.Context, requisition string) (int, error)

	// Confirm turns requisition's unexpired holds into commitments, which
	// never expire, and returns how many changed: 0 for an unknown
	// requisition, one already confirmed, or one whose holds expired.
	Confirm(ctx context.Context, requisition string) (int, error)

	// Holds returns the unexpired holds and the commitments on account,
	// ordered by requisition.
	Holds(ctx context.Context, account string) ([]Hold, error)

	// Expire removes the holds that expired and returns them, ordered by
	// requisition and account. Expired holds count for nothing whether or
	// not Expire has run; it exists to bound storage and to tell the audit
	// log that they ended.
	Expire(ctx context.Context) ([]Hold, error)
}

// HoldsTime returns t as the stores keep it: UTC, to the microsecond.
func HoldsTime(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }

// ValidHoldCheck reports what is wrong with c for a HoldStore: no
// requisition, a requisition over MaxRequisitionIDLength characters, or an
// account claimed twice. Stores call it before they touch anything.
func ValidHoldCheck(c HoldCheck) error {
	switch {
	case c.Requisition == "":
		return errors.New("budget: a hold needs a requisition id")
	case len([]rune(c.Requisition)) > MaxRequisitionIDLength:
		return fmt.Errorf("budget: requisition id over %d characters", MaxRequisitionIDLength)
	}
	seen := make(map[string]struct{}, len(c.Claims))
	for _, cl := range c.Claims {
		if _, dup := seen[cl.Account]; dup {
			return fmt.Errorf("budget: account %s claimed twice in one check", quoteShort(cl.Account))
		}
		seen[cl.Account] = struct{}{}
	}
	return nil
}

// MemHolds is the in-memory HoldStore: the connector's default. A restart
// forgets every hold. One mutex serialises all checks. Each account keeps
// the sums of its holds and of its commitments, so a check costs the same
// however many requisitions hold the account; expired holds are swept out
// of an account when it is next used, and kept for Expire to report.
type MemHolds struct {
	now func() time.Time

	mu      sync.Mutex
	byReq   map[string][]*Hold      // requisition -> its holds
	byAcc   map[string]*accountHold // account -> its holds
	expired []Hold                  // swept, not yet reported by Expire
}

// accountHold is what is held on one account.
type accountHold struct {
	byReq     map[string]*Hold
	holds     runningSum // sum of the holds in byReq, expired ones included until swept
	committed runningSum // sum of the commitments in byReq
	// soonest is no later than the earliest expiry of the holds in byReq
	// (zero when there are none).
	soonest time.Time
}

var _ HoldStore = (*MemHolds)(nil)

// NewMemHolds returns an empty in-memory store whose clock is now (nil:
// time.Now).
func NewMemHolds(now func() time.Time) *MemHolds {
	if now == nil {
		now = time.Now
	}
	return &MemHolds{now: now, byReq: map[string][]*Hold{}, byAcc: map[string]*accountHold{}}
}

// counts reports whether h counts against a claim with the given as_of at
// now.
func counts(h *Hold, now, asOf time.Time) bool {
	if h.Committed() {
		return asOf.IsZero() || h.Confirmed.After(asOf)
	}
	return h.Expires.After(now)
}

// account returns the holds of name after sweeping out the expired ones,
// or nil when nothing is held on it; m.mu is held.
func (m *MemHolds) account(name string, now time.Time) *accountHold {
	a := m.byAcc[name]
	if a == nil || a.soonest.IsZero() || a.soonest.After(now) {
		return a
	}
	a.soonest = time.Time{}
	for req, h := range a.byReq {
		switch {
		case h.Committed():
		case h.Expires.After(now):
			if a.soonest.IsZero() || h.Expires.Before(a.soonest) {
				a.soonest = h.Expires
			}
		default:
			m.expired = append(m.expired, *h)
			m.remove(h)
			hs := slices.DeleteFunc(m.byReq[req], func(x *Hold) bool { return x == h })
			if len(hs) == 0 {
				delete(m.byReq, req)
			} else {
				m.byReq[req] = hs
			}
		}
	}
	return m.byAcc[name]
}

// remove takes h out of its account's sums and map (not out of byReq);
// m.mu is held.
func (m *MemHolds) remove(h *Hold) {
	a := m.byAcc[h.Account]
	delete(a.byReq, h.Requisition)
	if len(a.byReq) == 0 {
		delete(m.byAcc, h.Account)
		return
	}
	if h.Committed() {
		a.committed.sub(h.Amount)
	} else {
		a.holds.sub(h.Amount)
	}
}

// held sums what requisitions other than req hold on each claim's
// account; m.mu is held.
func (m *MemHolds) held(now time.Time, req string, claims []Claim) []decimal.Decimal {
	out := make([]decimal.Decimal, len(claims))
	// The accounts are swept first, so that req's own holds stay put
	// while they are matched to the claims: a re-check usually claims the
	// accounts req holds in the order it held them, so a cursor over
	// them finds each own hold without a lookup in the account's map of
	// every requisition's holds.
	accounts := make([]*accountHold, len(claims))
	for i, cl := range claims {
		accounts[i] = m.account(cl.Account, now)
	}
	var own []*Hold
	if req != "" {
		own = m.byReq[req]
	}
	for i, cl := range claims {
		a := accounts[i]
		if a == nil {
			continue
		}
		sum := a.holds
		if cl.AsOf.IsZero() {
			sum.add(a.committed.decimal())
		} else if !a.committed.zero() {
			for _, h := range a.byReq {
				if h.Committed() && h.Confirmed.After(cl.AsOf) {
					sum.add(h.Amount)
				}
			}
		}
		var mine *Hold
		if len(own) > 0 && own[0].Account == cl.Account {
			mine, own = own[0], own[1:]
		} else if req != "" {
			mine = a.byReq[req]
		}
		if mine != nil && counts(mine, now, cl.AsOf) {
			sum.sub(mine.Amount)
		}
		out[i] = sum.decimal()
	}
	return out
}

// Hold implements HoldStore.
func (m *MemHolds) Hold(ctx context.Context, c HoldCheck, decide Decide) (bool, error) {
	if err := ValidHoldCheck(c); err != nil {
		return false, err
	}
	if err := ctx.Err(); err != nil {
		return false, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	forDur := c.For
	if forDur <= 0 {
		forDur = DefaultHoldFor
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := HoldsTime(m.now())
	ok := decide(m.held(now, c.Requisition, c.Claims))
	m.drop(c.Requisition, now)
	if !ok {
		return false, nil
	}
	expires := now.Add(forDur)
	var hs []*Hold
	backing := make([]Hold, 0, len(c.Claims)) // one allocation for the check's holds
	for _, cl := range c.Claims {
		if cl.Amount.Sign() <= 0 {
			continue
		}
		backing = append(backing, Hold{Requisition: c.Requisition, Account: cl.Account, Amount: cl.Amount, Held: now, Expires: expires})
		h := &backing[len(backing)-1]
		hs = append(hs, h)
		a := m.byAcc[cl.Account]
		if a == nil {
			a = &accountHold{byReq: map[string]*Hold{}}
			m.byAcc[cl.Account] = a
		}
		a.byReq[c.Requisition] = h
		a.holds.add(h.Amount)
		if a.soonest.IsZero() || expires.Before(a.soonest) {
			a.soonest = expires
		}
	}
	if len(hs) > 0 {
		m.byReq[c.Requisition] = hs
	}
	return true, nil
}

// Held implements HoldStore.
func (m *MemHolds) Held(ctx context.Context, claims []Claim) ([]decimal.Decimal, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.held(HoldsTime(m.now()), "", claims), nil
}

// drop removes every hold of req and returns those that still counted
// (commitments and unexpired holds); m.mu is held.
func (m *MemHolds) drop(req string, now time.Time) int {
	n := 0
	for _, h := range m.byReq[req] {
		if h.Committed() || h.Expires.After(now) {
			n++
		}
		m.remove(h)
	}
	delete(m.byReq, req)
	return n
}

// Release implements HoldStore.
func (m *MemHolds) Release(ctx context.Context, requisition string) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.drop(requisition, HoldsTime(m.now())), nil
}

// Confirm implements HoldStore.
func (m *MemHolds) Confirm(ctx context.Context, requisition string) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := HoldsTime(m.now())
	n := 0
	for _, h := range m.byReq[requisition] {
		if !h.Committed() && h.Expires.After(now) {
			a := m.byAcc[h.Account]
			a.holds.sub(h.Amount)
			a.committed.add(h.Amount)
			h.Confirmed, h.Expires = now, time.Time{}
			n++
		}
	}
	return n, nil
}

// Holds implements HoldStore.
func (m *MemHolds) Holds(ctx context.Context, account string) ([]Hold, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	a := m.account(account, HoldsTime(m.now()))
	if a == nil {
		return nil, nil
	}
	out := make([]Hold, 0, len(a.byReq))
	for _, h := range a.byReq {
		out = append(out, *h)
	}
	slices.SortFunc(out, func(a, b Hold) int { return cmp.Compare(a.Requisition, b.Requisition) })
	return out, nil
}

// Expire implements HoldStore.
func (m *MemHolds) Expire(ctx context.Context) ([]Hold, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := HoldsTime(m.now())
	for name := range m.byAcc {
		m.account(name, now)
	}
	out := m.expired
	m.expired = nil
	SortHolds(out)
	return out, nil
}

// SortHolds orders holds by requisition, then account.
func SortHolds(hs []Hold) {
	slices.SortFunc(hs, func(a, b Hold) int {
		return cmp.Or(cmp.Compare(a.Requisition, b.Requisition), cmp.Compare(a.Account, b.Account))
	})
}
