package user

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/procurekit/procure"
)

// Sentinel errors of the user API. Stores and the Service wrap them with %w;
// match them with errors.Is.
var (
	// ErrNotFound: no user with that username or id in the community
	// (a user of another community is not found either).
	ErrNotFound = errors.New("user not found")
	// ErrDuplicateID: a user with that id exists in some community; ids
	// are unique across the whole service.
	ErrDuplicateID = errors.New("user id already exists")
	// ErrDuplicateUsername: another user of the community has that
	// username, compared case-insensitively (UsernameKey).
	ErrDuplicateUsername = errors.New("username already taken")
	// ErrVersionMismatch: an update named the version it expects the user
	// to have (an HTTP If-Match), and the stored user has another one;
	// nothing was changed.
	ErrVersionMismatch = errors.New("user version does not match")
	// ErrContention: an update without a version precondition was
	// prepared again and again, and each time another write to the same
	// user committed first (Service.Update, UpdateIf, Modify); nothing
	// was changed. It matches procure.ErrUnavailable too: the caller may
	// retry shortly (over HTTP a 503 with Retry-After).
	ErrContention = fmt.Errorf("user changed by concurrent writes on every attempt: %w", procure.ErrUnavailable)
	// ErrUnchanged is not a failure: Store.UpdateUser's apply returns it
	// (or an error wrapping it) to say that the user needs no write, and
	// the store then stores nothing and returns the stored user as it is,
	// Version included, with a nil error.
	ErrUnchanged = errors.New("user unchanged")
)

// Maximum lengths, in characters after trimming (docs: users.md "The user object").
const (
	MaxTextLength      = 255 // id, username, names, email, phone and every code
	MaxAttributeLength = 20  // attribute name and attribute value
)

// User is a buyer of a community (docs: users.md "The user object") as stored and as returned.
//
// Lists are omitted from JSON when empty; enabled is always present
// (docs: users.md). Decoding accepts both spellings of the
// organisation units field (see UnmarshalJSON); encoding always writes
// organisationUnits.
type User struct {
	ID                string      `json:"id" validate:"max=255"`
	Username          string      `json:"username" validate:"required,max=255"`
	ExternalID        string      `json:"externalId,omitempty" validate:"max=255"`
	FirstName         string      `json:"firstName,omitempty" validate:"max=255"`
	LastName          string      `json:"lastName,omitempty" validate:"max=255"`
	DisplayName       string      `json:"displayName,omitempty" validate:"max=255"`
	Email             string      `json:"email,omitempty" validate:"omitempty,max=255,email"`
	Phone             string      `json:"phone,omitempty" validate:"max=255"`
	Enabled           bool        `json:"enabled"`
	OrganisationUnits []Code      `json:"organisationUnits,omitempty" validate:"dive"`
	Roles             []Code      `json:"roles,omitempty" validate:"dive"`
	BuyerGroups       []Code      `json:"buyerGroups,omitempty" validate:"dive"`
	Attributes        []Attribute `json:"attributes,omitempty" validate:"dive"`
	ApproverGroups    []Code      `json:"approverGroups,omitempty" validate:"dive"`

	// Version is set by the store: 1 when the user is created (or loaded
	// from a data file), one more on every update. It is not part of the
	// spec's User body: the HTTP APIs carry it as an ETag (and SCIM as
	// meta.version), and an update may require it (Service.UpdateIf).
	// Stores ignore the Version a caller passes in.
	Version int64 `json:"-" validate:"-"`
}

// Code is an entry of a coded list: an organisation unit, a role, a buyer
// group or an approver group. Codes compare exactly (case-sensitively)
// after trimming.
type Code struct {
	Code string `json:"code" validate:"required,max=255"`
}

// Attribute is a custom name/value pair of a user. The name is required;
// the value may be empty.
type Attribute struct {
	Name  string `json:"name" validate:"required,max=20"`
	Value string `json:"value" validate:"max=20"`
}

// Codes builds a coded list from plain codes, in order.
func Codes(codes ...string) []Code {
	if len(codes) == 0 {
		return nil
	}
	out := make([]Code, len(codes))
	for i, c := range codes {
		out[i] = Code{Code: c}
	}
	return out
}

