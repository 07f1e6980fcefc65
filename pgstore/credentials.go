package pgstore

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/procurekit/procure"
	"github.com/procurekit/procure/auth"
)

// The write side of credentials (docs: live-data.md, "Admin API"). Every
// write is committed when it returns, and every authentication reads the
// database (tokens.go: no cache), so a token issued or revoked, or a key
// added or deactivated, on one node is seen by the next request on every
// node.

var (
	_ auth.TokenWriter   = (*Store)(nil)
	_ auth.KeyWriter     = (*Store)(nil)
	_ auth.UsageRecorder = (*Store)(nil)
)

// dbConn is a pool or a transaction: what credential queries run on.
type dbConn interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// storable reports whether PostgreSQL text can hold s: valid UTF-8
// without NUL. A lookup by a string that is not storable finds nothing,
// without asking the database (which would fail the query: a 500).
func storable(s string) bool { return utf8.ValidString(s) && strings.IndexByte(s, 0) < 0 }

// needCommunity returns an error matching procure.ErrUnknownCommunity
// unless the database holds the community id.
func needCommunity(ctx context.Context, q dbConn, id string) error {
	ok := false
	if storable(id) {
		if err := q.QueryRow(ctx, `SELECT EXISTS (SELECT FROM communities WHERE id = $1)`, id).Scan(&ok); err != nil {
			return fmt.Errorf("pgstore: community: %w", err)
		}
	}
	if !ok {
		return fmt.Errorf("community %q: %w", id, procure.ErrUnknownCommunity)
	}
	return nil
}

// optTime is t for a nullable timestamptz: NULL when zero.
func optTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// fromOptTime reads a nullable timestamptz back, in UTC.
func fromOptTime(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return t.UTC()
}

// hashOf copies a stored bytea hash.
func hashOf(b []byte) (auth.Hash, error) {
	var h auth.Hash
	if copy(h[:], b) != len(h) || len(b) != len(h) {
		return h, fmt.Errorf("stored hash has %d bytes", len(b))
	}
	return h, nil
}

// --- tokens ----------------------------------------------------------------

// tokenColumns are what scanToken reads.
const tokenColumns = `id, hash, community_id, name, scopes, expires, revoked, created_at, last_used_at`

func scanToken(row pgx.Row) (auth.Token, error) {
	var t auth.Token
	var id *string
	var hash []byte
	var expires, lastUsed *time.Time
	if err := row.Scan(&id, &hash, &t.Community, &t.Name, &t.Scopes, &expires, &t.Revoked, &t.CreatedAt, &lastUsed); err != nil {
		return auth.Token{}, err
	}
	h, err := hashOf(hash)
	if err != nil {
		return auth.Token{}, err
	}
	t.Hash = h
	if id != nil {
		t.ID = *id
	} else {
		t.ID = auth.TokenID(h) // written without one: see fillTokenIDs
	}
	t.Expires, t.LastUsedAt, t.CreatedAt = fromOptTime(expires), fromOptTime(lastUsed), t.CreatedAt.UTC()
	return t, nil
}

// fillTokenIDs stores the id of every token that has none (written by the
// import or an older version: its id is auth.TokenID of its hash, which
// SQL cannot compute), so that tokens can be found, and new ids checked,
// by id. With none to fill it is one probe of an empty partial index.
func fillTokenIDs(ctx context.Context, q dbConn) error {
	rows, err := q.Query(ctx, `SELECT hash FROM tokens WHERE id IS NULL`)
	if err != nil {
		return err
	}
	hashes, err := pgx.CollectRows(rows, pgx.RowTo[[]byte])
	if err != nil || len(hashes) == 0 {
		return err
	}
	ids := make([]string, len(hashes))
	for i, b := range hashes {
		h, err := hashOf(b)
		if err != nil {
			return err
		}
		ids[i] = auth.TokenID(h)
	}
	// Nodes that fill at once write the same ids; the second finds
	// them set.
	_, err = q.Exec(ctx, `UPDATE tokens t SET id = u.id FROM unnest($1::bytea[], $2::text[]) AS u(h, id)
		WHERE t.hash = u.h AND t.id IS NULL`, hashes, ids)
	return err
}

