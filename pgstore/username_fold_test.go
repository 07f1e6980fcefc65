package pgstore_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/procurekit/procure/internal/pgtest"
	"github.com/procurekit/procure/pgstore"
	"github.com/procurekit/procure/user"
)

// Usernames compare under Unicode simple case folding (docs: users.md; user.UsernameKey): two usernames that strings.EqualFold calls
// equal cannot coexist, and lookups fold.

// atVersion3 makes a database as a build with migrations 1 to 3 left it,
// holding the users given as (community, id, username), their keys
// lower-cased as that build did.
func atVersion3(t *testing.T, users ...[3]string) string {
	t.Helper()
	ctx := context.Background()
	dsn := pgtest.NewDatabase(t)
	conn := connect(t, dsn)
	for _, f := range []string{"0001_init.sql", "0002_live_suppliers.sql", "0003_user_version.sql"} {
		b, err := os.ReadFile("migrations/" + f)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := conn.Exec(ctx, string(b)); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
	}
	for _, sql := range []string{
		`CREATE TABLE schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
		`INSERT INTO schema_migrations (version, name) VALUES (1, '0001_init.sql'), (2, '0002_live_suppliers.sql'), (3, '0003_user_version.sql')`,
		`INSERT INTO communities (id, name, region) VALUES ('c1', 'One', 'NZ'), ('c2', 'Two', 'AU')`,
	} {
		if _, err := conn.Exec(ctx, sql); err != nil {
			t.Fatalf("%.60s: %v", sql, err)
		}
	}
	for _, u := range users {
		if _, err := conn.Exec(ctx, `INSERT INTO users (community_id, id, username, username_key) VALUES ($1, $2, $3, $4)`,
			u[0], u[1], u[2], strings.ToLower(u[2])); err != nil {
			t.Fatal(err)
		}
	}
	return dsn
}

func TestMigrateUsernameKeysFolded(t *testing.T) {
	ctx := context.Background()
	dsn := atVersion3(t,
		[3]string{"c1", "u1", "ſam"},    // long s: lower case ſ, folds to s
		[3]string{"c1", "u2", "Ἀθῆναι"}, // no change
		[3]string{"c1", "u3", "jdoe"},
		[3]string{"c1", "u4", "ΟΔΥΣΣΕΥΣ"}, // lower σ... and the final Σ lower-cased to σ too
		[3]string{"c1", "u5", "İlker"},    // lower-cased to "ilker" before; folds to itself
		[3]string{"c2", "u6", "sam"},      // another community: no clash with ſam
	)
	s, err := pgstore.Open(ctx, dsn)
	if err != nil {
		t.Fatalf("Open on a version-3 database: %v", err)
	}
	defer s.Close()
	if v, err := s.SchemaVersion(ctx); err != nil || v < 4 {
		t.Fatalf("SchemaVersion = %d, %v; want at least 4", v, err)
	}
	conn := connect(t, dsn)
	rows, err := conn.Query(ctx, `SELECT username, username_key FROM users`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var name, key string
		if err := rows.Scan(&name, &key); err != nil {
			t.Fatal(err)
		}
		if key != user.UsernameKey(name) {
			t.Errorf("username %q has the key %q after the migration; want %q", name, key, user.UsernameKey(name))
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	// Lookups fold: every spelling EqualFold accepts finds the user.
	for name, id := range map[string]string{"SAM": "u1", "sam": "u1", "ſAM": "u1", "ἀΘΗ͂ΝΑΙ": "", "Ἀθῆναι": "u2", "οδυσσευς": "u4", "ΟΔΥΣΣΕΥΣ": "u4", "İLKER": "u5"} {
		u, err := s.UserByUsername(ctx, "c1", name)
		switch {
		case id == "":
		case err != nil || u.ID != id:
			t.Errorf("UserByUsername(%q) = %q, %v; want %s", name, u.ID, err, id)
		}
	}
	// "ilker" was İlker's key under lower-casing; folding tells them apart.
	if _, err := s.UserByUsername(ctx, "c1", "ilker"); !errors.Is(err, user.ErrNotFound) {
		t.Errorf("UserByUsername(ilker) = %v; want not found (İ and i differ under simple folding)", err)
	}
	// Two usernames EqualFold calls equal cannot coexist.
	for _, name := range []string{"SAM", "\u212Aate", "sam"} {
		if name == "\u212Aate" {
			if _, err := s.CreateUser(ctx, "c1", user.User{ID: "u7", Username: "kate", Enabled: true}); err != nil {
				t.Fatal(err)
			}
		}
		_, err := s.CreateUser(ctx, "c1", user.User{ID: "x-" + name, Username: name, Enabled: true})
		if !errors.Is(err, user.ErrDuplicateUsername) {
			t.Errorf("CreateUser(%q): %v; want ErrDuplicateUsername", name, err)
		}
	}
}

func TestMigrateUsernameKeysClash(t *testing.T) {
	// Two users whose usernames differed under lower-casing but are one
	// under folding: the migration refuses, naming both, and changes
	// nothing.
	ctx := context.Background()
	dsn := atVersion3(t, [3]string{"c1", "u1", "ſam"}, [3]string{"c1", "u2", "SAM"})
	_, err := pgstore.Open(ctx, dsn)
	if err == nil || !strings.Contains(err.Error(), `"ſam"`) || !strings.Contains(err.Error(), `"SAM"`) || !strings.Contains(err.Error(), "rename one") {
		t.Fatalf("Open: %v; want an error naming both usernames", err)
	}
	conn := connect(t, dsn)
	if v := queryInt(t, conn, "SELECT max(version) FROM schema_migrations"); v != 3 {
		t.Errorf("schema version %d after a failed migration; want 3", v)
	}
	if k := queryInt(t, conn, "SELECT count(*) FROM users WHERE username_key = 'ſam'"); k != 1 {
		t.Errorf("the old key of ſam changed after a failed migration")
	}
}