// Clone returns a deep copy of u: its lists share nothing with u's.
//
// The four coded lists of the copy share one allocation, each capped at
// its length, so that an append to one of them copies it instead of
// writing over the next: a store clones a user several times a request
// (memstore's UpdateUser three times), and one allocation instead of four
// takes an update's allocations from 84 to 69 (BenchmarkUserClone,
// BenchmarkUsersUpdateHandler; its CPU a request moved within the noise).
func (u User) Clone() User {
	var codes []Code
	if n := len(u.OrganisationUnits) + len(u.Roles) + len(u.BuyerGroups) + len(u.ApproverGroups); n > 0 {
		codes = make([]Code, 0, n)
	}
	u.OrganisationUnits, codes = carveCodes(codes, u.OrganisationUnits)
	u.Roles, codes = carveCodes(codes, u.Roles)
	u.BuyerGroups, codes = carveCodes(codes, u.BuyerGroups)
	u.ApproverGroups, _ = carveCodes(codes, u.ApproverGroups)
	u.Attributes = cloneList(u.Attributes)
	return u
}

// carveCodes copies s to the end of buf, which has room for it, and
// returns the copy, capped at its length (nil for an empty s), and buf
// with it.
func carveCodes(buf, s []Code) (cp, rest []Code) {
	if len(s) == 0 {
		return nil, buf
	}
	buf = append(buf, s...)
	return buf[len(buf)-len(s) : len(buf) : len(buf)], buf
}

// SameValues reports whether u and v hold the same user apart from the
// Version: every other field equal, and every list entry by entry in
// order (order is kept and returned, so it is part of the user). A nil
// list equals an empty one: stores need not keep the difference, and JSON
// omits both. It is what decides that an update changes nothing. (It is
// not named Equal, which go-cmp would call in place of its own options.)
func (u User) SameValues(v User) bool {
	return u.ID == v.ID && u.Username == v.Username && u.ExternalID == v.ExternalID &&
		u.FirstName == v.FirstName && u.LastName == v.LastName && u.DisplayName == v.DisplayName &&
		u.Email == v.Email && u.Phone == v.Phone && u.Enabled == v.Enabled &&
		slices.Equal(u.OrganisationUnits, v.OrganisationUnits) && slices.Equal(u.Roles, v.Roles) &&
		slices.Equal(u.BuyerGroups, v.BuyerGroups) && slices.Equal(u.Attributes, v.Attributes) &&
		slices.Equal(u.ApproverGroups, v.ApproverGroups)
}

// cloneList copies a list; an empty one becomes nil (stores need not keep
// the difference, and JSON omits both).
func cloneList[T any](s []T) []T {
	if len(s) == 0 {
		return nil
	}
	out := make([]T, len(s))
	copy(out, s)
	return out
}

// UsernameKey is the form in which usernames are compared: two usernames
// are the same user's when their keys are equal. It is the username in
// Unicode normalisation form NFC (so that "é" sent composed, or as "e"
// and a combining accent, is one username), under Unicode simple case
// folding (docs: users.md: compared case-insensitively): two valid UTF-8
// usernames in NFC have one key exactly when strings.EqualFold calls them
// equal, so "JDoe", "jdoe" and "JDOE" are one username, and so are "Kate"
// and "Kate" (with the Kelvin sign), while "İ" and "i" stay two. Each
// rune of the NFC form keeps its place. Every Store must compare
// usernames by this key, so that all backends agree; a SQL backend can
// keep it in an indexed column (pgstore: users.username_key, refolded by
// its migrations whenever this key changes).
func UsernameKey(username string) string {
	for i := 0; i < len(username); i++ {
		if username[i] >= utf8.RuneSelf {
			return foldString(norm.NFC.String(username))
		}
	}
	return foldString(username)
}

