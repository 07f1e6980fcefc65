// Package usertest is the conformance suite of user.Store: the behaviour
// every backend must share, written once (in the manner of go-cloud's
// drivertest). A backend's tests call Run with a function that opens a
// store holding a given data file:
//
//	func TestUserStore(t *testing.T) {
//		usertest.Run(t, func(t *testing.T, f *datafile.File) user.Store {
//			s, err := memstore.LoadReader(f.Reader())
//			if err != nil {
//				t.Fatal(err)
//			}
//			return s
//		})
//	}
//
// A difference between backends that the suite lets through is a gap in
// the suite: add the case here, not in one backend's tests.
package usertest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/procurekit/procure/datafile"
	"github.com/procurekit/procure/user"
)

// The fixture's communities.
const (
	CommunityA = "community-a"
	CommunityB = "community-b"
)

// equate compares users as the Store contract does: a nil and an empty list
// are the same. Versions are the store's to set; testVersions checks them.
var equate = cmp.Options{cmpopts.EquateEmpty(), cmpopts.IgnoreFields(user.User{}, "Version")}

// Fixture returns the data file every subtest starts from: two
// communities, each with users, and the username "alice" in both. Ids are
// deliberately not all UUIDs: a store must take any id text.
func Fixture() *datafile.File {
	return &datafile.File{Communities: []datafile.Community{
		{
			ID: CommunityA, Name: "Community A", Region: datafile.DEMO,
			AutoRoles: []string{"EMPLOYEE", "REQUESTER"},
			Users: []user.User{
				{
					ID: "0b6f3c5e-8a8e-4b9e-9d7c-1f0f7c9f2a01", Username: "Alice.Smith@example.com",
					ExternalID: "E-1001", FirstName: "Alice", LastName: "Smith", DisplayName: "Alice Smith (OU-SCI)",
					Email: "alice.smith@example.com", Phone: "+64 4 555 0101", Enabled: true,
					OrganisationUnits: user.Codes("OU-SCI", "OU-ENG"),
					Roles:             user.Codes("BUYER"), // no auto-roles: data-file users are taken as they are
					BuyerGroups:       user.Codes("BG-LAB"),
					Attributes:        []user.Attribute{{Name: "costCentre", Value: "CC-100"}, {Name: "grade", Value: ""}},
					ApproverGroups:    user.Codes("AG-1"),
				},
				{ID: "hr-0002", Username: "bob", FirstName: "Bob", Enabled: false},
			},
		},
		{
			ID: CommunityB, Name: "Community B", Region: datafile.NZ,
			Users: []user.User{
				{ID: "b-0001", Username: "alice.smith@example.com", FirstName: "Other Alice", Enabled: true},
				{ID: "b-0002", Username: "carol", Enabled: true, Roles: user.Codes("APPROVER")},
			},
		},
	}}
}

// fixtureUser returns the fixture's user with that id.
func fixtureUser(tb testing.TB, id string) user.User {
	tb.Helper()
	for _, c := range Fixture().Communities {
		for _, u := range c.Users {
			if u.ID == id {
				return u
			}
		}
	}
	tb.Fatalf("no fixture user %q", id)
	return user.User{}
}

const (
	aliceID = "0b6f3c5e-8a8e-4b9e-9d7c-1f0f7c9f2a01"
	bobID   = "hr-0002"
	aliceB  = "b-0001"
	carolID = "b-0002"
)

