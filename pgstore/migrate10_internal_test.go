package pgstore

import (
	"context"
	"testing"

	"github.com/google/uuid"

	"github.com/procurekit/procure/paging"
	"github.com/procurekit/procure/supplier"
)

// A database at schema version 9 whose empty_text columns list explicit
// empty strings migrates to 0010: each listed field is "" in its document,
// at any depth (the details, the default contact and address, contacts,
// addresses), fields not listed stay no value, a document with nothing
// listed is left as it was, and the columns are gone.
func TestMigrate10FromVersion9WithEmptyText(t *testing.T) {
	ctx := context.Background()
	dsn, pool, _ := databaseBefore(t, 10)
	const untouched = `{"bankAccount":{"id":"00000000-0000-4000-8000-000000000302","country":"AU"}}`
	for _, sql := range []string{
		`INSERT INTO communities (id, name, region, supplier_count, last_modified) VALUES ('c1', 'One', 'NZ', 2, '2026-05-03 00:00:00+00')`,
		`INSERT INTO suppliers (community_id, id, name, name_key, legal_business_name, profile_type, modified_date, created_date, keywords, details, empty_text) VALUES
			('c1', '00000000-0000-4000-8000-000000000001', '', NULL, NULL, 'COMPANY', '2026-05-01 10:00:00+00', '2026-01-01 00:00:00+00', '{}',
			 '{"defaultContact":{"id":"00000000-0000-4000-8000-000000000101","name":"Ann","phone":{"prefix":"+64"},"modifiedDate":"2026-05-01T00:00:00Z","createdDate":"2026-01-01T00:00:00Z"},
			   "defaultRemittanceAddress":{"id":"00000000-0000-4000-8000-000000000201","address":{"line1":"1","city":"W","country":"NZ","region":{}},"modifiedDate":"2026-05-01T00:00:00Z","createdDate":"2026-01-01T00:00:00Z"},
			   "bankAccount":{"id":"00000000-0000-4000-8000-000000000301","country":"NZ","address":{"line1":"2","city":"A","country":"NZ"}},
			   "emails":{"rfqsEmailAddress":"rfq@example.com"},
			   "defaultContactEmptyText":["email","phone.number"],
			   "defaultRemittanceAddressEmptyText":["address.region.code","code"]}',
			 '{bankAccount.address.postcode,bankAccount.bankName,emails.ordersEmailAddress,name}'),
			('c1', '00000000-0000-4000-8000-000000000002', 'Plain', 'plain', NULL, 'COMPANY', '2026-05-02 10:00:00+00', '2026-01-02 00:00:00+00', '{}',
			 '` + untouched + `', NULL)`,
		`INSERT INTO supplier_contacts (community_id, supplier_id, id, name_key, doc, empty_text) VALUES
			('c1', '00000000-0000-4000-8000-000000000001', '00000000-0000-4000-8000-000000000102', 'bob',
			 '{"id":"00000000-0000-4000-8000-000000000102","name":"Bob","phone":{},"modifiedDate":"2026-05-01T00:00:00Z","createdDate":"2026-01-01T00:00:00Z"}',
			 '{email,phone.extension}')`,
		`INSERT INTO remittance_addresses (community_id, supplier_id, id, company_name_key, modified_date, doc, empty_text) VALUES
			('c1', '00000000-0000-4000-8000-000000000001', '00000000-0000-4000-8000-000000000202', NULL, '2026-05-01 00:00:00+00',
			 '{"id":"00000000-0000-4000-8000-000000000202","address":{"line1":"3","city":"C","country":"NZ"},"modifiedDate":"2026-05-01T00:00:00Z","createdDate":"2026-01-01T00:00:00Z"}',
			 '{address.line2,companyName}')`,
	} {
		if _, err := pool.Exec(ctx, sql); err != nil {
			t.Fatalf("%.60s: %v", sql, err)
		}
	}

	s, err := Open(ctx, dsn)
	if err != nil {
		t.Fatalf("Open on a version-9 database: %v", err)
	}
	defer s.Close()
	empty := supplier.NewText("")
	d, err := s.Supplier(ctx, "c1", uuid.MustParse("00000000-0000-4000-8000-000000000001"))
	if err != nil {
		t.Fatal(err)
	}
	texts := map[string]supplier.Text{
		"name":                                    d.Name,
		"legalBusinessName":                       d.LegalBusinessName,
		"bankAccount.bankName":                    d.BankAccount.BankName,
		"bankAccount.accountName":                 d.BankAccount.AccountName,
		"bankAccount.address.postcode":            d.BankAccount.Address.Postcode,
		"emails.ordersEmailAddress":               d.Emails.OrdersEmailAddress,
		"emails.rfqsEmailAddress":                 d.Emails.RfqsEmailAddress,
		"defaultContact.email":                    d.DefaultContact.Email,
		"defaultContact.phone.number":             d.DefaultContact.Phone.Number,
		"defaultContact.phone.prefix":             d.DefaultContact.Phone.Prefix,
		"defaultRemittanceAddress.code":           d.DefaultRemittanceAddress.Code,
		"defaultRemittanceAddress.companyName":    d.DefaultRemittanceAddress.CompanyName,
		"defaultRemittanceAddress.address.region": d.DefaultRemittanceAddress.Address.Region.Code,
	}
	want := map[string]supplier.Text{
		"name": empty, "legalBusinessName": {}, "bankAccount.bankName": empty, "bankAccount.accountName": {},
		"bankAccount.address.postcode": empty, "emails.ordersEmailAddress": empty, "emails.rfqsEmailAddress": supplier.NewText("rfq@example.com"),
		"defaultContact.email": empty, "defaultContact.phone.number": empty, "defaultContact.phone.prefix": supplier.NewText("+64"),
		"defaultRemittanceAddress.code": empty, "defaultRemittanceAddress.companyName": {}, "defaultRemittanceAddress.address.region": empty,
	}
	for path, w := range want {
		if got := texts[path]; got != w {
			t.Errorf("%s = %q (no value: %v); want %q (no value: %v)", path, got, got.IsZero(), w, w.IsZero())
		}
	}
	cs, err := s.ListContacts(ctx, "c1", uuid.MustParse("00000000-0000-4000-8000-000000000001"), paging.Request{Size: 10})
	if err != nil || len(cs.Content) != 1 {
		t.Fatalf("contacts: %+v, %v", cs.Content, err)
	}
	if c := cs.Content[0]; c.Email != empty || c.Phone.Extension != empty || !c.Phone.Number.IsZero() {
		t.Errorf("contact: %+v; want email and phone.extension \"\", no phone.number", c)
	}
	as, err := s.ListRemittanceAddresses(ctx, "c1", uuid.MustParse("00000000-0000-4000-8000-000000000001"), supplier.AddressQuery{Page: paging.Request{Size: 10}})
	if err != nil || len(as.Content) != 1 {
		t.Fatalf("addresses: %+v, %v", as.Content, err)
	}
	if a := as.Content[0]; a.CompanyName != empty || a.Address.Line2 != empty || !a.Code.IsZero() || !a.Address.Line3.IsZero() {
		t.Errorf("address: %+v; want companyName and address.line2 \"\", no code or line3", a)
	}
	var raw string
	if err := pool.QueryRow(ctx, `SELECT details::text FROM suppliers WHERE id = $1`, uuid.MustParse("00000000-0000-4000-8000-000000000002")).Scan(&raw); err != nil || raw != untouched {
		t.Errorf("a document with nothing listed: %s, %v; want it as it was: %s", raw, err, untouched)
	}
	var n int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM information_schema.columns WHERE column_name = 'empty_text'`).Scan(&n); err != nil || n != 0 {
		t.Errorf("%d empty_text columns left, %v; want none", n, err)
	}
}
