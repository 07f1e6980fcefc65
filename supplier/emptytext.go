package supplier

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
)

// TextPaths lists, by JSON path relative to the value that holds it, the
// optional text fields of a supplier, contact or remittance address that
// hold an explicit empty string. Go cannot tell "" from no value in a
// string field, and the contract can (docs: values.md "Round trip": a
// field stored as "" is returned as "", only a field with no value is
// omitted), so the few values that are "" on purpose are listed here.
//
// Paths name optional free-text fields only, such as "name",
// "bankAccount.address.line2" or "emails.ordersEmailAddress" on a Summary,
// "phone.number" on a Contact and "address.region.code" on a
// RemittanceAddress; required fields and enums have no explicit-empty
// form. The list is sorted and holds each path once; it is nil for almost
// every value, so it costs nothing on the hot paths.
//
// Who fills it: the data-file readers and MarkEmptyText (for JSON a caller
// decoded itself), and the stores, which keep it with the value. Who reads
// it: httpapi's encoders, which write "" for a listed field whose value is
// empty. encoding/json ignores it (the field is tagged "-").
type TextPaths []string

// Has reports whether path is listed.
func (p TextPaths) Has(path string) bool {
	for _, q := range p {
		if q == path {
			return true
		}
	}
	return false
}

// Add lists path, keeping the list sorted and without repeats.
func (p *TextPaths) Add(path string) {
	i, found := slices.BinarySearch(*p, path)
	if !found {
		*p = slices.Insert(*p, i, path)
	}
}

// Clone returns a copy of p that shares no memory with it (nil for an
// empty list).
func (p TextPaths) Clone() TextPaths {
	if len(p) == 0 {
		return nil
	}
	return slices.Clone(p)
}

// The optional text fields of each value, by JSON path: a getter of the
// field's storage, nil when an enclosing object is absent.
var (
	detailText = map[string]func(*Detail) *string{
		"communitySupplierId":     func(d *Detail) *string { return &d.CommunitySupplierID },
		"supplierId":              func(d *Detail) *string { return &d.SupplierID },
		"name":                    func(d *Detail) *string { return &d.Name },
		"legalBusinessName":       func(d *Detail) *string { return &d.LegalBusinessName },
		"firstName":               func(d *Detail) *string { return &d.FirstName },
		"lastName":                func(d *Detail) *string { return &d.LastName },
		"taxIdentificationNumber": func(d *Detail) *string { return &d.TaxIdentificationNumber },
		"businessNumber":          func(d *Detail) *string { return &d.BusinessNumber },
		"defaultEmailAddress":     func(d *Detail) *string { return &d.DefaultEmailAddress },
	}
	contactText = map[string]func(*Contact) *string{
		"email": func(c *Contact) *string { return &c.Email },
	}
	addressText = map[string]func(*RemittanceAddress) *string{
		"code":        func(a *RemittanceAddress) *string { return &a.Code },
		"companyName": func(a *RemittanceAddress) *string { return &a.CompanyName },
	}
)

