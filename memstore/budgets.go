package memstore

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/shopspring/decimal"

	"github.com/procurekit/procure/budget"
	"github.com/procurekit/procure/datafile"
)

// budgets holds one budget table per community, from the data file's
// "budgets" entries. Tables are immutable; loading a community again
// replaces its table as a whole.
type budgets struct {
	mu          sync.RWMutex
	byCommunity map[string]*budget.Table
}

func (x *budgets) init() { x.byCommunity = make(map[string]*budget.Table) }

// build makes the community's table without touching x.
func (x *budgets) build(c *datafile.Community) (*budget.Table, error) {
	rows := make(map[string]decimal.Decimal, len(c.Budgets))
	for i, b := range c.Budgets {
		account := strings.TrimSpace(b.Account)
		if account == "" {
			return nil, fmt.Errorf("budgets[%d].account: is required", i)
		}
		if _, dup := rows[account]; dup {
			return nil, fmt.Errorf("budgets[%d].account: duplicate account %q", i, account)
		}
		rows[account] = b.Budget
	}
	t, err := budget.NewTable(rows)
	if err != nil {
		return nil, fmt.Errorf("budgets: %w", err)
	}
	return t, nil
}

// publish makes t the community's table; x.mu is held.
func (x *budgets) publish(community string, t *budget.Table) { x.byCommunity[community] = t }

var emptyTable = func() *budget.Table {
	t, err := budget.NewTable(nil)
	if err != nil {
		panic(err) // cannot happen: an empty table has nothing to reject
	}
	return t
}()

// BudgetTable returns the budget table of community. A community with no
// budgets, or an unknown one, has an empty table: every account is absent
// from it, so every line is Invalid (docs: account-codes.md "Verdicts").
func (s *Store) BudgetTable(community string) *budget.Table {
	s.budgets.mu.RLock()
	t := s.budgets.byCommunity[community]
	s.budgets.mu.RUnlock()
	if t == nil {
		return emptyTable
	}
	return t
}

// BudgetLoader returns a budget.TableLoader over community's table, for a
// budget.TableValidator or budget.LiveTable. pgstore.Store has the same
// method, so callers can take either store.
func (s *Store) BudgetLoader(community string) budget.TableLoader {
	return func(context.Context) (*budget.Table, error) { return s.BudgetTable(community), nil }
}

// BudgetValidator returns a budget.Validator that checks requests against
// community's budget table (budget.Table.Check), read afresh at every call.
// overBudget is the status of an account whose lines sum over its budget:
// budget.Invalid (also when empty) or budget.Warning.
func (s *Store) BudgetValidator(community string, overBudget budget.Status) budget.Validator {
	return budget.LiveTable(s.BudgetLoader(community), overBudget)
}
