package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/procurekit/procure/user"
)

var (
	_ user.Store     = (*Store)(nil)
	_ user.AutoRoler = (*Store)(nil)
)

// userColumns are the columns userRow fills, in its order; the constraint
// names are what uniqueViolation reports.
const (
	userColumns = `id, community_id, username, username_key, external_id, first_name, last_name,
		display_name, email, phone, enabled, organisation_units, roles, buyer_groups, attributes, approver_groups`
	userPlaceholders = `$1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16`
	// updateUserSQL writes a userRow over the stored row, one version on;
	// its callers add their conditions and RETURNING.
	updateUserSQL = `UPDATE users SET (` + userColumns + `, updated_at, version) = (` + userPlaceholders + `, now(), version + 1)
		WHERE id = $1 AND community_id = $2`
	userSelect = `id, username, external_id, first_name, last_name, display_name, email, phone, enabled,
		organisation_units, roles, buyer_groups, attributes, approver_groups, version`

	constraintUserID       = "users_pkey"
	constraintUserUsername = "users_community_username"
)

// codesJSON encodes a coded list for its JSONB column ([] when empty), as
// a string: a []byte parameter would be sent as bytea text in the exec and
// simple protocol modes (internal/pgpool).
func codesJSON(l []user.Code) string {
	if len(l) == 0 {
		return "[]"
	}
	b, err := json.Marshal(l)
	if err != nil {
		panic(err) // a []struct{string} always encodes
	}
	return string(b)
}

// userRow returns the column values of u in userColumns order.
func userRow(community string, u user.User) ([]any, error) {
	attrs := "[]"
	if len(u.Attributes) > 0 {
		b, err := json.Marshal(u.Attributes)
		if err != nil {
			return nil, err
		}
		attrs = string(b)
	}
	return []any{u.ID, community, u.Username, user.UsernameKey(u.Username), u.ExternalID, u.FirstName, u.LastName,
		u.DisplayName, u.Email, u.Phone, u.Enabled, codesJSON(u.OrganisationUnits), codesJSON(u.Roles),
		codesJSON(u.BuyerGroups), attrs, codesJSON(u.ApproverGroups)}, nil
}

// scanUser reads the userSelect columns. Empty lists come back nil, as a
// user that never had them is built.
func scanUser(row pgx.Row) (user.User, error) {
	var u user.User
	var ous, roles, bgs, attrs, ags []byte
	if err := row.Scan(&u.ID, &u.Username, &u.ExternalID, &u.FirstName, &u.LastName, &u.DisplayName, &u.Email,
		&u.Phone, &u.Enabled, &ous, &roles, &bgs, &attrs, &ags, &u.Version); err != nil {
		return user.User{}, err
	}
	for _, f := range []struct {
		raw []byte
		dst *[]user.Code
	}{{ous, &u.OrganisationUnits}, {roles, &u.Roles}, {bgs, &u.BuyerGroups}, {ags, &u.ApproverGroups}} {
		if err := json.Unmarshal(f.raw, f.dst); err != nil {
			return user.User{}, err
		}
		if len(*f.dst) == 0 {
			*f.dst = nil
		}
	}
	if err := json.Unmarshal(attrs, &u.Attributes); err != nil {
		return user.User{}, err
	}
	if len(u.Attributes) == 0 {
		u.Attributes = nil
	}
	return u, nil
}

// UserByUsername returns the community's user whose username equals
// username case-insensitively, or an error matching user.ErrNotFound
// (user.Store).
func (s *Store) UserByUsername(ctx context.Context, community, username string) (user.User, error) {
	if u, found, ok := s.users.byUsername(community, username); ok {
		if !found {
			return user.User{}, fmt.Errorf("pgstore: user %q: %w", username, user.ErrNotFound)
		}
		return u, nil
	}
	s.userReads.Add(1)
	u, err := scanUser(s.rd().QueryRow(ctx, `SELECT `+userSelect+` FROM users WHERE community_id = $1 AND username_key = $2`,
		community, user.UsernameKey(username)))
	if errors.Is(err, pgx.ErrNoRows) {
		return user.User{}, fmt.Errorf("pgstore: user %q: %w", username, user.ErrNotFound)
	}
	if err != nil {
		return user.User{}, fmt.Errorf("pgstore: user by username: %w", err)
	}
	return u, nil
}