func init() {
	bank := func(f func(*BankAccount) *string) func(*Detail) *string {
		return func(d *Detail) *string {
			if d.BankAccount == nil {
				return nil
			}
			return f(d.BankAccount)
		}
	}
	for k, f := range map[string]func(*BankAccount) *string{
		"bankName":           func(b *BankAccount) *string { return &b.BankName },
		"accountName":        func(b *BankAccount) *string { return &b.AccountName },
		"accountNumber":      func(b *BankAccount) *string { return &b.AccountNumber },
		"routingNumber":      func(b *BankAccount) *string { return &b.RoutingNumber },
		"localAccountNumber": func(b *BankAccount) *string { return &b.LocalAccountNumber },
	} {
		detailText["bankAccount."+k] = bank(f)
	}
	for k, f := range postalText {
		detailText["bankAccount.address."+k] = bank(func(b *BankAccount) *string {
			if b.Address == nil {
				return nil
			}
			return f(b.Address)
		})
		addressText["address."+k] = func(a *RemittanceAddress) *string { return f(&a.Address) }
	}
	for k, f := range map[string]func(*Emails) *string{
		"defaultEmailAddress":          func(e *Emails) *string { return &e.DefaultEmailAddress },
		"remittanceEmailAddress":       func(e *Emails) *string { return &e.RemittanceEmailAddress },
		"ordersEmailAddress":           func(e *Emails) *string { return &e.OrdersEmailAddress },
		"invoicingEmailAddress":        func(e *Emails) *string { return &e.InvoicingEmailAddress },
		"rfqsEmailAddress":             func(e *Emails) *string { return &e.RfqsEmailAddress },
		"bidRequestsEmailAddress":      func(e *Emails) *string { return &e.BidRequestsEmailAddress },
		"integrationEmailAddress":      func(e *Emails) *string { return &e.IntegrationEmailAddress },
		"customerCommentsEmailAddress": func(e *Emails) *string { return &e.CustomerCommentsEmailAddress },
	} {
		detailText["emails."+k] = func(d *Detail) *string {
			if d.Emails == nil {
				return nil
			}
			return f(d.Emails)
		}
	}
	detailText["settings.paymentTerm.description"] = func(d *Detail) *string {
		if d.Settings == nil || d.Settings.PaymentTerm == nil {
			return nil
		}
		return &d.Settings.PaymentTerm.Description
	}
	for k, f := range map[string]func(*Phone) *string{
		"prefix":    func(p *Phone) *string { return &p.Prefix },
		"number":    func(p *Phone) *string { return &p.Number },
		"extension": func(p *Phone) *string { return &p.Extension },
	} {
		contactText["phone."+k] = func(c *Contact) *string {
			if c.Phone == nil {
				return nil
			}
			return f(c.Phone)
		}
	}
	index(detailText, canonDetail)
	index(contactText, canonContact)
	index(addressText, canonAddress)
}

// postalText are the optional text fields of an Address.
var postalText = map[string]func(*Address) *string{
	"line2":    func(a *Address) *string { return &a.Line2 },
	"line3":    func(a *Address) *string { return &a.Line3 },
	"postcode": func(a *Address) *string { return &a.Postcode },
	"region.name": func(a *Address) *string {
		if a.Region == nil {
			return nil
		}
		return &a.Region.Name
	},
	"region.code": func(a *Address) *string {
		if a.Region == nil {
			return nil
		}
		return &a.Region.Code
	},
}

// The paths of each table by their lower-cased spelling: encoding/json
// matches keys case-insensitively, so "Name": "" fills Name.
var canonDetail, canonContact, canonAddress = map[string]string{}, map[string]string{}, map[string]string{}

func index[T any](table map[string]func(*T) *string, canon map[string]string) {
	for k := range table {
		canon[strings.ToLower(k)] = k
	}
}

// mark lists path on *p when table knows it (in any letter case) and the
// field it names exists and is empty.
func mark[T any](p *TextPaths, v *T, table map[string]func(*T) *string, canon map[string]string, path string) {
	k, ok := canon[strings.ToLower(path)]
	if !ok {
		return
	}
	if s := table[k](v); s != nil && *s == "" {
		p.Add(k)
	}
}

// clean drops the paths that table does not know or whose field is absent
// or not empty, and sorts the rest.
func clean[T any](p *TextPaths, v *T, table map[string]func(*T) *string) {
	if len(*p) == 0 {
		*p = nil
		return
	}
	var out TextPaths
	for _, k := range *p {
		if f, ok := table[k]; ok {
			if s := f(v); s != nil && *s == "" {
				out.Add(k)
			}
		}
	}
	*p = out
}

// CleanEmptyText keeps in d.EmptyText only the paths of optional text
// fields that exist and are empty in d, sorted. Stores call it on what
// they are given, so that equal values have equal lists.
func (d *Detail) CleanEmptyText() {
	clean(&d.EmptyText, d, detailText)
	if d.DefaultContact != nil {
		d.DefaultContact.CleanEmptyText()
	}
	if d.DefaultRemittanceAddress != nil {
		d.DefaultRemittanceAddress.CleanEmptyText()
	}
}