// Run runs the suite. open must return a new, independent store holding
// exactly the data file's users (as they are: no trimming, no auto-roles)
// and its communities' auto-roles; it is called once per subtest, and may
// register cleanups on t.
func Run(t *testing.T, open func(t *testing.T, f *datafile.File) user.Store) {
	t.Helper()
	newStore := func(t *testing.T) user.Store {
		t.Helper()
		s := open(t, Fixture())
		if s == nil {
			t.Fatal("open returned a nil store")
		}
		return s
	}
	t.Run("UserByUsername", func(t *testing.T) { testUserByUsername(t, newStore(t)) })
	t.Run("UserByID", func(t *testing.T) { testUserByID(t, newStore(t)) })
	t.Run("CreateUser", func(t *testing.T) { testCreateUser(t, newStore) })
	t.Run("CreateUserCopies", func(t *testing.T) { testCreateUserCopies(t, newStore(t)) })
	t.Run("UpdateUser", func(t *testing.T) { testUpdateUser(t, newStore(t)) })
	t.Run("UpdateUserNotFound", func(t *testing.T) { testUpdateUserNotFound(t, newStore(t)) })
	t.Run("UpdateUserApplyError", func(t *testing.T) { testUpdateUserApplyError(t, newStore(t)) })
	t.Run("Rename", func(t *testing.T) { testRename(t, newStore) })
	t.Run("ConcurrentCreateSameUsername", func(t *testing.T) { testConcurrentCreateSameUsername(t, newStore(t)) })
	t.Run("ConcurrentCreateSameID", func(t *testing.T) { testConcurrentCreateSameID(t, newStore(t)) })
	t.Run("ConcurrentRenames", func(t *testing.T) { testConcurrentRenames(t, newStore(t)) })
	t.Run("ConcurrentUpdatesAreAtomic", func(t *testing.T) { testConcurrentUpdates(t, newStore(t)) })
	t.Run("AutoRoles", func(t *testing.T) { testAutoRoles(t, newStore(t)) })
	t.Run("Versions", func(t *testing.T) { testVersions(t, newStore) })
	t.Run("ConcurrentUpdateIf", func(t *testing.T) { testConcurrentUpdateIf(t, newStore(t)) })
	t.Run("Lister", func(t *testing.T) { testLister(t, newStore(t)) })
	t.Run("UpdateUserUnchanged", func(t *testing.T) { testUpdateUserUnchanged(t, newStore(t)) })
	t.Run("NoOpUpdates", func(t *testing.T) { testNoOpUpdates(t, newStore(t)) })
	t.Run("ConcurrentModify", func(t *testing.T) { testConcurrentModify(t, newStore(t)) })
	t.Run("UsernameNFC", func(t *testing.T) { testUsernameNFC(t, newStore(t)) })
}

// mustGet returns the user with that username, failing tb otherwise.
func mustGet(tb testing.TB, s user.Store, community, username string) user.User {
	tb.Helper()
	u, err := s.UserByUsername(context.Background(), community, username)
	if err != nil {
		tb.Fatalf("UserByUsername(%s, %q): %v", community, username, err)
	}
	return u
}

// wantUser fails tb unless both lookups of the community's user want.ID
// return want.
func wantUser(tb testing.TB, s user.Store, community string, want user.User) {
	tb.Helper()
	ctx := context.Background()
	got, err := s.UserByID(ctx, community, want.ID)
	if err != nil {
		tb.Fatalf("UserByID(%s, %q): %v", community, want.ID, err)
	}
	if diff := cmp.Diff(want, got, equate); diff != "" {
		tb.Errorf("UserByID(%s, %q) (-want +got):\n%s", community, want.ID, diff)
	}
	got, err = s.UserByUsername(ctx, community, want.Username)
	if err != nil {
		tb.Fatalf("UserByUsername(%s, %q): %v", community, want.Username, err)
	}
	if diff := cmp.Diff(want, got, equate); diff != "" {
		tb.Errorf("UserByUsername(%s, %q) (-want +got):\n%s", community, want.Username, diff)
	}
}

// wantNoUsername fails tb unless the community has no such username.
func wantNoUsername(tb testing.TB, s user.Store, community, username string) {
	tb.Helper()
	u, err := s.UserByUsername(context.Background(), community, username)
	if !errors.Is(err, user.ErrNotFound) {
		tb.Errorf("UserByUsername(%s, %q) = %+v, %v; want ErrNotFound", community, username, u, err)
	}
}

// wantNoID fails tb unless the community has no user with that id.
func wantNoID(tb testing.TB, s user.Store, community, id string) {
	tb.Helper()
	u, err := s.UserByID(context.Background(), community, id)
	if !errors.Is(err, user.ErrNotFound) {
		tb.Errorf("UserByID(%s, %q) = %+v, %v; want ErrNotFound", community, id, u, err)
	}
}

