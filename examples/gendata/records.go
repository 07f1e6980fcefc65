package main

import (
	"strconv"
	"strings"
	"time"
)

var (
	profileTypes   = []string{"COMPANY", "INDIVIDUAL"}
	tinStatuses    = []string{"MATCHED", "NOT_MATCHED", "NO_RESULT", "PENDING"}
	connStates     = []string{"CONNECTED", "PENDING", "DISCONNECTED"}
	tenantTypes    = []string{"COMMUNITY", "SUPPLIER"}
	bankTypes      = []string{"CHECKING", "SAVINGS"}
	depositFormats = []string{"UNSPECIFIED", "CCD", "CTX"}
	emailFields    = []string{
		"defaultEmailAddress", "remittanceEmailAddress", "ordersEmailAddress", "invoicingEmailAddress",
		"rfqsEmailAddress", "bidRequestsEmailAddress", "integrationEmailAddress", "customerCommentsEmailAddress",
	}
	emailLocals = []string{"accounts", "remittance", "orders", "invoices", "rfq", "bids", "edi", "feedback"}
)

// contact is a generated SupplierContact; it is kept as a value because
// the supplier's defaultContact repeats its first contact.
type contact struct {
	id                [16]byte
	name              string
	phone             bool
	prefix, number    string
	prefixShape       presence
	ext               string
	extShape          presence
	email             string
	emailShape        presence
	managedBy         string
	created, modified stamp
}

type remittance struct {
	id                [16]byte
	code              string
	company           string
	companyShape      presence
	addr              address
	managedBy         string
	created, modified stamp
}

type address struct {
	line1, line2, line3 string
	line2Shape          presence
	line3Shape          presence
	city                string
	region              bool
	regionName          string
	regionCode          string
	postcode            string
	postcodeShape       presence
	country             string
}

