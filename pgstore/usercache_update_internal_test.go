package pgstore

import (
	"context"
	"errors"
	"testing"

	"github.com/procurekit/procure/user"
)

// With the user cache, an update is one conditioned UPDATE from the
// cached copy; when that copy is behind the row (another node wrote it
// since the last poll), nothing is lost: the update takes the locked
// path and apply sees the stored row, as it does when it changes nothing.
func TestUpdateUserFromCache(t *testing.T) {
	ctx := context.Background()
	s, other := openUserNodes(t, user.User{ID: "u1", Username: "ann", Email: "ann@example.com"}, user.User{ID: "u2", Username: "bob"})
	if _, err := s.UserByID(ctx, "c1", "u1"); err != nil { // loads c1
		t.Fatal(err)
	}
	set := func(f func(*user.User)) func(*user.User) error {
		return func(u *user.User) error { f(u); return nil }
	}

	// The cache is current: one round trip, and the next read has it.
	u, err := s.UpdateUser(ctx, "c1", "u1", set(func(u *user.User) { u.FirstName = "Ann" }))
	if err != nil || u.FirstName != "Ann" || u.Version != 2 {
		t.Fatalf("UpdateUser = %+v, %v; want FirstName Ann, version 2", u, err)
	}
	if n := s.cachedUpdates.Load(); n != 1 {
		t.Errorf("%d updates from the cache, want 1", n)
	}
	if got, err := other.UserByID(ctx, "c1", "u1"); err != nil || got.FirstName != "Ann" || got.Version != 2 {
		t.Errorf("the database holds %+v, %v", got, err)
	}

	// Another node writes u1; this node's copy, not polled since, is
	// behind. Its update must keep the other node's change.
	release := holdUserPolls(s)
	if _, err := other.UpdateUser(ctx, "c1", "u1", set(func(u *user.User) { u.LastName = "Other" })); err != nil {
		t.Fatal(err)
	}
	var saw []int64
	u, err = s.UpdateUser(ctx, "c1", "u1", func(u *user.User) error {
		saw = append(saw, u.Version)
		u.Email = "new@example.com"
		return nil
	})
	release()
	if err != nil || u.LastName != "Other" || u.Email != "new@example.com" || u.Version != 4 {
		t.Fatalf("UpdateUser over a stale copy = %+v, %v; want the other node's LastName kept, version 4", u, err)
	}
	if len(saw) == 0 || saw[len(saw)-1] != 3 {
		t.Errorf("apply saw versions %v; want the stored 3 last", saw)
	}

	// apply changes nothing: the stored user comes back, from the row.
	if _, err := other.UpdateUser(ctx, "c1", "u1", set(func(u *user.User) { u.Phone = "+64 9 555 0100" })); err != nil {
		t.Fatal(err)
	}
	u, err = s.UpdateUser(ctx, "c1", "u1", func(*user.User) error { return user.ErrUnchanged })
	if err != nil || u.Phone != "+64 9 555 0100" || u.Version != 5 {
		t.Errorf("an unchanged update = %+v, %v; want the stored user, version 5", u, err)
	}

	// A username another user holds is refused on the one-round-trip
	// path as on the locked one, and nothing changes.
	before := s.cachedUpdates.Load()
	if _, err := s.UpdateUser(ctx, "c1", "u2", set(func(u *user.User) { u.Username = "ANN" })); !errors.Is(err, user.ErrDuplicateUsername) {
		t.Errorf("taking ann's username: %v; want user.ErrDuplicateUsername", err)
	}
	if got, err := other.UserByID(ctx, "c1", "u2"); err != nil || got.Username != "bob" || got.Version != 1 {
		t.Errorf("u2 after the refused update: %+v, %v", got, err)
	}
	if s.cachedUpdates.Load() != before {
		t.Errorf("a refused update counted as made")
	}
}
