package auth

import (
	"context"
	"crypto/rand"
	"errors"
	"math/big"
	"net/netip"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/procurekit/procure"
	"github.com/procurekit/procure/internal/check"
)

// ErrNotFound is matched by the error of a credential write or listing that
// names a token, account or key the community does not hold (the admin API
// answers 404). Authentication never returns it: lookups for a request use
// ErrUnknown, which becomes the one 401.
var ErrNotFound = errors.New("credential not found")

// TokenWriter is the write side of the bearer-token store (docs: "Live
// data", "Admin API"). Every method returns an error matching
// procure.ErrUnknownCommunity for an unknown community and is atomic; once
// it returns, the next authentication on the same node sees the change,
// and every other node sharing the database within one second.
type TokenWriter interface {
	// AddToken stores t (its Hash, never a secret) once ValidateToken(t)
	// passes (a *procure.ValidationError otherwise). The store sets
	// CreatedAt and clears LastUsedAt; t.ID, when empty, becomes
	// TokenID(t.Hash). A hash or id that exists already matches
	// procure.ErrConflict. It returns the token as stored.
	AddToken(ctx context.Context, t Token) (Token, error)

	// RevokeToken marks the community's token id revoked: from then on
	// it authenticates nothing. Revoking a revoked token succeeds. An
	// unknown id (or another community's) matches ErrNotFound.
	RevokeToken(ctx context.Context, community, id string) error

	// Tokens lists the community's tokens by CreatedAt, then ID.
	Tokens(ctx context.Context, community string) ([]Token, error)
}

// KeyWriter is the write side of the service-account store, with the
// same guarantees as TokenWriter.
type KeyWriter interface {
	// PutServiceAccount creates the account id in community, or replaces
	// its allowlist; its keys are kept. The id must pass
	// ValidateAccountID and the allowlist ValidateAllowedIPs (a
	// *procure.ValidationError otherwise); prefixes are stored masked. An id that belongs to another
	// community matches procure.ErrConflict: an account id belongs to one
	// community for ever. It returns the account as stored.
	PutServiceAccount(ctx context.Context, community, id string, allowedIPs []netip.Prefix) (ServiceAccount, error)

	// AddKey adds k (its Hash, never a secret) to the community's account
	// id once ValidateKey(k) passes. The store sets CreatedAt and clears
	// LastUsedAt; k.ID, when empty, becomes KeyID(k.Hash).
	// A hash or key id in use already matches procure.ErrConflict; an
	// unknown account, ErrNotFound.
	AddKey(ctx context.Context, community, accountID string, k Key) (Key, error)

	// SetKeyActive activates or deactivates a key of the account; a
	// deactivated key authenticates nothing from then on. An unknown
	// account or key matches ErrNotFound. It returns the key as stored.
	SetKeyActive(ctx context.Context, community, accountID, keyID string, active bool) (Key, error)

	// ServiceAccounts lists the community's accounts by id, each with its
	// keys by CreatedAt, then ID.
	ServiceAccounts(ctx context.Context, community string) ([]ServiceAccount, error)
}

// UsageRecorder is an optional capability of a TokenStore or KeyStore,
// found by type assertion: it records that a credential authenticated a
// request at the given instant. Stores keep LastUsedAt to the minute and
// write it at most once a minute per credential, so calling it on every
// request is cheap.
type UsageRecorder interface {
	TokenUsed(ctx context.Context, h Hash, at time.Time)
	KeyUsed(ctx context.Context, h Hash, at time.Time)
}

// Namespaces of the ids derived from hashes, so that a token and a key
// with the same hash (impossible in practice) still differ.
var (
	tokenNS = uuid.MustParse("5f7d0f1e-8d2c-4c55-9a57-0d1e6b3c2a10")
	keyNS   = uuid.MustParse("9b1c3a44-2e6f-4d8b-8f0a-7c5e2d1b4a33")
)

// TokenID is the id of a token that was given none (a data file's): a
// name-based UUID of its hash. It reveals nothing of the secret.
func TokenID(h Hash) string { return uuid.NewSHA1(tokenNS, h[:]).String() }

// KeyID is the id of a key that was given none, as TokenID is for tokens.
func KeyID(h Hash) string { return uuid.NewSHA1(keyNS, h[:]).String() }

