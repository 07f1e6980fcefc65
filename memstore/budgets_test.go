package memstore_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"

	"github.com/procurekit/procure/budget"
	"github.com/procurekit/procure/datafile"
	"github.com/procurekit/procure/memstore"
)

const budgetData = `{"communities": [
  {"id": "acme", "name": "Acme", "region": "NZ",
   "budgets": [{"account": "6100-200", "budget": 1000}, {"account": "6100-300", "budget": "250.50"}, {"account": "7200-100", "budget": -10}]},
  {"id": "globex", "name": "Globex", "region": "AU",
   "budgets": [{"account": "6100-200", "budget": 5}]},
  {"id": "empty", "name": "No budgets", "region": "US"}
]}`

func loadBudgets(tb testing.TB) *memstore.Store {
	tb.Helper()
	f, err := datafile.Parse(strings.NewReader(budgetData))
	if err != nil {
		tb.Fatalf("Parse: %v", err)
	}
	s, err := memstore.LoadReader(f.Reader())
	if err != nil {
		tb.Fatalf("Load: %v", err)
	}
	return s
}

func TestBudgetTable(t *testing.T) {
	s := loadBudgets(t)
	acme := s.BudgetTable("acme")
	if acme.Len() != 3 {
		t.Fatalf("acme has %d accounts; want 3", acme.Len())
	}
	for acc, want := range map[string]string{"6100-200": "1000", "6100-300": "250.50", "7200-100": "-10"} {
		b, ok := acme.Budget(acc)
		if !ok || !b.Equal(decimal.RequireFromString(want)) {
			t.Errorf("acme %s: %v, %v; want %s", acc, b, ok, want)
		}
	}
	// Each community has its own table; one without budgets, or an
	// unknown one, has an empty table.
	if b, _ := s.BudgetTable("globex").Budget("6100-200"); !b.Equal(decimal.NewFromInt(5)) {
		t.Errorf("globex 6100-200: %v; want 5", b)
	}
	if n := s.BudgetTable("empty").Len(); n != 0 {
		t.Errorf("empty has %d accounts", n)
	}
	if n := s.BudgetTable("nobody").Len(); n != 0 {
		t.Errorf("an unknown community has %d accounts", n)
	}
}

func TestBudgetValidator(t *testing.T) {
	s := loadBudgets(t)
	amt := func(v string) decimal.Decimal { return decimal.RequireFromString(v) }
	req := budget.Request{Lines: []budget.Line{
		{Number: 1, Account: "6100-200", Amount: amt("600")},
		{Number: 2, Account: "6100-300", Amount: amt("250.51")},
		{Number: 3, Account: "6100-200", Amount: amt("400")},
		{Number: 4, Account: "9999-999", Amount: amt("1")},
	}}
	cases := []struct {
		community string
		over      budget.Status
		want      []budget.Status
	}{
		{"acme", "", []budget.Status{budget.Valid, budget.Invalid, budget.Valid, budget.Invalid}},
		{"acme", budget.Warning, []budget.Status{budget.Valid, budget.Warning, budget.Valid, budget.Invalid}},
		{"globex", budget.Warning, []budget.Status{budget.Warning, budget.Invalid, budget.Warning, budget.Invalid}},
		{"empty", budget.Warning, []budget.Status{budget.Invalid, budget.Invalid, budget.Invalid, budget.Invalid}},
	}
	for _, c := range cases {
		t.Run(c.community+"/"+string(c.over), func(t *testing.T) {
			res, err := s.BudgetValidator(c.community, c.over).Validate(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			if err := budget.CheckReply(req, res); err != nil {
				t.Fatalf("the reply breaks the rule: %v", err)
			}
			var got []budget.Status
			for _, r := range res {
				got = append(got, r.Status)
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("statuses (-want +got):\n%s", diff)
			}
		})
	}
	if _, err := s.BudgetValidator("acme", "").Validate(context.Background(), budget.Request{}); err == nil {
		t.Error("an empty request was accepted")
	}
}

func TestBudgetLoadErrors(t *testing.T) {
	for name, c := range map[string]datafile.Community{
		"blank account":     {ID: "x", Name: "X", Region: datafile.NZ, Budgets: []datafile.Budget{{Account: " "}}},
		"duplicate account": {ID: "x", Name: "X", Region: datafile.NZ, Budgets: []datafile.Budget{{Account: "A"}, {Account: " A "}}},
	} {
		s := memstore.New()
		err := add(t, s, &datafile.File{Communities: []datafile.Community{c}})
		if err == nil || !strings.Contains(err.Error(), "budgets[") {
			t.Errorf("%s: error %v; want one naming the budgets entry", name, err)
		}
		if s.BudgetTable("x").Len() != 0 {
			t.Errorf("%s: a rejected community kept a table", name)
		}
	}
}
