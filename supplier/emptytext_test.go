package supplier_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/procurekit/procure/supplier"
)

// A record whose optional text fields are "" in every scope, one field
// absent beside each, and one key spelled in another letter case.
const emptyRecord = `{
  "id": "6f1c0c8e-6d44-4c55-9a47-0d1e7f7a6b01",
  "name": "",
  "SupplierId": "",
  "profileType": "COMPANY",
  "legalBusinessName": "Acme Pty Ltd",
  "defaultContact": {"id": "6f1c0c8e-6d44-4c55-9a47-0d1e7f7a6b02", "name": "Jo", "email": "", "phone": {"number": "", "prefix": "61"}},
  "defaultRemittanceAddress": {"id": "6f1c0c8e-6d44-4c55-9a47-0d1e7f7a6b03", "code": "", "address": {"line1": "1 St", "line2": "", "city": "X", "country": "AU", "region": {"code": ""}}},
  "bankAccount": {"id": "6f1c0c8e-6d44-4c55-9a47-0d1e7f7a6b04", "country": "AU", "bankName": "", "address": {"line1": "2 St", "city": "Y", "country": "AU", "postcode": ""}},
  "emails": {"ordersEmailAddress": ""},
  "settings": {"paymentTerm": {"id": "6f1c0c8e-6d44-4c55-9a47-0d1e7f7a6b05", "code": "N30", "termType": "IMMEDIATELY", "active": true, "description": ""}},
  "keywords": ["", "k"],
  "contacts": [
    {"id": "6f1c0c8e-6d44-4c55-9a47-0d1e7f7a6b06", "name": "A"},
    {"id": "6f1c0c8e-6d44-4c55-9a47-0d1e7f7a6b07", "name": "B", "email": "", "phone": {"extension": ""}}
  ],
  "remittanceAddresses": [
    {"id": "6f1c0c8e-6d44-4c55-9a47-0d1e7f7a6b08", "companyName": "", "address": {"line1": "3 St", "line3": "", "city": "Z", "country": "NZ"}}
  ]
}`

func TestMarkEmptyText(t *testing.T) {
	var r supplier.Record
	if err := json.Unmarshal([]byte(emptyRecord), &r); err != nil {
		t.Fatal(err)
	}
	if err := r.MarkEmptyText([]byte(emptyRecord)); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		what      string
		got, want supplier.TextPaths
	}{
		{"detail", r.EmptyText, supplier.TextPaths{"bankAccount.address.postcode", "bankAccount.bankName", "emails.ordersEmailAddress", "name", "settings.paymentTerm.description", "supplierId"}},
		{"default contact", r.DefaultContact.EmptyText, supplier.TextPaths{"email", "phone.number"}},
		{"default address", r.DefaultRemittanceAddress.EmptyText, supplier.TextPaths{"address.line2", "address.region.code", "code"}},
		{"contacts[0]", r.Contacts[0].EmptyText, nil},
		{"contacts[1]", r.Contacts[1].EmptyText, supplier.TextPaths{"email", "phone.extension"}},
		{"remittanceAddresses[0]", r.RemittanceAddresses[0].EmptyText, supplier.TextPaths{"address.line3", "companyName"}},
	} {
		if diff := cmp.Diff(c.want, c.got); diff != "" {
			t.Errorf("%s EmptyText (-want +got):\n%s", c.what, diff)
		}
	}
	// Marking again changes nothing; cleaning a marked record neither.
	before := r.EmptyText.Clone()
	if err := r.MarkEmptyText([]byte(emptyRecord)); err != nil {
		t.Fatal(err)
	}
	r.Normalize()
	if diff := cmp.Diff(before, r.EmptyText); diff != "" {
		t.Errorf("marking twice and normalising changed the list (-want +got):\n%s", diff)
	}
}

func TestMarkEmptyTextStandalone(t *testing.T) {
	var c supplier.Contact
	raw := `{"id": "6f1c0c8e-6d44-4c55-9a47-0d1e7f7a6b02", "name": "", "EMAIL": "", "phone": {"prefix": ""}}`
	if err := json.Unmarshal([]byte(raw), &c); err != nil {
		t.Fatal(err)
	}
	if err := c.MarkEmptyText([]byte(raw)); err != nil {
		t.Fatal(err)
	}
	// "name" is required: "" there is not a value to keep but an error
	// for Validate, so it is not listed.
	if diff := cmp.Diff(supplier.TextPaths{"email", "phone.prefix"}, c.EmptyText); diff != "" {
		t.Errorf("contact EmptyText (-want +got):\n%s", diff)
	}
	var a supplier.RemittanceAddress
	raw = `{"code": "", "address": {"region": {"name": ""}, "postcode": "2000"}}`
	if err := json.Unmarshal([]byte(raw), &a); err != nil {
		t.Fatal(err)
	}
	if err := a.MarkEmptyText([]byte(raw)); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(supplier.TextPaths{"address.region.name", "code"}, a.EmptyText); diff != "" {
		t.Errorf("address EmptyText (-want +got):\n%s", diff)
	}
}

func TestCleanEmptyText(t *testing.T) {
	d := supplier.Detail{Summary: supplier.Summary{
		Name:      "",
		FirstName: "Jo",
		// Unknown, not empty, absent parent, and out of order with a repeat.
		EmptyText: supplier.TextPaths{"nope", "firstName", "emails.ordersEmailAddress", "name", "businessNumber", "name"},
	}}
	d.CleanEmptyText()
	if diff := cmp.Diff(supplier.TextPaths{"businessNumber", "name"}, d.EmptyText); diff != "" {
		t.Errorf("cleaned (-want +got):\n%s", diff)
	}
	var none supplier.Contact
	none.EmptyText = supplier.TextPaths{}
	none.CleanEmptyText()
	if none.EmptyText != nil {
		t.Errorf("an empty list cleans to %#v; want nil", none.EmptyText)
	}
}

func TestTextPaths(t *testing.T) {
	var p supplier.TextPaths
	for _, k := range []string{"name", "email", "name", "code"} {
		p.Add(k)
	}
	if diff := cmp.Diff(supplier.TextPaths{"code", "email", "name"}, p); diff != "" {
		t.Errorf("Add (-want +got):\n%s", diff)
	}
	if !p.Has("email") || p.Has("phone") {
		t.Errorf("Has: email %v, phone %v; want true, false", p.Has("email"), p.Has("phone"))
	}
	q := p.Clone()
	q[0] = "changed"
	if p[0] != "code" {
		t.Error("Clone shares memory")
	}
}
