package memstore_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"

	"github.com/procurekit/procure"
	"github.com/procurekit/procure/budget"
	"github.com/procurekit/procure/memstore"
)

func TestPutCommunity(t *testing.T) {
	ctx := context.Background()
	s := memstore.New()
	if _, err := s.Community(ctx, "acme"); !errors.Is(err, procure.ErrUnknownCommunity) {
		t.Fatalf("Community of an empty store: %v, want ErrUnknownCommunity", err)
	}
	got, err := s.PutCommunity(ctx, procure.Community{ID: "acme", Name: "Acme", Region: "NZ", AutoRoles: []string{"EMPLOYEE"}})
	if err != nil {
		t.Fatal(err)
	}
	want := procure.Community{ID: "acme", Name: "Acme", Region: "NZ", AutoRoles: []string{"EMPLOYEE"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("PutCommunity (-want +got):\n%s", diff)
	}
	// Replacing keeps the id, changes the rest; the auto-roles reach the
	// user service.
	if _, err := s.PutCommunity(ctx, procure.Community{ID: "acme", Name: "Acme Ltd", Region: "AU"}); err != nil {
		t.Fatal(err)
	}
	got, err = s.Community(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	want = procure.Community{ID: "acme", Name: "Acme Ltd", Region: "AU", AutoRoles: []string{}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Community after replace (-want +got):\n%s", diff)
	}
	if roles, _ := s.AutoRoles(ctx, "acme"); len(roles) != 0 {
		t.Errorf("auto-roles after replace = %v, want none", roles)
	}

	bad := []struct {
		name  string
		c     procure.Community
		field string
	}{
		{"no id", procure.Community{Region: "AU"}, "id"},
		{"slash in id", procure.Community{ID: "a/b", Region: "AU"}, "id"},
		{"unknown region", procure.Community{ID: "x", Region: "EU"}, "region"},
		{"blank role", procure.Community{ID: "x", Region: "AU", AutoRoles: []string{" "}}, "autoRoles[0]"},
		{"repeated role", procure.Community{ID: "x", Region: "AU", AutoRoles: []string{"A", "A"}}, "autoRoles[1]"},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			_, err := s.PutCommunity(ctx, tt.c)
			var v *procure.ValidationError
			if !errors.As(err, &v) || v.Fields[0].Field != tt.field {
				t.Fatalf("PutCommunity = %v, want a validation error on %s", err, tt.field)
			}
			if _, err := s.Community(ctx, tt.c.ID); tt.c.ID != "" && !errors.Is(err, procure.ErrUnknownCommunity) {
				t.Errorf("a rejected community was stored: %v", err)
			}
		})
	}
}

func TestBudgetWrites(t *testing.T) {
	ctx := context.Background()
	s := memstore.New()
	d := decimal.RequireFromString
	if err := s.PutBudget(ctx, "nowhere", "6100", d("1")); !errors.Is(err, procure.ErrUnknownCommunity) {
		t.Fatalf("PutBudget under an unknown community: %v", err)
	}
	if _, err := s.PutCommunity(ctx, procure.Community{ID: "acme", Region: "AU"}); err != nil {
		t.Fatal(err)
	}
	if err := s.PutBudget(ctx, "acme", " 6100-200 ", d("125.50")); err != nil {
		t.Fatal(err)
	}
	if err := s.PutBudget(ctx, "acme", "7000", d("-3")); err != nil {
		t.Fatal(err)
	}
	if b, ok := s.BudgetTable("acme").Budget("6100-200"); !ok || !b.Equal(d("125.5")) {
		t.Errorf("budget of 6100-200 = %v %v, want 125.50 (trimmed account)", b, ok)
	}
	if err := s.PutBudget(ctx, "acme", "6100-200", d("99")); err != nil {
		t.Fatal(err)
	}
	if b, _ := s.BudgetTable("acme").Budget("6100-200"); !b.Equal(d("99")) {
		t.Errorf("budget after replace = %v, want 99", b)
	}
	if err := s.DeleteBudget(ctx, "acme", "7000"); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.BudgetTable("acme").Budget("7000"); ok {
		t.Error("a deleted budget is still in the table")
	}
	if err := s.DeleteBudget(ctx, "acme", "7000"); !errors.Is(err, budget.ErrNotFound) {
		t.Errorf("deleting an absent budget: %v, want budget.ErrNotFound", err)
	}
	var v *procure.ValidationError
	if err := s.PutBudget(ctx, "acme", "  ", d("1")); !errors.As(err, &v) || v.Fields[0].Field != "account" {
		t.Errorf("a blank account: %v, want a validation error on account", err)
	}
	// The validator reads the live table at every call.
	res, err := s.BudgetValidator("acme", budget.Invalid).Validate(ctx, budget.Request{Lines: []budget.Line{{Number: 1, Account: "6100-200", Amount: d("50")}}})
	if err != nil || len(res) != 1 || res[0].Status != budget.Valid {
		t.Errorf("validate against the written table = %+v, %v; want Valid", res, err)
	}
}