// supplier writes supplier i of the current community into the buffer.
func (g *generator) supplier(i int) {
	c, e := g.c, &g.e
	id := g.uuid()
	pl := c.places[g.r.IntN(len(c.places))]

	// Names.
	individual := g.chance(15)
	var name, legal, first, last, slug string
	nameShape, legalShape, firstShape, lastShape := present, absent, absent, absent
	if individual {
		fw, lw := firstNames[g.r.IntN(len(firstNames))], lastNames[g.r.IntN(len(lastNames))]
		first, last = fw.text, lw.text
		firstShape, lastShape = present, present
		name = first + " " + last
		slug = fw.slug + "-" + lw.slug
		nameShape = g.shape(97, 0)
		legalShape = g.shape(0, 10)
	} else {
		fw, tw := companyFirst[g.r.IntN(len(companyFirst))], companyTrade[g.r.IntN(len(companyTrade))]
		base := fw.text + " " + tw.text
		name = base
		if s := companySuffix[g.r.IntN(len(companySuffix))]; s != "" {
			name += " " + s
		}
		slug = fw.slug + "-" + tw.slug
		nameShape = g.shape(98, 2)
		legalShape = g.shape(70, 20)
		legal = base + " " + legalSuffix[g.r.IntN(len(legalSuffix))]
		if g.r.IntN(5000) == 0 {
			// A legal name at the 255-character limit, in multi-byte text.
			legal = truncateRunes(strings.Repeat("Ōtautahi Trading Trust ", 20), 255)
		}
		firstShape = g.shape(0, 20)
		lastShape = firstShape
	}
	// The sample query's expected count (docs: filters.md).
	matched := nameShape == present && hasPrefixFold(name, c.query) ||
		legalShape == present && hasPrefixFold(legal, c.query)
	domain := slug + "-" + strconv.Itoa(c.index) + "-" + strconv.Itoa(i) + ".example"

	// Dates: created, then modified: never touched since (25%), part of a
	// bulk import (15%), or edited at some later time.
	created := g.instant(firstDay, lastCreated)
	var modified time.Time
	switch g.pick(25, 15, 60) {
	case 0:
		modified = created
	case 1:
		modified = bulkImports[g.r.IntN(len(bulkImports))]
		if modified.Before(created) {
			modified = created
		}
	default:
		modified = g.instant(created, lastInstant)
	}
	c.modDays[int(modified.Sub(firstDay)/(24*time.Hour))]++

	// Children, drawn before writing because the defaults repeat them.
	nContacts, nAddrs := g.cfg.Contacts, g.cfg.Addresses
	if nContacts == 0 {
		nContacts = g.pick(10, 45, 30, 8, 4, 3)
	}
	contacts := make([]contact, nContacts)
	for k := range contacts {
		contacts[k] = g.contact(created, slug, domain)
	}
	if nAddrs == 0 {
		nAddrs = g.pick(8, 75, 12, 5)
	}
	addrs := make([]remittance, nAddrs)
	for k := range addrs {
		addrs[k] = g.remittance(k, created, name, pl)
	}

	e.openObj()
	e.fUUID("id", id)
	if g.chance(95) {
		e.fStr("communitySupplierId", "CS"+strconv.Itoa(c.index)+"-"+pad(i, 7))
	}
	supplierID := "V" + pad(100000+i, 6)
	sidShape := g.shape(80, 10)
	e.fOpt("supplierId", supplierID, sidShape)
	e.fOpt("name", name, nameShape)
	if individual {
		e.fStr("profileType", profileTypes[1])
	} else {
		e.fStr("profileType", profileTypes[0])
	}
	e.fOpt("legalBusinessName", legal, legalShape)
	e.fOpt("firstName", first, firstShape)
	e.fOpt("lastName", last, lastShape)

	// Tax identification: individuals have SSN or ITIN, companies EIN or
	// GIIN; foreign ones FOREIGN_TIN; some have none.
	var taxType string
	if individual {
		taxType = [...]string{"SSN", "ITIN", "FOREIGN_TIN", ""}[g.pick(50, 20, 10, 20)]
	} else {
		taxType = [...]string{"EIN", "GIIN", "FOREIGN_TIN", ""}[g.pick(45, 15, 15, 25)]
	}
	if taxType != "" {
		e.fStr("taxIdentificationType", taxType)
		e.fStr("taxIdentificationNumber", g.taxNumber(taxType))
		status := tinStatuses[g.pick(55, 10, 10, 25)]
		e.fStr("tinVerificationStatus", status)
		if status == "PENDING" {
			e.fNull("tinLastVerifiedDate")
		} else {
			e.fTime("tinLastVerifiedDate", g.stamp(g.instant(created, lastInstant)))
		}
	} else if g.chance(30) {
		e.fNull("taxIdentificationNumber")
		e.fNull("tinLastVerifiedDate")
	}
	if k := g.pick(70, 15, 10, 5); k < 3 {
		e.fStr("connectionState", connStates[k])
	}
	e.fOpt("businessNumber", g.businessNumber(), g.shape(75, 15))
	defaultEmail := "accounts@" + domain
	defaultEmailShape := g.shape(85, 10)
	e.fOpt("defaultEmailAddress", defaultEmail, defaultEmailShape)
	e.fTime("modifiedDate", g.stamp(modified))
	e.fTime("createdDate", g.stamp(created))

	// Details.
	if len(contacts) > 0 && g.chance(92) {
		e.key("defaultContact")
		g.writeContact(&contacts[0])
	}
	if len(addrs) > 0 && g.chance(95) {
		e.key("defaultRemittanceAddress")
		g.writeRemittance(&addrs[0])
	}
	if g.chance(85) {
		e.key("bankAccount")
		g.bankAccount(name, pl)
	}
	if g.chance(80) {
		e.key("emails")
		e.openObj()
		for k, f := range emailFields {
			if k == 0 {
				e.fOpt(f, defaultEmail, defaultEmailShape)
				continue
			}
			e.fOpt(f, emailLocals[k]+"@"+domain, g.shape(60, 20))
		}
		e.closeObj()
	}
	if g.chance(75) {
		e.key("settings")
		g.settings()
	}

	// Keywords, contacts and remittance addresses (Record's own fields).
	keywordsMatch := false
	if n := g.pick(30, 30, 25, 10, 5); n > 0 {
		e.key("keywords")
		e.openArr()
		start := g.r.IntN(len(keywordList))
		for k := 0; k < n; k++ {
			kw := keywordList[(start+k*7)%len(keywordList)]
			keywordsMatch = keywordsMatch || hasPrefixFold(kw, c.query)
			e.elem()
			e.str(kw)
		}
		e.closeArr()
	}
	g.writeList("contacts", len(contacts), func(k int) { g.writeContact(&contacts[k]) })
	g.writeList("remittanceAddresses", len(addrs), func(k int) { g.writeRemittance(&addrs[k]) })
	e.closeObj()

	if matched || keywordsMatch || sidShape == present && hasPrefixFold(supplierID, c.query) {
		c.sample.QueryMatches++
	}
	if c.sample.SupplierID == "" && len(contacts) == 2 {
		c.sample.SupplierID = string(appendUUID(nil, id)[1:37])
	}
}