// AddToken implements auth.TokenWriter.
func (s *Store) AddToken(ctx context.Context, t auth.Token) (auth.Token, error) {
	defer s.timeWrite("AddToken", time.Now())
	defer s.creds.invalidate() // after the commit: this node sees the write at its next lookup
	if err := auth.ValidateToken(t); err != nil {
		return auth.Token{}, err
	}
	if err := needCommunity(ctx, s.pool, t.Community); err != nil {
		return auth.Token{}, err
	}
	if t.ID == "" {
		t.ID = auth.TokenID(t.Hash)
	}
	if !t.Expires.IsZero() {
		t.Expires = t.Expires.UTC().Truncate(time.Microsecond)
	}
	scopes := t.Scopes
	if scopes == nil {
		scopes = []string{}
	}
	t.Scopes = slices.Clip(slices.Clone(t.Scopes))
	t.LastUsedAt = time.Time{}
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if err := fillTokenIDs(ctx, tx); err != nil {
			return err
		}
		return tx.QueryRow(ctx, `INSERT INTO tokens (id, hash, community_id, name, scopes, expires, revoked)
			VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING created_at`,
			t.ID, t.Hash[:], t.Community, t.Name, scopes, optTime(t.Expires), t.Revoked).Scan(&t.CreatedAt)
	})
	switch uniqueViolation(err) {
	case "tokens_pkey":
		return auth.Token{}, fmt.Errorf("token: the secret is in use already: %w", procure.ErrConflict)
	case "tokens_id":
		return auth.Token{}, fmt.Errorf("token %q: the id is in use already: %w", t.ID, procure.ErrConflict)
	}
	if err != nil {
		return auth.Token{}, fmt.Errorf("pgstore: add token: %w", err)
	}
	t.CreatedAt = t.CreatedAt.UTC()
	return t, nil
}

// RevokeToken implements auth.TokenWriter.
func (s *Store) RevokeToken(ctx context.Context, community, id string) error {
	defer s.timeWrite("RevokeToken", time.Now())
	defer s.creds.invalidate() // after the commit: this node sees the write at its next lookup
	if err := needCommunity(ctx, s.pool, community); err != nil {
		return err
	}
	if !storable(id) {
		return fmt.Errorf("token %q: %w", id, auth.ErrNotFound)
	}
	if err := fillTokenIDs(ctx, s.pool); err != nil {
		return fmt.Errorf("pgstore: revoke token: %w", err)
	}
	tag, err := s.pool.Exec(ctx, `UPDATE tokens SET revoked = true WHERE community_id = $1 AND id = $2`, community, id)
	if err != nil {
		return fmt.Errorf("pgstore: revoke token: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("token %q: %w", id, auth.ErrNotFound)
	}
	return nil
}

// Tokens implements auth.TokenWriter.
func (s *Store) Tokens(ctx context.Context, community string) ([]auth.Token, error) {
	if err := needCommunity(ctx, s.pool, community); err != nil {
		return nil, err
	}
	rows, err := s.pool.Query(ctx, `SELECT `+tokenColumns+` FROM tokens WHERE community_id = $1`, community)
	if err != nil {
		return nil, fmt.Errorf("pgstore: tokens: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (auth.Token, error) { return scanToken(row) })
	if err != nil {
		return nil, fmt.Errorf("pgstore: tokens: %w", err)
	}
	// Sorted here, as memstore sorts: ids derived from hashes are not
	// in the database to sort by, and the order must be byte order.
	slices.SortFunc(out, func(a, b auth.Token) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), strings.Compare(a.ID, b.ID))
	})
	if out == nil {
		out = []auth.Token{}
	}
	return out, nil
}

// --- usage -----------------------------------------------------------------

// TokenUsed implements auth.UsageRecorder: the token's lastUsedAt becomes
// at's minute unless it is that minute or later already. This node asks
// the database at most once a minute per token (usageMinutes); the UPDATE
// changes nothing when another node has recorded the minute, and never
// moves lastUsedAt back. A failed write is not retried before the next
// minute: lastUsedAt is a hint for operators, and a failing database must
// not be written on every request.
func (s *Store) TokenUsed(ctx context.Context, h auth.Hash, at time.Time) {
	s.recordUse(ctx, tokenUsage, h, at)
}