// BearerTokenPrefix starts every bearer token NewBearerToken makes, so
// that secret scanners can recognise a leaked one. It differs from
// APIKeyPrefix: the two kinds of secret are told apart at a glance.
const BearerTokenPrefix = "procure_bt_"

// NewBearerToken returns a new bearer token - 256 bits from crypto/rand,
// base62, with the same checksum as API keys - and its hash. Only the hash
// is stored; the token is shown once to whoever asked for it.
func NewBearerToken() (token string, hash Hash) {
	var b [keyRandomBytes]byte
	rand.Read(b[:]) // never fails (crypto/rand, Go 1.24+)
	body := base62(new(big.Int).SetBytes(b[:]), keyBodyLen)
	token = BearerTokenPrefix + body + keyChecksum(body)
	return token, HashSecret(token)
}

// ValidateAccountID checks a service-account id written through a
// KeyWriter: required, at most 100 characters, printable ASCII without
// spaces (it travels in the Service-Account-ID header and in paths). It
// returns nil or a *procure.ValidationError naming "id".
func ValidateAccountID(id string) error {
	rule := ""
	switch {
	case id == "":
		rule = "is required"
	case len(id) > 100:
		rule = "must be at most 100 characters"
	case strings.ContainsFunc(id, func(r rune) bool { return r <= ' ' || r >= 0x7f || r == '/' }):
		rule = "must be printable ASCII without spaces or slashes"
	default:
		return nil
	}
	return procure.Invalid(procure.SourcePath, "id", rule)
}

// MaxCredentialIDLength bounds the id of a token or key, in bytes.
const MaxCredentialIDLength = 255

// ValidateToken checks a token written through a TokenWriter (the store
// calls it before anything else): id (when given) at most 255 bytes of
// printable ASCII without spaces or slashes, since it travels in paths;
// name at most 255 characters of valid UTF-8 without control characters;
// each scope 1 to 100 printable ASCII characters without spaces; expires
// (when given) within the years 1 to 9999 in UTC (check.Instant). It returns nil or a
// *procure.ValidationError naming each field that breaks a rule
// ("scopes[1]").
func ValidateToken(t Token) error {
	v := &procure.ValidationError{Source: procure.SourceBody}
	if t.ID != "" && !validCredentialID(t.ID) {
		v.Add("id", credentialIDRule)
	}
	if utf8.RuneCountInString(t.Name) > 255 || !utf8.ValidString(t.Name) || strings.ContainsFunc(t.Name, unicode.IsControl) {
		v.Add("name", "must be at most 255 characters of valid UTF-8 without control characters")
	}
	for i, s := range t.Scopes {
		if s == "" || len(s) > 100 || strings.ContainsFunc(s, func(r rune) bool { return r <= ' ' || r >= 0x7f }) {
			v.Add("scopes["+strconv.Itoa(i)+"]", "must be 1 to 100 printable ASCII characters without spaces")
		}
	}
	if !t.Expires.IsZero() && !check.Instant(t.Expires) {
		v.Add("expires", check.InstantRule)
	}
	return v.Err()
}

// ValidateKey checks a key written through a KeyWriter: its id, when
// given, follows ValidateToken's rule. It returns nil or a
// *procure.ValidationError naming "id".
func ValidateKey(k Key) error {
	if k.ID != "" && !validCredentialID(k.ID) {
		return procure.Invalid(procure.SourceBody, "id", credentialIDRule)
	}
	return nil
}

// ValidateAllowedIPs checks an allowlist written through a KeyWriter:
// every entry a valid prefix (netip.Prefix.IsValid). It returns nil or a
// *procure.ValidationError naming "allowedIPs[i]".
func ValidateAllowedIPs(ips []netip.Prefix) error {
	v := &procure.ValidationError{Source: procure.SourceBody}
	for i, p := range ips {
		if !p.IsValid() {
			v.Add("allowedIPs["+strconv.Itoa(i)+"]", "must be a valid IP network (an address and a prefix length)")
		}
	}
	return v.Err()
}

const credentialIDRule = "must be 1 to 255 printable ASCII characters without spaces or slashes"

func validCredentialID(id string) bool {
	return len(id) <= MaxCredentialIDLength &&
		!strings.ContainsFunc(id, func(r rune) bool { return r <= ' ' || r >= 0x7f || r == '/' })
}