// writeList writes a child list; an empty one is absent, or now and then
// an explicit empty array.
func (g *generator) writeList(key string, n int, write func(k int)) {
	if n == 0 && !g.chance(30) {
		return
	}
	e := &g.e
	e.key(key)
	e.openArr()
	for k := 0; k < n; k++ {
		e.elem()
		write(k)
	}
	e.closeArr()
}

func (g *generator) contact(supplierCreated time.Time, slug, domain string) contact {
	fw, lw := firstNames[g.r.IntN(len(firstNames))], lastNames[g.r.IntN(len(lastNames))]
	ct := contact{id: g.uuid(), name: fw.text + " " + lw.text}
	if g.chance(80) {
		ct.phone = true
		ct.prefix = [...]string{"+61", "+64", "+1", "+44", "+33"}[g.r.IntN(5)]
		ct.prefixShape = g.shape(85, 10)
		ct.number = strconv.Itoa(200+g.r.IntN(700)) + " " + pad(g.r.IntN(1000), 3) + " " + pad(g.r.IntN(10000), 4)
		ct.ext = strconv.Itoa(g.r.IntN(9999) + 1)
		ct.extShape = g.shape(20, 15)
	}
	ct.email = fw.slug + "." + lw.slug + "@" + domain
	ct.emailShape = g.shape(85, 10)
	if k := g.pick(40, 50, 10); k < 2 {
		ct.managedBy = tenantTypes[k]
	}
	created := g.instant(supplierCreated, lastCreated)
	ct.created = g.stamp(created)
	if g.chance(40) {
		ct.modified = stamp{t: created, loc: ct.created.loc}
	} else {
		ct.modified = g.stamp(g.instant(created, lastInstant))
	}
	return ct
}

func (g *generator) writeContact(ct *contact) {
	e := &g.e
	e.openObj()
	e.fUUID("id", ct.id)
	e.fStr("name", ct.name)
	if ct.phone {
		e.key("phone")
		e.openObj()
		e.fOpt("prefix", ct.prefix, ct.prefixShape)
		e.fStr("number", ct.number)
		e.fOpt("extension", ct.ext, ct.extShape)
		e.closeObj()
	}
	e.fOpt("email", ct.email, ct.emailShape)
	if ct.managedBy != "" {
		e.fStr("managedBy", ct.managedBy)
	}
	e.fTime("modifiedDate", ct.modified)
	e.fTime("createdDate", ct.created)
	e.closeObj()
}

