package suppliertest

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/procurekit/procure/supplier"
)

// The words Synthetic makes names of.
var (
	benchPlaces = []string{"Harbour", "Kiwi", "Southern", "Pacific", "Totara", "Matai", "Rimu", "Coastal", "Summit", "Alpine",
		"Northern", "Central", "Capital", "Urban", "Metro", "Island", "Golden", "Silver", "Bay", "River",
		"Lake", "Valley", "Mountain", "Forest", "Ocean", "Sunrise", "Sunset", "Eastern", "Western", "Pioneer",
		"Heritage", "Premier", "Quality", "Reliable", "Rapid", "Smart", "Apex", "Atlas", "Beacon", "Cedar",
		"Delta", "Ember", "Falcon", "Granite", "Horizon", "Ironbark", "Jade", "Kauri", "Lumen", "Meridian",
		"Nova", "Orchard", "Pinnacle", "Quartz", "Redwood", "Sterling", "Tui", "Unity", "Vista", "Willow"}
	benchAccented = []string{"Tāmaki", "Ōtautahi", "Café", "Müller", "Pōneke", "Zürich", "Ōamaru", "Crème"}
	benchTrades   = []string{"Plumbing", "Electrical", "Logistics", "Foods", "Print", "Security", "Cleaning", "Catering",
		"Consulting", "Engineering", "Construction", "Landscaping", "Freight", "Stationery", "Furniture", "Hardware",
		"Software", "Medical", "Laboratory", "Uniforms", "Signage", "Roofing", "Painting", "Glazing",
		"Timber", "Steel", "Concrete", "Scaffolding", "Plant Hire", "Couriers", "Travel", "Events",
		"Marketing", "Recruitment", "Legal", "Accounting", "Insurance", "Telecoms", "Data", "Energy"}
	benchSuffixes = []string{"Ltd", "Limited", "Pty Ltd", "Group", "& Co", "Services", "Solutions", "Supplies"}
)

// SyntheticSince is the day from which about a tenth of Synthetic's
// suppliers are modified.
var SyntheticSince = time.Date(2025, 10, 1, 0, 0, 0, 0, time.UTC)

// Synthetic returns n synthetic supplier masters, in normal form, for
// benchmarks and randomised tests: deterministic (a fixed seed per n), with
// realistic names ("Harbour Totara Plumbing Ltd"), legal names,
// supplierIds, two keywords, batches of equal modifiedDates (about a tenth
// on or after SyntheticSince), a few names in lower case, with macrons or
// accents, or missing (individuals); one contact and one remittance
// address each.

func Synthetic(n int) []supplier.Record {
	rng := rand.New(rand.NewPCG(2026, uint64(n)))
	start := time.Date(2023, 1, 1, 0, 0, 0, 0, time.UTC)
	span := SyntheticSince.Sub(start)
	recs := make([]supplier.Record, n)
	var batch time.Time
	for i := range recs {
		r := &recs[i]
		var idb [16]byte
		for j := range idb {
			idb[j] = byte(rng.Uint32())
		}
		r.ID = uuid.Must(uuid.FromBytes(idb[:]))
		place := benchPlaces[rng.IntN(len(benchPlaces))]
		if rng.IntN(100) < 3 {
			place = benchAccented[rng.IntN(len(benchAccented))]
		}
		trade := benchTrades[rng.IntN(len(benchTrades))]
		name := place + " " + benchPlaces[rng.IntN(len(benchPlaces))] + " " + trade + " " + benchSuffixes[rng.IntN(len(benchSuffixes))]
		switch k := rng.IntN(100); {
		case k < 2:
			name = "" // individuals without a trading name
			r.ProfileType = supplier.ProfileIndividual
			r.FirstName, r.LastName = supplier.NewText("Aroha"), supplier.NewText("Ngata")
		case k < 7:
			name = strings.ToLower(name)
			r.ProfileType = supplier.ProfileCompany
		default:
			r.ProfileType = supplier.ProfileCompany
		}
		r.Name = supplier.NewText(name)
		if name != "" && rng.IntN(10) < 7 {
			r.LegalBusinessName = supplier.NewText(name + " Limited")
		}
		r.SupplierID = supplier.NewText(fmt.Sprintf("SUP-%07d", rng.IntN(10_000_000)))
		r.CommunitySupplierID = supplier.NewText(fmt.Sprintf("CS-%d", i))
		r.DefaultEmailAddress = supplier.NewText(fmt.Sprintf("accounts%d@example.com", i))
		r.Keywords = []string{strings.ToLower(trade), benchTrades[rng.IntN(len(benchTrades))]}
		// Bulk imports: runs of suppliers share one modifiedDate.
		if i%50 == 0 || rng.IntN(4) == 0 {
			if rng.IntN(10) == 0 {
				batch = SyntheticSince.Add(time.Duration(rng.Int64N(int64(200 * 24 * time.Hour))))
			} else {
				batch = start.Add(time.Duration(rng.Int64N(int64(span))))
			}
			batch = batch.Truncate(time.Microsecond)
		}
		r.ModifiedDate = batch
		r.CreatedDate = start.Add(-time.Duration(rng.Int64N(int64(365 * 24 * time.Hour)))).Truncate(time.Second)
		r.Contacts = []supplier.Contact{{
			ID: uuid.Must(uuid.FromBytes(append(idb[:15:15], 1))), Name: "Accounts Payable", Email: supplier.NewText("ap@example.com"),
			Phone: &supplier.Phone{Prefix: supplier.NewText("+64"), Number: supplier.NewText("95550000")}, ModifiedDate: r.ModifiedDate, CreatedDate: r.CreatedDate,
		}}
		r.RemittanceAddresses = []supplier.RemittanceAddress{{
			ID: uuid.Must(uuid.FromBytes(append(idb[:15:15], 2))), CompanyName: supplier.NewText(name), Code: supplier.NewText("MAIN"),
			Address:      supplier.Address{Line1: fmt.Sprintf("%d Queen Street", i%500+1), City: "Auckland", Postcode: supplier.NewText("1010"), Country: "New Zealand"},
			ModifiedDate: r.ModifiedDate, CreatedDate: r.CreatedDate,
		}}
	}
	return recs
}
