package pgstore_test

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"

	"github.com/procurekit/procure"
	"github.com/procurekit/procure/auth"
	"github.com/procurekit/procure/datafile"
	"github.com/procurekit/procure/supplier"
	"github.com/procurekit/procure/user"
)

var allTables = []string{"communities", "suppliers", "supplier_terms", "supplier_contacts", "remittance_addresses",
	"tokens", "service_accounts", "service_account_keys", "users", "budgets"}

// snapshot renders every row of every table, in a stable order, so two
// snapshots are equal exactly when the data is.
func snapshot(tb testing.TB, dsn string) map[string]string {
	tb.Helper()
	conn := connect(tb, dsn)
	out := map[string]string{}
	for _, table := range allTables {
		var rows string
		err := conn.QueryRow(context.Background(),
			`SELECT coalesce(string_agg(t::text, E'\n' ORDER BY t::text), '') FROM `+table+` t`).Scan(&rows)
		if err != nil {
			tb.Fatalf("snapshot %s: %v", table, err)
		}
		out[table] = rows
	}
	return out
}

// Importing the same file again changes nothing at all: no row is
// rewritten (not even a user's updated_at).
func TestImportTwiceChangesNothing(t *testing.T) {
	s, dsn := openStore(t, fixture())
	before := snapshot(t, dsn)
	for _, table := range []string{"suppliers", "supplier_terms", "supplier_contacts", "remittance_addresses", "tokens", "users", "budgets"} {
		if before[table] == "" {
			t.Fatalf("table %s is empty after the import", table)
		}
	}
	if err := s.Import(context.Background(), fixture()); err != nil {
		t.Fatalf("second Import: %v", err)
	}
	if diff := cmp.Diff(before, snapshot(t, dsn)); diff != "" {
		t.Fatalf("re-import changed the database (-before +after):\n%s", diff)
	}
}

// The import is an upsert (docs: live-data.md): every entity of the
// file is created or replaced, with the file's dates - a supplier or user
// changed since through the API gets the file's version back - and
// entities not in the file are left alone; other communities are
// untouched.
func TestImportUpserts(t *testing.T) {
	ctx := context.Background()
	s, _ := openStore(t, fixture())
	if _, err := s.UpdateUser(ctx, "c1", "u1", func(u *user.User) error { u.Username = "john.doe"; return nil }); err != nil {
		t.Fatal(err)
	}
	beta := fixture().Communities[0].Suppliers[1]
	changed := beta
	changed.Name = supplier.NewText("Beta Renamed")
	if _, err := s.PutSupplier(ctx, "c1", changed); err != nil {
		t.Fatal(err)
	}
	c2Before, err := s.ListSuppliers(ctx, "c2", supplier.ListQuery{Page: firstPage()})
	if err != nil {
		t.Fatal(err)
	}

	f := fixture()
	c1 := &f.Communities[0]
	c1.Suppliers = c1.Suppliers[1:2] // only "beta" is in the file
	c1.Suppliers = append(c1.Suppliers, supplier.Record{Detail: supplier.Detail{Summary: supplier.Summary{
		ID: id(5), Name: supplier.NewText("Delta"), ProfileType: supplier.ProfileCompany, ModifiedDate: at(50), CreatedDate: at(40)}}})
	c1.Tokens = []datafile.Token{{Token: "demo-token-c1-new", Scopes: []string{"suppliers:read"}}}
	c1.Budgets = []datafile.Budget{{Account: "8000", Budget: decimal.RequireFromString("5")}, {Account: "7000", Budget: decimal.RequireFromString("7")}}
	c1.AutoRoles = []string{"EMPLOYEE", "REQUESTER"}
	c1.Users = append(c1.Users, user.User{ID: "u3", Username: "new.user", Enabled: true})
	if err := s.Import(ctx, f); err != nil {
		t.Fatalf("Import: %v", err)
	}

	page, err := s.ListSuppliers(ctx, "c1", supplier.ListQuery{Page: firstPage()})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := names(page.Content), []string{"Acme Tools", "beta", "Delta", "Gamma", ""}; !cmp.Equal(got, want) || page.Page.TotalElements != 5 {
		t.Errorf("c1 suppliers = %q (total %d); want %q (total 5)", got, page.Page.TotalElements, want)
	}
	got, err := s.Supplier(ctx, "c1", beta.ID)
	if err != nil || got.Name.String() != "beta" || !got.ModifiedDate.Equal(beta.ModifiedDate) {
		t.Errorf("beta after the import: %+v, %v; want the file's name and modifiedDate %v", got.Summary, err, beta.ModifiedDate)
	}
	if _, err := s.ListContacts(ctx, "c1", id(1), firstPage()); err != nil {
		t.Errorf("contacts of a supplier not in the file: %v; want them kept", err)
	}
	for _, tok := range []string{"demo-token-c1", "demo-token-c1-new"} {
		if got, err := s.TokenByHash(ctx, auth.HashSecret(tok)); err != nil || got.Community != "c1" {
			t.Errorf("token %s: %+v, %v; want community c1", tok, got, err)
		}
	}
	budgets, err := s.Budgets(ctx, "c1")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]decimal.Decimal{"6100-200": decimal.RequireFromString("1500.50"), "7000": decimal.RequireFromString("7"), "8000": decimal.RequireFromString("5")}
	if diff := cmp.Diff(want, budgets, decimalComparer); diff != "" {
		t.Errorf("budgets (-want +got):\n%s", diff)
	}
	roles, err := s.AutoRoles(ctx, "c1")
	if err != nil || !cmp.Equal(roles, []string{"EMPLOYEE", "REQUESTER"}) {
		t.Errorf("AutoRoles = %v, %v; want [EMPLOYEE REQUESTER]", roles, err)
	}
	if u, err := s.UserByID(ctx, "c1", "u1"); err != nil || u.Username != "JDoe" {
		t.Errorf("user changed through the API: %+v, %v; want the file's username JDoe back", u, err)
	}
	if u, err := s.UserByUsername(ctx, "c1", "NEW.USER"); err != nil || u.ID != "u3" {
		t.Errorf("new user of the file: %+v, %v; want u3 added", u, err)
	}
	c2After, err := s.ListSuppliers(ctx, "c2", supplier.ListQuery{Page: firstPage()})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(c2Before, c2After); diff != "" {
		t.Errorf("c2 changed (-before +after):\n%s", diff)
	}
}

