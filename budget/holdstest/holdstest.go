// Package holdstest is the conformance suite of budget.HoldStore
// (docs: account-codes.md "Holds"). Every implementation runs it in a few
// lines:
//
//	func TestHolds(t *testing.T) {
//		holdstest.Run(t, holdstest.Harness{New: func(tb testing.TB, now func() time.Time) budget.HoldStore {
//			return budget.NewMemHolds(now)
//		}})
//	}
//
// It checks every rule of the holds, then runs random concurrent histories
// and checks them against a sequential model, and a stress run of many
// goroutines on two stores (two connectors) over overlapping accounts. The
// stress run lasts StressEnv (a Go duration) or a few seconds.
package holdstest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/procurekit/procure/budget"
)

// StressEnv names the environment variable with the duration of the stress
// run (for example 30s); unset, it lasts DefaultStress.
const StressEnv = "PROCURE_HOLDS_STRESS"

// DefaultStress is the stress run's duration in CI.
const DefaultStress = 3 * time.Second

// Harness makes the stores under test.
type Harness struct {
	// New returns a new, empty store whose clock is now. Required.
	New func(tb testing.TB, now func() time.Time) budget.HoldStore
	// Twin returns a second store sharing s's data, as a second connector
	// on the same database would; nil means s itself (a store that cannot
	// be shared).
	Twin func(tb testing.TB, s budget.HoldStore) budget.HoldStore
}