// KeyUsed implements auth.UsageRecorder for service-account keys, as
// TokenUsed does for tokens.
func (s *Store) KeyUsed(ctx context.Context, h auth.Hash, at time.Time) {
	s.recordUse(ctx, keyUsage, h, at)
}

// usageTimeout bounds a lastUsedAt write, which outlives a caller that
// went away (it is one short UPDATE).
const usageTimeout = 5 * time.Second

func (s *Store) recordUse(ctx context.Context, kind usageKind, h auth.Hash, at time.Time) {
	minute := at.UTC().Truncate(time.Minute)
	if !s.usage.claim(kind, h, minute.Unix()) {
		return
	}
	sql := `UPDATE tokens SET last_used_at = $2 WHERE hash = $1 AND (last_used_at IS NULL OR last_used_at < $2)`
	if kind == keyUsage {
		sql = `UPDATE service_account_keys SET last_used_at = $2 WHERE hash = $1 AND (last_used_at IS NULL OR last_used_at < $2)`
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), usageTimeout)
	defer cancel()
	if _, err := s.pool.Exec(ctx, sql, h[:], minute); err != nil {
		// Not retried before the next minute (see TokenUsed); the
		// request it came with goes on. The error names no credential.
		slog.Default().WarnContext(ctx, "pgstore: recording lastUsedAt failed", "error", err)
	}
}

// --- service accounts and keys ---------------------------------------------

// keyColumns are what scanKey reads, from service_account_keys k.
const keyColumns = `k.id, k.hash, k.active, k.created_at, k.last_used_at`

func scanKeyInto(k *auth.Key, id *string, hash []byte, created time.Time, lastUsed *time.Time) error {
	h, err := hashOf(hash)
	if err != nil {
		return err
	}
	k.Hash = h
	if id != nil {
		k.ID = *id
	} else {
		k.ID = auth.KeyID(h) // see fillKeyIDs
	}
	k.CreatedAt, k.LastUsedAt = created.UTC(), fromOptTime(lastUsed)
	return nil
}

// fillKeyIDs stores the id of every key of the account that has none,
// as fillTokenIDs does for tokens.
func fillKeyIDs(ctx context.Context, q dbConn, accountID string) error {
	rows, err := q.Query(ctx, `SELECT ord, hash FROM service_account_keys WHERE account_id = $1 AND id IS NULL`, accountID)
	if err != nil {
		return err
	}
	var ords []int32
	var ids []string
	var ord int32
	var hash []byte
	_, err = pgx.ForEachRow(rows, []any{&ord, &hash}, func() error {
		h, err := hashOf(hash)
		if err != nil {
			return err
		}
		ords, ids = append(ords, ord), append(ids, auth.KeyID(h))
		return nil
	})
	if err != nil || len(ords) == 0 {
		return err
	}
	_, err = q.Exec(ctx, `UPDATE service_account_keys k SET id = u.id FROM unnest($2::int4[], $3::text[]) AS u(o, id)
		WHERE k.account_id = $1 AND k.ord = u.o AND k.id IS NULL`, accountID, ords, ids)
	return err
}

