package supplier_test

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/procurekit/procure"
	"github.com/procurekit/procure/internal/check"
	"github.com/procurekit/procure/supplier"
)

// StampWrite is the stamping rule of every Writer (docs: live-data.md
// "Stamping"): the supplier's modifiedDate is the stamp and its
// createdDate the stored one's; the default contact and address keep
// their dates while unchanged, and a changed one keeps its createdDate
// only when it is the same contact or address.
func TestStampWrite(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	t1 := t0.Add(time.Hour)
	stamp := t0.Add(48 * time.Hour)
	cid, aid := uuid.New(), uuid.New()
	var stored supplier.Detail
	stored.ID, stored.Name, stored.ModifiedDate, stored.CreatedDate = uuid.New(), supplier.NewText("A"), t1, t0
	stored.DefaultContact = &supplier.Contact{ID: cid, Name: "C", ModifiedDate: t1, CreatedDate: t0}
	stored.DefaultRemittanceAddress = &supplier.RemittanceAddress{ID: aid, CompanyName: supplier.NewText("A"), ModifiedDate: t1, CreatedDate: t0}
	type dates struct{ Modified, Created time.Time }
	type want struct{ Supplier, Contact, Address dates }
	tests := []struct {
		name   string
		old    bool
		change func(d *supplier.Detail)
		want   want
	}{
		{"new supplier", false, func(*supplier.Detail) {},
			want{dates{stamp, stamp}, dates{stamp, stamp}, dates{stamp, stamp}}},
		{"name changed, parts as stored (their dates in the write ignored)", true, func(d *supplier.Detail) {
			d.Name = supplier.NewText("B")
			d.DefaultContact.ModifiedDate, d.DefaultContact.CreatedDate = time.Time{}, time.Time{}
		}, want{dates{stamp, t0}, dates{t1, t0}, dates{t1, t0}}},
		{"contact changed", true, func(d *supplier.Detail) { d.DefaultContact.Name = "D" },
			want{dates{stamp, t0}, dates{stamp, t0}, dates{t1, t0}}},
		{"another contact, another address", true, func(d *supplier.Detail) {
			d.DefaultContact.ID, d.DefaultRemittanceAddress.ID = uuid.New(), uuid.New()
		}, want{dates{stamp, t0}, dates{stamp, stamp}, dates{stamp, stamp}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			old := stored.Clone()
			w := old.Clone()
			tt.change(&w)
			var o *supplier.Detail
			if tt.old {
				o = &old
			}
			w.StampWrite(o, stamp)
			got := want{
				dates{w.ModifiedDate, w.CreatedDate},
				dates{w.DefaultContact.ModifiedDate, w.DefaultContact.CreatedDate},
				dates{w.DefaultRemittanceAddress.ModifiedDate, w.DefaultRemittanceAddress.CreatedDate},
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("dates (-want +got):\n%s", diff)
			}
			if !old.Equal(&stored) {
				t.Error("StampWrite changed the stored detail")
			}
		})
	}
	c := supplier.Contact{ID: cid, Name: "C"}
	c.StampWrite(&supplier.Contact{ID: cid, CreatedDate: t0}, stamp)
	if !c.ModifiedDate.Equal(stamp) || !c.CreatedDate.Equal(t0) {
		t.Errorf("a replaced contact: modified %s, created %s; want %s, %s", c.ModifiedDate, c.CreatedDate, stamp, t0)
	}
	a := supplier.RemittanceAddress{ID: aid}
	a.StampWrite(nil, stamp)
	if !a.ModifiedDate.Equal(stamp) || !a.CreatedDate.Equal(stamp) {
		t.Errorf("a new address: modified %s, created %s; want both %s", a.ModifiedDate, a.CreatedDate, stamp)
	}
}

// bodyFieldErrors is fieldErrors for an error about a request body.
func bodyFieldErrors(tb testing.TB, err error) map[string]string {
	tb.Helper()
	var v *procure.ValidationError
	if !errors.As(err, &v) || v.Source != procure.SourceBody {
		tb.Fatalf("error %v (%T) is not a *procure.ValidationError about the body", err, err)
	}
	m := map[string]string{}
	for _, f := range v.Fields {
		m[f.Field] = f.Rule
	}
	return m
}

// Text that a store cannot hold (NUL, invalid UTF-8) breaks a rule of
// Validate, at any depth, named by its path; so does it for the parts a
// write checks on their own.
func TestValidateStorable(t *testing.T) {
	tests := []struct {
		name   string
		change func(r *supplier.Record)
		want   map[string]string
	}{
		{"NUL in a name", func(r *supplier.Record) { r.Name = supplier.NewText("a\x00b") }, map[string]string{"name": check.StorableRule}},
		{"invalid UTF-8 in a keyword", func(r *supplier.Record) { r.Keywords = []string{"ok", "\xff"} },
			map[string]string{"keywords[1]": check.StorableRule}},
		{"NUL in a nested field", func(r *supplier.Record) { r.BankAccount.BankName = supplier.NewText("x\x00") },
			map[string]string{"bankAccount.bankName": check.StorableRule}},
		{"invalid UTF-8 in a contact's phone", func(r *supplier.Record) { r.Contacts[1].Phone = &supplier.Phone{Number: supplier.NewText("\xc3")} },
			map[string]string{"contacts[1].phone.number": check.StorableRule}},
		{"a field broken twice is named once", func(r *supplier.Record) { r.Emails.OrdersEmailAddress = supplier.NewText("\x00") },
			map[string]string{"emails.ordersEmailAddress": "must be a valid email address"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := validRecord()
			tt.change(&r)
			if diff := cmp.Diff(tt.want, fieldErrors(t, r.Validate())); diff != "" {
				t.Errorf("field errors (-want +got):\n%s", diff)
			}
		})
	}
	c := supplier.Contact{ID: uuid.New(), Name: "n\x00"}
	if got := bodyFieldErrors(t, supplier.ValidateContact(&c)); got["name"] != check.StorableRule {
		t.Errorf("ValidateContact: %v; want name: %s", got, check.StorableRule)
	}
	a := supplier.RemittanceAddress{ID: uuid.New(), Address: supplier.Address{Line1: "1", City: "\xc3", Country: "NZ"}}
	if got := bodyFieldErrors(t, supplier.ValidateRemittanceAddress(&a)); got["address.city"] != check.StorableRule {
		t.Errorf("ValidateRemittanceAddress: %v; want address.city: %s", got, check.StorableRule)
	}
}

// A supplier's contacts, and its addresses, have ids of their own.
func TestValidateDuplicateIDs(t *testing.T) {
	r := validRecord()
	r.Contacts[1].ID = r.Contacts[0].ID
	r.RemittanceAddresses = append(r.RemittanceAddresses, r.RemittanceAddresses[0])
	want := map[string]string{
		"contacts[1].id":            "duplicate contact id " + r.Contacts[0].ID.String() + " within the supplier",
		"remittanceAddresses[1].id": "duplicate remittance address id " + r.RemittanceAddresses[0].ID.String() + " within the supplier",
	}
	if diff := cmp.Diff(want, fieldErrors(t, r.Validate())); diff != "" {
		t.Errorf("field errors (-want +got):\n%s", diff)
	}
}
