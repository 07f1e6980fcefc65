package usertest

import (
	"context"
	"errors"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/procurekit/procure"
	"github.com/procurekit/procure/user"
)

// wantVersion fails tb unless both lookups of the community's user id
// return version want.
func wantVersion(tb testing.TB, s user.Store, community, id string, want int64) {
	tb.Helper()
	u, err := s.UserByID(context.Background(), community, id)
	if err != nil {
		tb.Fatalf("UserByID(%s, %q): %v", community, id, err)
	}
	if u.Version != want {
		tb.Errorf("UserByID(%s, %q).Version = %d; want %d", community, id, u.Version, want)
	}
	u, err = s.UserByUsername(context.Background(), community, u.Username)
	if err != nil {
		tb.Fatalf("UserByUsername(%s, %q): %v", community, u.Username, err)
	}
	if u.Version != want {
		tb.Errorf("UserByUsername(%s, %q).Version = %d; want %d", community, u.Username, u.Version, want)
	}
}

// user.Store: loaded and created users are at version 1, each stored
// update adds one, and a failed update changes nothing.
func testVersions(t *testing.T, newStore func(*testing.T) user.Store) {
	ctx := context.Background()
	t.Run("loaded users", func(t *testing.T) {
		s := newStore(t)
		for _, id := range []string{aliceID, bobID} {
			wantVersion(t, s, CommunityA, id, 1)
		}
		wantVersion(t, s, CommunityB, carolID, 1)
	})
	t.Run("create ignores the caller's version", func(t *testing.T) {
		s := newStore(t)
		got, err := s.CreateUser(ctx, CommunityA, user.User{ID: "v-1", Username: "v1", Version: 42})
		if err != nil {
			t.Fatal(err)
		}
		if got.Version != 1 {
			t.Errorf("CreateUser returned version %d; want 1", got.Version)
		}
		wantVersion(t, s, CommunityA, "v-1", 1)
	})
	t.Run("updates count", func(t *testing.T) {
		s := newStore(t)
		var seen []int64
		for i := range 3 {
			got, err := s.UpdateUser(ctx, CommunityA, bobID, func(u *user.User) error {
				seen = append(seen, u.Version)
				u.FirstName = "Bob " + strconv.Itoa(i)
				u.Version = 99 // discarded
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if want := int64(i + 2); got.Version != want {
				t.Errorf("update %d returned version %d; want %d", i, got.Version, want)
			}
		}
		// apply saw the stored version each time (a store that retries
		// may call it more than once, with the same version).
		last := seen[len(seen)-1]
		if seen[0] != 1 || last != 3 {
			t.Errorf("apply saw versions %v; want 1 first and 3 last", seen)
		}
		wantVersion(t, s, CommunityA, bobID, 4)
		wantVersion(t, s, CommunityA, aliceID, 1) // others untouched
	})
	t.Run("failed updates change no version", func(t *testing.T) {
		s := newStore(t)
		boom := errors.New("boom")
		if _, err := s.UpdateUser(ctx, CommunityA, bobID, func(u *user.User) error { return boom }); !errors.Is(err, boom) {
			t.Fatalf("UpdateUser = %v; want boom", err)
		}
		_, err := s.UpdateUser(ctx, CommunityA, bobID, func(u *user.User) error { u.Username = "ALICE.smith@example.com"; return nil })
		if !errors.Is(err, user.ErrDuplicateUsername) {
			t.Fatalf("UpdateUser = %v; want ErrDuplicateUsername", err)
		}
		wantVersion(t, s, CommunityA, bobID, 1)
	})
	t.Run("UpdateIf", func(t *testing.T) {
		s := newStore(t)
		svc := user.NewService(s)
		in := user.Input{ID: new(bobID), Username: new("bob"), FirstName: new("Robert")}
		got, err := svc.UpdateIf(ctx, CommunityA, in, 1)
		if err != nil {
			t.Fatalf("UpdateIf at the stored version: %v", err)
		}
		if got.Version != 2 || got.FirstName != "Robert" {
			t.Fatalf("UpdateIf = version %d, first name %q; want 2, Robert", got.Version, got.FirstName)
		}
		in.FirstName = new("Bobby")
		if _, err := svc.UpdateIf(ctx, CommunityA, in, 1); !errors.Is(err, user.ErrVersionMismatch) {
			t.Fatalf("UpdateIf with an old version = %v; want ErrVersionMismatch", err)
		}
		if u := mustGet(t, s, CommunityA, "bob"); u.FirstName != "Robert" || u.Version != 2 {
			t.Errorf("after the refused update: first name %q version %d; want Robert, 2", u.FirstName, u.Version)
		}
		if got, err := svc.UpdateIf(ctx, CommunityA, in, 0); err != nil || got.Version != 3 {
			t.Fatalf("UpdateIf without a version = %+v, %v; want version 3", got, err)
		}
	})
	t.Run("Modify", func(t *testing.T) {
		s := newStore(t)
		svc := user.NewService(s)
		got, err := svc.Modify(ctx, CommunityA, bobID, 1, func(u *user.User) error {
			u.LastName = "  Jones  "
			return nil
		})
		if err != nil {
			t.Fatalf("Modify: %v", err)
		}
		want := fixtureUser(t, bobID)
		want.LastName = "Jones" // normalised
		want.Roles = user.Codes("EMPLOYEE", "REQUESTER")
		if diff := cmp.Diff(want, got, equate); diff != "" || got.Version != 2 {
			t.Errorf("Modify returned version %d (-want +got):\n%s", got.Version, diff)
		}
		if _, err := svc.Modify(ctx, CommunityA, bobID, 1, func(u *user.User) error { return nil }); !errors.Is(err, user.ErrVersionMismatch) {
			t.Errorf("Modify with an old version = %v; want ErrVersionMismatch", err)
		}
		_, err = svc.Modify(ctx, CommunityA, bobID, 0, func(u *user.User) error { u.Username = " "; return nil })
		var ve *procure.ValidationError
		if !errors.As(err, &ve) || ve.Source != procure.SourceBody {
			t.Errorf("Modify to an empty username = %v; want a validation error", err)
		}
		if _, err := svc.Modify(ctx, CommunityA, carolID, 0, func(u *user.User) error { return nil }); !errors.Is(err, user.ErrNotFound) {
			t.Errorf("Modify of another community's user = %v; want ErrNotFound", err)
		}
		wantVersion(t, s, CommunityA, bobID, 2)
	})
}

// Concurrent conditional updates from one version: exactly one wins, the
// others get ErrVersionMismatch, and the stored user is the winner's.
func testConcurrentUpdateIf(t *testing.T, s user.Store) {
	ctx := context.Background()
	svc := user.NewService(s)
	errs := race(func(i int) error {
		in := user.Input{ID: new(bobID), Username: new("bob"), FirstName: new("writer-" + strconv.Itoa(i))}
		_, err := svc.UpdateIf(ctx, CommunityA, in, 1)
		return err
	})
	ok, lost := tally(t, errs, user.ErrVersionMismatch)
	if ok != 1 || lost != workers-1 {
		t.Fatalf("%d updates won and %d lost; want 1 and %d", ok, lost, workers-1)
	}
	winner := -1
	for i, err := range errs {
		if err == nil {
			winner = i
		}
	}
	u := mustGet(t, s, CommunityA, "bob")
	if u.FirstName != "writer-"+strconv.Itoa(winner) || u.Version != 2 {
		t.Errorf("stored first name %q version %d; want writer-%d, 2", u.FirstName, u.Version, winner)
	}
}

// user.Lister, when the store has it: pages in id order, filtered by
// external id, counted per community.
func testLister(t *testing.T, s user.Store) {
	l, ok := s.(user.Lister)
	if !ok {
		t.Skip("the store is not a user.Lister")
	}
	ctx := context.Background()
	ids := func(us []user.User) []string {
		var out []string
		for _, u := range us {
			out = append(out, u.ID)
		}
		return out
	}
	ext := func(s string) *string { return &s }
	tests := []struct {
		name          string
		community     string
		q             user.Query
		offset, limit int
		want          []string
		total         int
	}{
		{"all, id order", CommunityA, user.Query{}, 0, 10, []string{aliceID, bobID}, 2},
		{"offset", CommunityA, user.Query{}, 1, 10, []string{bobID}, 2},
		{"limit", CommunityA, user.Query{}, 0, 1, []string{aliceID}, 2},
		{"count only", CommunityA, user.Query{}, 0, 0, nil, 2},
		{"past the end", CommunityA, user.Query{}, 5, 10, nil, 2},
		{"external id", CommunityA, user.Query{ExternalID: ext("E-1001")}, 0, 10, []string{aliceID}, 1},
		{"external id is exact", CommunityA, user.Query{ExternalID: ext("e-1001")}, 0, 10, nil, 0},
		{"empty external id", CommunityA, user.Query{ExternalID: ext("")}, 0, 10, []string{bobID}, 1},
		{"other community", CommunityB, user.Query{}, 0, 10, []string{aliceB, carolID}, 2},
		{"external id of another community", CommunityB, user.Query{ExternalID: ext("E-1001")}, 0, 10, nil, 0},
		{"unknown community", "nowhere", user.Query{}, 0, 10, nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, total, err := l.ListUsers(ctx, tt.community, tt.q, tt.offset, tt.limit)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, ids(got)); diff != "" || total != tt.total {
				t.Errorf("ListUsers: total %d (want %d), ids (-want +got):\n%s", total, tt.total, diff)
			}
			for _, u := range got {
				if u.Version != 1 {
					t.Errorf("user %q: version %d; want 1", u.ID, u.Version)
				}
			}
		})
	}
	t.Run("full users", func(t *testing.T) {
		got, _, err := l.ListUsers(ctx, CommunityA, user.Query{}, 0, 1)
		if err != nil || len(got) != 1 {
			t.Fatalf("ListUsers = %v, %v", got, err)
		}
		if diff := cmp.Diff(fixtureUser(t, aliceID), got[0], equate); diff != "" {
			t.Errorf("listed user (-want +got):\n%s", diff)
		}
	})
}