// Clock is a settable clock for the tests.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// Now returns the clock's time.
func (c *Clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

// Advance moves the clock on by d.
func (c *Clock) Advance(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

func newClock() *Clock { return &Clock{t: time.Date(2026, 3, 1, 9, 0, 0, 123456000, time.UTC)} }

func dec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

// Run runs the whole suite.
func Run(t *testing.T, h Harness) {
	t.Run("HoldsAndAvailable", func(t *testing.T) { testHoldsAndAvailable(t, h) })
	t.Run("RecheckReplaces", func(t *testing.T) { testRecheckReplaces(t, h) })
	t.Run("RecheckRefusedHoldsNothing", func(t *testing.T) { testRecheckRefused(t, h) })
	t.Run("CreditsHoldNothing", func(t *testing.T) { testCredits(t, h) })
	t.Run("Release", func(t *testing.T) { testRelease(t, h) })
	t.Run("Confirm", func(t *testing.T) { testConfirm(t, h) })
	t.Run("Expiry", func(t *testing.T) { testExpiry(t, h) })
	t.Run("CommitmentAsOf", func(t *testing.T) { testAsOf(t, h) })
	t.Run("BadChecks", func(t *testing.T) { testBadChecks(t, h) })
	t.Run("CanceledContext", func(t *testing.T) { testCanceled(t, h) })
	t.Run("RandomHistories", func(t *testing.T) { testRandomHistories(t, h) })
	t.Run("Stress", func(t *testing.T) { testStress(t, h) })
	t.Run("ExpireWhileChecking", func(t *testing.T) { testExpireWhileChecking(t, h) })
}

// hold runs a check that holds when want is true and returns what decide saw.
func hold(tb testing.TB, s budget.HoldStore, req string, want bool, claims ...budget.Claim) []decimal.Decimal {
	tb.Helper()
	var seen []decimal.Decimal
	got, err := s.Hold(context.Background(), budget.HoldCheck{Requisition: req, Claims: claims, For: time.Hour},
		func(held []decimal.Decimal) bool { seen = slices.Clone(held); return want })
	if err != nil {
		tb.Fatalf("Hold(%s): %v", req, err)
	}
	if got != want {
		tb.Fatalf("Hold(%s) = %v, want decide's answer %v", req, got, want)
	}
	if len(seen) != len(claims) {
		tb.Fatalf("Hold(%s): decide saw %d figures for %d claims", req, len(seen), len(claims))
	}
	return seen
}

// heldBy returns what others hold on each account, as a check by req sees it.
func heldBy(tb testing.TB, s budget.HoldStore, req string, accounts ...string) []string {
	tb.Helper()
	claims := make([]budget.Claim, len(accounts))
	for i, a := range accounts {
		claims[i] = budget.Claim{Account: a}
	}
	// A refused check of a requisition that holds nothing changes nothing.
	seen := hold(tb, s, req, false, claims...)
	out := make([]string, len(seen))
	for i, d := range seen {
		out[i] = d.String()
	}
	return out
}

func claim(account, amount string) budget.Claim {
	return budget.Claim{Account: account, Amount: dec(amount)}
}

func wantHeld(tb testing.TB, got []string, want ...string) {
	tb.Helper()
	if !slices.Equal(got, want) {
		tb.Fatalf("held by others = %v, want %v", got, want)
	}
}

func count(tb testing.TB, n int, err error, want int, what string) {
	tb.Helper()
	if err != nil {
		tb.Fatalf("%s: %v", what, err)
	}
	if n != want {
		tb.Fatalf("%s = %d, want %d", what, n, want)
	}
}

func testHoldsAndAvailable(t *testing.T, h Harness) {
	c := newClock()
	s := h.New(t, c.Now)
	wantHeld(t, heldBy(t, s, "probe", "X", "Y"), "0", "0")
	hold(t, s, "A", true, claim("X", "60.50"), claim("Y", "10"))
	hold(t, s, "B", true, claim("X", "20"))
	// A check sees every other requisition's holds, never its own.
	wantHeld(t, heldBy(t, s, "probe", "X", "Y", "Z"), "80.5", "10", "0")
	// Held, for a check without a requisition, counts every requisition.
	all, err := s.Held(context.Background(), []budget.Claim{{Account: "Y"}, {Account: "X"}, {Account: "Z"}})
	if err != nil {
		t.Fatal(err)
	}
	wantHeld(t, toStrings(all), "10", "80.5", "0")
	wantHeld(t, toStrings(hold(t, s, "A", true, claim("X", "60.50"), claim("Y", "10"))), "20", "0")
	wantHeld(t, toStrings(hold(t, s, "B", true, claim("X", "20"))), "60.5")

	hs, err := s.Holds(context.Background(), "X")
	if err != nil {
		t.Fatal(err)
	}
	now := budget.HoldsTime(c.Now())
	want := []budget.Hold{
		{Requisition: "A", Account: "X", Amount: dec("60.50"), Held: now, Expires: now.Add(time.Hour)},
		{Requisition: "B", Account: "X", Amount: dec("20"), Held: now, Expires: now.Add(time.Hour)},
	}
	sameHolds(t, hs, want)
	// A second store on the same data sees the same holds.
	if h.Twin != nil {
		wantHeld(t, heldBy(t, h.Twin(t, s), "probe", "X", "Y"), "80.5", "10")
	}
}

func toStrings(ds []decimal.Decimal) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.String()
	}
	return out
}

func sameHolds(tb testing.TB, got, want []budget.Hold) {
	tb.Helper()
	eq := func(a, b budget.Hold) bool {
		return a.Requisition == b.Requisition && a.Account == b.Account && a.Amount.Equal(b.Amount) &&
			a.Held.Equal(b.Held) && a.Expires.Equal(b.Expires) && a.Confirmed.Equal(b.Confirmed)
	}
	if !slices.EqualFunc(got, want, eq) {
		tb.Fatalf("holds:\n got %v\nwant %v", got, want)
	}
}

func testRecheckReplaces(t *testing.T, h Harness) {
	s := h.New(t, newClock().Now)
	hold(t, s, "A", true, claim("X", "60"), claim("Y", "5"))
	// The re-check sees none of its own holds, and replaces them: never
	// counted twice, and an account it no longer claims is freed.
	wantHeld(t, toStrings(hold(t, s, "A", true, claim("X", "40"), claim("Z", "1"))), "0", "0")
	wantHeld(t, heldBy(t, s, "probe", "X", "Y", "Z"), "40", "0", "1")
	for range 3 {
		hold(t, s, "A", true, claim("X", "40"), claim("Z", "1"))
	}
	wantHeld(t, heldBy(t, s, "probe", "X", "Y", "Z"), "40", "0", "1")
}

