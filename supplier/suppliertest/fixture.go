package suppliertest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/procurekit/procure/datafile"
	"github.com/procurekit/procure/supplier"
)

// The two communities of the fixture. C1 holds the suppliers that exercise
// the rules; C2 holds a few that look like C1's (same names, same
// supplierIds) so that any leak between communities shows.
const (
	C1 = "suppliertest-c1"
	C2 = "suppliertest-c2"
)

// ID returns the fixture's id for a name: a fixed, random-looking UUID, so
// that id order (the tie-break) differs from the order of the fixture.
func ID(name string) uuid.UUID {
	return uuid.NewSHA1(uuid.NameSpaceURL, []byte("procurekit/suppliertest/"+name))
}

// Instants the tests filter on. Target is the modifiedDate of "Timber
// Yard" and of "Equal Modified A/B": it has microseconds, so that "one
// microsecond later" is a real boundary.
var (
	base   = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	Target = base.Add(30*time.Hour + 123456*time.Microsecond)
	// nanoModified has nanoseconds: a data file keeps only microseconds
	// (datafile.Parse normalises), so the stored value is nanoStored.
	nanoModified = base.Add(40*time.Hour + 654321987*time.Nanosecond)
	nanoStored   = base.Add(40*time.Hour + 654321*time.Microsecond)
	nz           = time.FixedZone("NZDT", 13*3600)
)

type spec struct {
	key        string // the name ID derives the id from
	name       string
	legal      string
	supplierID string
	keywords   []string
	created    time.Time
	modified   time.Time
	individual bool
	full       bool // every optional part of SupplierDetail
	contacts   []string
	addresses  []addrSpec
}

type addrSpec struct {
	company  string
	modified time.Time
}

