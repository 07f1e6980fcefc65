package supplier_test

import (
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/procurekit/procure"
	"github.com/procurekit/procure/internal/check"
	"github.com/procurekit/procure/supplier"
)

// validRecord returns a record with every optional part set and valid.
func validRecord() supplier.Record {
	at := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	days := 30
	addr := supplier.Address{Line1: "1 Queen Street", City: "Auckland", Country: "New Zealand", Postcode: supplier.NewText("1010"), Region: &supplier.Region{Name: supplier.NewText("Auckland"), Code: supplier.NewText("AUK")}}
	r := supplier.Record{
		Keywords: []string{"plumbing"},
		Contacts: []supplier.Contact{
			{ID: uuid.New(), Name: "Aroha", Email: supplier.NewText("aroha@example.com"), Phone: &supplier.Phone{Prefix: supplier.NewText("+64"), Number: supplier.NewText("95551234")}, ManagedBy: supplier.ManagedBySupplier, ModifiedDate: at, CreatedDate: at},
			{ID: uuid.New(), Name: "Bruce", ModifiedDate: at, CreatedDate: at},
		},
		RemittanceAddresses: []supplier.RemittanceAddress{{ID: uuid.New(), CompanyName: supplier.NewText("Kiwi Plumbing"), Address: addr, ModifiedDate: at, CreatedDate: at}},
	}
	d := &r.Detail
	d.ID = uuid.New()
	d.Name = supplier.NewText("Kiwi Plumbing")
	d.ProfileType = supplier.ProfileCompany
	d.TaxIdentificationType = supplier.TaxEIN
	d.TinVerificationStatus = supplier.TinPending
	d.ConnectionState = supplier.Connected
	d.DefaultEmailAddress = supplier.NewText("accounts@kiwi.example.com")
	d.ModifiedDate, d.CreatedDate = at, at
	d.DefaultContact = &r.Contacts[0]
	d.DefaultRemittanceAddress = &r.RemittanceAddresses[0]
	d.BankAccount = &supplier.BankAccount{ID: uuid.New(), Country: "NZ", Address: &addr, BankAccountType: supplier.Savings, DepositFormat: supplier.DepositCTX}
	d.Emails = &supplier.Emails{OrdersEmailAddress: supplier.NewText("orders@kiwi.example.com")}
	d.Settings = &supplier.Settings{
		PaymentTerm: &supplier.PaymentTerm{ID: uuid.New(), Code: "NET30", Active: true, Days: &days, TermType: supplier.OfFollowingMonth},
		BuyerGroups: []supplier.BuyerGroup{{ID: uuid.New(), Name: "Facilities"}},
		Tags:        []supplier.Tag{{ID: uuid.New(), Name: "Preferred"}},
	}
	return r
}

// fieldErrors returns the fields and rules of a validation error.
func fieldErrors(tb testing.TB, err error) map[string]string {
	tb.Helper()
	if err == nil {
		return nil
	}
	var v *procure.ValidationError
	if !errors.As(err, &v) {
		tb.Fatalf("error %v (%T) is not a *procure.ValidationError", err, err)
	}
	if !errors.Is(err, procure.ErrInvalid) {
		tb.Errorf("error %v does not match procure.ErrInvalid", err)
	}
	if v.Source != procure.SourceData {
		tb.Errorf("source %q, want %q", v.Source, procure.SourceData)
	}
	m := map[string]string{}
	for _, f := range v.Fields {
		m[f.Field] = f.Rule
	}
	return m
}

func TestValidateValid(t *testing.T) {
	r := validRecord()
	if err := r.Validate(); err != nil {
		t.Fatalf("Validate of a valid record: %v", err)
	}
	// Only id, profileType and the two dates are required.
	minimal := supplier.Record{}
	minimal.ID = uuid.New()
	minimal.ProfileType = supplier.ProfileIndividual
	minimal.ModifiedDate, minimal.CreatedDate = time.Now(), time.Now()
	if err := minimal.Validate(); err != nil {
		t.Fatalf("Validate of a minimal record: %v", err)
	}
}