func testRecheckRefused(t *testing.T, h Harness) {
	s := h.New(t, newClock().Now)
	hold(t, s, "A", true, claim("X", "60"), claim("Y", "5"))
	hold(t, s, "A", false, claim("X", "1000"))
	wantHeld(t, heldBy(t, s, "probe", "X", "Y"), "0", "0")
	n, err := s.Release(context.Background(), "A")
	count(t, n, err, 0, "Release after a refused re-check")
}

func testCredits(t *testing.T, h Harness) {
	s := h.New(t, newClock().Now)
	hold(t, s, "A", true, claim("X", "50"))
	hold(t, s, "C", true, claim("X", "-30"), claim("Y", "0"), claim("Z", "2"))
	wantHeld(t, heldBy(t, s, "probe", "X", "Y", "Z"), "50", "0", "2")
	hs, err := s.Holds(context.Background(), "X")
	if err != nil || len(hs) != 1 || hs[0].Requisition != "A" {
		t.Fatalf("Holds(X) = %v, %v; want A's hold only", hs, err)
	}
}

func testRelease(t *testing.T, h Harness) {
	s := h.New(t, newClock().Now)
	ctx := context.Background()
	hold(t, s, "A", true, claim("X", "60"), claim("Y", "5"))
	hold(t, s, "B", true, claim("X", "7"))
	n, err := s.Release(ctx, "unknown")
	count(t, n, err, 0, "Release(unknown)")
	n, err = s.Release(ctx, "A")
	count(t, n, err, 2, "Release(A)")
	wantHeld(t, heldBy(t, s, "probe", "X", "Y"), "7", "0")
	n, err = s.Release(ctx, "A")
	count(t, n, err, 0, "second Release(A)")
	if h.Twin != nil {
		n, err = h.Twin(t, s).Release(ctx, "B")
		count(t, n, err, 1, "Release(B) on the twin")
		wantHeld(t, heldBy(t, s, "probe", "X"), "0")
	}
}

func testConfirm(t *testing.T, h Harness) {
	c := newClock()
	s := h.New(t, c.Now)
	ctx := context.Background()
	hold(t, s, "A", true, claim("X", "60"), claim("Y", "5"))
	n, err := s.Confirm(ctx, "unknown")
	count(t, n, err, 0, "Confirm(unknown)")
	c.Advance(time.Minute)
	n, err = s.Confirm(ctx, "A")
	count(t, n, err, 2, "Confirm(A)")
	n, err = s.Confirm(ctx, "A")
	count(t, n, err, 0, "second Confirm(A)")
	// A commitment does not expire.
	c.Advance(1000 * time.Hour)
	wantHeld(t, heldBy(t, s, "probe", "X", "Y"), "60", "5")
	gone, err := s.Expire(ctx)
	if err != nil || len(gone) != 0 {
		t.Fatalf("Expire() = %v, %v; want nothing (commitments never expire)", gone, err)
	}
	hs, err := s.Holds(ctx, "X")
	if err != nil {
		t.Fatal(err)
	}
	start := budget.HoldsTime(newClock().Now())
	sameHolds(t, hs, []budget.Hold{{Requisition: "A", Account: "X", Amount: dec("60"), Held: start, Confirmed: start.Add(time.Minute)}})
	if !hs[0].Committed() {
		t.Fatal("Committed() = false for a confirmed hold")
	}
	// Release ends commitments too.
	n, err = s.Release(ctx, "A")
	count(t, n, err, 2, "Release(A) of a commitment")
	wantHeld(t, heldBy(t, s, "probe", "X", "Y"), "0", "0")
}

