package memstore_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/procurekit/procure/auth"
	"github.com/procurekit/procure/datafile"
	"github.com/procurekit/procure/memstore"
	"github.com/procurekit/procure/paging"
	"github.com/procurekit/procure/supplier"
	"github.com/procurekit/procure/supplier/suppliertest"
	"github.com/procurekit/procure/user"
)

// encode writes f as a data file.
func encode(tb testing.TB, f *datafile.File) []byte {
	tb.Helper()
	b, err := json.MarshalIndent(f, "", " ")
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// load returns a store holding f, read as a data file by LoadReader.
func load(tb testing.TB, f *datafile.File) *memstore.Store {
	tb.Helper()
	s, err := memstore.LoadReader(f.Reader())
	if err != nil {
		tb.Fatalf("memstore.LoadReader: %v", err)
	}
	return s
}

// add adds the communities of f to s, read as a data file by s's Loader.
func add(tb testing.TB, s *memstore.Store, f *datafile.File) error {
	tb.Helper()
	return datafile.Stream(f.Reader(), s.Loader())
}

// LoadFile keeps every supplier as the file has it (datafile.ReadFile's
// records), with shapes that share memory in the store: several contacts
// and addresses, a default contact equal to one of them and one that is
// not, repeated payment terms, tags and e-mail addresses.
func TestLoadFileKeepsRecords(t *testing.T) {
	recs := benchRecords(3000)
	// Shapes the bench records lack: several contacts and addresses, a
	// default contact equal to one of them, and one that is not.
	for i := range recs {
		r := &recs[i]
		if i%3 == 0 {
			c := r.Contacts[0]
			c.ID, c.Name, c.Phone = uuid.New(), "Zed Jones", nil
			r.Contacts = append(r.Contacts, c)
			a := r.RemittanceAddresses[0]
			a.ID, a.CompanyName = uuid.New(), supplier.NewText("Another "+a.CompanyName.String())
			region := supplier.Region{Name: supplier.NewText("Auckland"), Code: supplier.NewText("AUK")}
			a.Address.Region = &region
			r.RemittanceAddresses = append(r.RemittanceAddresses, a)
		}
		if i%2 == 0 {
			c := r.Contacts[len(r.Contacts)-1]
			r.DefaultContact = &c
			a := r.RemittanceAddresses[0]
			r.DefaultRemittanceAddress = &a
		} else if i%5 == 1 {
			c := r.Contacts[0]
			c.Name = "Not one of the contacts"
			r.DefaultContact = &c
		}
		days := 30
		r.Settings = &supplier.Settings{
			PaymentTerm: &supplier.PaymentTerm{ID: uuid.MustParse("7d1e3e4c-0000-4000-8000-000000000030"), Code: "NET30", Active: true, Days: &days, TermType: supplier.TermType("DAYS_AFTER_THE_INVOICE_DATE"), Description: supplier.NewText("Net 30")},
			Tags:        []supplier.Tag{{ID: uuid.MustParse("7d1e3e4c-0000-4000-8000-0000000000aa"), Name: "Preferred"}},
		}
		r.Emails = &supplier.Emails{DefaultEmailAddress: r.DefaultEmailAddress, OrdersEmailAddress: r.DefaultEmailAddress, InvoicingEmailAddress: supplier.NewText("inv@example.com")}
	}
	f := &datafile.File{Communities: []datafile.Community{
		{ID: "one", Name: "One", Region: datafile.NZ, Suppliers: recs[:2500],
			Tokens: []datafile.Token{{Token: "demo-token-one", Scopes: []string{"suppliers:read"}}}},
		{ID: "two", Name: "Two", Region: datafile.AU, Suppliers: recs[2500:]},
	}}
	path := filepath.Join(t.TempDir(), "data.json")
	if err := os.WriteFile(path, encode(t, f), 0o644); err != nil {
		t.Fatal(err)
	}
	parsed, err := datafile.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	owned, err := memstore.LoadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	byID := func(a, b uuid.UUID) int { return strings.Compare(a.String(), b.String()) }
	for _, c := range parsed.Communities {
		for _, r := range c.Suppliers {
			got, err := owned.Supplier(ctx, c.ID, r.ID)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(r.Detail, got); diff != "" {
				t.Fatalf("Supplier %s differs from the file (-file +store):\n%s", r.ID, diff)
			}
			cs, err := owned.ListContacts(ctx, c.ID, r.ID, paging.Request{Size: 100})
			if err != nil {
				t.Fatal(err)
			}
			wantC := slices.SortedFunc(slices.Values(r.Contacts), func(a, b supplier.Contact) int { return byID(a.ID, b.ID) })
			gotC := slices.SortedFunc(slices.Values(cs.Content), func(a, b supplier.Contact) int { return byID(a.ID, b.ID) })
			if diff := cmp.Diff(wantC, gotC); diff != "" {
				t.Fatalf("contacts of %s differ from the file (-file +store):\n%s", r.ID, diff)
			}
			as, err := owned.ListRemittanceAddresses(ctx, c.ID, r.ID, supplier.AddressQuery{Page: paging.Request{Size: 100}})
			if err != nil {
				t.Fatal(err)
			}
			wantA := slices.SortedFunc(slices.Values(r.RemittanceAddresses), func(a, b supplier.RemittanceAddress) int { return byID(a.ID, b.ID) })
			gotA := slices.SortedFunc(slices.Values(as.Content), func(a, b supplier.RemittanceAddress) int { return byID(a.ID, b.ID) })
			if diff := cmp.Diff(wantA, gotA); diff != "" {
				t.Fatalf("addresses of %s differ from the file (-file +store):\n%s", r.ID, diff)
			}
		}
		all, err := owned.ListSuppliers(ctx, c.ID, supplier.ListQuery{Page: paging.Request{Size: 100}})
		if err != nil || all.Page.TotalElements != len(c.Suppliers) {
			t.Fatalf("community %s: %d suppliers listed (%v), want %d", c.ID, all.Page.TotalElements, err, len(c.Suppliers))
		}
	}
	if _, err := owned.TokenByHash(ctx, auth.HashSecret("demo-token-one")); err != nil {
		t.Errorf("token of community one: %v", err)
	}
}

// LoadFile's errors name the file, the entry and the rule, as ReadFile's.
func TestLoadFileErrors(t *testing.T) {
	f := suppliertest.Fixture(t)
	f.Communities[1].Suppliers[2].ProfileType = "NOT_A_TYPE"
	b, err := json.Marshal(f)
	if err != nil {
		// The enum refuses to encode an unknown value: write it by hand.
		b = bytes.Replace(encode(t, suppliertest.Fixture(t)), []byte(`"COMPANY"`), []byte(`"NOT_A_TYPE"`), 1)
	}
	path := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = memstore.LoadFile(path)
	if err == nil || !strings.HasPrefix(err.Error(), path+": line ") || !strings.Contains(err.Error(), ".profileType: must be one of") {
		t.Fatalf("LoadFile = %v, want the file, line and entry", err)
	}
	if _, err := memstore.LoadFile(filepath.Join(t.TempDir(), "missing.json")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("LoadFile of a missing file = %v, want os.ErrNotExist", err)
	}
}

// Adding a community (Loader) is all or nothing: when a later part
// (tokens, users, service accounts) conflicts with what the store holds,
// nothing of the community is published, not even the parts that were
// fine.
func TestAddCommunityIsAtomic(t *testing.T) {
	ctx := context.Background()
	first := datafile.Community{
		ID: "first", Name: "First", Region: datafile.NZ,
		Tokens:          []datafile.Token{{Token: "demo-token-first", Scopes: []string{"suppliers:read"}}},
		ServiceAccounts: []datafile.ServiceAccount{{ID: "sa-first", Keys: []datafile.Key{{Key: "demo-key-first", Active: true}}}},
		Users:           []user.User{{ID: "u-first", Username: "first.user"}},
	}
	recs := benchRecords(20)
	second := func() datafile.Community {
		return datafile.Community{
			ID: "second", Name: "Second", Region: datafile.AU,
			Suppliers:       recs,
			Tokens:          []datafile.Token{{Token: "demo-token-second", Scopes: []string{"suppliers:read"}}},
			ServiceAccounts: []datafile.ServiceAccount{{ID: "sa-second", Keys: []datafile.Key{{Key: "demo-key-second", Active: true}}}},
			Users:           []user.User{{ID: "u-second", Username: "second.user"}},
			AutoRoles:       []string{"EMPLOYEE"},
			Budgets:         []datafile.Budget{{Account: "6100"}},
		}
	}
	tests := []struct {
		name   string
		break_ func(c *datafile.Community)
		want   string
	}{
		{"token of another community", func(c *datafile.Community) { c.Tokens[0].Token = "demo-token-first" }, "tokens[0].token: the token is already loaded"},
		{"user id of another community", func(c *datafile.Community) { c.Users[0].ID = "u-first" }, `users[0].id: duplicate user id "u-first"`},
		{"service account of another community", func(c *datafile.Community) { c.ServiceAccounts[0].ID = "sa-first" }, `serviceAccounts[0].id: duplicate service account id "sa-first"`},
		{"blank budget account", func(c *datafile.Community) { c.Budgets[0].Account = " " }, "budgets[0].account: is required"},
		{"bad auto-role", func(c *datafile.Community) { c.AutoRoles[0] = "" }, "autoRoles[0]: must be a role code of 1 to 255 characters"},
		{"community loaded already", func(c *datafile.Community) { c.ID = "first" }, `community "first": suppliers already loaded`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := memstore.New()
			if err := add(t, s, &datafile.File{Communities: []datafile.Community{first}}); err != nil {
				t.Fatal(err)
			}
			c := second()
			tt.break_(&c)
			err := add(t, s, &datafile.File{Communities: []datafile.Community{c}})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("adding the community = %v, want an error containing %q", err, tt.want)
			}
			// Nothing of the second community is there.
			page, err := s.ListSuppliers(ctx, "second", supplier.ListQuery{Page: paging.Request{Size: 10}})
			if err != nil || page.Page.TotalElements != 0 {
				t.Errorf("suppliers of the failed community: %d, %v; want none", page.Page.TotalElements, err)
			}
			if _, err := s.TokenByHash(ctx, auth.HashSecret("demo-token-second")); !errors.Is(err, auth.ErrUnknown) {
				t.Errorf("token of the failed community: %v, want auth.ErrUnknown", err)
			}
			if _, err := s.ServiceAccount(ctx, "sa-second"); err == nil {
				t.Error("service account of the failed community was published")
			}
			if _, err := s.UserByID(ctx, "second", "u-second"); err == nil {
				t.Error("user of the failed community was published")
			}
			if roles, _ := s.AutoRoles(ctx, "second"); len(roles) != 0 {
				t.Errorf("auto-roles of the failed community: %v", roles)
			}
			if s.BudgetTable("second").Len() != 0 {
				t.Error("budget table of the failed community was published")
			}
			// The first community is untouched, and the fixed second
			// community loads.
			if _, err := s.TokenByHash(ctx, auth.HashSecret("demo-token-first")); err != nil {
				t.Errorf("token of the first community: %v", err)
			}
			good := second()
			if err := add(t, s, &datafile.File{Communities: []datafile.Community{good}}); err != nil {
				t.Fatalf("adding the fixed community: %v", err)
			}
			page, err = s.ListSuppliers(ctx, "second", supplier.ListQuery{Page: paging.Request{Size: 10}})
			if err != nil || page.Page.TotalElements != len(recs) {
				t.Errorf("suppliers after the fixed load: %d, %v; want %d", page.Page.TotalElements, err, len(recs))
			}
		})
	}
}

func supplierQuery(q string) supplier.ListQuery {
	return supplier.ListQuery{Query: q, Page: paging.Request{Size: 20, Sort: paging.Sort{Field: "name"}}}
}