func TestValidate(t *testing.T) {
	// docs: suppliers.md "SupplierSummary"-2.7 limits count characters, not bytes: "é" is two bytes
	// and "東" three, but one character each.
	e255, e256 := strings.Repeat("é", 255), strings.Repeat("é", 256)
	cjk255 := strings.Repeat("東", 255)
	a := func(n int) string { return strings.Repeat("a", n) }
	email := func(n int) string { return a(n-len("@example.com")) + "@example.com" }
	tests := []struct {
		name   string
		change func(r *supplier.Record)
		want   map[string]string // field -> rule; nil: valid
	}{
		{"255 two-byte characters", func(r *supplier.Record) { r.Name = supplier.NewText(e255) }, nil},
		{"255 three-byte characters", func(r *supplier.Record) { r.LegalBusinessName = supplier.NewText(cjk255) }, nil},
		{"256 two-byte characters", func(r *supplier.Record) { r.Name = supplier.NewText(e256) }, map[string]string{"name": "must be at most 255 characters"}},
		{"256 ASCII characters", func(r *supplier.Record) { r.SupplierID = supplier.NewText(a(256)) }, map[string]string{"supplierId": "must be at most 255 characters"}},
		{"phone prefix of 5", func(r *supplier.Record) { r.Contacts[0].Phone.Prefix = supplier.NewText("+6499") }, nil},
		{"phone prefix of 6", func(r *supplier.Record) { r.Contacts[0].Phone.Prefix = supplier.NewText("+64999") }, map[string]string{"defaultContact.phone.prefix": "must be at most 5 characters", "contacts[0].phone.prefix": "must be at most 5 characters"}},
		{"phone number of 21 characters", func(r *supplier.Record) {
			r.Contacts[1].Phone = &supplier.Phone{Number: supplier.NewText(strings.Repeat("٣", 21))}
		}, map[string]string{"contacts[1].phone.number": "must be at most 20 characters"}},
		{"payment term code of 35", func(r *supplier.Record) { r.Settings.PaymentTerm.Code = strings.Repeat("ü", 35) }, nil},
		{"payment term code of 36", func(r *supplier.Record) { r.Settings.PaymentTerm.Code = a(36) }, map[string]string{"settings.paymentTerm.code": "must be at most 35 characters"}},
		{"description of 2000", func(r *supplier.Record) {
			r.Settings.PaymentTerm.Description = supplier.NewText(strings.Repeat("é", 2000))
		}, nil},
		{"description of 2001", func(r *supplier.Record) { r.Settings.PaymentTerm.Description = supplier.NewText(a(2001)) }, map[string]string{"settings.paymentTerm.description": "must be at most 2000 characters"}},
		{"address line of 201", func(r *supplier.Record) { r.RemittanceAddresses[0].Address.Line2 = supplier.NewText(a(201)) }, map[string]string{"defaultRemittanceAddress.address.line2": "must be at most 200 characters", "remittanceAddresses[0].address.line2": "must be at most 200 characters"}},
		{"region code of 101", func(r *supplier.Record) {
			r.BankAccount.Address = &supplier.Address{Line1: "x", City: "y", Country: "z", Region: &supplier.Region{Code: supplier.NewText(a(101))}}
		}, map[string]string{"bankAccount.address.region.code": "must be at most 100 characters"}},
		{"postcode of 21", func(r *supplier.Record) { r.RemittanceAddresses[0].Address.Postcode = supplier.NewText(a(21)) }, map[string]string{"defaultRemittanceAddress.address.postcode": "must be at most 20 characters", "remittanceAddresses[0].address.postcode": "must be at most 20 characters"}},
		{"keyword of 256", func(r *supplier.Record) { r.Keywords = []string{"ok", a(256)} }, map[string]string{"keywords[1]": "must be at most 255 characters"}},
		{"tag name of 256", func(r *supplier.Record) { r.Settings.Tags[0].Name = e256 }, map[string]string{"settings.tags[0].name": "must be at most 255 characters"}},
		{"email of 64", func(r *supplier.Record) { r.DefaultEmailAddress = supplier.NewText(email(64)) }, nil},
		{"email of 256", func(r *supplier.Record) { r.Emails.InvoicingEmailAddress = supplier.NewText(email(256)) }, map[string]string{"emails.invoicingEmailAddress": "must be at most 255 characters"}},
		{"bad default email", func(r *supplier.Record) { r.DefaultEmailAddress = supplier.NewText("accounts at kiwi") }, map[string]string{"defaultEmailAddress": "must be a valid email address"}},
		{"bad orders email", func(r *supplier.Record) { r.Emails.OrdersEmailAddress = supplier.NewText("orders@") }, map[string]string{"emails.ordersEmailAddress": "must be a valid email address"}},
		{"bad contact email", func(r *supplier.Record) { r.Contacts[1].Email = supplier.NewText("@example.com") }, map[string]string{"contacts[1].email": "must be a valid email address"}},
		{"unknown profile type", func(r *supplier.Record) { r.ProfileType = "PERSON" }, map[string]string{"profileType": `must be one of COMPANY, INDIVIDUAL (got "PERSON")`}},
		{"missing profile type", func(r *supplier.Record) { r.ProfileType = "" }, map[string]string{"profileType": `must be one of COMPANY, INDIVIDUAL (got "")`}},
		{"unknown tax type", func(r *supplier.Record) { r.TaxIdentificationType = "VAT" }, map[string]string{"taxIdentificationType": `must be one of SSN, EIN, ITIN, GIIN, FOREIGN_TIN (got "VAT")`}},
		{"unknown connection state", func(r *supplier.Record) { r.ConnectionState = "connected" }, map[string]string{"connectionState": `must be one of CONNECTED, PENDING, DISCONNECTED (got "connected")`}},
		{"unknown deposit format", func(r *supplier.Record) { r.BankAccount.DepositFormat = "ACH" }, map[string]string{"bankAccount.depositFormat": `must be one of UNSPECIFIED, CCD, CTX (got "ACH")`}},
		{"unknown managedBy", func(r *supplier.Record) { r.Contacts[1].ManagedBy = "BUYER" }, map[string]string{"contacts[1].managedBy": `must be one of COMMUNITY, SUPPLIER (got "BUYER")`}},
		{"missing term type", func(r *supplier.Record) { r.Settings.PaymentTerm.TermType = "" }, map[string]string{"settings.paymentTerm.termType": `must be one of DAYS_AFTER_THE_INVOICE_DATE, OF_THE_CURRENT_MONTH, OF_THE_FOLLOWING_MONTH, IMMEDIATELY (got "")`}},
		{"missing modifiedDate", func(r *supplier.Record) { r.ModifiedDate = time.Time{} }, map[string]string{"modifiedDate": "is required"}},
		// Instants: the years 1 to 9999 in UTC (docs: values.md "Dates").
		{"tinLastVerifiedDate 9999-12-31T23:30:00-01:00 (year 10000 in UTC)", func(r *supplier.Record) {
			tin := time.Date(9999, 12, 31, 23, 30, 0, 0, time.FixedZone("", -3600))
			r.TinLastVerifiedDate = &tin
		}, map[string]string{"tinLastVerifiedDate": check.InstantRule}},
		{"tinLastVerifiedDate 9999-12-31T23:30:00+01:00", func(r *supplier.Record) {
			tin := time.Date(9999, 12, 31, 23, 30, 0, 0, time.FixedZone("", 3600))
			r.TinLastVerifiedDate = &tin
		}, nil},
		{"modifiedDate at the last nanosecond of 9999", func(r *supplier.Record) { r.ModifiedDate = check.MaxInstant }, nil},
		{"modifiedDate in year 10000", func(r *supplier.Record) { r.ModifiedDate = check.MaxInstant.Add(time.Nanosecond) }, map[string]string{"modifiedDate": check.InstantRule}},
		{"createdDate 0001-01-01T00:30:00+01:00 (year 0 in UTC)", func(r *supplier.Record) {
			r.CreatedDate = time.Date(1, 1, 1, 0, 30, 0, 0, time.FixedZone("", 3600))
		}, map[string]string{"createdDate": check.InstantRule}},
		{"contact createdDate in year 10000", func(r *supplier.Record) {
			r.Contacts[1].CreatedDate = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)
		}, map[string]string{"contacts[1].createdDate": check.InstantRule}},
		{"remittance address modifiedDate in year 10000", func(r *supplier.Record) {
			r.RemittanceAddresses[0].ModifiedDate = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)
		}, map[string]string{"defaultRemittanceAddress.modifiedDate": check.InstantRule, "remittanceAddresses[0].modifiedDate": check.InstantRule}},
		{"missing contact name", func(r *supplier.Record) { r.Contacts[1].Name = "" }, map[string]string{"contacts[1].name": "is required"}},
		{"missing city", func(r *supplier.Record) { r.RemittanceAddresses[0].Address.City = "" }, map[string]string{"defaultRemittanceAddress.address.city": "is required", "remittanceAddresses[0].address.city": "is required"}},
		{"missing bank country", func(r *supplier.Record) { r.BankAccount.Country = "" }, map[string]string{"bankAccount.country": "is required"}},
		{"nil supplier id", func(r *supplier.Record) { r.ID = uuid.Nil }, map[string]string{"id": "is required (a non-nil UUID)"}},
		{"nil buyer group id", func(r *supplier.Record) {
			r.Settings.BuyerGroups = append(r.Settings.BuyerGroups, supplier.BuyerGroup{Name: "IT"})
		}, map[string]string{"settings.buyerGroups[1].id": "is required (a non-nil UUID)"}},
		{"nil contact id", func(r *supplier.Record) { r.Contacts[1].ID = uuid.Nil }, map[string]string{"contacts[1].id": "is required (a non-nil UUID)"}},
		{"every broken rule is reported", func(r *supplier.Record) {
			r.Name = supplier.NewText(e256)
			r.Emails.RfqsEmailAddress = supplier.NewText("nope")
			r.ID = uuid.Nil
		}, map[string]string{"name": "must be at most 255 characters", "emails.rfqsEmailAddress": "must be a valid email address", "id": "is required (a non-nil UUID)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := validRecord()
			tt.change(&r)
			got := fieldErrors(t, r.Validate())
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("field errors (-want +got):\n%s", diff)
			}
		})
	}
	if utf8.RuneCountInString(e255) != 255 || len(e255) != 510 {
		t.Fatal("test data: want 255 characters of 2 bytes")
	}
}