// c1Specs are the suppliers of C1. Each line exercises a rule; the
// generated ones below add volume and spread.
func c1Specs() []spec {
	h := func(n int) time.Time { return base.Add(time.Duration(n) * time.Hour) }
	specs := []spec{
		// Names equal but for case: ties broken on id in both directions.
		{key: "alpha-1", name: "Alpha Supplies", legal: "Alpha Supplies Limited", supplierID: "SUP-0001", keywords: []string{"stationery"}, created: h(-48), modified: h(1), full: true,
			contacts: []string{"bob", "Alice", "alice", "ALICE", "Zoë", "carol", "Émile", "bob"},
			addresses: []addrSpec{
				{"", h(3)}, {"Alpha North", h(2)}, {"alpha north", h(2)}, {"Alpha South", Target},
				{"", Target}, {"Zed Holdings", h(5)}, {"Ärzte Haus", Target.Add(time.Microsecond)},
			}},
		{key: "alpha-2", name: "alpha supplies", supplierID: "SUP-0002", created: h(-48), modified: h(1)},
		{key: "alpha-3", name: "ALPHA SUPPLIES", supplierID: "SUP-0003", created: h(-47), modified: h(2)},
		// A name that is a prefix of others sorts first.
		{key: "alpha-short", name: "alpha", supplierID: "SUP-0004", created: h(-46), modified: h(2)},
		// Matches "beta" on name, legal name, keyword and supplierId:
		// counted once.
		{key: "beta", name: "Beta Traders", legal: "Beta Traders Pty Ltd", supplierID: "BETA-77", keywords: []string{"timber", "Beta", "beta-wood"}, created: h(-40), modified: h(3), full: true,
			contacts: []string{"Dana"}, addresses: []addrSpec{{"Beta Traders", h(4)}}},
		// Matches "beta" only through its supplierId.
		{key: "beta-id", name: "Kauri Timber", supplierID: "beta-78", keywords: []string{"Timberland"}, created: h(-40), modified: h(3)},
		// Matches "gamma" only through its legal business name.
		{key: "gamma-legal", name: "Delta Freight", legal: "Gamma Holdings Ltd", supplierID: "SUP-0010", created: h(-39), modified: h(4)},
		// Matches "pipes" only through a keyword.
		{key: "keyword", name: "Acme", legal: "Acme Corporation", supplierID: "ACM-001", keywords: []string{"plumbing", "Pipes", "PIPES"}, created: h(-38), modified: h(6)},
		// Unicode: accents and case ignored first.
		{key: "uber-1", name: "Über Freight", supplierID: "SUP-0020", created: h(-30), modified: h(7)},
		{key: "uber-2", name: "über cafe", supplierID: "SUP-0021", created: h(-30), modified: h(7)},
		{key: "okologie", name: "Ökologie GmbH", created: h(-29), modified: h(8)},
		{key: "eclair", name: "Éclair Bakery", keywords: []string{"bakery"}, created: h(-28), modified: h(8)},
		{key: "tokyo", name: "東京 Trading", supplierID: "JP-1", created: h(-27), modified: h(9)},
		{key: "zeta", name: "Zeta Zinc", created: h(-26), modified: h(9)},
		// Names as people read them (docs: paging.md "Ordering"): accents
		// and case are ignored first, so Ō sorts among the O's, before
		// Zenith; then the plain letter before the accented one, lower
		// case before upper. "ota", "OTA" and "ŌTA" find all three.
		{key: "otaki", name: "Ōtaki Organics", legal: "Ōtaki Organics Limited", supplierID: "ŌTK-1", keywords: []string{"Kūmara"}, created: h(-18), modified: h(13)},
		{key: "otaki-plain", name: "Otaki Organics", created: h(-18), modified: h(13)},
		{key: "otaki-lower", name: "otaki organics", created: h(-18), modified: h(14)},
		{key: "zenith", name: "Zenith Scientific", created: h(-17), modified: h(14)},
		// "mu" and "MÜ" find Müller (on its name, legal name and
		// supplierId) and Mueller; "mue" only Mueller.
		{key: "muller", name: "Müller GmbH", legal: "Müller & Söhne KG", supplierID: "MÜ-1", created: h(-17), modified: h(15)},
		{key: "mueller", name: "Mueller Tools", created: h(-16), modified: h(15)},
		// Case folding, not lower-casing: ß matches "ss" both ways.
		{key: "strasse", name: "Straßenbau Nord", created: h(-16), modified: h(16)},
		{key: "strasse-legal", name: "Road Works", legal: "STRASSE Holdings", keywords: []string{"Straßenbau"}, created: h(-15), modified: h(16)},
		// A supplierId and a keyword with accents.
		{key: "eco", name: "Green Goods", supplierID: "ÉCO-42", keywords: []string{"Çelik"}, created: h(-15), modified: h(17)},
		// Leading digits and punctuation sort before letters.
		{key: "digits", name: "3M Australia", supplierID: "3M-AU", created: h(-25), modified: h(10)},
		{key: "brackets", name: "(Brackets) Ltd", created: h(-25), modified: h(10)},
		// No name: after all others in both directions. Found by the
		// other fields.
		{key: "noname-1", legal: "Nameless Legal One", supplierID: "SUP-0030", created: h(-24), modified: h(11), individual: true},
		{key: "noname-2", supplierID: "SUP-0031", keywords: []string{"anonymous"}, created: h(-24), modified: Target},
		{key: "noname-3", created: h(-23), modified: h(12), individual: true},
		// The modifiedSince boundary: several suppliers at Target exactly.
		{key: "timber-yard", name: "Timber Yard", keywords: []string{"timber"}, supplierID: "TY-1", created: h(-22), modified: Target, full: true,
			contacts: []string{"Wiremu", "wiremu"}, addresses: []addrSpec{{"Timber Yard", Target}, {"Timber Yard Annex", h(31)}, {"Timber Yard", h(32)}}},
		{key: "equal-a", name: "Equal Modified", supplierID: "EQ-A", created: h(-21), modified: Target},
		{key: "equal-b", name: "Equal Modified", supplierID: "EQ-B", created: h(-21), modified: Target},
		{key: "one-micro-later", name: "One Micro Later", created: h(-20), modified: Target.Add(time.Microsecond)},
		{key: "one-micro-earlier", name: "One Micro Earlier", created: h(-20), modified: Target.Add(-time.Microsecond)},
		{key: "nano", name: "Nano Seconds", created: h(-19), modified: nanoModified},
		// A date written in another zone compares as the same instant.
		{key: "zoned", name: "Zoned Time", created: h(-19).In(nz), modified: h(35).In(nz)},
	}
	// Volume: suppliers with spread and repeated dates, mixed case and
	// shared prefixes, each with a contact and an address.
	words := []string{"Harbour", "harbour", "Kiwi", "Southern", "Pacific", "Totara", "Matai", "Rimu", "Coastal", "Summit"}
	kinds := []string{"Logistics", "Plumbing", "Electrical", "Foods", "Print", "Security"}
	for i := 0; i < 40; i++ {
		name := fmt.Sprintf("%s %s %02d", words[i%len(words)], kinds[(i*7)%len(kinds)], i%17)
		s := spec{
			key:        fmt.Sprintf("gen-%02d", i),
			name:       name,
			supplierID: fmt.Sprintf("GEN-%03d", (i*37)%100),
			keywords:   []string{kinds[(i*5)%len(kinds)], words[(i*3)%len(words)]},
			created:    base.Add(-time.Duration(i%6) * 24 * time.Hour),
			modified:   base.Add(time.Duration((i*7)%13)*time.Hour + time.Duration(i%3)*time.Microsecond),
			contacts:   []string{fmt.Sprintf("Contact %02d", i%4)},
			addresses:  []addrSpec{{fmt.Sprintf("%s Remittance", words[(i+1)%len(words)]), base.Add(time.Duration(i) * time.Minute)}},
		}
		if i%4 == 0 {
			s.legal = name + " Limited"
		}
		if i%9 == 0 {
			s.supplierID = ""
		}
		specs = append(specs, s)
	}
	return specs
}

