package user

import (
	"context"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/procurekit/procure"
)

// UpdateIf is Update with a precondition: when version is not zero, the
// stored user must have that Version, or nothing changes and the error
// matches ErrVersionMismatch. The check runs inside the store's atomic
// update (Store.UpdateUser's apply), so no other write can come between
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
	return s.Store.UpdateUser(ctx, community, *in.ID, func(u *User) error {
		if err := checkVersion(u, version); err != nil {
			return err
		}
		in.ApplyTo(u)
		addRoles(u, roles)
		return nil
	})
}

// Modify changes the community's user with that id by running change on
// a copy of it inside the store's atomic update, then normalises and
// validates the result as a whole user (User.Normalize, User.Validate)
// and appends the community's auto-roles, as Update does. It is the
// update of callers whose change depends on the stored user, such as a
// SCIM PATCH.
//
// version, when not zero, is the Version the stored user must have
// (ErrVersionMismatch otherwise). change must not call the store and may
// run more than once (Store.UpdateUser); its error is returned as it is.
// change cannot alter the id or the version. An id unknown in the
// community is ErrNotFound.
func (s *Service) Modify(ctx context.Context, community, id string, version int64, change func(*User) error) (User, error) {
	if !plausibleID(id) {
		return User{}, fmt.Errorf("user id of %d bytes, or not storable text: %w", len(id), ErrNotFound)
	}
	roles, err := s.autoRoles(ctx, community)
	if err != nil {
		return User{}, err
	}
	return s.Store.UpdateUser(ctx, community, id, func(u *User) error {
		if err := checkVersion(u, version); err != nil {
			return err
		}
		next := u.Clone()
		if err := change(&next); err != nil {
			return err
		}
		next = next.Normalize()
		next.ID, next.Version = u.ID, u.Version
		if err := next.Validate(); err != nil {
			var ve *procure.ValidationError
			if errors.As(err, &ve) {
				ve.Source = procure.SourceBody // the change came from a request
			}
			return err
		}
		addRoles(&next, roles)
		*u = next
		return nil
	})
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
