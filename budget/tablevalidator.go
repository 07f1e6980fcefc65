package budget

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shopspring/decimal"
)

// TableConfig configures a TableValidator.
type TableConfig struct {
	// Load reads the table: CSVFile, SQLQuery, StaticTable or the caller's
	// own. Required.
	Load TableLoader

	// Refresh, when positive, reloads the table at this interval in the
	// background. A failed reload is logged and the last good table keeps
	// serving. Each reload may take at most the interval.
	Refresh time.Duration

	// OverBudget is the status of the lines of an account whose sum is
	// over its budget: Invalid (the default, also when empty) or Warning.
	OverBudget Status

	// Logger receives refresh failures (level Warn) and successes (Debug);
	// nil means slog.Default().
	Logger *slog.Logger

	// Holds, when set, keeps what requisitions hold (docs: account-codes.md
	// "Holds"): a check with a requisition id that ends with no Invalid
	// line holds its amounts, and what other requisitions hold is taken
	// from each account's budget. Nil holds nothing, and Release and
	// Confirm answer ErrUnsupported.
	Holds HoldStore

	// HoldFor is how long a hold lasts; zero means DefaultHoldFor.
	HoldFor time.Duration

	// ExpireEvery is how often expired holds are removed and audited;
	// zero means a minute. An expired hold counts for nothing at once
	// either way.
	ExpireEvery time.Duration

	// ShowAvailable puts what is available on an account in the messages
	// of its lines (see CheckOptions).
	ShowAvailable bool

	// Audit, when set, receives every check, release, confirm and expiry
	// before the answer is returned; a failure to record fails the request
	// with an error matching ErrUnavailable.
	Audit AuditLog

	// Now is the clock of the audit entries; nil means time.Now.
	Now func() time.Time

	// LoadEach loads the table at every check instead of once and at each
	// Refresh, for a table that changes under the validator (the
	// platform's own budget table, edited through the admin API). The
	// table is then not loaded by NewTableValidator, Table returns nil,
	// and a failed load fails the check with ErrUnavailable.
	LoadEach bool
}

// TableValidator is the budget table option of the connector: a Validator
// that checks requests against a budget table (Table.Check) and keeps the
// table fresh. It is safe for concurrent use: a reload swaps the whole
// table atomically, so a request sees either the old or the new table,
// never a mixture.
type TableValidator struct {
	table atomic.Pointer[Table]
	opts  CheckOptions
	load  TableLoader
	log   *slog.Logger
	each  bool // LoadEach

	holds   HoldStore // nil: no holds
	holdFor time.Duration
	audit   AuditLog // nil: no audit log
	now     func() time.Time

	reloadMu sync.Mutex // one load at a time
	stop     context.CancelFunc
	done     chan struct{}
	close    sync.Once
}

var (
	_ Validator = (*TableValidator)(nil)
	_ Committer = (*TableValidator)(nil)
)

// NewTableValidator loads the table once - a failure is returned, so that a
// connector with a bad table does not start - and, when cfg.Refresh is
// positive, starts reloading it in the background until Close.
func NewTableValidator(ctx context.Context, cfg TableConfig) (*TableValidator, error) {
	if cfg.Load == nil {
		return nil, errors.New("budget: NewTableValidator: no table loader")
	}
	switch cfg.OverBudget {
	case "":
		cfg.OverBudget = Invalid
	case Invalid, Warning:
	default:
		return nil, fmt.Errorf("budget: NewTableValidator: the over-budget status must be Invalid or Warning (got %s)", quoteShort(string(cfg.OverBudget)))
	}
	v := &TableValidator{
		opts: CheckOptions{OverBudget: cfg.OverBudget, ShowAvailable: cfg.ShowAvailable},
		load: cfg.Load, log: cfg.Logger, each: cfg.LoadEach,
		holds: cfg.Holds, holdFor: cfg.HoldFor, audit: cfg.Audit, now: cfg.Now,
	}
	if v.log == nil {
		v.log = slog.Default()
	}
	if v.now == nil {
		v.now = time.Now
	}
	if v.holdFor <= 0 {
		v.holdFor = DefaultHoldFor
	}
	if !v.each {
		if err := v.Reload(ctx); err != nil {
			return nil, err
		}
	} else {
		cfg.Refresh = 0
	}
	if cfg.Refresh > 0 || cfg.Holds != nil {
		rctx, cancel := context.WithCancel(context.Background())
		v.stop, v.done = cancel, make(chan struct{})
		expireEvery := cfg.ExpireEvery
		if expireEvery <= 0 {
			expireEvery = time.Minute
		}
		var wg sync.WaitGroup
		if cfg.Refresh > 0 {
			wg.Go(func() { v.refresh(rctx, cfg.Refresh) })
		}
		if cfg.Holds != nil {
			wg.Go(func() { v.expireLoop(rctx, expireEvery) })
		}
		go func() { wg.Wait(); close(v.done) }()
	}
	return v, nil
}