func testUserByUsername(t *testing.T, s user.Store) {
	ctx := context.Background()
	tests := []struct {
		name      string
		community string
		username  string
		wantID    string // "" means ErrNotFound
	}{
		{"as stored", CommunityA, "Alice.Smith@example.com", aliceID},
		// docs: users.md: the lookup is case-insensitive.
		{"lower case", CommunityA, "alice.smith@example.com", aliceID},
		{"upper case", CommunityA, "ALICE.SMITH@EXAMPLE.COM", aliceID},
		{"mixed case", CommunityA, "aLiCe.SmItH@eXaMpLe.CoM", aliceID},
		{"disabled users are found", CommunityA, "BOB", bobID},
		// docs: tenancy.md: a community sees only its own users.
		{"same username, other community", CommunityB, "ALICE.smith@example.com", aliceB},
		{"another community's user", CommunityA, "carol", ""},
		{"another community's user, reversed", CommunityB, "bob", ""},
		{"unknown username", CommunityA, "nobody", ""},
		{"unknown community", "community-x", "bob", ""},
		{"not trimmed by the store", CommunityA, " bob", ""},
		{"prefix is not a match", CommunityA, "bo", ""},
		{"empty", CommunityA, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u, err := s.UserByUsername(ctx, tt.community, tt.username)
			if tt.wantID == "" {
				if !errors.Is(err, user.ErrNotFound) {
					t.Fatalf("UserByUsername = %+v, %v; want ErrNotFound", u, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("UserByUsername: %v", err)
			}
			if diff := cmp.Diff(fixtureUser(t, tt.wantID), u, equate); diff != "" {
				t.Errorf("UserByUsername (-want +got):\n%s", diff)
			}
		})
	}
}

func testUserByID(t *testing.T, s user.Store) {
	ctx := context.Background()
	tests := []struct {
		name      string
		community string
		id        string
		found     bool
	}{
		{"own user", CommunityA, aliceID, true},
		{"own user with a non-UUID id", CommunityA, bobID, true},
		{"other community's user", CommunityB, aliceID, false},
		{"other community's user, reversed", CommunityA, carolID, false},
		{"unknown id", CommunityA, "no-such-id", false},
		{"id differs in case", CommunityA, "HR-0002", false},
		{"empty", CommunityA, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u, err := s.UserByID(ctx, tt.community, tt.id)
			if !tt.found {
				if !errors.Is(err, user.ErrNotFound) {
					t.Fatalf("UserByID = %+v, %v; want ErrNotFound", u, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("UserByID: %v", err)
			}
			if diff := cmp.Diff(fixtureUser(t, tt.id), u, equate); diff != "" {
				t.Errorf("UserByID (-want +got):\n%s", diff)
			}
		})
	}
}

func testCreateUser(t *testing.T, newStore func(*testing.T) user.Store) {
	ctx := context.Background()
	full := user.User{
		ID: "new-0001", Username: "Dana.Lee", ExternalID: "E-9", FirstName: "Dana", LastName: "Lee",
		DisplayName: "Dana Lee", Email: "dana@example.com", Phone: "555", Enabled: true,
		OrganisationUnits: user.Codes("OU-1"), Roles: user.Codes("BUYER", "EMPLOYEE"),
		BuyerGroups: user.Codes("BG-1", "BG-2"), Attributes: []user.Attribute{{Name: "a", Value: "1"}},
		ApproverGroups: user.Codes("AG-9"),
	}
	t.Run("stores every field", func(t *testing.T) {
		s := newStore(t)
		got, err := s.CreateUser(ctx, CommunityA, full)
		if err != nil {
			t.Fatalf("CreateUser: %v", err)
		}
		if diff := cmp.Diff(full, got, equate); diff != "" {
			t.Errorf("CreateUser returned (-want +got):\n%s", diff)
		}
		wantUser(t, s, CommunityA, full)
		if got := mustGet(t, s, CommunityA, "DANA.LEE"); got.ID != full.ID {
			t.Errorf("case-insensitive lookup of the new user found id %q", got.ID)
		}
		wantNoID(t, s, CommunityB, full.ID)
		wantNoUsername(t, s, CommunityB, full.Username)
	})
	t.Run("minimal user, disabled", func(t *testing.T) {
		s := newStore(t)
		u := user.User{ID: "new-0002", Username: "x"}
		if _, err := s.CreateUser(ctx, CommunityB, u); err != nil {
			t.Fatalf("CreateUser: %v", err)
		}
		wantUser(t, s, CommunityB, u)
	})
	t.Run("same username in another community", func(t *testing.T) {
		s := newStore(t)
		u := user.User{ID: "new-0003", Username: "BOB", Enabled: true}
		if _, err := s.CreateUser(ctx, CommunityB, u); err != nil {
			t.Fatalf("CreateUser: %v", err)
		}
		wantUser(t, s, CommunityB, u)
		wantUser(t, s, CommunityA, fixtureUser(t, bobID))
	})

	rejects := []struct {
		name    string
		u       user.User
		wantErr error
		// absentID and absentUsername must not exist after the failed
		// create ("" when the rejected user's value is taken anyway).
		absentID, absentUsername string
	}{
		// docs: users.md: usernames unique per community, case-insensitively.
		{"username taken", user.User{ID: "new-1", Username: "bob"}, user.ErrDuplicateUsername, "new-1", ""},
		{"username taken in another case", user.User{ID: "new-1", Username: "ALICE.SMITH@EXAMPLE.COM"}, user.ErrDuplicateUsername, "new-1", ""},
		// docs: users.md: ids unique across the whole service.
		{"id taken in the community", user.User{ID: bobID, Username: "new-name"}, user.ErrDuplicateID, "", "new-name"},
		{"id taken in another community", user.User{ID: carolID, Username: "new-name"}, user.ErrDuplicateID, "", "new-name"},
		{"id and username taken: id first", user.User{ID: carolID, Username: "bob"}, user.ErrDuplicateID, "", ""},
	}
	for _, tt := range rejects {
		t.Run(tt.name, func(t *testing.T) {
			s := newStore(t)
			got, err := s.CreateUser(ctx, CommunityA, tt.u)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("CreateUser = %+v, %v; want %v", got, err, tt.wantErr)
			}
			// Nothing stored: the fixture users are intact and the
			// rejected user's other key did not get in.
			for _, id := range []string{aliceID, bobID} {
				wantUser(t, s, CommunityA, fixtureUser(t, id))
			}
			wantUser(t, s, CommunityB, fixtureUser(t, carolID))
			if tt.absentID != "" {
				wantNoID(t, s, CommunityA, tt.absentID)
			}
			if tt.absentUsername != "" {
				wantNoUsername(t, s, CommunityA, tt.absentUsername)
			}
		})
	}
	t.Run("unicode case", func(t *testing.T) {
		s := newStore(t)
		if _, err := s.CreateUser(ctx, CommunityA, user.User{ID: "u-1", Username: "Ærøskøbing"}); err != nil {
			t.Fatal(err)
		}
		_, err := s.CreateUser(ctx, CommunityA, user.User{ID: "u-2", Username: "ÆRØSKØBING"})
		if !errors.Is(err, user.ErrDuplicateUsername) {
			t.Fatalf("second CreateUser = %v, want ErrDuplicateUsername", err)
		}
		if got := mustGet(t, s, CommunityA, "ærøskøbing"); got.ID != "u-1" {
			t.Errorf("lookup found %q, want u-1", got.ID)
		}
	})
}

func testCreateUserCopies(t *testing.T, s user.Store) {
	ctx := context.Background()
	u := user.User{ID: "c-1", Username: "copy", Roles: user.Codes("A"), Attributes: []user.Attribute{{Name: "n", Value: "v"}}}
	want := u.Clone()
	got, err := s.CreateUser(ctx, CommunityA, u)
	if err != nil {
		t.Fatal(err)
	}
	// Neither the caller's input nor the returned value is the stored one.
	u.Roles[0].Code = "CHANGED-INPUT"
	u.Attributes[0].Value = "CHANGED"
	got.Roles[0].Code = "CHANGED-RESULT"
	wantUser(t, s, CommunityA, want)
	read := mustGet(t, s, CommunityA, "copy")
	read.Roles[0].Code = "CHANGED-READ"
	wantUser(t, s, CommunityA, want)
}

func testUpdateUser(t *testing.T, s user.Store) {
	ctx := context.Background()
	orig := fixtureUser(t, aliceID)
	var seen user.User
	calls := 0
	got, err := s.UpdateUser(ctx, CommunityA, aliceID, func(u *user.User) error {
		calls++
		seen = u.Clone()
		u.Email = "new@example.com"
		u.Enabled = false
		u.Roles = append(u.Roles, user.Code{Code: "APPROVER"})
		u.Attributes[0].Value = "CC-200" // in place: the store's copy, not its data
		u.BuyerGroups = nil
		return nil
	})
	if err != nil {
		t.Fatalf("UpdateUser: %v", err)
	}
	if calls < 1 {
		t.Fatal("apply was not called")
	}
	if diff := cmp.Diff(orig, seen, equate); diff != "" {
		t.Errorf("apply saw (-want +got):\n%s", diff)
	}
	want := orig.Clone()
	want.Email = "new@example.com"
	want.Enabled = false
	want.Roles = user.Codes("BUYER", "APPROVER")
	want.Attributes[0].Value = "CC-200"
	want.BuyerGroups = nil
	if diff := cmp.Diff(want, got, equate); diff != "" {
		t.Errorf("UpdateUser returned (-want +got):\n%s", diff)
	}
	wantUser(t, s, CommunityA, want)
	// Other users are untouched.
	wantUser(t, s, CommunityA, fixtureUser(t, bobID))
	wantUser(t, s, CommunityB, fixtureUser(t, aliceB))

	t.Run("result is a copy", func(t *testing.T) {
		got.Roles[0].Code = "CHANGED"
		wantUser(t, s, CommunityA, want)
	})
	t.Run("re-enable", func(t *testing.T) {
		// docs: users.md "Enabled": enabled false -> true through an update.
		got, err := s.UpdateUser(ctx, CommunityA, aliceID, func(u *user.User) error { u.Enabled = true; return nil })
		if err != nil || !got.Enabled {
			t.Fatalf("UpdateUser = %+v, %v; want enabled", got, err)
		}
		if u := mustGet(t, s, CommunityA, want.Username); !u.Enabled {
			t.Error("stored user still disabled")
		}
	})
	t.Run("id cannot change", func(t *testing.T) {
		got, err := s.UpdateUser(ctx, CommunityA, bobID, func(u *user.User) error {
			u.ID = "changed-id"
			u.FirstName = "Robert"
			return nil
		})
		if err != nil {
			t.Fatalf("UpdateUser: %v", err)
		}
		if got.ID != bobID || got.FirstName != "Robert" {
			t.Errorf("UpdateUser = id %q first name %q; want id %q kept, first name Robert", got.ID, got.FirstName, bobID)
		}
		wantNoID(t, s, CommunityA, "changed-id")
		if u := mustGet(t, s, CommunityA, "bob"); u.ID != bobID || u.FirstName != "Robert" {
			t.Errorf("stored bob = %+v", u)
		}
	})
}

func testUpdateUserNotFound(t *testing.T, s user.Store) {
	ctx := context.Background()
	tests := []struct {
		name      string
		community string
		id        string
	}{
		{"unknown id", CommunityA, "no-such-id"},
		// docs: tenancy.md: another community's user is not found.
		{"another community's user", CommunityB, aliceID},
		{"another community's user, reversed", CommunityA, carolID},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			called := false
			got, err := s.UpdateUser(ctx, tt.community, tt.id, func(u *user.User) error {
				called = true
				u.FirstName = "Mallory"
				return nil
			})
			if !errors.Is(err, user.ErrNotFound) {
				t.Fatalf("UpdateUser = %+v, %v; want ErrNotFound", got, err)
			}
			if called {
				t.Error("apply was called for a user that is not found")
			}
			wantUser(t, s, CommunityA, fixtureUser(t, aliceID))
			wantUser(t, s, CommunityB, fixtureUser(t, carolID))
		})
	}
}

