package datafile

import (
	"slices"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/procurekit/procure/internal/check"
	"github.com/procurekit/procure/supplier"
)

// surelyValid reports whether r keeps every rule of supplier.Record.Validate,
// checked by hand, without the validator's reflection (most of the cost of
// reading a large file). It may answer false for a valid record (an email
// address of an unusual shape): the caller then runs Validate, which stays
// the one definition of the rules and words the errors. It never answers
// true for a record that Validate rejects (a randomised test holds it to
// that).
//
// Why it exists: the validator's reflection is most of the cost of
// checking a large file, and the 1,000,000-supplier startup has a target
// that it would miss with it (BenchmarkCheckSupplier, beside it, and the
// startup figures in bench/README.md). Its rules are held to the
// validator tags by TestSurelyValidKnowsEveryRule, which derives a broken
// value for every field and rule of the supplier types by reflection.
func surelyValid(r *supplier.Record) bool {
	if !summaryOK(&r.Summary) {
		return false
	}
	if c := r.DefaultContact; c != nil && !contactOK(c) {
		return false
	}
	if a := r.DefaultRemittanceAddress; a != nil && !remittanceOK(a) {
		return false
	}
	if b := r.BankAccount; b != nil {
		if b.ID == uuid.Nil || !required(b.Country, 255) || !maxLen(b.BankName.String(), 255) || !maxLen(b.AccountName.String(), 255) ||
			!maxLen(b.AccountNumber.String(), 255) || !maxLen(b.RoutingNumber.String(), 255) || !maxLen(b.LocalAccountNumber.String(), 255) ||
			(b.BankAccountType != "" && !b.BankAccountType.Valid()) || (b.DepositFormat != "" && !b.DepositFormat.Valid()) {
			return false
		}
		if b.Address != nil && !addressOK(b.Address) {
			return false
		}
	}
	if e := r.Emails; e != nil {
		for _, s := range [...]string{e.DefaultEmailAddress.String(), e.RemittanceEmailAddress.String(), e.OrdersEmailAddress.String(),
			e.InvoicingEmailAddress.String(), e.RfqsEmailAddress.String(), e.BidRequestsEmailAddress.String(), e.IntegrationEmailAddress.String(),
			e.CustomerCommentsEmailAddress.String()} {
			if !emailOK(s) {
				return false
			}
		}
	}
	if s := r.Settings; s != nil {
		if p := s.PaymentTerm; p != nil {
			if p.ID == uuid.Nil || !required(p.Code, 35) || !p.TermType.Valid() || !maxLen(p.Description.String(), 2000) {
				return false
			}
		}
		for _, g := range s.BuyerGroups {
			if g.ID == uuid.Nil || !required(g.Name, 255) {
				return false
			}
		}
		for _, t := range s.Tags {
			if t.ID == uuid.Nil || !required(t.Name, 255) {
				return false
			}
		}
	}
	for _, k := range r.Keywords {
		if !maxLen(k, 255) {
			return false
		}
	}
	for i := range r.Contacts {
		id := r.Contacts[i].ID
		if !contactOK(&r.Contacts[i]) || slices.ContainsFunc(r.Contacts[:i], func(c supplier.Contact) bool { return c.ID == id }) {
			return false
		}
	}
	for i := range r.RemittanceAddresses {
		id := r.RemittanceAddresses[i].ID
		if !remittanceOK(&r.RemittanceAddresses[i]) ||
			slices.ContainsFunc(r.RemittanceAddresses[:i], func(a supplier.RemittanceAddress) bool { return a.ID == id }) {
			return false
		}
	}
	return true
}

func summaryOK(s *supplier.Summary) bool {
	return s.ID != uuid.Nil &&
		maxLen(s.CommunitySupplierID.String(), 255) && maxLen(s.SupplierID.String(), 255) && maxLen(s.Name.String(), 255) &&
		s.ProfileType.Valid() &&
		maxLen(s.LegalBusinessName.String(), 255) && maxLen(s.FirstName.String(), 255) && maxLen(s.LastName.String(), 255) &&
		(s.TaxIdentificationType == "" || s.TaxIdentificationType.Valid()) &&
		maxLen(s.TaxIdentificationNumber.String(), 255) &&
		(s.TinVerificationStatus == "" || s.TinVerificationStatus.Valid()) &&
		(s.ConnectionState == "" || s.ConnectionState.Valid()) &&
		maxLen(s.BusinessNumber.String(), 255) && emailOK(s.DefaultEmailAddress.String()) &&
		dated(s.ModifiedDate, s.CreatedDate) && (s.TinLastVerifiedDate == nil || check.Instant(*s.TinLastVerifiedDate))
}

func contactOK(c *supplier.Contact) bool {
	if c.ID == uuid.Nil || !required(c.Name, 255) || !emailOK(c.Email.String()) ||
		(c.ManagedBy != "" && !c.ManagedBy.Valid()) || !dated(c.ModifiedDate, c.CreatedDate) {
		return false
	}
	if p := c.Phone; p != nil {
		return maxLen(p.Prefix.String(), 5) && maxLen(p.Number.String(), 20) && maxLen(p.Extension.String(), 20)
	}
	return true
}

func remittanceOK(a *supplier.RemittanceAddress) bool {
	return a.ID != uuid.Nil && maxLen(a.Code.String(), 255) && maxLen(a.CompanyName.String(), 255) && addressOK(&a.Address) &&
		(a.ManagedBy == "" || a.ManagedBy.Valid()) && dated(a.ModifiedDate, a.CreatedDate)
}

func addressOK(a *supplier.Address) bool {
	if !required(a.Line1, 200) || !maxLen(a.Line2.String(), 200) || !maxLen(a.Line3.String(), 200) || !required(a.City, 200) ||
		!maxLen(a.Postcode.String(), 20) || !required(a.Country, 255) {
		return false
	}
	if r := a.Region; r != nil {
		return maxLen(r.Name.String(), 255) && maxLen(r.Code.String(), 100)
	}
	return true
}

// dated is the rule "required,instant" on both dates: not the zero time,
// and within the years 1 to 9999 in UTC (check.Instant).
func dated(modified, created time.Time) bool {
	return !modified.IsZero() && !created.IsZero() && check.Instant(modified) && check.Instant(created)
}

// maxLen is the validator's max=n on a string, at most n characters, and
// the rule every text keeps (check.Storable).
func maxLen(s string, n int) bool {
	return (len(s) <= n || utf8.RuneCountInString(s) <= n) && check.Storable(s)
}

// required is "required,max=n": not empty, at most n characters.
func required(s string, n int) bool { return s != "" && maxLen(s, n) }

// emailOK is "omitempty,max=255,email" for the addresses of the shape
// nearly every data file holds (check.PlainEmail, the fast path shared with
// the user rules); any other shape answers false and goes to the
// validator.
func emailOK(s string) bool {
	return s == "" || len(s) <= 255 && check.PlainEmail(s)
}