func TestNormalize(t *testing.T) {
	nz := time.FixedZone("NZST", 12*3600)
	at := time.Date(2026, 5, 1, 21, 30, 0, 123456789, nz)
	r := validRecord()
	r.ModifiedDate, r.CreatedDate = at, at
	r.TinLastVerifiedDate = &at
	r.Contacts[0].ModifiedDate = at
	r.RemittanceAddresses[0].CreatedDate = at
	r.Normalize()
	want := time.Date(2026, 5, 1, 9, 30, 0, 123456000, time.UTC)
	for name, got := range map[string]time.Time{
		"modifiedDate": r.ModifiedDate, "createdDate": r.CreatedDate, "tinLastVerifiedDate": *r.TinLastVerifiedDate,
		"contacts[0].modifiedDate": r.Contacts[0].ModifiedDate, "remittanceAddresses[0].createdDate": r.RemittanceAddresses[0].CreatedDate,
	} {
		if !got.Equal(want) || got.Location() != time.UTC {
			t.Errorf("%s = %s, want %s", name, got.Format(time.RFC3339Nano), want.Format(time.RFC3339Nano))
		}
	}
	if at.Location() != nz || at.Nanosecond() != 123456789 {
		t.Errorf("Normalize changed the caller's TinLastVerifiedDate value through the pointer: %s", at)
	}
}