var errApply = errors.New("apply refused")

func testUpdateUserApplyError(t *testing.T, s user.Store) {
	ctx := context.Background()
	orig := fixtureUser(t, aliceID)
	got, err := s.UpdateUser(ctx, CommunityA, aliceID, func(u *user.User) error {
		// Change everything, in place too, then fail.
		u.Username = "renamed"
		u.Email = "x@example.com"
		u.Roles[0].Code = "CHANGED"
		u.Attributes = append(u.Attributes[:0], user.Attribute{Name: "z", Value: "z"})
		return fmt.Errorf("checking: %w", errApply)
	})
	if !errors.Is(err, errApply) {
		t.Fatalf("UpdateUser = %+v, %v; want the apply error", got, err)
	}
	wantUser(t, s, CommunityA, orig)
	wantNoUsername(t, s, CommunityA, "renamed")
}

func testRename(t *testing.T, newStore func(*testing.T) user.Store) {
	ctx := context.Background()
	rename := func(s user.Store, community, id, to string) (user.User, error) {
		return s.UpdateUser(ctx, community, id, func(u *user.User) error { u.Username = to; return nil })
	}
	t.Run("to a free username", func(t *testing.T) {
		// docs: users.md: a username may change to one not taken; the id stays.
		s := newStore(t)
		got, err := rename(s, CommunityA, bobID, "Robert")
		if err != nil {
			t.Fatalf("rename: %v", err)
		}
		want := fixtureUser(t, bobID)
		want.Username = "Robert"
		if diff := cmp.Diff(want, got, equate); diff != "" {
			t.Errorf("rename returned (-want +got):\n%s", diff)
		}
		wantUser(t, s, CommunityA, want)
		if u := mustGet(t, s, CommunityA, "ROBERT"); u.ID != bobID {
			t.Errorf("new username in other case found %q", u.ID)
		}
		wantNoUsername(t, s, CommunityA, "bob")
		// The old username is free again.
		if _, err := s.CreateUser(ctx, CommunityA, user.User{ID: "new-bob", Username: "BOB"}); err != nil {
			t.Errorf("creating a user with the freed username: %v", err)
		}
	})
	t.Run("to a taken username", func(t *testing.T) {
		s := newStore(t)
		for _, to := range []string{"alice.smith@example.com", "ALICE.SMITH@EXAMPLE.COM"} {
			got, err := rename(s, CommunityA, bobID, to)
			if !errors.Is(err, user.ErrDuplicateUsername) {
				t.Fatalf("rename to %q = %+v, %v; want ErrDuplicateUsername", to, got, err)
			}
		}
		wantUser(t, s, CommunityA, fixtureUser(t, bobID))
		wantUser(t, s, CommunityA, fixtureUser(t, aliceID))
	})
	t.Run("case of its own username", func(t *testing.T) {
		// docs: users.md: a user may change the case of its own username.
		s := newStore(t)
		got, err := rename(s, CommunityA, aliceID, "ALICE.SMITH@EXAMPLE.COM")
		if err != nil {
			t.Fatalf("case-only rename: %v", err)
		}
		if got.Username != "ALICE.SMITH@EXAMPLE.COM" {
			t.Errorf("stored username %q, want the new case", got.Username)
		}
		if u := mustGet(t, s, CommunityA, "alice.smith@example.com"); u.Username != "ALICE.SMITH@EXAMPLE.COM" || u.ID != aliceID {
			t.Errorf("lookup after case-only rename = %q (%s)", u.Username, u.ID)
		}
		// The same username unchanged is fine too.
		if _, err := rename(s, CommunityA, aliceID, "ALICE.SMITH@EXAMPLE.COM"); err != nil {
			t.Errorf("rename to the same username: %v", err)
		}
	})
	t.Run("to a username of another community", func(t *testing.T) {
		s := newStore(t)
		if _, err := rename(s, CommunityB, carolID, "bob"); err != nil {
			t.Fatalf("rename: %v", err)
		}
		if u := mustGet(t, s, CommunityB, "BOB"); u.ID != carolID {
			t.Errorf("B's bob is %q", u.ID)
		}
		wantUser(t, s, CommunityA, fixtureUser(t, bobID))
	})
	t.Run("swap through a free name", func(t *testing.T) {
		s := newStore(t)
		steps := []struct{ id, to string }{{bobID, "tmp"}, {aliceID, "bob"}, {bobID, "alice.smith@example.com"}}
		for _, st := range steps {
			if _, err := rename(s, CommunityA, st.id, st.to); err != nil {
				t.Fatalf("rename %s to %q: %v", st.id, st.to, err)
			}
		}
		if u := mustGet(t, s, CommunityA, "bob"); u.ID != aliceID {
			t.Errorf("bob is %q, want %q", u.ID, aliceID)
		}
		if u := mustGet(t, s, CommunityA, "Alice.Smith@example.com"); u.ID != bobID {
			t.Errorf("alice is %q, want %q", u.ID, bobID)
		}
		wantNoUsername(t, s, CommunityA, "tmp")
	})
}

