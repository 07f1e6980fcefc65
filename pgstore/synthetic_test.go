package pgstore

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/google/uuid"

	"github.com/procurekit/procure/datafile"
	"github.com/procurekit/procure/supplier"
)

var syllables = []string{"ac", "me", "tor", "ri", "van", "el", "ko", "sa", "lum", "ber", "zen", "ox", "qua", "dri", "ni", "po", "lex", "ta"}

// syntheticCommunity returns a community of n generated suppliers, each
// with one contact and one remittance address. The same n gives the same
// data: names, keywords and dates come from a seeded generator. About one
// name in a hundred is empty (they sort last), and names repeat, so ties
// are broken by id.
func syntheticCommunity(id string, n int) datafile.Community {
	rng := rand.New(rand.NewPCG(uint64(n), 42))
	word := func() string {
		k := 2 + rng.IntN(3)
		b := make([]byte, 0, 12)
		for range k {
			b = append(b, syllables[rng.IntN(len(syllables))]...)
		}
		if rng.IntN(3) == 0 {
			b[0] -= 'a' - 'A'
		}
		return string(b)
	}
	base := time.Date(2021, 1, 1, 0, 0, 0, 0, time.UTC)
	c := datafile.Community{ID: id, Name: "Synthetic " + id, Region: datafile.DEMO, Suppliers: make([]supplier.Record, n)}
	for i := range n {
		var sid uuid.UUID
		for j := range sid {
			sid[j] = byte(rng.Uint32())
		}
		sid[6] = sid[6]&0x0f | 0x40
		sid[8] = sid[8]&0x3f | 0x80
		created := base.Add(time.Duration(rng.Int64N(int64(4 * 365 * 24 * time.Hour)))).Truncate(time.Microsecond)
		modified := created.Add(time.Duration(rng.Int64N(int64(365 * 24 * time.Hour)))).Truncate(time.Microsecond)
		name := word() + " " + word()
		if rng.IntN(100) == 0 {
			name = ""
		}
		r := supplier.Record{
			Detail: supplier.Detail{Summary: supplier.Summary{
				ID: sid, SupplierID: supplier.NewText(fmt.Sprintf("SUP-%07d", i)), Name: supplier.NewText(name), LegalBusinessName: supplier.NewText(name + " Ltd"),
				ProfileType: supplier.ProfileCompany, ConnectionState: supplier.Connected,
				ModifiedDate: modified, CreatedDate: created,
			}},
			Contacts: []supplier.Contact{{ID: uuid.NewSHA1(sid, []byte("contact")), Name: word(), Email: supplier.NewText("ap@example.com"),
				ModifiedDate: modified, CreatedDate: created}},
			RemittanceAddresses: []supplier.RemittanceAddress{{ID: uuid.NewSHA1(sid, []byte("address")), CompanyName: supplier.NewText(name),
				Address:      supplier.Address{Line1: fmt.Sprintf("%d Main St", i), City: "Wellington", Country: "NZ"},
				ModifiedDate: modified, CreatedDate: created}},
		}
		for range rng.IntN(3) {
			r.Keywords = append(r.Keywords, word())
		}
		c.Suppliers[i] = r
	}
	return c
}