func testExpiry(t *testing.T, h Harness) {
	c := newClock()
	s := h.New(t, c.Now)
	ctx := context.Background()
	hold(t, s, "A", true, claim("X", "60"))
	c.Advance(30 * time.Minute)
	hold(t, s, "B", true, claim("X", "5"))
	c.Advance(30*time.Minute - time.Microsecond)
	wantHeld(t, heldBy(t, s, "probe", "X"), "65")
	c.Advance(time.Microsecond) // A's hour is up
	wantHeld(t, heldBy(t, s, "probe", "X"), "5")
	hs, err := s.Holds(ctx, "X")
	if err != nil || len(hs) != 1 || hs[0].Requisition != "B" {
		t.Fatalf("Holds(X) = %v, %v; want B's only", hs, err)
	}
	n, err := s.Confirm(ctx, "A")
	count(t, n, err, 0, "Confirm of an expired hold")
	gone, err := s.Expire(ctx)
	if err != nil || len(gone) != 1 || gone[0].Requisition != "A" || !gone[0].Amount.Equal(dec("60")) {
		t.Fatalf("Expire() = %v, %v; want A's hold", gone, err)
	}
	gone, err = s.Expire(ctx)
	if err != nil || len(gone) != 0 {
		t.Fatalf("second Expire() = %v, %v; want nothing", gone, err)
	}
	n, err = s.Release(ctx, "A")
	count(t, n, err, 0, "Release of an expired hold")
	// A re-check renews the hold from now.
	hold(t, s, "B", true, claim("X", "5"))
	c.Advance(59 * time.Minute)
	wantHeld(t, heldBy(t, s, "probe", "X"), "5")
	// The default lasts DefaultHoldFor.
	if _, err := s.Hold(ctx, budget.HoldCheck{Requisition: "D", Claims: []budget.Claim{claim("Y", "1")}},
		func([]decimal.Decimal) bool { return true }); err != nil {
		t.Fatal(err)
	}
	c.Advance(budget.DefaultHoldFor - time.Microsecond)
	wantHeld(t, heldBy(t, s, "probe", "Y"), "1")
	c.Advance(time.Microsecond)
	wantHeld(t, heldBy(t, s, "probe", "Y"), "0")
}

func testAsOf(t *testing.T, h Harness) {
	c := newClock()
	s := h.New(t, c.Now)
	ctx := context.Background()
	hold(t, s, "A", true, claim("X", "60"))
	hold(t, s, "B", true, claim("X", "7"))
	c.Advance(time.Minute)
	n, err := s.Confirm(ctx, "A")
	count(t, n, err, 1, "Confirm(A)")
	confirmed := budget.HoldsTime(c.Now())
	probe := func(asOf time.Time) string {
		seen := hold(t, s, "probe", false, budget.Claim{Account: "X", AsOf: asOf})
		return seen[0].String()
	}
	// Figures taken before the confirm do not include it: it counts.
	if got := probe(confirmed.Add(-time.Microsecond)); got != "67" {
		t.Fatalf("as of before the confirm: held %s, want 67", got)
	}
	// Figures taken at or after it include the spend: it no longer counts,
	// but the plain hold B still does.
	for _, asOf := range []time.Time{confirmed, confirmed.Add(time.Hour)} {
		if got := probe(asOf); got != "7" {
			t.Fatalf("as of %v (confirmed %v): held %s, want 7", asOf, confirmed, got)
		}
	}
	if got := probe(time.Time{}); got != "67" {
		t.Fatalf("no as_of: held %s, want 67", got)
	}
}

func testBadChecks(t *testing.T, h Harness) {
	s := h.New(t, newClock().Now)
	ctx := context.Background()
	hold(t, s, "A", true, claim("X", "60"))
	long := string(slices.Repeat([]rune{'é'}, budget.MaxRequisitionIDLength+1))
	for name, c := range map[string]budget.HoldCheck{
		"no requisition": {Claims: []budget.Claim{claim("X", "1")}},
		"long id":        {Requisition: long, Claims: []budget.Claim{claim("X", "1")}},
		"account twice":  {Requisition: "A", Claims: []budget.Claim{claim("X", "1"), claim("X", "2")}},
	} {
		called := false
		_, err := s.Hold(ctx, c, func([]decimal.Decimal) bool { called = true; return true })
		if err == nil || called {
			t.Errorf("%s: err %v, decide called %v; want an error before deciding", name, err, called)
		}
	}
	wantHeld(t, heldBy(t, s, "probe", "X"), "60")
	ok := string(slices.Repeat([]rune{'é'}, budget.MaxRequisitionIDLength))
	hold(t, s, ok, true, claim("X", "1"))
	n, err := s.Release(ctx, ok)
	count(t, n, err, 1, "Release of a 255-character id")
}