// workers is how many goroutines race in the concurrency tests.
const workers = 64

// race runs f(i) for i in [0, workers) at once, as close together as a
// start signal allows, and returns each call's error.
func race(f func(i int) error) []error {
	errs := make([]error, workers)
	var ready, done sync.WaitGroup
	start := make(chan struct{})
	for i := range workers {
		ready.Add(1)
		done.Add(1)
		go func() {
			defer done.Done()
			ready.Done()
			<-start
			errs[i] = f(i)
		}()
	}
	ready.Wait()
	close(start)
	done.Wait()
	return errs
}

// tally counts the nil errors and the errors matching want, and fails tb
// on any other error.
func tally(tb testing.TB, errs []error, want error) (ok, matched int) {
	tb.Helper()
	for i, err := range errs {
		switch {
		case err == nil:
			ok++
		case errors.Is(err, want):
			matched++
		default:
			tb.Errorf("call %d: unexpected error %v", i, err)
		}
	}
	return ok, matched
}

func testConcurrentCreateSameUsername(t *testing.T, s user.Store) {
	// docs: users.md: concurrent requests never produce two users with one username.
	ctx := context.Background()
	errs := race(func(i int) error {
		// Different cases of one username, different ids.
		name := "Race.Winner"
		if i%2 == 1 {
			name = "RACE.WINNER"
		}
		_, err := s.CreateUser(ctx, CommunityA, user.User{ID: fmt.Sprintf("race-%02d", i), Username: name})
		return err
	})
	ok, dup := tally(t, errs, user.ErrDuplicateUsername)
	if ok != 1 || dup != workers-1 {
		t.Fatalf("%d creates succeeded and %d were duplicates; want 1 and %d", ok, dup, workers-1)
	}
	winner := slices.IndexFunc(errs, func(err error) bool { return err == nil })
	if u := mustGet(t, s, CommunityA, "race.winner"); u.ID != fmt.Sprintf("race-%02d", winner) {
		t.Errorf("stored user %q, want the winner race-%02d", u.ID, winner)
	}
	for i := range workers {
		if i != winner {
			wantNoID(t, s, CommunityA, fmt.Sprintf("race-%02d", i))
		}
	}
}

