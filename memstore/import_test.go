package memstore_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/procurekit/procure"
	"github.com/procurekit/procure/auth"
	"github.com/procurekit/procure/datafile"
	"github.com/procurekit/procure/memstore"
	"github.com/procurekit/procure/paging"
	"github.com/procurekit/procure/supplier"
)

// importFile is a data file of one community; edit tweaks it, for the
// second import.
func importFile(edit func(string) string) string {
	f := `{"communities": [{"id": "imp", "name": "Import Co", "region": "AU", "autoRoles": ["EMPLOYEE"],
	  "tokens": [{"token": "imp-read-token", "scopes": ["suppliers:read"]}],
	  "serviceAccounts": [{"id": "imp-hris", "keys": [{"key": "imp-key-one", "active": true}]}],
	  "users": [{"id": "u-1", "username": "jdoe", "firstName": "Jo", "enabled": true}],
	  "budgets": [{"account": "6100", "budget": "100.00"}],
	  "suppliers": [
	    {"id": "c0000000-0000-4000-8000-000000000001", "name": "Alpha", "profileType": "COMPANY",
	     "modifiedDate": "2026-01-01T00:00:00Z", "createdDate": "2025-01-01T00:00:00Z",
	     "contacts": [{"id": "c0000000-0000-4000-8000-0000000000c1", "name": "Ann",
	       "modifiedDate": "2026-01-01T00:00:00Z", "createdDate": "2025-01-01T00:00:00Z"}]},
	    {"id": "c0000000-0000-4000-8000-000000000002", "name": "Beta", "profileType": "COMPANY",
	     "modifiedDate": "2026-01-02T00:00:00Z", "createdDate": "2025-01-01T00:00:00Z"}
	  ]}]}`
	if edit != nil {
		f = edit(f)
	}
	return f
}

var (
	alphaID = uuid.MustParse("c0000000-0000-4000-8000-000000000001")
	betaID  = uuid.MustParse("c0000000-0000-4000-8000-000000000002")
)

func TestImportStreamUpserts(t *testing.T) {
	ctx := context.Background()
	s := memstore.New()
	counts, err := s.ImportStream(ctx, strings.NewReader(importFile(nil)))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"communities": 1, "suppliers": 2, "contacts": 1, "remittanceAddresses": 0, "tokens": 1, "serviceAccounts": 1, "users": 1, "budgets": 1}
	for k, v := range want {
		if got := counts[k]; got != (datafile.Outcome{Created: v}) {
			t.Errorf("counts[%s] = %+v; want %d created (all: %v)", k, got, v, counts)
		}
	}
	before, err := s.Supplier(ctx, "imp", alphaID)
	if err != nil {
		t.Fatal(err)
	}

	// Importing the same file again changes nothing.
	if _, err := s.ImportStream(ctx, strings.NewReader(importFile(nil))); err != nil {
		t.Fatal(err)
	}
	if again, _ := s.Supplier(ctx, "imp", alphaID); !again.ModifiedDate.Equal(before.ModifiedDate) || again.Name.String() != "Alpha" {
		t.Errorf("a second import of the same file changed Alpha: %+v", again.Summary)
	}

	// Runtime changes an import must leave alone.
	extra := supplier.Record{Detail: supplier.Detail{Summary: supplier.Summary{ID: uuid.New(), Name: supplier.NewText("Runtime Only"), ProfileType: supplier.ProfileCompany}}}
	if _, err := s.PutSupplier(ctx, "imp", extra); err != nil {
		t.Fatal(err)
	}
	runtimeContact := supplier.Contact{ID: uuid.New(), Name: "Added Later"}
	if _, err := s.PutContact(ctx, "imp", alphaID, runtimeContact); err != nil {
		t.Fatal(err)
	}
	readHash := auth.HashSecret("imp-read-token")
	if err := s.RevokeToken(ctx, "imp", auth.TokenID(readHash)); err != nil {
		t.Fatal(err)
	}
	acct, err := s.ServiceAccount(ctx, "imp-hris")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetKeyActive(ctx, "imp", "imp-hris", acct.Keys[0].ID, false); err != nil {
		t.Fatal(err)
	}
	second, err := s.AddKey(ctx, "imp", "imp-hris", auth.Key{Hash: auth.HashSecret("imp-key-two"), Active: true})
	if err != nil {
		t.Fatal(err)
	}

	// The file, changed: Alpha renamed (a new date), a third supplier, a
	// changed budget, user and auto-roles; the token and key are given as
	// live again.
	changed := importFile(func(f string) string {
		f = strings.Replace(f, `"name": "Alpha", "profileType": "COMPANY",
	     "modifiedDate": "2026-01-01T00:00:00Z"`, `"name": "Alpha Renamed", "profileType": "COMPANY",
	     "modifiedDate": "2026-02-01T00:00:00Z"`, 1)
		f = strings.Replace(f, `"budget": "100.00"`, `"budget": "250.00"`, 1)
		f = strings.Replace(f, `"firstName": "Jo"`, `"firstName": "Joanna"`, 1)
		f = strings.Replace(f, `["EMPLOYEE"]`, `["EMPLOYEE", "BUYER"]`, 1)
		return strings.Replace(f, `"suppliers": [`, `"suppliers": [
	    {"id": "c0000000-0000-4000-8000-000000000003", "name": "Gamma", "profileType": "COMPANY",
	     "modifiedDate": "2026-01-03T00:00:00Z", "createdDate": "2025-01-01T00:00:00Z"},`, 1)
	})
	if _, err := s.ImportStream(ctx, strings.NewReader(changed)); err != nil {
		t.Fatal(err)
	}
	alpha, err := s.Supplier(ctx, "imp", alphaID)
	if err != nil {
		t.Fatal(err)
	}
	if alpha.Name.String() != "Alpha Renamed" || !alpha.ModifiedDate.Equal(time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("Alpha after the import: %q modified %s; want the file's name and date", alpha.Name, alpha.ModifiedDate)
	}
	contacts, err := s.ListContacts(ctx, "imp", alphaID, pageOf(100))
	if err != nil {
		t.Fatal(err)
	}
	if names := contactNames(contacts.Content); strings.Join(names, ",") != "Added Later,Ann" {
		t.Errorf("Alpha's contacts: %v; want the runtime contact kept beside the file's", names)
	}
	for _, id := range []uuid.UUID{betaID, extra.ID, uuid.MustParse("c0000000-0000-4000-8000-000000000003")} {
		if _, err := s.Supplier(ctx, "imp", id); err != nil {
			t.Errorf("supplier %s after the import: %v", id, err)
		}
	}
	if tok, err := s.TokenByHash(ctx, readHash); err != nil || !tok.Revoked {
		t.Errorf("the revoked token after an import that lists it live: %+v, %v; want it still revoked", tok, err)
	}
	acct, err = s.ServiceAccount(ctx, "imp-hris")
	if err != nil {
		t.Fatal(err)
	}
	if len(acct.Keys) != 2 || acct.Keys[0].Active || acct.Keys[1].ID != second.ID || !acct.Keys[1].Active {
		t.Errorf("keys after the import: %+v; want the first still deactivated and the added one kept", acct.Keys)
	}
	if rows := s.BudgetTable("imp").Rows(); len(rows) != 1 || rows["6100"].String() != "250" {
		t.Errorf("budgets after the import: %v; want 6100 at 250.00", rows)
	}
	if u, err := s.UserByID(ctx, "imp", "u-1"); err != nil || u.FirstName != "Joanna" {
		t.Errorf("user u-1 after the import: %+v, %v; want the file's first name", u, err)
	}
	if roles, _ := s.AutoRoles(ctx, "imp"); strings.Join(roles, ",") != "EMPLOYEE,BUYER" {
		t.Errorf("auto-roles after the import: %v", roles)
	}
	// A write after the import stamps above every date it brought.
	put, err := s.PutSupplier(ctx, "imp", supplier.Record{Detail: supplier.Detail{Summary: supplier.Summary{ID: betaID, Name: supplier.NewText("Beta 2"), ProfileType: supplier.ProfileCompany}}})
	if err != nil {
		t.Fatal(err)
	}
	if !put.ModifiedDate.After(alpha.ModifiedDate) {
		t.Errorf("a write after the import stamped %s, not after the imported %s", put.ModifiedDate, alpha.ModifiedDate)
	}
}