// CleanEmptyText is Detail.CleanEmptyText for a contact.
func (c *Contact) CleanEmptyText() { clean(&c.EmptyText, c, contactText) }

// CleanEmptyText is Detail.CleanEmptyText for a remittance address.
func (a *RemittanceAddress) CleanEmptyText() { clean(&a.EmptyText, a, addressText) }

// MarkEmptyText lists in the EmptyText of r (and of its contacts and
// addresses) every optional text field that raw, the JSON r was decoded
// from with encoding/json, gives as "". Call it after a successful
// json.Unmarshal(raw, r); the data-file readers and httpapi do.
func (r *Record) MarkEmptyText(raw []byte) error {
	return walkEmpty(raw, func(path []string) {
		if len(path) == 0 {
			return
		}
		head, rest := strings.ToLower(path[0]), path[1:]
		switch head {
		case "defaultcontact":
			if r.DefaultContact != nil {
				mark(&r.DefaultContact.EmptyText, r.DefaultContact, contactText, canonContact, strings.Join(rest, "."))
			}
		case "defaultremittanceaddress":
			if r.DefaultRemittanceAddress != nil {
				mark(&r.DefaultRemittanceAddress.EmptyText, r.DefaultRemittanceAddress, addressText, canonAddress, strings.Join(rest, "."))
			}
		case "contacts":
			if i, ok := element(rest, len(r.Contacts)); ok {
				mark(&r.Contacts[i].EmptyText, &r.Contacts[i], contactText, canonContact, strings.Join(rest[1:], "."))
			}
		case "remittanceaddresses":
			if i, ok := element(rest, len(r.RemittanceAddresses)); ok {
				mark(&r.RemittanceAddresses[i].EmptyText, &r.RemittanceAddresses[i], addressText, canonAddress, strings.Join(rest[1:], "."))
			}
		default:
			mark(&r.EmptyText, &r.Detail, detailText, canonDetail, strings.Join(path, "."))
		}
	})
}

// MarkEmptyText is Record.MarkEmptyText for a contact decoded on its own.
func (c *Contact) MarkEmptyText(raw []byte) error {
	return walkEmpty(raw, func(path []string) {
		mark(&c.EmptyText, c, contactText, canonContact, strings.Join(path, "."))
	})
}

// MarkEmptyText is Record.MarkEmptyText for a remittance address decoded
// on its own.
func (a *RemittanceAddress) MarkEmptyText(raw []byte) error {
	return walkEmpty(raw, func(path []string) {
		mark(&a.EmptyText, a, addressText, canonAddress, strings.Join(path, "."))
	})
}

// element reads the array index at the head of path, when it is one below
// n.
func element(path []string, n int) (int, bool) {
	if len(path) == 0 {
		return 0, false
	}
	i, err := strconv.Atoi(path[0])
	return i, err == nil && i >= 0 && i < n
}

// walkEmpty calls visit with the path (object keys and array indices) of
// every string value of raw that is "". It is only called on JSON that
// encoding/json has just decoded, so raw is valid and nests at most as
// deep as encoding/json allows.
func walkEmpty(raw []byte, visit func(path []string)) error {
	if !bytes.Contains(raw, []byte(`""`)) {
		return nil // the common case: nothing to find
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	var path []string
	var value func() error
	value = func() error {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		switch t := t.(type) {
		case json.Delim:
			switch t {
			case '{':
				for dec.More() {
					k, err := dec.Token()
					if err != nil {
						return err
					}
					key, _ := k.(string)
					path = append(path, key)
					if err := value(); err != nil {
						return err
					}
					path = path[:len(path)-1]
				}
			case '[':
				for i := 0; dec.More(); i++ {
					path = append(path, strconv.Itoa(i))
					if err := value(); err != nil {
						return err
					}
					path = path[:len(path)-1]
				}
			}
			_, err := dec.Token() // the closing delimiter
			return err
		case string:
			if t == "" {
				visit(path)
			}
		}
		return nil
	}
	return value()
}