// Store keeps users per community. It is the backend interface of the user
// API; memstore and pgstore implement it, and usertest.Run is the
// conformance suite every implementation must pass.
//
// Rules every implementation keeps:
//
//   - Usernames are unique per community, compared by UsernameKey; the
//     same username may exist in two communities.
//   - Ids are unique across the whole store, whatever the community.
//   - A community sees only its own users: a user of another community
//     is ErrNotFound for every method, whether looked up by id or by
//     username.
//   - Methods are safe for concurrent use. CreateUser and UpdateUser are
//     atomic: concurrent calls never leave two users with one username
//     (in a community) or one id, and an UpdateUser never loses another
//     call's change (each is a read-modify-write in isolation).
//   - Every stored user has a Version, 1 on create (and for users loaded
//     from a data file) and one more on every UpdateUser that stores; the
//     store sets it, whatever the caller's user holds. An UpdateUser whose
//     apply reports ErrUnchanged stores nothing and keeps the Version.
//   - Users go in and out by value: a store keeps no reference to a
//     caller's lists and returns lists that the caller may change freely.
//     Stores need not keep the difference between a nil and an empty
//     list.
//   - Stores do not validate or normalise users (the Service does, before
//     any store call); they enforce only what needs the data: uniqueness
//     and tenancy.
//   - A failure of the backend itself (a lost connection, a cancelled
//     context) is returned as an error that matches none of the
//     sentinels; the HTTP layer answers it with a 500.
type Store interface {
	// UserByUsername returns the community's user whose username has the
	// same UsernameKey as username, or an error matching ErrNotFound.
	// The username is matched as given: it is not trimmed.
	UserByUsername(ctx context.Context, community, username string) (User, error)

	// UserByID returns the community's user with exactly that id, or an
	// error matching ErrNotFound (also when the id belongs to a user of
	// another community).
	UserByID(ctx context.Context, community, id string) (User, error)

	// CreateUser stores u in the community and returns it as stored (equal
	// to u, with Version 1). The caller sets u.ID; the store never
	// generates one.
	//
	// It returns an error matching ErrDuplicateID when any community
	// already holds u.ID; otherwise ErrDuplicateUsername when the community
	// holds a user with the same UsernameKey. The id is checked first, so
	// a request that breaks both rules gets ErrDuplicateID. On any error
	// nothing is stored.
	CreateUser(ctx context.Context, community string, u User) (User, error)

	// UpdateUser atomically reads the community's user with that id,
	// passes a deep copy of it to apply, and stores what apply leaves,
	// returning the user as stored.
	//
	// It returns an error matching ErrNotFound, without calling apply,
	// when the community has no user with that id; an error matching
	// ErrDuplicateUsername when apply gave the user a username whose
	// UsernameKey belongs to another user of the community (a user may
	// change the case of its own username); and the error apply returns,
	// unchanged, when apply fails. On any error nothing is stored, even if
	// apply changed its argument before failing.
	//
	// When apply returns an error matching ErrUnchanged, the store writes
	// nothing (no new Version, no timestamp) and returns the stored user
	// as apply saw it, with a nil error.
	//
	// apply sees the stored Version, so a caller that expects a version
	// checks it there, atomically with the write, and fails (the Service
	// commits only if the version it prepared from is still stored). The
	// stored user gets Version one more than the one apply saw.
	//
	// The id and the version cannot change: a change apply makes to ID or
	// Version is discarded. apply must not call the store and must be
	// cheap: it may run while the store holds a lock (memstore's lock on
	// every community's users; a PostgreSQL row lock and a pooled
	// connection), so the Service prepares the new user before the call
	// and its apply only compares versions and swaps that user in. apply
	// may be called more than once (a store may retry on a serialisation
	// conflict), so it must depend only on its argument.
	UpdateUser(ctx context.Context, community, id string, apply func(*User) error) (User, error)
}

// AutoRoler is an optional capability of a Store, found by type assertion
// (or set as Service.AutoRoles): the role codes a community adds to every
// user created or updated through the API (docs: users.md).
type AutoRoler interface {
	// AutoRoles returns the community's auto-role codes in the order they
	// are to be added, each non-empty, trimmed and at most 255 characters,
	// without duplicates. A community without auto-roles (or unknown to
	// the store) has none: nil and no error. The caller may change the
	// returned slice.
	AutoRoles(ctx context.Context, community string) ([]string, error)
}