// c2Specs look like C1's suppliers on purpose.
func c2Specs() []spec {
	return []spec{
		{key: "c2-alpha", name: "Alpha Supplies", supplierID: "SUP-0001", keywords: []string{"timber"}, created: base, modified: Target, full: true,
			contacts: []string{"Other Community Contact"}, addresses: []addrSpec{{"Other Community", Target}}},
		{key: "c2-beta", name: "Beta Traders", supplierID: "BETA-77", created: base, modified: base.Add(time.Hour)},
		{key: "c2-noname", supplierID: "C2-3", created: base, modified: base},
	}
}

// text is the Text of s, no value when s is "": a spec leaves out what
// the supplier has none of.
func text(s string) supplier.Text {
	if s == "" {
		return supplier.Text{}
	}
	return supplier.NewText(s)
}

func (s spec) record() supplier.Record {
	r := supplier.Record{Keywords: s.keywords}
	d := &r.Detail
	d.ID = ID(s.key)
	d.Name = text(s.name)
	d.LegalBusinessName = text(s.legal)
	d.SupplierID = text(s.supplierID)
	d.CommunitySupplierID = supplier.NewText("CS-" + s.key)
	d.ProfileType = supplier.ProfileCompany
	if s.individual {
		d.ProfileType = supplier.ProfileIndividual
		d.FirstName, d.LastName = supplier.NewText("Aroha"), supplier.NewText("Ngata")
	}
	d.CreatedDate = s.created
	d.ModifiedDate = s.modified
	for i, name := range s.contacts {
		r.Contacts = append(r.Contacts, supplier.Contact{
			ID:           ID(s.key + "/contact/" + name + fmt.Sprint(i)),
			Name:         name,
			Email:        supplier.NewText(fmt.Sprintf("contact%d@example.com", i)),
			ModifiedDate: s.modified,
			CreatedDate:  s.created,
		})
	}
	for i, a := range s.addresses {
		r.RemittanceAddresses = append(r.RemittanceAddresses, supplier.RemittanceAddress{
			ID:           ID(s.key + "/address/" + a.company + fmt.Sprint(i)),
			Code:         supplier.NewText(fmt.Sprintf("R%d", i)),
			CompanyName:  text(a.company),
			Address:      supplier.Address{Line1: fmt.Sprintf("%d Queen Street", i+1), City: "Auckland", Country: "NZ"},
			ManagedBy:    supplier.ManagedBySupplier,
			ModifiedDate: a.modified,
			CreatedDate:  s.created,
		})
	}
	if s.full {
		fill(&r, s)
	}
	return r
}

