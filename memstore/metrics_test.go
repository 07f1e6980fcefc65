package memstore_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/shopspring/decimal"

	"github.com/procurekit/procure"
	"github.com/procurekit/procure/auth"
	"github.com/procurekit/procure/internal/metricstest"
	"github.com/procurekit/procure/memstore"
	"github.com/procurekit/procure/supplier"
	"github.com/procurekit/procure/supplier/suppliertest"
	"github.com/procurekit/procure/user"
)

// RegisterMetrics times every write method once it is called (writes
// before it are not counted), a failed write included, under the family
// and op labels pgstore uses, and counts imports as pgstore does (docs:
// operations.md "Metrics").
func TestRegisterMetrics(t *testing.T) {
	ctx := context.Background()
	s := memstore.New()
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(s.PutCommunity(ctx, procure.Community{ID: "acme", Region: "AU"})) // before: not counted

	reg := prometheus.NewRegistry()
	if err := s.RegisterMetrics(reg); err != nil {
		t.Fatal(err)
	}
	if err := s.RegisterMetrics(prometheus.NewRegistry()); err == nil {
		t.Error("a second RegisterMetrics on one store succeeded")
	}
	if err := memstore.New().RegisterMetrics(reg); !errors.As(err, new(prometheus.AlreadyRegisteredError)) {
		t.Errorf("a second store on the registry: %v; want prometheus.AlreadyRegisteredError", err)
	}

	sid := suppliertest.ID("metrics supplier")
	must(s.PutCommunity(ctx, procure.Community{ID: "globex", Region: "US"}))
	must(s.PutSupplier(ctx, "acme", suppliertest.NewRecord(sid, "Metrics Ltd")))
	if _, err := s.PutSupplier(ctx, "acme", supplier.Record{}); !errors.Is(err, procure.ErrInvalid) {
		t.Fatalf("an empty record: %v; want ErrInvalid", err) // refused, and timed all the same
	}
	c, err := s.PutContact(ctx, "acme", sid, supplier.Contact{ID: uuid.New(), Name: "Ana"})
	must(c, err)
	must(nil, s.DeleteContact(ctx, "acme", sid, c.ID))
	a, err := s.PutRemittanceAddress(ctx, "acme", sid, supplier.RemittanceAddress{ID: uuid.New(), CompanyName: supplier.NewText("Head office"), Address: supplier.Address{Line1: "1 Queen St", City: "Auckland", Country: "NZ"}})
	must(a, err)
	must(nil, s.DeleteRemittanceAddress(ctx, "acme", sid, a.ID))
	must(nil, s.DeleteSupplier(ctx, "acme", sid))
	_, th := auth.NewBearerToken()
	tok, err := s.AddToken(ctx, auth.Token{Hash: th, Community: "acme", Scopes: []string{auth.ScopeSuppliersRead}})
	must(tok, err)
	must(nil, s.RevokeToken(ctx, "acme", tok.ID))
	must(s.PutServiceAccount(ctx, "acme", "hr", nil))
	_, kh := auth.NewAPIKey()
	k, err := s.AddKey(ctx, "acme", "hr", auth.Key{Hash: kh, Active: true})
	must(k, err)
	must(s.SetKeyActive(ctx, "acme", "hr", k.ID, false))
	must(nil, s.PutBudget(ctx, "acme", "6100-100", decimal.RequireFromString("10")))
	must(nil, s.DeleteBudget(ctx, "acme", "6100-100"))
	u, err := s.CreateUser(ctx, "acme", user.User{Username: "jsmith", Enabled: true})
	must(u, err)
	must(s.UpdateUser(ctx, "acme", u.ID, func(u *user.User) error { u.FirstName = "Jo"; return nil }))

	// An import that succeeds and one that fails.
	file := `{"communities": [{"id": "acme", "region": "AU", "suppliers": []}]}`
	if _, err := s.ImportStream(ctx, strings.NewReader(file)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ImportStream(ctx, strings.NewReader(`{"communities": [`)); err == nil {
		t.Fatal("a truncated file imported")
	}

	fams := metricstest.Gather(t, reg)
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"procure_imports_total", []string{"result", "ok"}, 1},
		{"procure_imports_total", []string{"result", "failed"}, 1},
		{"procure_import_running", nil, 0},
		{"procure_import_read_bytes", nil, 17}, // the truncated file, the latest
	} {
		if got, ok := fams.Value(t, c.name, c.labels...); !ok || got != c.want {
			t.Errorf("%s%v = %v (present %v); want %v", c.name, c.labels, got, ok, c.want)
		}
	}
	want := map[string]float64{
		"PutCommunity": 1, "PutSupplier": 2, "PutContact": 1, "DeleteContact": 1,
		"PutRemittanceAddress": 1, "DeleteRemittanceAddress": 1, "DeleteSupplier": 1,
		"AddToken": 1, "RevokeToken": 1, "PutServiceAccount": 1, "AddKey": 1, "SetKeyActive": 1,
		"PutBudget": 1, "DeleteBudget": 1, "CreateUser": 1, "UpdateUser": 1,
	}
	for op, n := range want {
		if got, ok := fams.Value(t, "procure_store_write_duration_seconds", "op", op); !ok || got != n {
			t.Errorf("%s: count %v (present %v); want %v", op, got, ok, n)
		}
	}
	ops := fams.LabelValues("procure_store_write_duration_seconds", "op")
	if len(ops) != len(want) {
		t.Errorf("ops %v; want exactly %v", ops, slices.Sorted(mapsKeys(want)))
	}
}

func mapsKeys(m map[string]float64) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}