// accounts reads the community's accounts (all, or the one id when id is
// not empty) with their keys by CreatedAt, then ID.
func accounts(ctx context.Context, q dbConn, community, id string) ([]auth.ServiceAccount, error) {
	rows, err := q.Query(ctx, `SELECT a.id, a.allowed_ips, `+keyColumns+`
		FROM service_accounts a LEFT JOIN service_account_keys k ON k.account_id = a.id
		WHERE a.community_id = $1 AND ($2 = '' OR a.id = $2)
		ORDER BY a.id COLLATE "C", k.ord`, community, id)
	if err != nil {
		return nil, err
	}
	out := []auth.ServiceAccount{}
	var accountID string
	var ips []netip.Prefix
	var keyID *string
	var hash []byte
	var active *bool
	var created, lastUsed *time.Time
	_, err = pgx.ForEachRow(rows, []any{&accountID, &ips, &keyID, &hash, &active, &created, &lastUsed}, func() error {
		if len(out) == 0 || out[len(out)-1].ID != accountID {
			a := auth.ServiceAccount{ID: accountID, Community: community, Keys: []auth.Key{}, AllowedIPs: []netip.Prefix{}}
			if len(ips) > 0 {
				a.AllowedIPs = slices.Clone(ips)
			}
			out = append(out, a)
		}
		if hash == nil { // an account without keys
			return nil
		}
		k := auth.Key{Active: *active}
		if err := scanKeyInto(&k, keyID, hash, *created, lastUsed); err != nil {
			return fmt.Errorf("service account %q: %w", accountID, err)
		}
		a := &out[len(out)-1]
		a.Keys = append(a.Keys, k)
		return nil
	})
	if err != nil {
		return nil, err
	}
	for i := range out {
		slices.SortStableFunc(out[i].Keys, func(a, b auth.Key) int {
			return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), strings.Compare(a.ID, b.ID))
		})
	}
	return out, nil
}

// PutServiceAccount implements auth.KeyWriter.
func (s *Store) PutServiceAccount(ctx context.Context, community, id string, allowedIPs []netip.Prefix) (auth.ServiceAccount, error) {
	defer s.timeWrite("PutServiceAccount", time.Now())
	defer s.creds.invalidate() // after the commit: this node sees the write at its next lookup
	if err := auth.ValidateAccountID(id); err != nil {
		return auth.ServiceAccount{}, err
	}
	if err := auth.ValidateAllowedIPs(allowedIPs); err != nil {
		return auth.ServiceAccount{}, err
	}
	if err := needCommunity(ctx, s.pool, community); err != nil {
		return auth.ServiceAccount{}, err
	}
	ips := make([]netip.Prefix, len(allowedIPs))
	for i, p := range allowedIPs {
		ips[i] = p.Masked() // cidr refuses host bits
	}
	var out auth.ServiceAccount
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		// An account of another community is not updated (the WHERE of
		// DO UPDATE), so nothing is returned.
		var owner string
		err := tx.QueryRow(ctx, `INSERT INTO service_accounts (id, community_id, allowed_ips) VALUES ($1, $2, $3)
			ON CONFLICT (id) DO UPDATE SET allowed_ips = excluded.allowed_ips
			WHERE service_accounts.community_id = excluded.community_id
			RETURNING community_id`, id, community, ips).Scan(&owner)
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("service account %q belongs to another community: %w", id, procure.ErrConflict)
		}
		if err != nil {
			return err
		}
		if err := fillKeyIDs(ctx, tx, id); err != nil {
			return err
		}
		all, err := accounts(ctx, tx, community, id)
		if err != nil {
			return err
		}
		if len(all) != 1 {
			return fmt.Errorf("service account %q: not found after writing it", id)
		}
		out = all[0]
		return nil
	})
	if errors.Is(err, procure.ErrConflict) {
		return auth.ServiceAccount{}, err
	}
	if err != nil {
		return auth.ServiceAccount{}, fmt.Errorf("pgstore: put service account: %w", err)
	}
	return out, nil
}

// keyHashLock is the first key of the advisory lock AddKey takes on a
// key's hash (the second is the hash's first 4 bytes), so that two
// accounts cannot be given one key at once.
const keyHashLock int32 = 0x6b657973 // "keys"

