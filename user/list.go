package user

import "context"

// Query selects users of a community for a Lister. Every field that is
// set must match; a zero Query selects every user.
type Query struct {
	// ExternalID, when not nil, must equal the user's ExternalID exactly
	// (case-sensitively, as stored).
	ExternalID *string
}

// Lister is an optional capability of a Store, found by type assertion:
// pages of a community's users, for clients that look users up by
// something other than the username or id (a SCIM client filtering on
// externalId) or read them all (an identity provider's import).
type Lister interface {
	// ListUsers returns the community's users that match q, ordered by id
	// (byte order), skipping the first offset of them and returning at
	// most limit, and the number of users that match q in all. offset
	// and limit are at least 0; a limit of 0 returns only the count.
	// Users of other communities are never counted.
	ListUsers(ctx context.Context, community string, q Query, offset, limit int) ([]User, int, error)
}
