package memstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/procurekit/procure/datafile"
	"github.com/procurekit/procure/user"
)

var (
	_ user.Store     = (*Store)(nil)
	_ user.AutoRoler = (*Store)(nil)
)

// users keeps every community's users behind one lock. The critical
// sections are a few map operations and a copy, so one lock costs less
// than the bookkeeping that sharding by community would need to keep ids
// unique across communities.
type users struct {
	mu sync.RWMutex
	// byID indexes every user of every community by id: ids are unique
	// across the service.
	byID map[string]*userEntry
	// byName indexes each community's users by user.UsernameKey of the
	// username (NFC, case-folded): usernames are unique per community,
	// compared case-insensitively.
	byName map[string]map[string]*userEntry
	// autoRoles holds each community's auto-role codes.
	autoRoles map[string][]string
}

// userEntry is one stored user. The user is replaced, never changed in
// place, and never handed out without a copy.
type userEntry struct {
	community string
	u         user.User
}

func (x *users) init() {
	x.byID = map[string]*userEntry{}
	x.byName = map[string]map[string]*userEntry{}
	x.autoRoles = map[string][]string{}
}

// newUsers are a community's users and auto-roles, built on their own.
type newUsers struct {
	community string
	users     []user.User
	roles     []string
}

// build checks the auto-roles and copies the users, without touching x.
// Users are kept as they are (no auto-roles, no trimming: docs: users.md); check requires an id and a username, unique as the Store
// rules require.
func (x *users) build(c *datafile.Community) (newUsers, error) {
	roles, err := checkAutoRoles(c.AutoRoles)
	if err != nil {
		return newUsers{}, err
	}
	add := newUsers{community: c.ID, users: make([]user.User, len(c.Users)), roles: roles}
	for i, u := range c.Users {
		add.users[i] = u.Clone()
		add.users[i].Version = 1 // user.Store: a loaded user is at version 1
	}
	return add, nil
}

// check reports a user of add without an id or username, or whose id or
// username is taken; x.mu is held.
func (x *users) check(add newUsers) error {
	ids := make(map[string]bool, len(add.users))
	names := make(map[string]bool, len(add.users))
	have := x.byName[add.community]
	for i, u := range add.users {
		at := fmt.Sprintf("users[%d]", i)
		key := user.UsernameKey(u.Username)
		switch {
		case u.ID == "":
			return fmt.Errorf("%s.id: is required", at)
		case u.Username == "":
			return fmt.Errorf("%s.username: is required", at)
		case ids[u.ID] || x.byID[u.ID] != nil:
			return fmt.Errorf("%s.id: duplicate user id %q", at, u.ID)
		case names[key] || have[key] != nil:
			return fmt.Errorf("%s.username: duplicate username %q (usernames compare case-insensitively)", at, u.Username)
		}
		ids[u.ID] = true
		names[key] = true
	}
	return nil
}

// publish adds the users and sets the auto-roles; x.mu is held and check
// passed.
func (x *users) publish(add newUsers) {
	have := x.byName[add.community]
	if have == nil {
		have = make(map[string]*userEntry, len(add.users))
		x.byName[add.community] = have
	}
	for _, u := range add.users {
		e := &userEntry{community: add.community, u: u}
		x.byID[u.ID] = e
		have[user.UsernameKey(u.Username)] = e
	}
	if len(add.roles) > 0 {
		x.autoRoles[add.community] = add.roles
	} else {
		delete(x.autoRoles, add.community)
	}
}

// checkAutoRoles checks a data file's auto-role codes as user codes are
// checked (trimmed, non-empty, at most 255 characters) and drops repeats.
func checkAutoRoles(codes []string) ([]string, error) {
	var out []string
	for i, r := range codes {
		r = strings.TrimSpace(r)
		switch {
		case r == "":
			return nil, fmt.Errorf("autoRoles[%d]: must not be empty", i)
		case utf8.RuneCountInString(r) > user.MaxTextLength:
			return nil, fmt.Errorf("autoRoles[%d]: must be at most %d characters", i, user.MaxTextLength)
		}
		dup := false
		for _, o := range out {
			dup = dup || o == r
		}
		if !dup {
			out = append(out, r)
		}
	}
	return out, nil
}

// UserByUsername implements user.Store.
func (s *Store) UserByUsername(_ context.Context, community, username string) (user.User, error) {
	x := &s.users
	key := user.UsernameKey(username)
	x.mu.RLock()
	defer x.mu.RUnlock()
	e := x.byName[community][key]
	if e == nil {
		return user.User{}, fmt.Errorf("username %q: %w", username, user.ErrNotFound)
	}
	return e.u.Clone(), nil
}

