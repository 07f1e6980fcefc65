// Package user defines the user of the user synchronisation API
// (Interface B, spec 2.9) and Store, the interface a backend implements to
// keep users per community.
package user

import (
	"context"
	"errors"
)

// Sentinel errors of the user API; stores wrap them with %w.
var (
	ErrNotFound          = errors.New("user not found")
	ErrDuplicateID       = errors.New("user id already exists")
	ErrDuplicateUsername = errors.New("username already taken")
)

// User is a buyer of a community (spec 2.9) as stored and as returned.
type User struct {
	ID                string      `json:"id"`
	Username          string      `json:"username"`
	ExternalID        string      `json:"externalId,omitempty"`
	FirstName         string      `json:"firstName,omitempty"`
	LastName          string      `json:"lastName,omitempty"`
	DisplayName       string      `json:"displayName,omitempty"`
	Email             string      `json:"email,omitempty"`
	Phone             string      `json:"phone,omitempty"`
	Enabled           bool        `json:"enabled"`
	OrganisationUnits []Code      `json:"organisationUnits,omitempty"`
	Roles             []Code      `json:"roles,omitempty"`
	BuyerGroups       []Code      `json:"buyerGroups,omitempty"`
	Attributes        []Attribute `json:"attributes,omitempty"`
	ApproverGroups    []Code      `json:"approverGroups,omitempty"`
}

// Code is an entry of a coded list (organisation units, roles, groups).
type Code struct {
	Code string `json:"code"`
}

// Attribute is a custom name/value pair of a user.
type Attribute struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Store keeps users per community. Usernames are unique per community,
// compared case-insensitively; ids are unique across the whole store.
// Methods are safe for concurrent use, and create and update are atomic:
// concurrent calls never leave two users with one username or one id.
type Store interface {
	// UserByUsername returns the community's user whose username equals
	// username case-insensitively, or an error matching ErrNotFound.
	UserByUsername(ctx context.Context, community, username string) (User, error)

	// UserByID returns the community's user with that id, or an error
	// matching ErrNotFound (also when the id belongs to another community).
	UserByID(ctx context.Context, community, id string) (User, error)

	// CreateUser stores u, whose id the caller has set, and returns it as
	// stored. It returns an error matching ErrDuplicateID when any
	// community holds that id, and ErrDuplicateUsername when the community
	// holds the username (case-insensitively).
	CreateUser(ctx context.Context, community string, u User) (User, error)

	// UpdateUser atomically reads the community's user with that id,
	// passes a copy to apply, and stores what apply leaves (the id cannot
	// change). It returns ErrNotFound when there is no such user,
	// ErrDuplicateUsername when the new username belongs to another user
	// of the community, and any error apply returns, storing nothing then.
	UpdateUser(ctx context.Context, community, id string, apply func(*User) error) (User, error)
}
