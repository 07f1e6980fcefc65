package procure

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Errors shared by every store's write side (docs: live-data.md).
var (
	// ErrUnknownCommunity is matched by the error of a write or read that
	// names a community the store does not hold. The admin API answers it
	// with 404, like any other unknown thing.
	ErrUnknownCommunity = errors.New("unknown community")

	// ErrConflict is matched by the error of a write that would break a
	// uniqueness rule: a service-account id that belongs to another
	// community, a credential id or hash that exists already; and of a
	// supplier write in a community with no modifiedDate left to stamp
	// (supplier.ErrStampExhausted). The admin API answers it with 409
	// CONFLICT.
	ErrConflict = errors.New("conflict")
)

// Regions are the service's regional tenants (docs: tenancy.md "Regions"), in the order the
// documentation lists them.
var Regions = []string{"AU", "NZ", "US", "DEMO"}

// Community is a customer organisation: the unit of tenancy. Everything a
// store holds belongs to exactly one community.
type Community struct {
	ID     string `json:"id"`
	Name   string `json:"name"`
	Region string `json:"region"`
	// AutoRoles are role codes added to every user created or updated
	// through the user API (docs: users.md).
	AutoRoles []string `json:"autoRoles"`
}

// MaxCommunityIDLength bounds a community id, in characters.
const MaxCommunityIDLength = 100

// Validate checks c: id required (at most 100 characters, no white space
// or control characters, since it appears in paths), name at most 255
// characters, region one of Regions, auto-roles non-empty and unique codes
// of at most 255 characters (a role code's limit on a user, docs: users.md "The user object", and
// in a data file). It returns nil or a *ValidationError naming the
// field, with src as its Source.
func (c *Community) Validate(src Source) error {
	v := &ValidationError{Source: src}
	switch {
	case c.ID == "":
		v.Add("id", "is required")
	case utf8.RuneCountInString(c.ID) > MaxCommunityIDLength:
		v.Add("id", "must be at most 100 characters")
	case !utf8.ValidString(c.ID) || strings.ContainsFunc(c.ID, badIDRune):
		v.Add("id", "must be valid UTF-8 without white space or control characters")
	}
	if utf8.RuneCountInString(c.Name) > 255 {
		v.Add("name", "must be at most 255 characters")
	}
	if !utf8.ValidString(c.Name) || strings.ContainsRune(c.Name, 0) {
		v.Add("name", "must be valid UTF-8 without NUL characters")
	}
	if !slices.Contains(Regions, c.Region) {
		v.Add("region", "must be one of AU, NZ, US, DEMO")
	}
	seen := make(map[string]bool, len(c.AutoRoles))
	for i, r := range c.AutoRoles {
		field := "autoRoles[" + strconv.Itoa(i) + "]"
		switch {
		case strings.TrimSpace(r) == "":
			v.Add(field, "is required (a role code)")
		case utf8.RuneCountInString(r) > 255:
			v.Add(field, "must be at most 255 characters")
		case !utf8.ValidString(r) || strings.ContainsRune(r, 0):
			v.Add(field, "must be valid UTF-8 without NUL characters")
		case seen[r]:
			v.Add(field, "must be unique: the role appears twice")
		}
		seen[r] = true
	}
	return v.Err()
}

func badIDRune(r rune) bool {
	return r <= ' ' || r == 0x7f || r == '/' || r == '?' || r == '#' || r == '%'
}

// CommunityStore is the community part of a store: what the admin API and
// the data-file import write, and what the other writes check against (a
// write under an unknown community matches ErrUnknownCommunity).
type CommunityStore interface {
	// PutCommunity creates the community c.ID or replaces its name,
	// region and auto-roles, atomically, after c.Validate(SourceBody)
	// passes (a *ValidationError otherwise, and nothing is written). The
	// community's suppliers, users, credentials and budgets are kept. It
	// returns the community as stored.
	PutCommunity(ctx context.Context, c Community) (Community, error)

	// Community returns the community with that id, or an error matching
	// ErrUnknownCommunity.
	Community(ctx context.Context, id string) (Community, error)

	// Communities returns every community the store holds, sorted by id
	// in byte order, each as Community returns it (AutoRoles empty, not
	// nil, when it has none); none is an empty slice and no error. The
	// list is whole: a store holds one community per customer
	// organisation, so callers that show a page of it (the admin API)
	// cut it themselves.
	Communities(ctx context.Context) ([]Community, error)
}