// Validate checks req against the current table and, with holds, against
// what other requisitions hold; a check with a requisition id then holds
// its amounts unless a line is Invalid (HoldStore.Hold). It returns an
// error for an unusable request (see Request.Validate), and one matching
// ErrUnavailable when the holds or the audit log cannot be reached: then
// nothing was held.
func (v *TableValidator) Validate(ctx context.Context, req Request) ([]Result, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	t := v.table.Load()
	if v.each {
		var err error
		if t, err = v.load(ctx); err == nil && t == nil {
			err = errors.New("the loader returned no table")
		}
		if err != nil {
			return nil, fmt.Errorf("%w: loading the budget table: %w", ErrUnavailable, err)
		}
	}
	tl := t.tally(req)
	var (
		held []decimal.Decimal
		hold bool
	)
	switch {
	case v.holds == nil:
		tl.decide(t, v.opts, nil)
	case req.RequisitionID == "":
		// Holds nothing, but sees what the others hold.
		var err error
		if held, err = v.holds.Held(ctx, tl.claims()); err != nil {
			return nil, err
		}
		tl.decide(t, v.opts, held)
	default:
		var err error
		hold, err = v.holds.Hold(ctx, HoldCheck{Requisition: req.RequisitionID, Claims: tl.claims(), For: v.holdFor},
			func(h []decimal.Decimal) bool {
				held = h
				tl.decide(t, v.opts, h)
				return !tl.invalid()
			})
		if err != nil {
			return nil, err
		}
	}
	results := tl.results(req)
	if v.audit != nil {
		e := AuditEntry{Time: v.now().UTC(), Event: AuditCheck, Caller: CallerOf(ctx), Requisition: req.RequisitionID, Held: hold}
		e.Accounts = make([]AuditAccount, len(tl.accounts))
		for i := range tl.accounts {
			a := &tl.accounts[i]
			e.Accounts[i] = AuditAccount{Account: a.name, Amount: FormatAmount(a.sum.decimal())}
			if a.inTable {
				avail := a.row.decimal()
				if held != nil {
					avail = avail.Sub(held[i])
				}
				e.Accounts[i].Available = FormatAmount(avail)
			}
		}
		e.Lines = make([]AuditLine, len(results))
		for i, r := range results {
			e.Lines[i] = AuditLine{Line: r.LineNumber, Status: r.Status, Message: r.Message}
		}
		if err := v.record(ctx, e); err != nil {
			return nil, err
		}
	}
	return results, nil
}

func (v *TableValidator) record(ctx context.Context, e AuditEntry) error {
	if err := v.audit.Record(ctx, e); err != nil {
		if !errors.Is(err, ErrUnavailable) {
			err = fmt.Errorf("%w: %w", ErrUnavailable, err)
		}
		return err
	}
	return nil
}

// Release ends every hold and commitment of requisition (Committer).
func (v *TableValidator) Release(ctx context.Context, requisition string) (int, error) {
	return v.commit(ctx, AuditRelease, requisition, HoldStore.Release)
}

