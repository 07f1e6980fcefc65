package pgstore_test

import (
	"context"
	"testing"

	"github.com/procurekit/procure/user/usertest"
)

// A re-import that changes a user makes a new version (so that an update
// with If-Match of the old one fails); one that leaves it as it is does
// not.
func TestImportBumpsChangedUserVersion(t *testing.T) {
	ctx := context.Background()
	f := usertest.Fixture()
	s, _ := openStore(t, f)
	if err := s.Import(ctx, f); err != nil {
		t.Fatal(err)
	}
	u, err := s.UserByID(ctx, usertest.CommunityA, "hr-0002")
	if err != nil || u.Version != 1 {
		t.Fatalf("after an unchanged re-import: version %d, %v; want 1", u.Version, err)
	}
	f = usertest.Fixture()
	f.Communities[0].Users[1].FirstName = "Robert"
	if err := s.Import(ctx, f); err != nil {
		t.Fatal(err)
	}
	u, err = s.UserByID(ctx, usertest.CommunityA, "hr-0002")
	if err != nil || u.Version != 2 || u.FirstName != "Robert" {
		t.Fatalf("after a changing re-import: %+v, %v; want Robert at version 2", u, err)
	}
}
