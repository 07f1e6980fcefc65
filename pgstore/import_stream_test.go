package pgstore_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/procurekit/procure"
	"github.com/procurekit/procure/pgstore"
	"github.com/procurekit/procure/supplier"
)

// emptyTextFile is a data file whose suppliers hold explicit empty
// strings ("") beside absent fields: both must come back as they were.
const emptyTextFile = `{"communities": [{
  "id": "e1", "name": "Empty", "region": "NZ",
  "tokens": [{"token": "tok-e1", "scopes": ["suppliers:read"]}],
  "suppliers": [
    {"id": "00000000-0000-4000-8000-000000000001", "name": "", "supplierId": "S-1", "legalBusinessName": "",
     "profileType": "COMPANY", "modifiedDate": "2026-05-01T00:00:00Z", "createdDate": "2026-01-01T00:00:00Z",
     "bankAccount": {"id": "00000000-0000-4000-8000-000000000301", "country": "NZ", "bankName": ""},
     "defaultContact": {"id": "00000000-0000-4000-8000-000000000101", "name": "Ann", "email": "", "phone": {"number": ""},
       "modifiedDate": "2026-05-01T00:00:00Z", "createdDate": "2026-01-01T00:00:00Z"},
     "keywords": ["alpha"],
     "contacts": [{"id": "00000000-0000-4000-8000-000000000102", "name": "Bob", "email": "",
       "modifiedDate": "2026-05-01T00:00:00Z", "createdDate": "2026-01-01T00:00:00Z"}],
     "remittanceAddresses": [{"id": "00000000-0000-4000-8000-000000000201", "companyName": "",
       "address": {"line1": "1 Main St", "line2": "", "city": "Wellington", "country": "NZ"},
       "modifiedDate": "2026-05-01T00:00:00Z", "createdDate": "2026-01-01T00:00:00Z"}]},
    {"id": "00000000-0000-4000-8000-000000000002", "name": "Plain", "profileType": "COMPANY",
     "modifiedDate": "2026-05-02T00:00:00Z", "createdDate": "2026-01-01T00:00:00Z"}
  ]}]}`

// ImportStream upserts a data file read as a stream, reports how many
// entities of each kind it held and its progress in bytes, and keeps ""
// apart from no value everywhere: the detail, its default contact, the
// list, contacts and addresses. Importing it again changes nothing.
func TestImportStreamRoundTripsEmptyText(t *testing.T) {
	ctx := context.Background()
	s, dsn := openStore(t, nil)
	var last int64
	counts, err := s.ImportStreamWith(ctx, bytes.NewReader([]byte(emptyTextFile)), pgstoreImportOptions(func(n int64) { last = n }))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"communities": 1, "suppliers": 2, "contacts": 1, "remittanceAddresses": 1,
		"tokens": 1, "serviceAccounts": 0, "users": 0, "budgets": 0}
	if diff := cmp.Diff(want, counts.Totals()); diff != "" {
		t.Errorf("counts (-want +got):\n%s", diff)
	}
	if sum := counts.Sum(); sum.Updated+sum.Unchanged != 0 {
		t.Errorf("counts of a first import: %v; want everything created", counts)
	}
	if last != int64(len(emptyTextFile)) {
		t.Errorf("progress ended at %d bytes; want %d", last, len(emptyTextFile))
	}

	empty := supplier.NewText("")
	d, err := s.Supplier(ctx, "e1", id(1))
	if err != nil {
		t.Fatal(err)
	}
	if d.Name != empty || d.LegalBusinessName != empty || d.BankAccount.BankName != empty || !d.FirstName.IsZero() {
		t.Errorf("detail: name %q, legalBusinessName %q, bankName %q, firstName zero %v; want \"\" three times, then no value",
			d.Name, d.LegalBusinessName, d.BankAccount.BankName, d.FirstName.IsZero())
	}
	if c := d.DefaultContact; c.Email != empty || c.Phone.Number != empty || !c.Phone.Prefix.IsZero() {
		t.Errorf("default contact: %+v; want email and phone.number \"\", no phone.prefix", c)
	}
	p, err := s.ListSuppliers(ctx, "e1", supplier.ListQuery{Page: firstPage()})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Content) != 2 || p.Content[1].Name != empty || p.Content[1].LegalBusinessName != empty ||
		!p.Content[0].LegalBusinessName.IsZero() {
		t.Errorf("list: %+v; want Plain with no legalBusinessName, then the supplier with name and legalBusinessName \"\"", p.Content)
	}
	cs, err := s.ListContacts(ctx, "e1", id(1), firstPage())
	if err != nil || len(cs.Content) != 1 || cs.Content[0].Email != empty {
		t.Errorf("contacts: %+v, %v; want Bob with email \"\"", cs.Content, err)
	}
	as, err := s.ListRemittanceAddresses(ctx, "e1", id(1), supplier.AddressQuery{Page: firstPage()})
	if err != nil || len(as.Content) != 1 || as.Content[0].CompanyName != empty || as.Content[0].Address.Line2 != empty || !as.Content[0].Code.IsZero() {
		t.Errorf("addresses: %+v, %v; want companyName and address.line2 \"\", no code", as.Content, err)
	}

	before := snapshot(t, dsn)
	if _, err := s.ImportStream(ctx, bytes.NewReader([]byte(emptyTextFile))); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(before, snapshot(t, dsn)); diff != "" {
		t.Errorf("re-import changed the database (-before +after):\n%s", diff)
	}

	// A write of the same content stamps nothing; dropping an explicit
	// "" is a change.
	r := supplier.Record{Detail: d, Keywords: []string{"alpha"}}
	same, err := s.PutSupplier(ctx, "e1", r)
	if err != nil || !same.ModifiedDate.Equal(d.ModifiedDate) {
		t.Errorf("equal write: modifiedDate %v, %v; want %v kept", same.ModifiedDate, err, d.ModifiedDate)
	}
	r.LegalBusinessName = supplier.Text{}
	changed, err := s.PutSupplier(ctx, "e1", r)
	if err != nil || !changed.ModifiedDate.After(d.ModifiedDate) {
		t.Errorf("write without legalBusinessName \"\": modifiedDate %v, %v; want a new stamp", changed.ModifiedDate, err)
	}
	if got, err := s.Supplier(ctx, "e1", id(1)); err != nil || !got.LegalBusinessName.IsZero() || got.Name != empty {
		t.Errorf("after the write: legalBusinessName %q, name %q, %v; want no value and \"\"", got.LegalBusinessName, got.Name, err)
	}
}