func (g *generator) remittance(k int, supplierCreated time.Time, company string, pl place) remittance {
	ra := remittance{id: g.uuid(), addr: g.address(pl)}
	if g.chance(75) {
		ra.code = "RA-" + strconv.Itoa(k+1)
	}
	ra.company = company
	ra.companyShape = g.shape(70, 20)
	if k > 0 && ra.companyShape == present {
		ra.company = company + " – " + [...]string{"Accounts Payable", "Head Office", "Remittances", "Trust Account"}[g.r.IntN(4)]
	}
	if k := g.pick(45, 45, 10); k < 2 {
		ra.managedBy = tenantTypes[k]
	}
	created := g.instant(supplierCreated, lastCreated)
	ra.created = g.stamp(created)
	ra.modified = g.stamp(g.instant(created, lastInstant))
	return ra
}

func (g *generator) writeRemittance(ra *remittance) {
	e := &g.e
	e.openObj()
	e.fUUID("id", ra.id)
	if ra.code != "" {
		e.fStr("code", ra.code)
	}
	e.fOpt("companyName", ra.company, ra.companyShape)
	e.key("address")
	g.writeAddress(&ra.addr)
	if ra.managedBy != "" {
		e.fStr("managedBy", ra.managedBy)
	}
	e.fTime("modifiedDate", ra.modified)
	e.fTime("createdDate", ra.created)
	e.closeObj()
}

func (g *generator) address(pl place) address {
	a := address{
		line1:   strconv.Itoa(1+g.r.IntN(400)) + " " + streets[g.r.IntN(len(streets))],
		city:    pl.city,
		country: pl.country,
	}
	a.line2 = [...]string{"Level 3", "Suite 12", "Unit 4B", "PO Box 1234", "Étage 2"}[g.r.IntN(5)]
	a.line2Shape = g.shape(30, 20)
	a.line3 = "Attn: Accounts Payable"
	a.line3Shape = g.shape(5, 15)
	if pl.regionName != "" {
		a.region = g.chance(85)
		a.regionName, a.regionCode = pl.regionName, pl.regionCode
	} else {
		a.region = g.chance(50) // written as {name: null, code: null}
	}
	a.postcode = pl.postcode(g.r.IntN(1000))
	a.postcodeShape = g.shape(90, 5)
	return a
}

func (g *generator) writeAddress(a *address) {
	e := &g.e
	e.openObj()
	e.fStr("line1", a.line1)
	e.fOpt("line2", a.line2, a.line2Shape)
	e.fOpt("line3", a.line3, a.line3Shape)
	e.fStr("city", a.city)
	if a.region {
		e.key("region")
		e.openObj()
		if a.regionName == "" {
			e.fNull("name")
			e.fNull("code")
		} else {
			e.fStr("name", a.regionName)
			e.fStr("code", a.regionCode)
		}
		e.closeObj()
	}
	e.fOpt("postcode", a.postcode, a.postcodeShape)
	e.fStr("country", a.country)
	e.closeObj()
}

func (g *generator) bankAccount(holder string, pl place) {
	e := &g.e
	e.openObj()
	e.fUUID("id", g.uuid())
	e.fStr("country", pl.country)
	e.fOpt("bankName", bankNames[g.r.IntN(len(bankNames))], g.shape(90, 10))
	e.fOpt("accountName", holder, g.shape(85, 15))
	if g.chance(40) {
		a := g.address(pl)
		e.key("address")
		g.writeAddress(&a)
	}
	e.fOpt("accountNumber", digits(g, 8+g.r.IntN(5)), g.shape(95, 5))
	var routing string
	switch g.c.region {
	case "US":
		routing = digits(g, 9)
	case "AU":
		routing = digits(g, 3) + "-" + digits(g, 3)
	default:
		routing = digits(g, 2) + "-" + digits(g, 4)
	}
	e.fOpt("routingNumber", routing, g.shape(70, 15))
	e.fOpt("localAccountNumber", digits(g, 10), g.shape(50, 20))
	if k := g.pick(45, 35, 10, 10); k < 2 {
		e.fStr("bankAccountType", bankTypes[k])
	} else if k == 2 {
		e.fNull("bankAccountType")
	}
	if k := g.pick(40, 30, 15, 10, 5); k < 3 {
		e.fStr("depositFormat", depositFormats[k])
	} else if k == 3 {
		e.fNull("depositFormat")
	}
	e.closeObj()
}

