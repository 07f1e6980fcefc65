package pgstore

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/jackc/pgx/v5"

	"github.com/procurekit/procure/user"
)

// foldUsernameKeys is the hook of migrations 0004 and 0007: it sets
// username_key to user.UsernameKey for every username that is not plain
// ASCII. A version before 0004 stored the lower case there, one before
// 0007 the simple case folding without NFC.
//
// Two users of one community whose usernames were different under the old
// key and are equal under the new one ("ſam" and "sam" under folding, "é"
// composed and decomposed under NFC) cannot both keep their usernames:
// the migration then fails, naming the community and both users, and the
// database stays as it was. The operator renames one (with the previous
// build) and starts again. Rewriting a username is not a migration's to
// decide.
func foldUsernameKeys(ctx context.Context, tx pgx.Tx) error {
	rows, err := tx.Query(ctx, `SELECT community_id, id, username, username_key FROM users
		WHERE octet_length(username) <> char_length(username)`)
	if err != nil {
		return err
	}
	var communities, ids, names, keys []string
	for rows.Next() {
		var c, id, name, old string
		if err := rows.Scan(&c, &id, &name, &old); err != nil {
			return err
		}
		if k := user.UsernameKey(name); k != old {
			communities, ids, names, keys = append(communities, c), append(ids, id), append(names, name), append(keys, k)
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if len(ids) == 0 {
		return nil
	}
	// Move the changed keys out of the way first, so that the new keys
	// collide only with one another or with unchanged ones, never with an
	// old key about to change.
	if _, err := tx.Exec(ctx, `UPDATE users SET username_key = E'\\x01' || id WHERE id = ANY($1)`, ids); err != nil {
		return fmt.Errorf("fold username keys: %w", err)
	}
	for i, id := range ids {
		var other, otherName string
		err := tx.QueryRow(ctx, `SELECT id, username FROM users WHERE community_id = $1 AND username_key = $2`, communities[i], keys[i]).Scan(&other, &otherName)
		switch {
		case err == nil:
			return fmt.Errorf("fold username keys: in community %q, the usernames %q (user %q) and %q (user %q) are equal under case folding; rename one with the previous version and start again",
				communities[i], otherName, other, names[i], id)
		case !errors.Is(err, pgx.ErrNoRows):
			return fmt.Errorf("fold username keys: %w", err)
		}
		if _, err := tx.Exec(ctx, `UPDATE users SET username_key = $2 WHERE id = $1`, id, keys[i]); err != nil {
			return fmt.Errorf("fold username keys: %w", err)
		}
	}
	return nil
}

// maxReportedIDs is how many user ids reportHiddenUsernames names in its
// warning; the count covers the rest.
const maxReportedIDs = 20

// reportHiddenUsernames warns, at start, of stored usernames that the user
// API refuses today: with invisible (default-ignorable) or bidirectional
// control characters (user.CheckUsername), stored before the rule. They
// keep working (lookups, SCIM, logins); the warning names how many there
// are and the ids of the first few, never the usernames, so that the
// operator can have them renamed (an update through the user API with a
// clean username). Only usernames that are not plain ASCII can break the
// rule, so only those are read.
func reportHiddenUsernames(ctx context.Context, pool querier, log *slog.Logger) error {
	rows, err := pool.Query(ctx, `SELECT community_id, id, username FROM users
		WHERE octet_length(username) <> char_length(username) ORDER BY community_id, id`)
	if err != nil {
		return fmt.Errorf("pgstore: check usernames: %w", err)
	}
	var ids []string
	n := 0
	for rows.Next() {
		var c, id, name string
		if err := rows.Scan(&c, &id, &name); err != nil {
			return fmt.Errorf("pgstore: check usernames: %w", err)
		}
		if user.CheckUsername(name) == nil {
			continue
		}
		if n++; len(ids) < maxReportedIDs {
			ids = append(ids, c+"/"+id)
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("pgstore: check usernames: %w", err)
	}
	if n > 0 {
		log.WarnContext(ctx, "stored usernames hold invisible or bidirectional control characters, which the user API now refuses: rename these users",
			"count", n, "users", ids, "unlisted", n-len(ids))
	}
	return nil
}
