package pgstore

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/shopspring/decimal"

	"github.com/procurekit/procure/budget"
)

// Budgets returns the community's budget table: the budget of each
// account. A community without one (or unknown) has an empty table, in
// which every account is absent.
func (s *Store) Budgets(ctx context.Context, community string) (map[string]decimal.Decimal, error) {
	// numeric travels as text, so that no digit is lost.
	rows, err := s.pool.Query(ctx, `SELECT account, budget::text FROM budgets WHERE community_id = $1`, community)
	if err != nil {
		return nil, fmt.Errorf("pgstore: budgets: %w", err)
	}
	out := map[string]decimal.Decimal{}
	var account, amount string
	_, err = pgx.ForEachRow(rows, []any{&account, &amount}, func() error {
		d, err := decimal.NewFromString(amount)
		if err != nil {
			return fmt.Errorf("account %q: %w", account, err)
		}
		out[account] = d
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("pgstore: budgets: %w", err)
	}
	return out, nil
}

// BudgetTable returns the community's budget table for the table option of
// account code validation (an empty table for a community without one: every
// account is absent, so every line is Invalid). It reads the database on
// each call, so a re-import is seen at once.
func (s *Store) BudgetTable(ctx context.Context, community string) (*budget.Table, error) {
	m, err := s.Budgets(ctx, community)
	if err != nil {
		return nil, err
	}
	return budget.NewTable(m)
}

// BudgetLoader returns a budget.TableLoader over the community's budget
// table, for a connector that refreshes its table from the store.
func (s *Store) BudgetLoader(community string) budget.TableLoader {
	return func(ctx context.Context) (*budget.Table, error) { return s.BudgetTable(ctx, community) }
}