// Confirm turns requisition's holds into commitments (Committer).
func (v *TableValidator) Confirm(ctx context.Context, requisition string) (int, error) {
	return v.commit(ctx, AuditConfirm, requisition, HoldStore.Confirm)
}

func (v *TableValidator) commit(ctx context.Context, event, requisition string, op func(HoldStore, context.Context, string) (int, error)) (int, error) {
	if v.holds == nil {
		return 0, fmt.Errorf("budget: %s: %w (the budget table keeps no holds)", event, ErrUnsupported)
	}
	if err := ValidateRequisitionID(requisition); err != nil {
		return 0, err
	}
	n, err := op(v.holds, ctx, requisition)
	if err != nil {
		return 0, err
	}
	if v.audit != nil {
		e := AuditEntry{Time: v.now().UTC(), Event: event, Caller: CallerOf(ctx), Requisition: requisition, Changed: n}
		if err := v.record(ctx, e); err != nil {
			return 0, err
		}
	}
	return n, nil
}

// Holds returns the unexpired holds and the commitments on account, or nil
// when the validator keeps no holds.
func (v *TableValidator) Holds(ctx context.Context, account string) ([]Hold, error) {
	if v.holds == nil {
		return nil, nil
	}
	return v.holds.Holds(ctx, account)
}

// KeepsHolds reports whether the validator keeps holds.
func (v *TableValidator) KeepsHolds() bool { return v.holds != nil }

// ExpireNow removes the holds that expired and records one audit entry per
// requisition whose holds ended; the background loop calls it.
func (v *TableValidator) ExpireNow(ctx context.Context) error {
	if v.holds == nil {
		return nil
	}
	gone, err := v.holds.Expire(ctx)
	if err != nil || v.audit == nil {
		return err
	}
	for i := 0; i < len(gone); {
		j := i
		e := AuditEntry{Time: v.now().UTC(), Event: AuditExpire, Requisition: gone[i].Requisition}
		for ; j < len(gone) && gone[j].Requisition == gone[i].Requisition; j++ {
			e.Accounts = append(e.Accounts, AuditAccount{Account: gone[j].Account, Amount: FormatAmount(gone[j].Amount)})
		}
		e.Changed = j - i
		if err := v.record(ctx, e); err != nil {
			return err
		}
		i = j
	}
	return nil
}

func (v *TableValidator) expireLoop(ctx context.Context, every time.Duration) {
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if err := v.ExpireNow(ctx); err != nil && ctx.Err() == nil {
			v.log.Warn("removing expired budget holds failed; they count for nothing meanwhile", "err", err)
		}
	}
}

// Table returns the table in use.
func (v *TableValidator) Table() *Table { return v.table.Load() }

// Reload loads the table now. On failure it returns the error and the
// table in use stays as it was.
func (v *TableValidator) Reload(ctx context.Context) error {
	v.reloadMu.Lock()
	defer v.reloadMu.Unlock()
	t, err := v.load(ctx)
	if err == nil && t == nil {
		err = errors.New("the loader returned no table")
	}
	if err != nil {
		return fmt.Errorf("budget: loading the budget table: %w", err)
	}
	v.table.Store(t)
	return nil
}

func (v *TableValidator) refresh(ctx context.Context, every time.Duration) {
	tick := time.NewTicker(every)
	defer tick.Stop()
	last := time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		lctx, cancel := context.WithTimeout(ctx, every)
		err := v.Reload(lctx)
		cancel()
		switch {
		case ctx.Err() != nil:
			return // closing: the failure is ours, not the source's
		case err != nil:
			v.log.Warn("budget table refresh failed; still serving the last good table",
				"err", err, "accounts", v.Table().Len(), "loaded", last.Format(time.RFC3339))
		default:
			last = time.Now()
			v.log.Debug("budget table refreshed", "accounts", v.Table().Len())
		}
	}
}

// Close stops the background refresh and expiry, if any, and waits for
// them to end. The
// validator still answers with the last table afterwards.
func (v *TableValidator) Close() error {
	v.close.Do(func() {
		if v.stop != nil {
			v.stop()
			<-v.done
		}
	})
	return nil
}