// fill sets every optional part of a SupplierDetail, with values in other
// time zones and nanoseconds that the store must normalise.
func fill(r *supplier.Record, s spec) {
	d := &r.Detail
	verified := s.created.Add(3*time.Hour + 999*time.Nanosecond).In(nz)
	days := 20
	d.TaxIdentificationType = supplier.TaxEIN
	d.TaxIdentificationNumber = supplier.NewText("12-3456789")
	d.TinVerificationStatus = supplier.TinMatched
	d.TinLastVerifiedDate = &verified
	d.ConnectionState = supplier.Connected
	d.BusinessNumber = supplier.NewText("NZBN 9429041234567")
	d.DefaultEmailAddress = supplier.NewText("accounts@" + s.key + ".example.com")
	d.DefaultContact = &supplier.Contact{
		ID:           ID(s.key + "/default-contact"),
		Name:         "Default Person",
		Phone:        &supplier.Phone{Prefix: supplier.NewText("+64"), Number: supplier.NewText("95551234"), Extension: supplier.NewText("12")},
		Email:        supplier.NewText("default@example.com"),
		ManagedBy:    supplier.ManagedByCommunity,
		ModifiedDate: s.modified,
		CreatedDate:  s.created,
	}
	d.DefaultRemittanceAddress = &supplier.RemittanceAddress{
		ID:          ID(s.key + "/default-address"),
		Code:        supplier.NewText("MAIN"),
		CompanyName: text(s.name),
		Address: supplier.Address{
			Line1: "1 Lambton Quay", Line2: supplier.NewText("Level 3"), Line3: supplier.NewText("Suite 4"), City: "Wellington",
			Region: &supplier.Region{Name: supplier.NewText("Wellington"), Code: supplier.NewText("WGN")}, Postcode: supplier.NewText("6011"), Country: "New Zealand",
		},
		ManagedBy:    supplier.ManagedBySupplier,
		ModifiedDate: s.modified,
		CreatedDate:  s.created,
	}
	d.BankAccount = &supplier.BankAccount{
		ID: ID(s.key + "/bank"), Country: "NZ", BankName: supplier.NewText("Kiwibank"), AccountName: text(s.name),
		Address:       &supplier.Address{Line1: "2 Willis Street", City: "Wellington", Country: "NZ", Region: &supplier.Region{Code: supplier.NewText("WGN")}},
		AccountNumber: supplier.NewText("38-9000-0123456-00"), RoutingNumber: supplier.NewText("389000"), LocalAccountNumber: supplier.NewText("0123456"),
		BankAccountType: supplier.Checking, DepositFormat: supplier.DepositCCD,
	}
	d.Emails = &supplier.Emails{
		DefaultEmailAddress: supplier.NewText("a@example.com"), RemittanceEmailAddress: supplier.NewText("b@example.com"), OrdersEmailAddress: supplier.NewText("c@example.com"),
		InvoicingEmailAddress: supplier.NewText("d@example.com"), RfqsEmailAddress: supplier.NewText("e@example.com"), BidRequestsEmailAddress: supplier.NewText("f@example.com"),
		IntegrationEmailAddress: supplier.NewText("g@example.com"), CustomerCommentsEmailAddress: supplier.NewText("h@example.com"),
	}
	d.Settings = &supplier.Settings{
		PaymentTerm: &supplier.PaymentTerm{ID: ID(s.key + "/term"), Code: "NET20", Active: true, Days: &days, TermType: supplier.DaysAfterInvoiceDate, Description: supplier.NewText("Twenty days after the invoice date")},
		BuyerGroups: []supplier.BuyerGroup{{ID: ID(s.key + "/bg1"), Name: "Facilities"}, {ID: ID(s.key + "/bg2"), Name: "IT"}},
		Tags:        []supplier.Tag{{ID: ID(s.key + "/tag"), Name: "Preferred"}},
	}
}

// fixtureFile is the fixture as a data file, before parsing.
func fixtureFile() *datafile.File {
	com := func(id string, region datafile.Region, specs []spec) datafile.Community {
		c := datafile.Community{ID: id, Name: id, Region: region}
		for _, s := range specs {
			c.Suppliers = append(c.Suppliers, s.record())
		}
		return c
	}
	return &datafile.File{Communities: []datafile.Community{
		com(C1, datafile.NZ, c1Specs()),
		com(C2, datafile.AU, c2Specs()),
	}}
}

// Fixture returns the suite's data file as datafile.Parse returns it
// (validated, dates normalised). Each call returns a fresh copy, so a store
// that kept references into it cannot change what the suite compares with.
func Fixture(tb testing.TB) *datafile.File {
	tb.Helper()
	data, err := json.Marshal(fixtureFile())
	if err != nil {
		tb.Fatalf("suppliertest: encoding the fixture: %v", err)
	}
	f, err := datafile.Parse(bytes.NewReader(data))
	if err != nil {
		tb.Fatalf("suppliertest: the fixture is not a valid data file: %v", err)
	}
	return f
}
