package user

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"
	"unicode/utf8"

	"github.com/procurekit/procure"
)

// How an update avoids doing the caller's work under a store lock.
//
// A change can cost as much as its request allows (a SCIM PATCH of a
// megabyte of role codes), and the whole-user checks after it cost more
// still. Run inside Store.UpdateUser's apply, that work would hold
// memstore's store-wide users lock, or a PostgreSQL row lock and a pooled
// connection, so that one large request stalls every other community.
// So Update, UpdateIf and Modify are optimistic: they read the user
// without a lock, prepare the new user from that copy (the change,
// Normalize, Validate, the auto-roles), and then commit with an apply
// that only checks that the version they read is still the stored one
// and swaps in the prepared user. Updates of one user through one
// Service take turns (writers), so that they do not spoil each other's
// commits. When another write got in between all the same (another
// node's, or a direct store call), the update is prepared again from the
// user that write left (a caller version makes that ErrVersionMismatch
// instead), after a short random pause, at most maxAttempts times, then
// fails with ErrContention.
//
// An update whose prepared user equals the stored one (User.SameValues) is
// not written at all: the stored user is returned as it is, Version
// included, so that a client's retry or an identity provider's repeated
// push does not move the ETag every other client holds.

// maxAttempts is how many times an update without a version precondition
// is prepared and committed before it gives up with ErrContention. Each
// lost attempt means another write to the same user committed, so the
// bound only bites under sustained contention on one user.
const maxAttempts = 16

// errStale is the commit's apply failing because the stored version is no
// longer the one the update was prepared from.
var errStale = errors.New("user changed since it was read")

// UpdateIf is Update with a precondition: when version is not zero, the
// stored user must have that Version, or nothing changes and the error
// matches ErrVersionMismatch. The check is part of the store's atomic
// commit (Store.UpdateUser's apply), so no other write can come between
// the check and the change. Zero means no precondition, as Update.
func (s *Service) UpdateIf(ctx context.Context, community string, in Input, version int64) (User, error) {
	in, err := in.Prepare(OpUpdate)
	if err != nil {
		return User{}, err
	}
	roles, err := s.autoRoles(ctx, community)
	if err != nil {
		return User{}, err
	}
	return s.update(ctx, community, *in.ID, version, func(cur User) (User, error) {
		next := cur.Clone()
		in.ApplyTo(&next)
		addRoles(&next, roles)
		return next, nil
	})
}

// Modify changes the community's user with that id by running change on
// a copy of it, then normalises and validates the result as a whole user
// (User.Normalize, User.Validate) and appends the community's auto-roles,
// as Update does. It is the update of callers whose change depends on the
// stored user, such as a SCIM PATCH.
//
// change runs outside any store lock or transaction, on a copy read
// without one; the result is committed only if the user has not changed
// since (otherwise change runs again on the newer user). So change must
// not call the store, must depend only on its argument, and may run more
// than once; its error is returned as it is.
//
// version, when not zero, is the Version the stored user must have
// (ErrVersionMismatch otherwise, never a second run of change). change
// cannot alter the id or the version. An id unknown in the community is
// ErrNotFound. A result equal to the stored user is not written: the
// stored user is returned, its Version unchanged.
func (s *Service) Modify(ctx context.Context, community, id string, version int64, change func(*User) error) (User, error) {
	if !plausibleID(id) {
		return User{}, fmt.Errorf("user id of %d bytes, or not storable text: %w", len(id), ErrNotFound)
	}
	roles, err := s.autoRoles(ctx, community)
	if err != nil {
		return User{}, err
	}
	return s.update(ctx, community, id, version, func(cur User) (User, error) {
		next := cur.Clone()
		if err := change(&next); err != nil {
			return User{}, err
		}
		next = next.Normalize()
		next.ID, next.Version = cur.ID, cur.Version
		if err := next.Validate(); err != nil {
			var ve *procure.ValidationError
			if errors.As(err, &ve) {
				ve.Source = procure.SourceBody // the change came from a request
			}
			return User{}, err
		}
		addRoles(&next, roles)
		return next, nil
	})
}