func testCanceled(t *testing.T, h Harness) {
	s := h.New(t, newClock().Now)
	hold(t, s, "A", true, claim("X", "60"))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.Hold(ctx, budget.HoldCheck{Requisition: "A", Claims: []budget.Claim{claim("X", "1")}},
		func([]decimal.Decimal) bool { return true }); !errors.Is(err, budget.ErrUnavailable) {
		t.Fatalf("Hold with a canceled context: %v, want ErrUnavailable", err)
	}
	if _, err := s.Release(ctx, "A"); !errors.Is(err, budget.ErrUnavailable) {
		t.Fatalf("Release with a canceled context: %v, want ErrUnavailable", err)
	}
	wantHeld(t, heldBy(t, s, "probe", "X"), "60")
}

// model is the sequential model of the random histories: what each
// requisition holds on each account. Updates of a check happen inside
// decide, while the store has the check's accounts locked, so a check
// compares what the store reports with the model exactly, except for
// requisitions being released at that moment (either answer is right).
type model struct {
	mu        sync.Mutex
	holds     map[string]map[string]decimal.Decimal // requisition -> account -> amount
	releasing map[string]bool
}

// bounds returns the least and most that requisitions other than req may
// hold on account.
func (m *model) bounds(req, account string) (lo, hi decimal.Decimal) {
	for r, accs := range m.holds {
		if r == req {
			continue
		}
		if a, ok := accs[account]; ok {
			hi = hi.Add(a)
			if !m.releasing[r] {
				lo = lo.Add(a)
			}
		}
	}
	return lo, hi
}

type history struct {
	accounts []string
	budgets  map[string]decimal.Decimal
}

func newHistory(n int) history {
	h := history{budgets: map[string]decimal.Decimal{}}
	for i := range n {
		a := fmt.Sprintf("6%03d-100", i)
		h.accounts = append(h.accounts, a)
		h.budgets[a] = decimal.New(int64(500+100*i), 0)
	}
	return h
}

// check makes a random check of req over k accounts and holds it when it
// fits every budget. It reports an error when decide saw figures outside
// the model's bounds or a hold would overspend.
func (hi history) check(ctx context.Context, s budget.HoldStore, m *model, rng *rand.Rand, req string, k int) error {
	picked := slices.Clone(hi.accounts)
	rng.Shuffle(len(picked), func(i, j int) { picked[i], picked[j] = picked[j], picked[i] })
	picked = picked[:k]
	claims := make([]budget.Claim, k)
	for i, a := range picked {
		claims[i] = budget.Claim{Account: a, Amount: decimal.New(int64(rng.IntN(15000)), -2)}
	}
	var bad error
	_, err := s.Hold(ctx, budget.HoldCheck{Requisition: req, Claims: claims, For: time.Hour}, func(held []decimal.Decimal) bool {
		m.mu.Lock()
		defer m.mu.Unlock()
		fits := true
		for i, cl := range claims {
			lo, up := m.bounds(req, cl.Account)
			if held[i].LessThan(lo) || held[i].GreaterThan(up) {
				bad = fmt.Errorf("%s: account %s: the store says others hold %s; the model says between %s and %s", req, cl.Account, held[i], lo, up)
			}
			if held[i].Add(cl.Amount).GreaterThan(hi.budgets[cl.Account]) {
				fits = false
			}
		}
		if fits {
			mine := map[string]decimal.Decimal{}
			for _, cl := range claims {
				if cl.Amount.Sign() > 0 {
					mine[cl.Account] = cl.Amount
				}
			}
			m.holds[req] = mine
		} else {
			delete(m.holds, req)
		}
		return fits
	})
	if err != nil {
		return err
	}
	return bad
}

func (hi history) release(ctx context.Context, s budget.HoldStore, m *model, req string) error {
	m.mu.Lock()
	m.releasing[req] = true
	m.mu.Unlock()
	_, err := s.Release(ctx, req)
	m.mu.Lock()
	delete(m.releasing, req)
	if err == nil {
		delete(m.holds, req)
	}
	m.mu.Unlock()
	return err
}

