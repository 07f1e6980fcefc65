package supplierjson

import (
	"runtime"

	"github.com/procurekit/procure/supplier"
)

// touch reads a byte of each part of d and of most of their texts before
// the encoder walks them. A store that keeps suppliers as decoded values
// (pgstore without its cache, a host's own store) hands over a detail
// that lies in many places in memory: the record, its texts, and,
// each where its decoder allocated it, the default contact and its phone,
// the default address, the bank account and its address, the emails, the
// settings and their buyer groups and tags, and the texts of all of them.
// A request for a supplier at random finds none of them in the cache, and
// the encoder, reading one after the other, waited for one miss after
// another: about twenty on a supplier in full, a fifth of a microsecond
// each on the 2-core machine. The loads here do not depend on one another
// (the texts' only on the parts'), so the processor issues them together
// and the misses overlap: BenchmarkRandomDetails (httpapi/suppliers)
// measures 6.2 us a request without touch and 4.3 us with it, and a memo
// hit or a supplier already in the cache pays a few nanoseconds for it
// (bench/README.md, session 11). The texts are touched at their first
// byte: a supplier's texts were decoded together, so the rest of each is
// in the same or the next cache line. memstore and pgstore's cache make
// the detail from a packed record (internal/supplierindex, packed.go),
// touching that record's memory themselves: the loads here then find it
// in the cache and cost a few nanoseconds.
func touch(d *supplier.Detail) {
	var x byte
	c, a, bk, e, s := d.DefaultContact, d.DefaultRemittanceAddress, d.BankAccount, d.Emails, d.Settings
	// The parts: a load from each cache line the encoder reads.
	if c != nil {
		x += c.ID[0] + byte(c.CreatedDate.Nanosecond())
	}
	if a != nil {
		x += a.ID[0] + byte(len(a.Address.City)) + byte(a.CreatedDate.Nanosecond())
	}
	if bk != nil {
		x += bk.ID[0] + byte(len(bk.RoutingNumber.String()))
	}
	if e != nil {
		x += byte(len(e.DefaultEmailAddress.String())) + byte(len(e.CustomerCommentsEmailAddress.String()))
	}
	if s != nil {
		x += byte(len(s.BuyerGroups))
	}
	// The texts.
	x += firstText(d.CommunitySupplierID) + firstText(d.SupplierID) + firstText(d.Name) +
		firstText(d.LegalBusinessName) + firstText(d.DefaultEmailAddress)
	if c != nil {
		x += first(c.Name) + firstText(c.Email)
		if p := c.Phone; p != nil {
			x += firstText(p.Number)
		}
	}
	if a != nil {
		x += firstText(a.CompanyName) + firstText(a.Code) + first(a.Address.Line1) + first(a.Address.City) +
			firstText(a.Address.Postcode)
	}
	if bk != nil {
		x += firstText(bk.BankName) + firstText(bk.AccountName) + firstText(bk.AccountNumber)
		if ad := bk.Address; ad != nil {
			x += first(ad.Line1) + first(ad.City)
		}
	}
	if e != nil {
		x += firstText(e.RemittanceEmailAddress) + firstText(e.OrdersEmailAddress) +
			firstText(e.InvoicingEmailAddress) + firstText(e.IntegrationEmailAddress)
	}
	if s != nil {
		for i := range s.BuyerGroups {
			x += first(s.BuyerGroups[i].Name)
		}
		for i := range s.Tags {
			x += first(s.Tags[i].Name)
		}
	}
	// The sum is of no use but keeps the compiler from dropping the
	// loads, without a write to shared memory.
	runtime.KeepAlive(x)
}

// first returns the first byte of s, or 0.
func first(s string) byte {
	if s == "" {
		return 0
	}
	return s[0]
}

// firstText returns the first byte of t's value, or 0.
func firstText(t supplier.Text) byte { return first(t.String()) }
