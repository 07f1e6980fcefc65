package usertest

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/procurekit/procure/user"
)

// user.Store: an apply that reports user.ErrUnchanged stores nothing and
// gets the stored user back, Version included, with no error; even a
// change apply made to its argument before saying so is dropped.
func testUpdateUserUnchanged(t *testing.T, s user.Store) {
	ctx := context.Background()
	before := mustGet(t, s, CommunityA, "Alice.Smith@example.com")
	for _, tt := range []struct {
		name  string
		apply func(*user.User) error
	}{
		{"ErrUnchanged", func(u *user.User) error { return user.ErrUnchanged }},
		{"wrapped, after changing its argument", func(u *user.User) error {
			u.FirstName = "Changed"
			u.Roles = nil
			return fmt.Errorf("nothing to do: %w", user.ErrUnchanged)
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.UpdateUser(ctx, CommunityA, aliceID, tt.apply)
			if err != nil {
				t.Fatalf("UpdateUser = %v; want no error", err)
			}
			if diff := cmp.Diff(before, got, equate); diff != "" || got.Version != before.Version {
				t.Errorf("UpdateUser returned version %d (want %d), (-stored +got):\n%s", got.Version, before.Version, diff)
			}
			wantUser(t, s, CommunityA, before)
			wantVersion(t, s, CommunityA, aliceID, before.Version)
		})
	}
	if _, err := s.UpdateUser(ctx, CommunityB, aliceID, func(*user.User) error { return user.ErrUnchanged }); !errors.Is(err, user.ErrNotFound) {
		t.Errorf("ErrUnchanged for another community's user = %v; want ErrNotFound", err)
	}
}

// Service on the store: an update, Modify or conditional update whose
// result equals the stored user (after trimming and auto-roles) leaves
// the Version as it is, so the ETag a client holds stays valid.
func testNoOpUpdates(t *testing.T, s user.Store) {
	ctx := context.Background()
	svc := user.NewService(s)
	in := user.Input{ID: new(bobID), Username: new("bob"), FirstName: new("Bob"), Enabled: new(false)}
	first, err := svc.Update(ctx, CommunityA, in) // adds the auto-roles: a change
	if err != nil || first.Version != 2 {
		t.Fatalf("first Update = version %d, %v; want 2", first.Version, err)
	}
	steps := []struct {
		name string
		do   func() (user.User, error)
	}{
		{"the same update", func() (user.User, error) { return svc.Update(ctx, CommunityA, in) }},
		{"the same values, untrimmed", func() (user.User, error) {
			return svc.Update(ctx, CommunityA, user.Input{ID: new(bobID), Username: new(" bob "), FirstName: new(" Bob")})
		}},
		{"the auto-roles sent back", func() (user.User, error) {
			return svc.Update(ctx, CommunityA, user.Input{ID: new(bobID), Username: new("bob"), Roles: &[]user.Code{{Code: "EMPLOYEE"}, {Code: "REQUESTER"}}})
		}},
		{"at the stored version", func() (user.User, error) { return svc.UpdateIf(ctx, CommunityA, in, 2) }},
		{"disable a disabled user", func() (user.User, error) {
			return svc.Modify(ctx, CommunityA, bobID, 0, func(u *user.User) error { u.Enabled = false; return nil })
		}},
		{"a change undone", func() (user.User, error) {
			return svc.Modify(ctx, CommunityA, bobID, 2, func(u *user.User) error {
				u.Roles = append(u.Roles, user.Code{Code: "TEMP"})
				u.Roles = u.Roles[:len(u.Roles)-1]
				return nil
			})
		}},
	}
	for _, st := range steps {
		got, err := st.do()
		if err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if diff := cmp.Diff(first, got, equate); diff != "" || got.Version != 2 {
			t.Errorf("%s: version %d; want 2 (-first +got):\n%s", st.name, got.Version, diff)
		}
	}
	wantVersion(t, s, CommunityA, bobID, 2)
	// A real change still counts.
	if got, err := svc.Modify(ctx, CommunityA, bobID, 2, func(u *user.User) error { u.Enabled = true; return nil }); err != nil || got.Version != 3 {
		t.Errorf("enable = version %d, %v; want 3", got.Version, err)
	}
}