// overspent returns an error when the holds on an account exceed its
// budget.
func (hi history) overspent(ctx context.Context, s budget.HoldStore) error {
	for _, a := range hi.accounts {
		hs, err := s.Holds(ctx, a)
		if err != nil {
			return err
		}
		var sum decimal.Decimal
		for _, h := range hs {
			sum = sum.Add(h.Amount)
		}
		if sum.GreaterThan(hi.budgets[a]) {
			return fmt.Errorf("account %s: holds %s over its budget %s", a, sum, hi.budgets[a])
		}
	}
	return nil
}

// matches compares the store with the model once every goroutine stopped:
// each passing check's holds are there until released.
func (hi history) matches(tb testing.TB, s budget.HoldStore, m *model) {
	tb.Helper()
	for _, a := range hi.accounts {
		hs, err := s.Holds(context.Background(), a)
		if err != nil {
			tb.Fatal(err)
		}
		var want []string
		for r, accs := range m.holds {
			if amt, ok := accs[a]; ok {
				want = append(want, r+"="+amt.String())
			}
		}
		slices.Sort(want)
		var got []string
		for _, h := range hs {
			got = append(got, h.Requisition+"="+h.Amount.String())
		}
		if !slices.Equal(got, want) {
			tb.Fatalf("account %s: store holds %v, model %v", a, got, want)
		}
	}
}

// run runs workers goroutines, alternating between the stores, until
// stop, each owning its requisitions, checking random sets of k accounts,
// re-checking and releasing, while a monitor looks for overspending.
func (hi history) run(t *testing.T, stores []budget.HoldStore, m *model, workers, k, ops int, until time.Time) int64 {
	ctx := context.Background()
	var (
		wg    sync.WaitGroup
		total atomic.Int64
		errMu sync.Mutex
		first error
	)
	fail := func(err error) {
		errMu.Lock()
		if first == nil {
			first = err
		}
		errMu.Unlock()
	}
	failed := func() bool { errMu.Lock(); defer errMu.Unlock(); return first != nil }
	done := make(chan struct{})
	var mon sync.WaitGroup
	mon.Go(func() {
		for {
			select {
			case <-done:
				return
			case <-time.After(5 * time.Millisecond):
			}
			if err := hi.overspent(ctx, stores[0]); err != nil {
				fail(err)
				return
			}
		}
	})
	for w := range workers {
		wg.Go(func() {
			s := stores[w%len(stores)]
			rng := rand.New(rand.NewPCG(uint64(w), 21))
			for i := 0; ops <= 0 || i < ops; i++ {
				if failed() || (!until.IsZero() && time.Now().After(until)) {
					return
				}
				req := "R" + strconv.Itoa(w) + "-" + strconv.Itoa(rng.IntN(4))
				var err error
				if rng.IntN(5) == 0 {
					err = hi.release(ctx, s, m, req)
				} else {
					err = hi.check(ctx, s, m, rng, req, k)
				}
				if err != nil {
					fail(err)
					return
				}
				total.Add(1)
			}
		})
	}
	wg.Wait()
	close(done)
	mon.Wait()
	if first != nil {
		t.Fatal(first)
	}
	if err := hi.overspent(ctx, stores[0]); err != nil {
		t.Fatal(err)
	}
	return total.Load()
}

func testRandomHistories(t *testing.T, h Harness) {
	for seed := range 3 {
		t.Run("seed"+strconv.Itoa(seed), func(t *testing.T) {
			s := h.New(t, time.Now)
			stores := []budget.HoldStore{s}
			if h.Twin != nil {
				stores = append(stores, h.Twin(t, s))
			}
			hi := newHistory(6 + seed)
			m := &model{holds: map[string]map[string]decimal.Decimal{}, releasing: map[string]bool{}}
			hi.run(t, stores, m, 8, 3, 60, time.Time{})
			hi.matches(t, s, m)
		})
	}
}