func (g *generator) settings() {
	c, e := g.c, &g.e
	e.openObj()
	if g.chance(85) {
		t := &c.terms[g.pick(40, 15, 15, 10, 10, 10)]
		e.key("paymentTerm")
		e.openObj()
		e.fUUID("id", t.id)
		e.fStr("code", t.code)
		e.fBool("active", t.active)
		if t.days >= 0 {
			e.fInt("days", t.days)
		} else {
			e.fNull("days")
		}
		e.fStr("termType", t.termType)
		e.fOpt("description", t.description, t.descShape)
		e.closeObj()
	}
	g.namedList("buyerGroups", c.groups, g.pick(30, 40, 20, 10))
	g.namedList("tags", c.tags, g.pick(40, 30, 15, 10, 5))
	e.closeObj()
}

// namedList writes n distinct entries of list (a contiguous run from a
// random start, wrapping round).
func (g *generator) namedList(key string, list []named, n int) {
	if n == 0 {
		if g.chance(20) {
			g.e.key(key)
			g.e.raw("[]")
		}
		return
	}
	e := &g.e
	e.key(key)
	e.openArr()
	start := g.r.IntN(len(list))
	for k := 0; k < n; k++ {
		it := list[(start+k)%len(list)]
		e.elem()
		e.openObj()
		e.fUUID("id", it.id)
		e.fStr("name", it.name)
		e.closeObj()
	}
	e.closeArr()
}

func (g *generator) taxNumber(kind string) string {
	switch kind {
	case "SSN", "ITIN":
		return digits(g, 3) + "-" + digits(g, 2) + "-" + digits(g, 4)
	case "EIN":
		return digits(g, 2) + "-" + digits(g, 7)
	case "GIIN":
		return digits(g, 6) + ".00000.LE." + digits(g, 3)
	}
	return "TIN" + digits(g, 9)
}

// businessNumber formats the region's registration number: an ABN, an
// NZBN, an EIN-like number or a demo id.
func (g *generator) businessNumber() string {
	switch g.c.region {
	case "AU":
		return digits(g, 2) + " " + digits(g, 3) + " " + digits(g, 3) + " " + digits(g, 3)
	case "NZ":
		return "9429" + digits(g, 9)
	case "US":
		return digits(g, 2) + "-" + digits(g, 7)
	}
	return "DEMO-" + digits(g, 6)
}

func digits(g *generator, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('0' + g.r.IntN(10))
	}
	return string(b)
}

func truncateRunes(s string, n int) string {
	for i := range s {
		if n == 0 {
			return s[:i]
		}
		n--
	}
	return s
}

