package pgstore

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/shopspring/decimal"

	"github.com/procurekit/procure/budget"
)

var _ budget.Writer = (*Store)(nil)

// Budgets returns the community's budget table: the budget of each
// account. A community without one (or unknown) has an empty table, in
// which every account is absent.
func (s *Store) Budgets(ctx context.Context, community string) (map[string]decimal.Decimal, error) {
	// numeric travels as text, so that no digit is lost.
	rows, err := s.rd().Query(ctx, `SELECT account, budget::text FROM budgets WHERE community_id = $1`, community)
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
// each call (no cache), so a write or a re-import on any node is seen by
// the next call.
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

// PutBudget implements budget.Writer. The amount is stored with its scale
// ("125.50" stays 125.50), as memstore keeps it.
func (s *Store) PutBudget(ctx context.Context, community, account string, amount decimal.Decimal) error {
	defer s.timeWrite("PutBudget", time.Now())
	account = strings.TrimSpace(account)
	if err := budget.ValidateAccount(account); err != nil {
		return err
	}
	if err := budget.ValidateAmount(amount); err != nil {
		return err
	}
	if err := needCommunity(ctx, s.pool, community); err != nil {
		return err
	}
	text := amount.String()
	if amount.Exponent() < 0 {
		text = amount.StringFixed(-amount.Exponent()) // String drops trailing zeros
	}
	// numeric travels as text: exact, whatever its scale.
	_, err := s.pool.Exec(ctx, `INSERT INTO budgets (community_id, account, budget) VALUES ($1, $2, $3::numeric)
		ON CONFLICT (community_id, account) DO UPDATE SET budget = excluded.budget`, community, account, text)
	if err != nil {
		return fmt.Errorf("pgstore: put budget: %w", err)
	}
	return nil
}

// DeleteBudget implements budget.Writer.
func (s *Store) DeleteBudget(ctx context.Context, community, account string) error {
	defer s.timeWrite("DeleteBudget", time.Now())
	if err := needCommunity(ctx, s.pool, community); err != nil {
		return err
	}
	account = strings.TrimSpace(account)
	if !storable(account) {
		return fmt.Errorf("account %q: %w", account, budget.ErrNotFound)
	}
	tag, err := s.pool.Exec(ctx, `DELETE FROM budgets WHERE community_id = $1 AND account = $2`, community, account)
	if err != nil {
		return fmt.Errorf("pgstore: delete budget: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("account %q: %w", account, budget.ErrNotFound)
	}
	return nil
}