// update is the optimistic read-prepare-commit of UpdateIf and Modify.
// prepare builds the new user from the stored one, which it must not
// change (it works on a Clone); it runs with no lock held, and again for
// each attempt that another write spoiled.
func (s *Service) update(ctx context.Context, community, id string, version int64, prepare func(cur User) (User, error)) (User, error) {
	done, err := s.writers.wait(ctx, community, id)
	if err != nil {
		return User{}, err
	}
	defer done()
	cur, err := s.Store.UserByID(ctx, community, id)
	if err != nil {
		return User{}, err
	}
	for attempt := 1; ; attempt++ {
		if err := checkVersion(&cur, version); err != nil {
			return User{}, err
		}
		next, err := prepare(cur)
		if err != nil {
			return User{}, err
		}
		next.ID, next.Version = cur.ID, cur.Version
		if next.SameValues(cur) {
			// Nothing to write: the stored user as it was read, which is
			// what this update leaves.
			return cur, nil
		}
		var latest User
		stored, err := s.Store.UpdateUser(ctx, community, id, func(u *User) error {
			if u.Version != cur.Version {
				latest = *u // a deep copy of the stored user: the next attempt's start
				return errStale
			}
			*u = next
			return nil
		})
		switch {
		case err == nil:
			return stored, nil
		case !errors.Is(err, errStale):
			return User{}, err
		case version != 0:
			// The precondition named the version read, which is gone.
			return User{}, fmt.Errorf("user id %q has version %d, not %d: %w", id, latest.Version, version, ErrVersionMismatch)
		case attempt == maxAttempts:
			return User{}, fmt.Errorf("user id %q: %d attempts each lost to another write: %w", id, attempt, ErrContention)
		}
		if err := pause(ctx, attempt); err != nil {
			return User{}, err
		}
		cur = latest
	}
}

// pause waits before attempt+1 of an update whose attempts lost to other
// writes, a random time below a bound that doubles with each attempt
// (exponential backoff with full jitter): writers that collided on one
// user then come back at different times instead of colliding again,
// which on a store whose commit waits for a row lock would otherwise let
// only one of them through per round. It returns early with the
// context's error.
func pause(ctx context.Context, attempt int) error {
	const base, ceiling = 500 * time.Microsecond, 50 * time.Millisecond
	bound := min(base<<min(attempt, 16), ceiling)
	t := time.NewTimer(rand.N(bound))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-t.C:
		return nil
	}
}

// ByID returns the community's user with exactly that id (ids are not
// trimmed), or an error matching ErrNotFound; an id no store can hold is
// not found without a lookup.
func (s *Service) ByID(ctx context.Context, community, id string) (User, error) {
	if !plausibleID(id) {
		return User{}, fmt.Errorf("user id of %d bytes, or not storable text: %w", len(id), ErrNotFound)
	}
	return s.Store.UserByID(ctx, community, id)
}

// plausibleID reports whether a stored user can have id: not empty,
// storable text of at most MaxTextLength characters.
func plausibleID(id string) bool {
	return id != "" && len(id) <= 4*MaxTextLength && Storable(id) && utf8.RuneCountInString(id) <= MaxTextLength
}

// checkVersion is the precondition of UpdateIf and Modify.
func checkVersion(u *User, version int64) error {
	if version != 0 && u.Version != version {
		return fmt.Errorf("user id %q has version %d, not %d: %w", u.ID, u.Version, version, ErrVersionMismatch)
	}
	return nil
}

// AutoRolesOf returns the role codes Create and Update add to every user
// of the community (Service.AutoRoles, or the Store's), checked as they
// are there. A client that compares a user with the one it wants needs
// them, to tell the server's own additions from a difference.
func (s *Service) AutoRolesOf(ctx context.Context, community string) ([]string, error) {
	return s.autoRoles(ctx, community)
}
