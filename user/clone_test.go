package user_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/procurekit/procure/user"
)

// A clone shares nothing with its user: writing into or appending to any
// list of either leaves the other's lists, and the clone's other lists
// (which share one allocation, user.User.Clone), as they were.
func TestCloneSharesNothing(t *testing.T) {
	lists := []struct {
		name string
		of   func(u *user.User) *[]user.Code
	}{
		{"organisationUnits", func(u *user.User) *[]user.Code { return &u.OrganisationUnits }},
		{"roles", func(u *user.User) *[]user.Code { return &u.Roles }},
		{"buyerGroups", func(u *user.User) *[]user.Code { return &u.BuyerGroups }},
		{"approverGroups", func(u *user.User) *[]user.Code { return &u.ApproverGroups }},
	}
	orig := func() user.User {
		return user.User{ID: "u1", Username: "jdoe",
			OrganisationUnits: user.Codes("OU-1", "OU-2"), Roles: user.Codes("BUYER"), BuyerGroups: user.Codes("BG-1", "BG-2", "BG-3"),
			ApproverGroups: user.Codes("AG-1"), Attributes: []user.Attribute{{Name: "site", Value: "Wellington"}}}
	}
	for _, l := range lists {
		for _, side := range []string{"clone", "original"} {
			t.Run(side+"'s "+l.name, func(t *testing.T) {
				u := orig()
				c := u.Clone()
				if diff := cmp.Diff(orig(), c); diff != "" {
					t.Fatalf("the clone differs from its user (-user +clone):\n%s", diff)
				}
				changed, other := &c, &u
				if side == "original" {
					changed, other = &u, &c
				}
				p := l.of(changed)
				(*p)[0].Code = "CHANGED"
				*p = append(*p, user.Code{Code: "APPENDED"}, user.Code{Code: "APPENDED-2"})
				if diff := cmp.Diff(orig(), *other); diff != "" {
					t.Errorf("changing the %s's %s changed the %s (-want +got):\n%s", side, l.name, map[bool]string{true: "original", false: "clone"}[side == "clone"], diff)
				}
				// The changed user's other lists are as they were.
				want := orig()
				*l.of(&want) = *p
				if diff := cmp.Diff(want, *changed); diff != "" {
					t.Errorf("appending to the %s's %s changed its other lists (-want +got):\n%s", side, l.name, diff)
				}
			})
		}
	}
	t.Run("empty lists stay nil", func(t *testing.T) {
		c := user.User{ID: "u2", Roles: []user.Code{}}.Clone()
		if c.Roles != nil || c.OrganisationUnits != nil || c.Attributes != nil {
			t.Errorf("clone of a user without list entries: %+v; want nil lists", c)
		}
	})
}

// BenchmarkUserClone clones a user with entries in every list, as a store
// does several times a request.
func BenchmarkUserClone(b *testing.B) {
	u := user.User{ID: "u1", Username: "jdoe", OrganisationUnits: user.Codes("OU-FIN"), Roles: user.Codes("BUYER", "APPROVER"),
		BuyerGroups: user.Codes("BG-1"), ApproverGroups: user.Codes("AG-1"),
		Attributes: []user.Attribute{{Name: "costCentre", Value: "CC-0042"}, {Name: "site", Value: "Wellington"}}}
	b.ReportAllocs()
	var sink user.User
	for b.Loop() {
		sink = u.Clone()
	}
	_ = sink
}