func TestImportStreamConflicts(t *testing.T) {
	ctx := context.Background()
	s := memstore.New()
	if _, err := s.ImportStream(ctx, strings.NewReader(importFile(nil))); err != nil {
		t.Fatal(err)
	}
	other := strings.NewReplacer(`"id": "imp"`, `"id": "other"`, "c0000000-", "d0000000-", `"u-1"`, `"u-2"`, `"jdoe"`, `"jdoe2"`,
		`"imp-hris"`, `"other-hris"`, `"imp-key-one"`, `"other-key"`, `"imp-read-token"`, `"other-read-token"`).Replace(importFile(nil))
	if _, err := s.ImportStream(ctx, strings.NewReader(other)); err != nil {
		t.Fatal(err)
	}
	// "other" exists now: an upsert of it that names imp's token secret
	// is a conflict, refused before anything of it changes.
	stolen := strings.NewReplacer(`"name": "Import Co"`, `"name": "Renamed"`, `"other-read-token"`, `"imp-read-token"`).Replace(other)
	_, err := s.ImportStream(ctx, strings.NewReader(stolen))
	if !errors.Is(err, procure.ErrConflict) || !strings.Contains(err.Error(), "tokens[0].token") {
		t.Fatalf("an import naming another community's token: %v; want ErrConflict naming tokens[0].token", err)
	}
	// So is a user id that imp holds.
	takenUser := strings.NewReplacer(`"name": "Import Co"`, `"name": "Renamed"`, `"u-2"`, `"u-1"`).Replace(other)
	_, err = s.ImportStream(ctx, strings.NewReader(takenUser))
	if !errors.Is(err, procure.ErrConflict) || !strings.Contains(err.Error(), "users[0].id") {
		t.Fatalf("an import naming another community's user id: %v; want ErrConflict naming users[0].id", err)
	}
	if c, _ := s.Community(ctx, "other"); c.Name != "Import Co" {
		t.Errorf("the refused import renamed the community to %q", c.Name)
	}
}

func pageOf(n int) paging.Request {
	return paging.Request{Size: n, Sort: supplier.ContactPaging.DefaultSort}
}

func contactNames(cs []supplier.Contact) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Name)
	}
	return out
}