// NextStamp is the stamping rule of every store (docs: live-data.md
// "Stamping"): the clock when it is past the last stamp, else the next
// microsecond; never past supplier.LastStamp.
func TestNextStamp(t *testing.T) {
	at := time.Date(2026, 5, 1, 9, 30, 0, 0, time.UTC)
	us := time.Microsecond
	nz := time.FixedZone("NZST", 12*3600)
	last := supplier.LastStamp
	tests := []struct {
		name      string
		now, last time.Time
		want      time.Time // zero: ErrStampExhausted
	}{
		{"nothing stamped yet", at, time.Time{}, at},
		{"the clock moved on", at.Add(5 * us), at, at.Add(5 * us)},
		{"the clock in another zone, below a microsecond", at.Add(5*us + 999).In(nz), at, at.Add(5 * us)},
		{"the clock stood still", at, at, at.Add(us)},
		{"the clock went back", at.Add(-time.Hour), at, at.Add(us)},
		{"the clock within the last microsecond", at.Add(500), at, at.Add(us)},
		{"the last stamp between microseconds", at, at.Add(500), at.Add(us)},
		{"one microsecond left", at, last.Add(-us), last},
		{"the clock at the last microsecond", last, at, last},
		{"none left", at, last, time.Time{}},
		{"none left, the clock past 9999", last.Add(us), at, time.Time{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := supplier.NextStamp(tt.now, tt.last)
			if tt.want.IsZero() {
				if !errors.Is(err, supplier.ErrStampExhausted) || !errors.Is(err, procure.ErrConflict) {
					t.Fatalf("NextStamp = %v, %v; want an error matching ErrStampExhausted and procure.ErrConflict", got, err)
				}
				if !got.IsZero() {
					t.Errorf("NextStamp gave the stamp %v with its error", got)
				}
				return
			}
			if err != nil || !got.Equal(tt.want) || got.Location() != time.UTC {
				t.Errorf("NextStamp = %v, %v; want %v in UTC", got, err, tt.want)
			}
		})
	}
	if !supplier.LastStamp.Equal(check.MaxInstant.Truncate(us)) {
		t.Errorf("LastStamp %v is not check.MaxInstant at microsecond precision", supplier.LastStamp)
	}
}