// A file that fails - on a rule the file alone breaks, or on a conflict
// only the database sees - changes nothing, and the error names the entry.
func TestImportFailureChangesNothing(t *testing.T) {
	ctx := context.Background()
	// Each case changes the first community (so that a partial import
	// would show) and replaces the second (c2, whose data stays in the
	// database) by a community whose entry conflicts with stored data.
	tests := []struct {
		name      string
		second    datafile.Community
		setup     func(t *testing.T, s storeUnderTest)
		wantField string
		conflict  bool // procure.ErrConflict, not a ValidationError
	}{
		{
			name:      "user id of another community",
			second:    datafile.Community{ID: "c3", Region: datafile.US, Users: []user.User{{ID: "u9", Username: "x"}, {ID: "u2", Username: "someone"}}},
			wantField: "communities[1].users[1].id",
			conflict:  true,
		},
		{
			name:      "token of another community",
			second:    datafile.Community{ID: "c3", Region: datafile.US, Tokens: []datafile.Token{{Token: "demo-token-c2"}}},
			wantField: "communities[1].tokens[0].token",
			conflict:  true,
		},
		{
			name:      "service account of another community",
			second:    datafile.Community{ID: "c3", Region: datafile.US, ServiceAccounts: []datafile.ServiceAccount{{ID: "sa-c9"}}},
			setup:     importCommunity(datafile.Community{ID: "c9", Region: datafile.US, ServiceAccounts: []datafile.ServiceAccount{{ID: "sa-c9"}}}),
			wantField: "communities[1].serviceAccounts[0].id",
			conflict:  true,
		},
		{
			name:   "username taken through the user API",
			second: datafile.Community{ID: "c3", Region: datafile.US, Users: []user.User{{ID: "u7", Username: "Taken"}}},
			setup: func(t *testing.T, s storeUnderTest) {
				if _, err := s.CreateUser(ctx, "c3", user.User{ID: "api-1", Username: "taken", Enabled: true}); err != nil {
					t.Fatal(err)
				}
			},
			wantField: "communities[1].users[0].username",
			conflict:  true,
		},
		{
			name: "duplicate contact id within a supplier",
			second: datafile.Community{ID: "c3", Region: datafile.US, Suppliers: []supplier.Record{{
				Detail:   supplier.Detail{Summary: supplier.Summary{ID: id(77), ProfileType: supplier.ProfileIndividual, ModifiedDate: t0, CreatedDate: t0}},
				Contacts: []supplier.Contact{{ID: id(78), Name: "a", ModifiedDate: t0, CreatedDate: t0}, {ID: id(78), Name: "b", ModifiedDate: t0, CreatedDate: t0}},
			}}},
			wantField: "communities[1].suppliers[0].contacts[1].id",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, dsn := openStore(t, fixture())
			if tt.setup != nil {
				tt.setup(t, s)
			}
			before := snapshot(t, dsn)

			f := fixture()
			f.Communities[0].Suppliers = f.Communities[0].Suppliers[:1]
			f.Communities[1] = tt.second
			err := s.Import(ctx, f)
			var verr *procure.ValidationError
			switch {
			case tt.conflict:
				// A clash with stored data is a conflict (409), naming
				// the entry; the file itself is valid.
				if !errors.Is(err, procure.ErrConflict) || errors.Is(err, procure.ErrInvalid) || !strings.HasPrefix(err.Error(), tt.wantField+": ") {
					t.Fatalf("Import error = %v; want procure.ErrConflict naming %s", err, tt.wantField)
				}
			case !errors.As(err, &verr) || len(verr.Fields) != 1 || verr.Fields[0].Field != tt.wantField:
				t.Fatalf("Import error = %v; want a ValidationError on %s", err, tt.wantField)
			}
			if diff := cmp.Diff(before, snapshot(t, dsn)); diff != "" {
				t.Fatalf("a failed import changed the database (-before +after):\n%s", diff)
			}
		})
	}
}