func testConcurrentCreateSameID(t *testing.T, s user.Store) {
	// docs: users.md: concurrent requests never produce two users with one id,
	// whichever community they come from.
	ctx := context.Background()
	community := func(i int) string {
		if i%2 == 0 {
			return CommunityA
		}
		return CommunityB
	}
	errs := race(func(i int) error {
		_, err := s.CreateUser(ctx, community(i), user.User{ID: "same-id", Username: fmt.Sprintf("same-%02d", i)})
		return err
	})
	ok, dup := tally(t, errs, user.ErrDuplicateID)
	if ok != 1 || dup != workers-1 {
		t.Fatalf("%d creates succeeded and %d were duplicates; want 1 and %d", ok, dup, workers-1)
	}
	winner := slices.IndexFunc(errs, func(err error) bool { return err == nil })
	got, err := s.UserByID(ctx, community(winner), "same-id")
	if err != nil || got.Username != fmt.Sprintf("same-%02d", winner) {
		t.Errorf("UserByID = %+v, %v; want the winner same-%02d", got, err, winner)
	}
	for i := range workers {
		if i != winner {
			wantNoUsername(t, s, community(i), fmt.Sprintf("same-%02d", i))
		}
	}
}

func testConcurrentRenames(t *testing.T, s user.Store) {
	ctx := context.Background()
	for i := range workers {
		if _, err := s.CreateUser(ctx, CommunityA, user.User{ID: fmt.Sprintf("ren-%02d", i), Username: fmt.Sprintf("ren-%02d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	// Readers run alongside, so that a race detector sees reads and
	// writes interleave.
	stop := make(chan struct{})
	var readers sync.WaitGroup
	for range 4 {
		readers.Add(1)
		go func() {
			defer readers.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				_, err := s.UserByUsername(ctx, CommunityA, "TARGET")
				if err != nil && !errors.Is(err, user.ErrNotFound) {
					t.Errorf("reader: %v", err)
					return
				}
			}
		}()
	}
	errs := race(func(i int) error {
		_, err := s.UpdateUser(ctx, CommunityA, fmt.Sprintf("ren-%02d", i), func(u *user.User) error {
			u.Username = "Target"
			return nil
		})
		return err
	})
	close(stop)
	readers.Wait()
	ok, dup := tally(t, errs, user.ErrDuplicateUsername)
	if ok != 1 || dup != workers-1 {
		t.Fatalf("%d renames succeeded and %d were duplicates; want 1 and %d", ok, dup, workers-1)
	}
	winner := slices.IndexFunc(errs, func(err error) bool { return err == nil })
	if u := mustGet(t, s, CommunityA, "target"); u.ID != fmt.Sprintf("ren-%02d", winner) {
		t.Errorf("target is %q, want ren-%02d", u.ID, winner)
	}
	for i := range workers {
		name := fmt.Sprintf("ren-%02d", i)
		if i == winner {
			wantNoUsername(t, s, CommunityA, name)
			continue
		}
		if u := mustGet(t, s, CommunityA, name); u.ID != name {
			t.Errorf("loser %s now %q", name, u.ID)
		}
	}
}

func testConcurrentUpdates(t *testing.T, s user.Store) {
	// Store contract: an UpdateUser never loses another call's change.
	ctx := context.Background()
	errs := race(func(i int) error {
		_, err := s.UpdateUser(ctx, CommunityB, carolID, func(u *user.User) error {
			u.Roles = append(u.Roles, user.Code{Code: fmt.Sprintf("R-%02d", i)})
			return nil
		})
		return err
	})
	if ok, _ := tally(t, errs, errApply); ok != workers {
		t.Fatalf("%d of %d updates succeeded", ok, workers)
	}
	got := mustGet(t, s, CommunityB, "carol")
	if len(got.Roles) != workers+1 {
		t.Fatalf("carol has %d roles after %d concurrent additions, want %d: a read-modify-write lost an update", len(got.Roles), workers, workers+1)
	}
	have := map[string]bool{}
	for _, r := range got.Roles {
		have[r.Code] = true
	}
	for i := range workers {
		if !have[fmt.Sprintf("R-%02d", i)] {
			t.Errorf("role R-%02d lost", i)
		}
	}
}

func testAutoRoles(t *testing.T, s user.Store) {
	ar, ok := s.(user.AutoRoler)
	if !ok {
		t.Skip("the store does not implement user.AutoRoler")
	}
	ctx := context.Background()
	tests := []struct {
		community string
		want      []string
	}{
		{CommunityA, []string{"EMPLOYEE", "REQUESTER"}},
		{CommunityB, nil},
		{"community-x", nil},
	}
	for _, tt := range tests {
		got, err := ar.AutoRoles(ctx, tt.community)
		if err != nil {
			t.Fatalf("AutoRoles(%s): %v", tt.community, err)
		}
		if diff := cmp.Diff(tt.want, got, equate); diff != "" {
			t.Errorf("AutoRoles(%s) (-want +got):\n%s", tt.community, diff)
		}
		if len(got) > 0 {
			got[0] = "CHANGED"
		}
	}
	if got, _ := ar.AutoRoles(ctx, CommunityA); len(got) == 0 || got[0] != "EMPLOYEE" {
		t.Errorf("changing the returned slice changed the store: %v", got)
	}
}