// Concurrent Modify calls without a version, through two Services (as
// two nodes would make them), never lose an update: each that succeeds is
// in the stored user, and the version counts them. A call may give up
// with ErrContention after losing every attempt to the other node's
// writes (allowed, and logged), but not all of them.
func testConcurrentModify(t *testing.T, s user.Store) {
	ctx := context.Background()
	nodes := [2]*user.Service{user.NewService(s), user.NewService(s)}
	errs := race(func(i int) error {
		_, err := nodes[i%2].Modify(ctx, CommunityB, carolID, 0, func(u *user.User) error {
			u.Roles = append(u.Roles, user.Code{Code: fmt.Sprintf("R-%02d", i)})
			return nil
		})
		return err
	})
	ok, gaveUp := tally(t, errs, user.ErrContention)
	t.Logf("%d Modify calls succeeded, %d gave up", ok, gaveUp)
	if ok == 0 {
		t.Fatal("no Modify succeeded")
	}
	got := mustGet(t, s, CommunityB, "carol")
	have := map[string]bool{}
	for _, r := range got.Roles {
		have[r.Code] = true
	}
	for i, err := range errs {
		if code := fmt.Sprintf("R-%02d", i); have[code] != (err == nil) {
			t.Errorf("role %s stored %v, but its Modify returned %v: a lost or phantom update", code, have[code], err)
		}
	}
	if len(got.Roles) != ok+1 || got.Version != int64(ok+1) {
		t.Errorf("carol has %d roles at version %d after %d successful Modify calls; want %d and %d", len(got.Roles), got.Version, ok, ok+1, ok+1)
	}
}

// UserByUsername compares usernames by UsernameKey, NFC included: a
// username stored composed is found decomposed, and the other way round,
// and a create in the other form is a duplicate.
func testUsernameNFC(t *testing.T, s user.Store) {
	ctx := context.Background()
	for _, u := range []user.User{
		{ID: "nfc-1", Username: "Jos\u00e9", Enabled: true},   // composed
		{ID: "nfc-2", Username: "Rene\u0301e", Enabled: true}, // decomposed, as a data file may hold it
	} {
		if _, err := s.CreateUser(ctx, CommunityA, u); err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range []struct{ name, id string }{
		{"jos\u00e9", "nfc-1"}, {"JOSE\u0301", "nfc-1"}, {"ren\u00e9e", "nfc-2"}, {"RENE\u0301E", "nfc-2"},
	} {
		if got := mustGet(t, s, CommunityA, tt.name); got.ID != tt.id {
			t.Errorf("UserByUsername(%+q) = %q; want %q", tt.name, got.ID, tt.id)
		}
	}
	if _, err := s.CreateUser(ctx, CommunityA, user.User{ID: "nfc-3", Username: "Jose\u0301"}); !errors.Is(err, user.ErrDuplicateUsername) {
		t.Errorf("create the decomposed form beside the composed = %v; want ErrDuplicateUsername", err)
	}
	if _, err := s.UpdateUser(ctx, CommunityA, bobID, func(u *user.User) error { u.Username = "REN\u00c9E"; return nil }); !errors.Is(err, user.ErrDuplicateUsername) {
		t.Errorf("rename to the composed form of another's username = %v; want ErrDuplicateUsername", err)
	}
	// A user may change its own username's form.
	if _, err := s.UpdateUser(ctx, CommunityA, "nfc-2", func(u *user.User) error { u.Username = "Ren\u00e9e"; return nil }); err != nil {
		t.Errorf("rename to the composed form of its own username = %v", err)
	}
	if got := mustGet(t, s, CommunityA, "rene\u0301e"); got.ID != "nfc-2" || got.Username != "Ren\u00e9e" {
		t.Errorf("after the rename: %q %+q; want nfc-2 Ren\u00e9e", got.ID, got.Username)
	}
}