type storeUnderTest interface {
	Import(context.Context, *datafile.File) error
	CreateUser(context.Context, string, user.User) (user.User, error)
}

func importCommunity(c datafile.Community) func(*testing.T, storeUnderTest) {
	return func(t *testing.T, s storeUnderTest) {
		t.Helper()
		if err := s.Import(context.Background(), &datafile.File{Communities: []datafile.Community{c}}); err != nil {
			t.Fatal(err)
		}
	}
}

// A file that datafile.Validate rejects is rejected before the database is
// touched, with the entry's path.
func TestImportInvalidFile(t *testing.T) {
	s, dsn := openStore(t, nil)
	before := snapshot(t, dsn)
	f := fixture()
	f.Communities[0].Suppliers[1].DefaultEmailAddress = supplier.NewText("not an email")
	err := s.Import(context.Background(), f)
	if err == nil || !strings.HasPrefix(err.Error(), "communities[0].suppliers[1].") || !strings.Contains(err.Error(), "defaultEmailAddress: must be a valid email") {
		t.Fatalf("Import error = %v; want one naming communities[0].suppliers[1] and its defaultEmailAddress", err)
	}
	if diff := cmp.Diff(before, snapshot(t, dsn)); diff != "" {
		t.Fatalf("database changed (-before +after):\n%s", diff)
	}
}

// Secrets are stored only as hashes: no table holds the plain text.
func TestImportStoresNoSecret(t *testing.T) {
	_, dsn := openStore(t, fixture())
	for table, rows := range snapshot(t, dsn) {
		for _, secret := range []string{"demo-token", "demo-key"} {
			if strings.Contains(rows, secret) {
				t.Errorf("table %s holds the plain secret %q", table, secret)
			}
		}
	}
}

func TestTokenByHash(t *testing.T) {
	ctx := context.Background()
	s, _ := openStore(t, fixture())
	tests := []struct {
		name, token string
		want        auth.Token
		wantErr     error
	}{
		{"active", "demo-token-c1", auth.Token{Community: "c1", Scopes: []string{"suppliers:read"}}, nil},
		{"revoked with expiry", "demo-token-c1-revoked", auth.Token{Community: "c1", Scopes: []string{"suppliers:read"}, Revoked: true, Expires: at(100)}, nil},
		{"other community", "demo-token-c2", auth.Token{Community: "c2", Scopes: []string{"suppliers:read"}}, nil},
		{"unknown", "nope", auth.Token{}, auth.ErrUnknown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := auth.HashSecret(tt.token)
			got, err := s.TokenByHash(ctx, h)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v; want %v", err, tt.wantErr)
			}
			if tt.wantErr != nil {
				return
			}
			tt.want.Hash = h
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Fatalf("token (-want +got):\n%s", diff)
			}
			if got.Expires.Location() != got.Expires.UTC().Location() {
				t.Errorf("Expires is not in UTC: %v", got.Expires)
			}
		})
	}
}

