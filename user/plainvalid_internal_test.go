package user

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/procurekit/procure"
	"github.com/procurekit/procure/internal/check"
)

// The fast path may only say "valid" where the validator says so too
// (plainlyValid's contract); otherwise the validator decides, so errors
// and their wording are unchanged. Random addresses are drawn from a
// grammar that favours the edges of check.PlainEmail's subset: dots, hyphens,
// digits in the top-level label, characters the validator allows but the
// subset does not, and outright garbage.
func TestPlainEmailAgreesWithValidator(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	fixed := []string{
		"a@b.co", "jane.doe@example.com", "j_d+tag-1@mail-1.example.org", "x@1.io", "A.B@C.DE",
		".a@b.co", "a.@b.co", "a..b@c.co", "a@b", "a@b.c", "a@-b.co", "a@b-.co", "a@b.co.", "a@b..co",
		"a@b.c0", "a@b.1co", "@b.co", "a@", "a b@c.co", "a@b.co ", "\"q\"@b.co", "a@[127.0.0.1]", "é@b.co", "a@b.ée",
	}
	agreed := 0
	try := func(s string) {
		t.Helper()
		if !check.PlainEmail(s) {
			return
		}
		agreed++
		u := User{Username: "u", Email: s}
		ve := &procure.ValidationError{Source: procure.SourceBody}
		if err := checkTags(&u, ve); err != nil || len(ve.Fields) != 0 {
			t.Fatalf("check.PlainEmail(%q) is true, but the validator says %v %v", s, ve.Fields, err)
		}
	}
	for _, s := range fixed {
		try(s)
	}
	for range 100000 {
		try(randomEmail(rng))
	}
	if agreed < 5000 {
		t.Fatalf("only %d of the random addresses took the fast path; the test is too weak", agreed)
	}
}

func randomEmail(rng *rand.Rand) string {
	const plain = "abcxyzABCXYZ0189_+-"
	const odd = ".-@!#$%&'*/=?^`{|}~\"() <>[]\\,;:é\x00\t"
	part := func(n int, dots bool) string {
		var b strings.Builder
		for range n {
			switch r := rng.IntN(20); {
			case r == 0:
				b.WriteByte(odd[rng.IntN(len(odd))])
			case r <= 3 && dots:
				b.WriteByte('.')
			default:
				b.WriteByte(plain[rng.IntN(len(plain))])
			}
		}
		return b.String()
	}
	s := part(1+rng.IntN(8), true) + "@" + part(1+rng.IntN(6), true) + "." + part(1+rng.IntN(4), rng.IntN(4) == 0)
	if rng.IntN(3) == 0 {
		// A top-level label of letters, as real addresses end.
		s = s[:strings.LastIndexByte(s, '.')+1] + []string{"com", "nz", "io", "c", "Org"}[rng.IntN(5)]
	}
	return s
}

// The same for whole users: random users whose texts sit around their
// limits in bytes and in characters (multi-byte text), with empty and
// long codes and attribute names. Wherever plainlyValid says true, the
// validator finds nothing.
func TestPlainlyValidAgreesWithValidator(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	text := func(limit int) string {
		switch rng.IntN(6) {
		case 0:
			return ""
		case 1:
			return strings.Repeat("x", limit-1+rng.IntN(3)) // limit-1, limit, limit+1 bytes
		case 2:
			return strings.Repeat("é", limit/2+rng.IntN(limit)) // over the limit in bytes, maybe not in characters
		default:
			return "plain"
		}
	}
	codes := func() []Code {
		cs := make([]Code, rng.IntN(3))
		for i := range cs {
			cs[i] = Code{Code: text(255)}
		}
		return cs
	}
	fast, slow := 0, 0
	for range 20000 {
		u := User{
			ID: text(255), Username: text(255), ExternalID: text(255), FirstName: text(255), LastName: text(255),
			DisplayName: text(255), Phone: text(255), Email: []string{"", "a@b.co", randomEmail(rng)}[rng.IntN(3)],
			OrganisationUnits: codes(), Roles: codes(), BuyerGroups: codes(), ApproverGroups: codes(),
		}
		for range rng.IntN(3) {
			u.Attributes = append(u.Attributes, Attribute{Name: text(20), Value: text(20)})
		}
		ve := &procure.ValidationError{Source: procure.SourceBody}
		if err := checkTags(&u, ve); err != nil {
			t.Fatal(err)
		}
		if plainlyValid(&u) {
			fast++
			if len(ve.Fields) != 0 {
				t.Fatalf("plainlyValid is true, but the validator says %v for %+v", ve.Fields, u)
			}
		} else if len(ve.Fields) == 0 {
			slow++ // valid, left to the validator: allowed, only slower
		}
	}
	if fast < 200 || slow < 200 {
		t.Fatalf("fast path %d, valid on the slow path %d: the test draws too few of one kind", fast, slow)
	}
}