// testStress is the concurrency test: 50 goroutines on two stores
// checking random overlapping sets of 5 accounts: no deadlock (a deadlock
// fails the test at its timeout, or PostgreSQL reports one as an error),
// no overspending, and the model matches at the end.
func testStress(t *testing.T, h Harness) {
	d := DefaultStress
	if v := os.Getenv(StressEnv); v != "" {
		var err error
		if d, err = time.ParseDuration(v); err != nil {
			t.Fatalf("%s: %v", StressEnv, err)
		}
	}
	s := h.New(t, time.Now)
	stores := []budget.HoldStore{s}
	if h.Twin != nil {
		stores = append(stores, h.Twin(t, s))
	}
	hi := newHistory(12)
	m := &model{holds: map[string]map[string]decimal.Decimal{}, releasing: map[string]bool{}}
	start := time.Now()
	n := hi.run(t, stores, m, 50, 5, 0, start.Add(d))
	hi.matches(t, s, m)
	t.Logf("%d operations in %s on %d store(s): %.0f/s", n, time.Since(start).Round(time.Millisecond), len(stores), float64(n)/time.Since(start).Seconds())
}

// testExpireWhileChecking runs checks whose holds expire within
// milliseconds while another store removes expired holds: no error (a
// deadlock between the two would be one), never overspent, and once all
// expired, nothing held and nothing listed.
func testExpireWhileChecking(t *testing.T, h Harness) {
	s := h.New(t, time.Now)
	sweeper := s
	if h.Twin != nil {
		sweeper = h.Twin(t, s)
	}
	hi := newHistory(6)
	ctx := context.Background()
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		first   error
		expired atomic.Int64
	)
	// A second of checks, and longer (up to 20 s) until the sweeper has
	// removed an expired hold while they run: on a loaded machine (the
	// race detector on two shared cores) the checks' own replacing of
	// their requisitions' expired holds could leave the sweeper none to
	// find in the first second.
	start := time.Now()
	running := func() bool {
		d := time.Since(start)
		return d < time.Second || (expired.Load() == 0 && d < 20*time.Second)
	}
	fail := func(err error) {
		mu.Lock()
		if first == nil {
			first = err
		}
		mu.Unlock()
	}
	wg.Go(func() {
		for running() {
			gone, err := sweeper.Expire(ctx)
			if err != nil {
				fail(fmt.Errorf("expire: %w", err))
				return
			}
			expired.Add(int64(len(gone)))
		}
	})
	for w := range 10 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			for i := 0; running(); i++ {
				picked := slices.Clone(hi.accounts)
				rng.Shuffle(len(picked), func(i, j int) { picked[i], picked[j] = picked[j], picked[i] })
				claims := make([]budget.Claim, 3)
				for k := range claims {
					claims[k] = budget.Claim{Account: picked[k], Amount: decimal.New(int64(1+rng.IntN(20000)), -2)}
				}
				req := "E" + strconv.Itoa(w) + "-" + strconv.Itoa(rng.IntN(3))
				_, err := s.Hold(ctx, budget.HoldCheck{Requisition: req, Claims: claims, For: time.Duration(1+rng.IntN(5)) * time.Millisecond},
					func(held []decimal.Decimal) bool {
						for k, cl := range claims {
							if held[k].Add(cl.Amount).GreaterThan(hi.budgets[cl.Account]) {
								return false
							}
						}
						return true
					})
				if err != nil {
					fail(fmt.Errorf("hold: %w", err))
					return
				}
				if err := hi.overspent(ctx, s); err != nil {
					fail(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if first != nil {
		t.Fatal(first)
	}
	time.Sleep(10 * time.Millisecond) // every hold has expired
	if _, err := sweeper.Expire(ctx); err != nil {
		t.Fatal(err)
	}
	for _, a := range hi.accounts {
		if hs, err := s.Holds(ctx, a); err != nil || len(hs) != 0 {
			t.Fatalf("Holds(%s) after every hold expired: %v, %v", a, hs, err)
		}
	}
	wantHeld(t, toStrings(must(s.Held(ctx, []budget.Claim{{Account: hi.accounts[0]}, {Account: hi.accounts[5]}}))), "0", "0")
	if expired.Load() == 0 {
		t.Error("the sweeper removed no expired hold while checks ran")
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