// user writes user i of the current community and returns its id and
// username.
func (g *generator) user(i int) ManifestUser {
	c, e := g.c, &g.e
	fw, lw := firstNames[g.r.IntN(len(firstNames))], lastNames[g.r.IntN(len(lastNames))]
	var id string
	if g.chance(85) {
		id = string(appendUUID(nil, g.uuid())[1:37])
	} else {
		// Ids from an older HR system: any string is allowed (docs: users.md "The user object").
		id = "EMP-" + strconv.Itoa(c.index) + "-" + pad(i, 6)
	}
	username := fw.slug + "." + lw.slug + strconv.Itoa(i)
	if g.chance(10) {
		username = strings.ToUpper(username[:1]) + username[1:]
	}
	email := fw.slug + "." + lw.slug + strconv.Itoa(i) + "@" + c.id + ".example"
	units := g.codes(orgUnits, 1+g.pick(70, 30))

	e.openObj()
	e.fStr("id", id)
	e.fStr("username", username)
	if g.chance(70) {
		e.fStr("externalId", "E"+pad(500000+i, 7))
	}
	e.fStr("firstName", fw.text)
	e.fStr("lastName", lw.text)
	if g.chance(90) {
		e.fStr("displayName", fw.text+" "+lw.text+" ("+email+") "+units[0])
	}
	e.fStr("email", email)
	if g.chance(60) {
		e.fStr("phone", "+61 4"+digits(g, 2)+" "+digits(g, 3)+" "+digits(g, 3))
	}
	e.fBool("enabled", g.chance(90))
	g.codeList("organisationUnits", units)
	g.codeList("roles", g.codes(roleCodes, 1+g.pick(50, 35, 15)))
	g.codeList("buyerGroups", g.codes(buyerGroupCodes, g.pick(30, 50, 20)))
	if n := g.pick(50, 35, 15); n > 0 {
		e.key("attributes")
		e.openArr()
		start := g.r.IntN(len(attributeNames))
		for k := 0; k < n; k++ {
			e.elem()
			e.openObj()
			name := attributeNames[(start+k)%len(attributeNames)]
			e.fStr("name", name)
			e.fStr("value", attributeValue(g, name))
			e.closeObj()
		}
		e.closeArr()
	}
	g.codeList("approverGroups", g.codes(approverGroupCodes, g.pick(60, 40)))
	e.closeObj()
	return ManifestUser{ID: id, Username: username}
}

// codes returns n distinct codes of list.
func (g *generator) codes(list []string, n int) []string {
	start := g.r.IntN(len(list))
	out := make([]string, n)
	for k := range out {
		out[k] = list[(start+k)%len(list)]
	}
	return out
}

func (g *generator) codeList(key string, codes []string) {
	if len(codes) == 0 {
		return
	}
	e := &g.e
	e.key(key)
	e.openArr()
	for _, code := range codes {
		e.elem()
		e.openObj()
		e.fStr("code", code)
		e.closeObj()
	}
	e.closeArr()
}

func attributeValue(g *generator, name string) string {
	switch name {
	case "costCentre":
		return "CC-" + digits(g, 4)
	case "location":
		return [...]string{"Level 2 North", "Ōtautahi", "Remote", "Lab B"}[g.r.IntN(4)]
	case "grade":
		return "G" + strconv.Itoa(1+g.r.IntN(9))
	case "delegation":
		return strconv.Itoa((1+g.r.IntN(50))*1000) + ".00"
	}
	return strconv.Itoa(2000 + g.r.IntN(26))
}

// maxBudgets is how many distinct account codes budgets can make.
const maxBudgets = 100 * 9

// maxChildren is the most contacts or remittance addresses -contacts and
// -addresses may give every supplier.
const maxChildren = 100

// budgets writes the community's budget table: distinct account codes
// such as "6100-200", amounts with cents, some zero and some negative
// (an overspent account).
func (g *generator) budgets() {
	e := &g.e
	for j := 0; j < g.cfg.Budgets && g.err == nil; j++ {
		if j > 0 {
			e.b = append(e.b, ',')
		}
		e.b = append(e.b, '\n')
		account := strconv.Itoa(6000+(j/9)*10) + "-" + strconv.Itoa((j%9+1)*100)
		var amount string
		switch g.pick(90, 5, 5) {
		case 0:
			cents := g.r.IntN(50000000)
			amount = strconv.Itoa(cents/100) + "." + pad(cents%100, 2)
		case 1:
			amount = "0"
		default:
			amount = "-" + strconv.Itoa(g.r.IntN(5000)) + ".50"
		}
		e.openObj()
		e.fStr("account", account)
		e.key("budget")
		e.raw(amount)
		e.closeObj()
		g.flush()
	}
}