func pgstoreImportOptions(progress func(int64)) pgstore.ImportOptions {
	return pgstore.ImportOptions{Progress: progress}
}

// A streamed file that fails part-way changes nothing - not even the
// communities before the bad entry - and the error names the entry.
func TestImportStreamFailureChangesNothing(t *testing.T) {
	ctx := context.Background()
	s, dsn := openStore(t, fixture())
	before := snapshot(t, dsn)
	file := `{"communities": [
	  {"id": "n1", "name": "New", "region": "NZ", "suppliers": [
	    {"id": "00000000-0000-4000-8000-000000000051", "name": "Fresh", "profileType": "COMPANY",
	     "modifiedDate": "2026-05-01T00:00:00Z", "createdDate": "2026-01-01T00:00:00Z"}]},
	  {"id": "n2", "name": "Thief", "region": "AU", "tokens": [{"token": "demo-token-c1", "scopes": ["suppliers:read"]}]}]}`
	_, err := s.ImportStream(ctx, bytes.NewReader([]byte(file)))
	if !errors.Is(err, procure.ErrConflict) || !strings.HasPrefix(err.Error(), "communities[1].tokens[0].token: ") {
		t.Fatalf("err = %v; want procure.ErrConflict naming communities[1].tokens[0].token", err)
	}
	if contains(err.Error(), "demo-token-c1") {
		t.Errorf("the error shows the token: %v", err)
	}
	if diff := cmp.Diff(before, snapshot(t, dsn)); diff != "" {
		t.Errorf("a failed import changed the database (-before +after):\n%s", diff)
	}

	// Text PostgreSQL cannot hold is the file's fault too.
	bad := `{"communities": [{"id": "n3", "region": "NZ", "suppliers": [
	    {"id": "00000000-0000-4000-8000-000000000052", "name": "nul\u0000here", "profileType": "COMPANY",
	     "modifiedDate": "2026-05-01T00:00:00Z", "createdDate": "2026-01-01T00:00:00Z"}]}]}`
	_, err = s.ImportStream(ctx, bytes.NewReader([]byte(bad)))
	var verr *procure.ValidationError
	if !errors.As(err, &verr) || !contains(err.Error(), "communities[0].suppliers[0].name") {
		t.Fatalf("NUL in a name: err = %v; want a validation error naming communities[0].suppliers[0].name", err)
	}
}
