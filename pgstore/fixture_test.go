package pgstore_test

import (
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/procurekit/procure/datafile"
	"github.com/procurekit/procure/supplier"
	"github.com/procurekit/procure/user"
)

func contains(s, sub string) bool { return strings.Contains(s, sub) }

// id returns a fixed UUID whose last bytes are n, so ids sort by n.
func id(n int) uuid.UUID {
	var u uuid.UUID
	u[6], u[8] = 0x40, 0x80 // version 4, RFC 4122 variant
	u[14], u[15] = byte(n>>8), byte(n)
	return u
}

var t0 = time.Date(2026, 5, 1, 9, 30, 0, 0, time.UTC)

func at(minutes int) time.Time { return t0.Add(time.Duration(minutes) * time.Minute) }

// fixture is a small data file: two communities, with suppliers (one in
// full), tokens, a service account, users and a budget table. Demo data:
// the secrets are made up for tests.
func fixture() *datafile.File {
	days := 30
	full := supplier.Record{
		Detail: supplier.Detail{
			Summary: supplier.Summary{
				ID: id(1), CommunitySupplierID: supplier.NewText("CS-1"), SupplierID: supplier.NewText("ACME-01"), Name: supplier.NewText("Acme Tools"),
				ProfileType: supplier.ProfileCompany, LegalBusinessName: supplier.NewText("Acme Tools Ltd"),
				TaxIdentificationType: supplier.TaxEIN, TaxIdentificationNumber: supplier.NewText("12-3456789"),
				TinVerificationStatus: supplier.TinMatched, TinLastVerifiedDate: ptr(at(-60)),
				ConnectionState: supplier.Connected, BusinessNumber: supplier.NewText("BN1"), DefaultEmailAddress: supplier.NewText("ap@acme.example"),
				ModifiedDate: at(10), CreatedDate: at(0),
			},
			DefaultContact: &supplier.Contact{ID: id(101), Name: "Ann", ModifiedDate: at(1), CreatedDate: at(0),
				Phone: &supplier.Phone{Prefix: supplier.NewText("+64"), Number: supplier.NewText("211234")}, ManagedBy: supplier.ManagedBySupplier},
			DefaultRemittanceAddress: &supplier.RemittanceAddress{ID: id(201), CompanyName: supplier.NewText("Acme"), ModifiedDate: at(1), CreatedDate: at(0),
				Address: supplier.Address{Line1: "1 Main St", City: "Wellington", Country: "NZ", Region: &supplier.Region{Code: supplier.NewText("WGN")}}},
			BankAccount: &supplier.BankAccount{ID: id(301), Country: "NZ", BankName: supplier.NewText("Kiwi Bank"), BankAccountType: supplier.Checking},
			Emails:      &supplier.Emails{OrdersEmailAddress: supplier.NewText("orders@acme.example")},
			Settings: &supplier.Settings{
				PaymentTerm: &supplier.PaymentTerm{ID: id(401), Code: "N30", Active: true, Days: &days, TermType: supplier.DaysAfterInvoiceDate},
				BuyerGroups: []supplier.BuyerGroup{{ID: id(501), Name: "IT"}},
				Tags:        []supplier.Tag{{ID: id(601), Name: "preferred"}},
			},
		},
		Keywords: []string{"hammers", "Drills"},
		Contacts: []supplier.Contact{
			{ID: id(102), Name: "zed", ModifiedDate: at(2), CreatedDate: at(0)},
			{ID: id(101), Name: "Ann", ModifiedDate: at(1), CreatedDate: at(0), Email: supplier.NewText("ann@acme.example")},
			{ID: id(103), Name: "ann", ModifiedDate: at(3), CreatedDate: at(0)},
		},
		RemittanceAddresses: []supplier.RemittanceAddress{
			{ID: id(202), ModifiedDate: at(5), CreatedDate: at(0), Address: supplier.Address{Line1: "PO Box 1", City: "Auckland", Country: "NZ"}},
			{ID: id(201), CompanyName: supplier.NewText("Acme"), ModifiedDate: at(1), CreatedDate: at(0), Address: supplier.Address{Line1: "1 Main St", City: "Wellington", Country: "NZ"}},
			{ID: id(203), CompanyName: supplier.NewText("acme billing"), ModifiedDate: at(9), CreatedDate: at(0), Address: supplier.Address{Line1: "2 Main St", City: "Wellington", Country: "NZ"}},
		},
	}
	simple := func(n int, name string, modified int) supplier.Record {
		return supplier.Record{Detail: supplier.Detail{Summary: supplier.Summary{
			ID: id(n), Name: supplier.NewText(name), ProfileType: supplier.ProfileCompany, ModifiedDate: at(modified), CreatedDate: at(-n),
		}}}
	}
	return &datafile.File{Communities: []datafile.Community{
		{
			ID: "c1", Name: "Community One", Region: datafile.NZ,
			Tokens: []datafile.Token{
				{Token: "demo-token-c1", Scopes: []string{"suppliers:read"}},
				{Token: "demo-token-c1-revoked", Scopes: []string{"suppliers:read"}, Revoked: true, Expires: ptr(at(100))},
			},
			ServiceAccounts: []datafile.ServiceAccount{{ID: "sa-c1", Keys: []datafile.Key{{Key: "demo-key-old", Active: false}, {Key: "demo-key-new", Active: true}},
				AllowedIPs: []string{"10.0.0.0/8", "192.0.2.7"}}},
			AutoRoles: []string{"EMPLOYEE"},
			Suppliers: []supplier.Record{full, simple(2, "beta", 20), simple(3, "", 30), simple(4, "Gamma", 5)},
			Users: []user.User{
				{ID: "u1", Username: "JDoe", Email: "jdoe@example.com", Enabled: true, Roles: user.Codes("BUYER"),
					Attributes: []user.Attribute{{Name: "site", Value: "HQ"}}},
			},
			Budgets: []datafile.Budget{{Account: "6100-200", Budget: decimal.RequireFromString("1500.50")}, {Account: "7000", Budget: decimal.RequireFromString("-20")}},
		},
		{
			ID: "c2", Name: "Community Two", Region: datafile.AU,
			Tokens:    []datafile.Token{{Token: "demo-token-c2", Scopes: []string{"suppliers:read"}}},
			Suppliers: []supplier.Record{simple(9, "Other", 1)},
			Users:     []user.User{{ID: "u2", Username: "jdoe", Enabled: false}},
		},
	}}
}

func ptr[T any](v T) *T { return &v }