// UserByID returns the community's user with that id, or an error
// matching user.ErrNotFound, also when another community holds the id
// (user.Store).
func (s *Store) UserByID(ctx context.Context, community, id string) (user.User, error) {
	if u, found, ok := s.users.byID(community, id); ok {
		if !found {
			return user.User{}, fmt.Errorf("pgstore: user id %q: %w", id, user.ErrNotFound)
		}
		return u, nil
	}
	s.userReads.Add(1)
	u, err := scanUser(s.rd().QueryRow(ctx, `SELECT `+userSelect+` FROM users WHERE community_id = $1 AND id = $2`, community, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return user.User{}, fmt.Errorf("pgstore: user id %q: %w", id, user.ErrNotFound)
	}
	if err != nil {
		return user.User{}, fmt.Errorf("pgstore: user by id: %w", err)
	}
	return u, nil
}

// CreateUser stores u and returns it as stored (user.Store). The unique
// indexes decide duplicates, so concurrent creates on any number of nodes
// cannot both succeed: the error matches user.ErrDuplicateID when any
// community holds the id, and user.ErrDuplicateUsername when the community
// holds the username case-insensitively.
func (s *Store) CreateUser(ctx context.Context, community string, u user.User) (user.User, error) {
	defer s.timeWrite("CreateUser", time.Now())
	row, err := userRow(community, u)
	if err != nil {
		return user.User{}, fmt.Errorf("pgstore: create user: %w", err)
	}
	stored, err := scanUser(s.pool.QueryRow(ctx, `INSERT INTO users (`+userColumns+`) VALUES (`+userPlaceholders+`)
		RETURNING `+userSelect, row...))
	if err != nil {
		err = userConflict(err)
		if errors.Is(err, user.ErrDuplicateUsername) && s.idTaken(ctx, u.ID) {
			// user.Store: a create that breaks both rules is a duplicate id.
			err = user.ErrDuplicateID
		}
		return user.User{}, fmt.Errorf("pgstore: create user: %w", err)
	}
	s.users.wrote(community, stored)
	return stored, nil
}

// idTaken reports whether any community holds a user with that id. A
// failed lookup counts as not taken: the caller reports its first error.
func (s *Store) idTaken(ctx context.Context, id string) bool {
	var taken bool
	err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM users WHERE id = $1)`, id).Scan(&taken)
	return err == nil && taken
}

// userConflict maps a unique violation of the users table to the user
// package's sentinel errors, and returns other errors as they are.
func userConflict(err error) error {
	switch uniqueViolation(err) {
	case constraintUserID:
		return user.ErrDuplicateID
	case constraintUserUsername:
		return user.ErrDuplicateUsername
	}
	return err
}

// UpdateUser reads the community's user with that id, locking its row
// until the transaction ends, passes a copy to apply and stores what apply
// leaves (user.Store). The id cannot change: whatever apply does to it, the
// stored user keeps its id. It returns an error matching user.ErrNotFound
// when the community has no such user, user.ErrDuplicateUsername when the
// new username belongs to another user of the community, and apply's error
// as it is; nothing is stored then. When apply reports user.ErrUnchanged
// the transaction writes nothing and the user is returned as read. apply
// runs while the row lock and a pooled connection are held, so it must be
// cheap (user.Service prepares the new user before the call).
func (s *Store) UpdateUser(ctx context.Context, community, id string, apply func(*user.User) error) (user.User, error) {
	defer s.timeWrite("UpdateUser", time.Now())
	if stored, ok, err := s.updateCached(ctx, community, id, apply); ok || err != nil {
		return stored, err
	}
	var stored user.User
	wrote := false
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		cur, err := scanUser(tx.QueryRow(ctx, `SELECT `+userSelect+` FROM users WHERE community_id = $1 AND id = $2 FOR UPDATE`, community, id))
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("pgstore: user id %q: %w", id, user.ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("pgstore: update user: %w", err)
		}
		before := cur.Clone()
		if err := apply(&cur); err != nil {
			if errors.Is(err, user.ErrUnchanged) {
				// user.Store: nothing written, the stored user returned.
				stored = before
				return nil
			}
			return err
		}
		cur.ID = id // user.Store: neither the id nor the version can change
		row, err := userRow(community, cur)
		if err != nil {
			return fmt.Errorf("pgstore: update user: %w", err)
		}
		// The row is locked: the version apply saw is the stored one.
		stored, err = scanUser(tx.QueryRow(ctx, updateUserSQL+` RETURNING `+userSelect, row...))
		if err != nil {
			return fmt.Errorf("pgstore: update user: %w", userConflict(err))
		}
		wrote = true
		return nil
	})
	if err != nil {
		return user.User{}, err
	}
	if wrote {
		s.users.wrote(community, stored) // committed
	}
	return stored, nil
}

// updateCached is UpdateUser in one round trip, when the user cache holds
// the user: apply runs on the cached copy, and the UPDATE is conditioned
// on the version that copy has, so it writes only if the row is still
// the state apply saw (user.Store: apply sees the stored version). ok
// is false, and nothing was written, when the cache cannot serve the
// user, when apply fails or changes nothing (its verdict on a copy up to
// a second old is not trusted: the locked path asks again), or when the
// row has moved on; UpdateUser then takes the locked path, which calls
// apply again on the row as stored (apply may be called more than once).
// A unique violation (another user took the username) is the write's
// answer, as on the locked path.
func (s *Store) updateCached(ctx context.Context, community, id string, apply func(*user.User) error) (stored user.User, ok bool, err error) {
	cur, found, served := s.users.byID(community, id)
	if !served || !found {
		return user.User{}, false, nil
	}
	version := cur.Version
	if apply(&cur) != nil {
		return user.User{}, false, nil
	}
	cur.ID = id
	row, err := userRow(community, cur)
	if err != nil {
		return user.User{}, false, nil
	}
	stored, err = scanUser(s.pool.QueryRow(ctx, updateUserSQL+` AND version = $17 RETURNING `+userSelect, append(row, version)...))
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return user.User{}, false, nil // the row moved on (or went): the locked path decides
	case err != nil:
		return user.User{}, false, fmt.Errorf("pgstore: update user: %w", userConflict(err))
	}
	s.cachedUpdates.Add(1)
	s.users.wrote(community, stored) // committed
	return stored, true, nil
}

// AutoRoles returns the role codes the community adds to every user
// created or updated through the user API (docs: users.md), in the
// order of the data file; none for an unknown community. With
// WithCredentialCache it is answered from the node's memory for up to
// credTTL (credcache.go).
func (s *Store) AutoRoles(ctx context.Context, community string) ([]string, error) {
	return cachedLookup(s.creds, s.creds.rolesMap(), community, slices.Clone, func() ([]string, error) { return s.autoRoles(ctx, community) })
}

func (s *Store) autoRoles(ctx context.Context, community string) ([]string, error) {
	var roles []string
	err := s.rd().QueryRow(ctx, `SELECT auto_roles FROM communities WHERE id = $1`, community).Scan(&roles)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("pgstore: auto roles: %w", err)
	}
	if len(roles) == 0 {
		return nil, nil
	}
	return roles, nil
}

var _ user.Lister = (*Store)(nil)

// ListUsers returns a page of the community's users matching q in id
// order (byte order), and how many match (user.Lister).
func (s *Store) ListUsers(ctx context.Context, community string, q user.Query, offset, limit int) ([]user.User, int, error) {
	var total int
	q0 := s.rd() // the count and the page from one pool
	if err := q0.QueryRow(ctx, `SELECT count(*) FROM users WHERE community_id = $1 AND ($2::text IS NULL OR external_id = $2)`,
		community, q.ExternalID).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("pgstore: count users: %w", err)
	}
	if limit <= 0 || offset >= total {
		return []user.User{}, total, nil
	}
	rows, err := q0.Query(ctx, `SELECT `+userSelect+` FROM users WHERE community_id = $1 AND ($2::text IS NULL OR external_id = $2)
		ORDER BY id COLLATE "C" OFFSET $3 LIMIT $4`, community, q.ExternalID, max(offset, 0), limit)
	if err != nil {
		return nil, 0, fmt.Errorf("pgstore: list users: %w", err)
	}
	defer rows.Close()
	out := []user.User{}
	for rows.Next() {
		u, err := scanUser(rows)
		if err != nil {
			return nil, 0, fmt.Errorf("pgstore: list users: %w", err)
		}
		out = append(out, u)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("pgstore: list users: %w", err)
	}
	return out, total, nil
}
