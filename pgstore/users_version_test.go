package pgstore_test

import (
	"context"
	"errors"
	"testing"

	"github.com/procurekit/procure/auth"
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

// auth.KeyHashStore: the account of a key, active or not, found by the
// key's hash alone; an unknown key is auth.ErrUnknown.
func TestServiceAccountByKeyHash(t *testing.T) {
	ctx := context.Background()
	s, _ := openStore(t, fixture())
	for _, key := range []string{"demo-key-new", "demo-key-old"} {
		a, err := s.ServiceAccountByKeyHash(ctx, auth.HashSecret(key))
		if err != nil || a.ID != "sa-c1" || a.Community != "c1" || len(a.Keys) != 2 || len(a.AllowedIPs) != 2 {
			t.Errorf("%s: %+v, %v; want sa-c1 of c1 with its 2 keys and 2 networks", key, a, err)
		}
	}
	if _, err := s.ServiceAccountByKeyHash(ctx, auth.HashSecret("no-such-key")); !errors.Is(err, auth.ErrUnknown) {
		t.Errorf("unknown key: %v; want auth.ErrUnknown", err)
	}
}