func TestServiceAccount(t *testing.T) {
	ctx := context.Background()
	s, _ := openStore(t, fixture())
	got, err := s.ServiceAccount(ctx, "sa-c1")
	if err != nil {
		t.Fatal(err)
	}
	want := auth.ServiceAccount{
		ID: "sa-c1", Community: "c1",
		Keys:       []auth.Key{{Hash: auth.HashSecret("demo-key-old"), Active: false}, {Hash: auth.HashSecret("demo-key-new"), Active: true}},
		AllowedIPs: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("192.0.2.7/32")},
	}
	if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b netip.Prefix) bool { return a == b })); diff != "" {
		t.Fatalf("service account (-want +got):\n%s", diff)
	}
	if _, err := s.ServiceAccount(ctx, "sa-unknown"); !errors.Is(err, auth.ErrUnknown) {
		t.Fatalf("unknown account: err = %v; want ErrUnknown", err)
	}
}

var decimalComparer = cmp.Comparer(func(a, b decimal.Decimal) bool { return a.Equal(b) })

func TestBudgets(t *testing.T) {
	ctx := context.Background()
	s, _ := openStore(t, fixture())
	tests := []struct {
		community string
		want      map[string]decimal.Decimal
	}{
		{"c1", map[string]decimal.Decimal{"6100-200": decimal.RequireFromString("1500.50"), "7000": decimal.RequireFromString("-20")}},
		{"c2", map[string]decimal.Decimal{}},
		{"unknown", map[string]decimal.Decimal{}},
	}
	for _, tt := range tests {
		t.Run(tt.community, func(t *testing.T) {
			got, err := s.Budgets(ctx, tt.community)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got, decimalComparer); diff != "" {
				t.Fatalf("budgets (-want +got):\n%s", diff)
			}
		})
	}
}

// Budget accounts are trimmed, as memstore trims them; the table is a
// budget.Table for the validator.
func TestBudgetTable(t *testing.T) {
	ctx := context.Background()
	f := fixture()
	f.Communities[0].Budgets = append(f.Communities[0].Budgets, datafile.Budget{Account: " 9000 ", Budget: decimal.RequireFromString("1.25")})
	s, _ := openStore(t, f)
	tbl, err := s.BudgetTable(ctx, "c1")
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := tbl.Budget("9000"); !ok || !got.Equal(decimal.RequireFromString("1.25")) {
		t.Errorf("Budget(9000) = %v, %v; want 1.25, true", got, ok)
	}
	if tbl.Len() != 3 {
		t.Errorf("Len = %d; want 3", tbl.Len())
	}
	loaded, err := s.BudgetLoader("c2")(ctx)
	if err != nil || loaded.Len() != 0 {
		t.Errorf("c2 table: %v, %v; want an empty table", loaded, err)
	}

	f = fixture()
	f.Communities[0].Budgets = append(f.Communities[0].Budgets, datafile.Budget{Account: "7000 ", Budget: decimal.RequireFromString("3")})
	var verr *procure.ValidationError
	if err := s.Import(ctx, f); !errors.As(err, &verr) || verr.Fields[0].Field != "communities[0].budgets[2].account" {
		t.Errorf("duplicate account after trimming: err = %v; want a ValidationError on communities[0].budgets[2].account", err)
	}
}

func TestAutoRoles(t *testing.T) {
	ctx := context.Background()
	s, _ := openStore(t, fixture())
	for _, tt := range []struct {
		community string
		want      []string
	}{{"c1", []string{"EMPLOYEE"}}, {"c2", nil}, {"unknown", nil}} {
		got, err := s.AutoRoles(ctx, tt.community)
		if err != nil || !cmp.Equal(tt.want, got) {
			t.Errorf("AutoRoles(%q) = %v, %v; want %v", tt.community, got, err, tt.want)
		}
	}
}
