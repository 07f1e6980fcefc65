package user

import (
	"context"
	"fmt"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/procurekit/procure"
)

// Service applies the rules of the user API (docs: users.md) on top
// of a Store: it normalises and validates every request before the store
// is called, generates ids, defaults enabled, and adds the community's
// auto-roles. The HTTP handlers of httpapi call it; a program may call it
// directly. Its methods are safe for concurrent use when the Store's are.
// A Service must not be copied after first use.
type Service struct {
	// Store keeps the users. Required.
	Store Store

	// AutoRoles gives each community's auto-roles. Nil means Store, when
	// it implements AutoRoler, and otherwise no auto-roles.
	AutoRoles AutoRoler

	// NewID returns the id of a user created without one. Nil means a
	// random (version 4) UUID in its canonical lower-case text form.
	NewID func() string

	// writers queues the updates of each user (version.go).
	writers writers
}

// NewService returns a Service over store with the default settings.
func NewService(store Store) *Service { return &Service{Store: store} }

// Get returns the community's user with that username, compared
// case-insensitively (UsernameKey) after trimming, in NFC. An empty username is a
// *procure.ValidationError (Source path); no such user is an error
// matching ErrNotFound.
func (s *Service) Get(ctx context.Context, community, username string) (User, error) {
	username = normalizeUsername(username)
	switch {
	case username == "":
		return User{}, procure.Invalid(procure.SourcePath, "username", "is required")
	case utf8.RuneCountInString(username) > MaxTextLength:
		// No stored username is that long; answer without a lookup.
		return User{}, fmt.Errorf("username of %d characters: %w", utf8.RuneCountInString(username), ErrNotFound)
	case !Storable(username):
		// Nor holds NUL or invalid UTF-8 (Validate refuses both, and
		// PostgreSQL could not even compare them): not found on every
		// store, without a lookup.
		return User{}, fmt.Errorf("username with NUL or invalid UTF-8: %w", ErrNotFound)
	}
	return s.Store.UserByUsername(ctx, community, username)
}

// Create creates a user in the community from in and returns it as stored.
//
// in is normalised and validated for OpCreate (a *procure.ValidationError
// otherwise). Omitted fields are empty, except enabled, which defaults to
// true. An omitted (or empty) id is replaced by NewID's; a given one must
// not exist in any community (ErrDuplicateID). The username must not be
// taken in the community, case-insensitively (ErrDuplicateUsername). The
// community's auto-roles are appended to the roles, skipping any the user
// already has.
func (s *Service) Create(ctx context.Context, community string, in Input) (User, error) {
	in, err := in.Prepare(OpCreate)
	if err != nil {
		return User{}, err
	}
	roles, err := s.autoRoles(ctx, community)
	if err != nil {
		return User{}, err
	}
	u := User{Enabled: true}
	in.applyTo(&u, false) // in is Prepare's private copy: no need to copy its lists again
	if u.ID == "" {
		u.ID = s.newID()
	}
	addRoles(&u, roles)
	return s.Store.CreateUser(ctx, community, u)
}

// Update changes the community's user identified by in.ID and returns it
// as stored.
//
// in is normalised and validated for OpUpdate (id and username required).
// Every field present in in replaces the stored one; omitted fields keep
// their value, an omitted enabled included (docs: users.md "Enabled": updating enabled to
// false prevents the user from logging in, back to true lets them in
// again). The username may change to one not taken by another user of the
// community (ErrDuplicateUsername), or to another case of itself. An id
// unknown in the community is ErrNotFound. The community's auto-roles are
// appended to the resulting roles, skipping any the user already has. The
// read-modify-write is atomic (Store.UpdateUser).
func (s *Service) Update(ctx context.Context, community string, in Input) (User, error) {
	return s.UpdateIf(ctx, community, in, 0)
}

func (s *Service) newID() string {
	if s.NewID != nil {
		return s.NewID()
	}
	return uuid.NewString()
}

// autoRoles returns the community's auto-roles, checked: a misconfigured
// role would give users a code the API itself rejects, so it is an error
// (a 500 over HTTP) rather than a silently bad user.
func (s *Service) autoRoles(ctx context.Context, community string) ([]string, error) {
	src := s.AutoRoles
	if src == nil {
		ar, ok := s.Store.(AutoRoler)
		if !ok {
			return nil, nil
		}
		src = ar
	}
	roles, err := src.AutoRoles(ctx, community)
	if err != nil {
		return nil, fmt.Errorf("auto-roles of community %q: %w", community, err)
	}
	for i, r := range roles {
		if r == "" || r != trim(r) || utf8.RuneCountInString(r) > MaxTextLength {
			return nil, fmt.Errorf("auto-roles of community %q: entry %d (%q) must be a trimmed, non-empty code of at most %d characters", community, i, r, MaxTextLength)
		}
	}
	return roles, nil
}

// addRoles appends each role u does not have yet, in order.
func addRoles(u *User, roles []string) {
next:
	for _, r := range roles {
		for _, have := range u.Roles {
			if have.Code == r {
				continue next
			}
		}
		u.Roles = append(u.Roles, Code{Code: r})
	}
}