// UserByID implements user.Store.
func (s *Store) UserByID(_ context.Context, community, id string) (user.User, error) {
	x := &s.users
	x.mu.RLock()
	defer x.mu.RUnlock()
	e := x.byID[id]
	if e == nil || e.community != community {
		return user.User{}, fmt.Errorf("user id %q: %w", id, user.ErrNotFound)
	}
	return e.u.Clone(), nil
}

// CreateUser implements user.Store.
func (s *Store) CreateUser(_ context.Context, community string, u user.User) (user.User, error) {
	defer s.timeWrite("CreateUser", s.writeStart())
	x := &s.users
	u = u.Clone()
	u.Version = 1
	key := user.UsernameKey(u.Username)
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.byID[u.ID] != nil {
		return user.User{}, fmt.Errorf("user id %q: %w", u.ID, user.ErrDuplicateID)
	}
	names := x.byName[community]
	if names[key] != nil {
		return user.User{}, fmt.Errorf("username %q: %w", u.Username, user.ErrDuplicateUsername)
	}
	if names == nil {
		names = map[string]*userEntry{}
		x.byName[community] = names
	}
	e := &userEntry{community: community, u: u}
	x.byID[u.ID] = e
	names[key] = e
	return u.Clone(), nil
}

// UpdateUser implements user.Store. apply runs under the store's write
// lock, which every community's user reads and writes share, so it must
// not call the store and must be cheap (user.Service prepares the new
// user before the call).
func (s *Store) UpdateUser(_ context.Context, community, id string, apply func(*user.User) error) (user.User, error) {
	defer s.timeWrite("UpdateUser", s.writeStart())
	x := &s.users
	x.mu.Lock()
	defer x.mu.Unlock()
	e := x.byID[id]
	if e == nil || e.community != community {
		return user.User{}, fmt.Errorf("user id %q: %w", id, user.ErrNotFound)
	}
	u := e.u.Clone()
	if err := apply(&u); err != nil {
		if errors.Is(err, user.ErrUnchanged) {
			return e.u.Clone(), nil
		}
		return user.User{}, err
	}
	u.ID = e.u.ID
	u.Version = e.u.Version + 1
	u = u.Clone() // apply may have kept references to the lists
	oldKey, newKey := user.UsernameKey(e.u.Username), user.UsernameKey(u.Username)
	names := x.byName[community]
	if newKey != oldKey {
		if names[newKey] != nil {
			return user.User{}, fmt.Errorf("username %q: %w", u.Username, user.ErrDuplicateUsername)
		}
		delete(names, oldKey)
		names[newKey] = e
	}
	e.u = u
	return u.Clone(), nil
}

// AutoRoles implements user.AutoRoler with the community's autoRoles of
// its data file.
func (s *Store) AutoRoles(_ context.Context, community string) ([]string, error) {
	x := &s.users
	x.mu.RLock()
	defer x.mu.RUnlock()
	return append([]string(nil), x.autoRoles[community]...), nil
}

// SetAutoRoles replaces the community's auto-roles (trimmed, repeats
// dropped); none removes them. An empty code or one over 255 characters is
// an error, and changes nothing.
func (s *Store) SetAutoRoles(community string, codes []string) error {
	roles, err := checkAutoRoles(codes)
	if err != nil {
		return err
	}
	x := &s.users
	x.mu.Lock()
	defer x.mu.Unlock()
	if len(roles) == 0 {
		delete(x.autoRoles, community)
	} else {
		x.autoRoles[community] = roles
	}
	return nil
}

var _ user.Lister = (*Store)(nil)

// ListUsers implements user.Lister. It scans the community's users, so it
// costs time in their number; the user API itself never lists.
func (s *Store) ListUsers(_ context.Context, community string, q user.Query, offset, limit int) ([]user.User, int, error) {
	x := &s.users
	x.mu.RLock()
	// Shallow copies: a stored user's lists are replaced on update, never
	// changed in place, so they may be read after the lock is released.
	var match []user.User
	for _, e := range x.byName[community] {
		if q.ExternalID == nil || e.u.ExternalID == *q.ExternalID {
			match = append(match, e.u)
		}
	}
	x.mu.RUnlock()
	slices.SortFunc(match, func(a, b user.User) int { return strings.Compare(a.ID, b.ID) })
	total := len(match)
	offset = min(max(offset, 0), total)
	end := min(offset+max(limit, 0), total)
	out := make([]user.User, 0, end-offset)
	for _, u := range match[offset:end] {
		out = append(out, u.Clone())
	}
	return out, total, nil
}
