package user

import (
	"testing"

	"github.com/procurekit/procure"
)

// BenchmarkPlainlyValid compares the hand-written fast path with the
// validator it stands in front of (checkTags, go-playground/validator),
// on a typical valid user: the figures plainlyValid's doc comment quotes.
func BenchmarkPlainlyValid(b *testing.B) {
	u := User{
		Username: "jane.doe@example.com", ExternalID: "E-10042", FirstName: "Jane", LastName: "Doe",
		DisplayName: "Jane Doe (Finance)", Email: "jane.doe@example.com", Phone: "+64 4 555 0100",
		OrganisationUnits: Codes("OU-FIN"), Roles: Codes("BUYER", "APPROVER"), BuyerGroups: Codes("BG-1"),
		Attributes: []Attribute{{Name: "costCentre", Value: "CC-0042"}, {Name: "site", Value: "Wellington"}},
	}
	b.Run("fast", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if !plainlyValid(&u) {
				b.Fatal("not plainly valid")
			}
		}
	})
	b.Run("validator", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var ve procure.ValidationError
			if err := checkTags(&u, &ve); err != nil || len(ve.Fields) > 0 {
				b.Fatalf("checkTags: %v %v", err, ve.Fields)
			}
		}
	})
}
