package budget

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
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
}

// TableValidator is the budget table option of the connector: a Validator
// that checks requests against a budget table (Table.Check) and keeps the
// table fresh. It is safe for concurrent use: a reload swaps the whole
// table atomically, so a request sees either the old or the new table,
// never a mixture.
type TableValidator struct {
	table atomic.Pointer[Table]
	over  Status
	load  TableLoader
	log   *slog.Logger

	reloadMu sync.Mutex // one load at a time
	stop     context.CancelFunc
	done     chan struct{}
	close    sync.Once
}

var _ Validator = (*TableValidator)(nil)

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
	v := &TableValidator{over: cfg.OverBudget, load: cfg.Load, log: cfg.Logger}
	if v.log == nil {
		v.log = slog.Default()
	}
	if err := v.Reload(ctx); err != nil {
		return nil, err
	}
	if cfg.Refresh > 0 {
		rctx, cancel := context.WithCancel(context.Background())
		v.stop, v.done = cancel, make(chan struct{})
		go v.refresh(rctx, cfg.Refresh)
	}
	return v, nil
}

// Validate checks req against the current table. It returns an error only
// for an unusable request (see Request.Validate).
func (v *TableValidator) Validate(ctx context.Context, req Request) ([]Result, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	return v.table.Load().Check(req, v.over), nil
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
	defer close(v.done)
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

// Close stops the background refresh, if any, and waits for it to end. The
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