// AddKey implements auth.KeyWriter.
func (s *Store) AddKey(ctx context.Context, community, accountID string, k auth.Key) (auth.Key, error) {
	defer s.timeWrite("AddKey", time.Now())
	defer s.creds.invalidate() // after the commit: this node sees the write at its next lookup
	if err := auth.ValidateKey(k); err != nil {
		return auth.Key{}, err
	}
	if err := needCommunity(ctx, s.pool, community); err != nil {
		return auth.Key{}, err
	}
	if !storable(accountID) {
		return auth.Key{}, fmt.Errorf("service account %q: %w", accountID, auth.ErrNotFound)
	}
	if k.ID == "" {
		k.ID = auth.KeyID(k.Hash)
	}
	k.LastUsedAt = time.Time{}
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		// The account's row lock orders its key writes (ord); the
		// advisory lock, writes of one hash to any account.
		// (The next position is read after the lock is granted: a
		// subquery of the locking statement would see the snapshot from
		// before the wait.)
		err := tx.QueryRow(ctx, `SELECT FROM service_accounts WHERE id = $1 AND community_id = $2 FOR UPDATE`, accountID, community).Scan()
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("service account %q: %w", accountID, auth.ErrNotFound)
		}
		if err != nil {
			return err
		}
		var ord int32
		if err := tx.QueryRow(ctx, `SELECT coalesce(max(ord) + 1, 0) FROM service_account_keys WHERE account_id = $1`, accountID).Scan(&ord); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, $2)`, keyHashLock, int32(binary.BigEndian.Uint32(k.Hash[:4]))); err != nil {
			return err
		}
		var taken bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT FROM service_account_keys WHERE hash = $1)`, k.Hash[:]).Scan(&taken); err != nil {
			return err
		}
		if taken {
			return fmt.Errorf("key: the secret is in use already: %w", procure.ErrConflict)
		}
		if err := fillKeyIDs(ctx, tx, accountID); err != nil {
			return err
		}
		err = tx.QueryRow(ctx, `INSERT INTO service_account_keys (account_id, ord, hash, active, id)
			VALUES ($1, $2, $3, $4, $5) RETURNING created_at`, accountID, ord, k.Hash[:], k.Active, k.ID).Scan(&k.CreatedAt)
		if uniqueViolation(err) == "service_account_keys_id" {
			return fmt.Errorf("key %q: the id is in use already: %w", k.ID, procure.ErrConflict)
		}
		return err
	})
	if errors.Is(err, procure.ErrConflict) || errors.Is(err, auth.ErrNotFound) {
		return auth.Key{}, err
	}
	if err != nil {
		return auth.Key{}, fmt.Errorf("pgstore: add key: %w", err)
	}
	k.CreatedAt = k.CreatedAt.UTC()
	return k, nil
}

// SetKeyActive implements auth.KeyWriter.
func (s *Store) SetKeyActive(ctx context.Context, community, accountID, keyID string, active bool) (auth.Key, error) {
	defer s.timeWrite("SetKeyActive", time.Now())
	defer s.creds.invalidate() // after the commit: this node sees the write at its next lookup
	if err := needCommunity(ctx, s.pool, community); err != nil {
		return auth.Key{}, err
	}
	if !storable(accountID) || !storable(keyID) {
		return auth.Key{}, fmt.Errorf("key %q of service account %q: %w", keyID, accountID, auth.ErrNotFound)
	}
	if err := fillKeyIDs(ctx, s.pool, accountID); err != nil {
		return auth.Key{}, fmt.Errorf("pgstore: set key active: %w", err)
	}
	var id *string
	var hash []byte
	var created time.Time
	var lastUsed *time.Time
	k := auth.Key{}
	err := s.pool.QueryRow(ctx, `UPDATE service_account_keys k SET active = $4
		FROM service_accounts a
		WHERE a.id = $2 AND a.community_id = $1 AND k.account_id = a.id AND k.id = $3
		RETURNING `+keyColumns, community, accountID, keyID, active).Scan(&id, &hash, &k.Active, &created, &lastUsed)
	if errors.Is(err, pgx.ErrNoRows) {
		return auth.Key{}, fmt.Errorf("key %q of service account %q: %w", keyID, accountID, auth.ErrNotFound)
	}
	if err == nil {
		err = scanKeyInto(&k, id, hash, created, lastUsed)
	}
	if err != nil {
		return auth.Key{}, fmt.Errorf("pgstore: set key active: %w", err)
	}
	return k, nil
}

// ServiceAccounts implements auth.KeyWriter.
func (s *Store) ServiceAccounts(ctx context.Context, community string) ([]auth.ServiceAccount, error) {
	if err := needCommunity(ctx, s.pool, community); err != nil {
		return nil, err
	}
	out, err := accounts(ctx, s.pool, community, "")
	if err != nil {
		return nil, fmt.Errorf("pgstore: service accounts: %w", err)
	}
	return out, nil
}
