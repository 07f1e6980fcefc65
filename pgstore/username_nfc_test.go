package pgstore_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/procurekit/procure/internal/pgtest"
	"github.com/procurekit/procure/internal/syncbuf"
	"github.com/procurekit/procure/pgstore"
	"github.com/procurekit/procure/user"
)

// Issue 19 item 10: usernames compare in NFC (user.UsernameKey). A
// database whose keys were folded without NFC (before migration 0007) is
// rekeyed at start; two usernames that become one key stop the start,
// naming both; stored usernames with invisible or bidirectional control
// characters are reported at start, by count and id.

// beforeNFC returns a migrated database holding the users given as
// (community, id, username, username_key as a build before 0007 stored
// it), with migration 0007 marked as not applied.
func beforeNFC(t *testing.T, users ...[4]string) string {
	t.Helper()
	ctx := context.Background()
	dsn := pgtest.NewDatabase(t)
	s, err := pgstore.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	conn := connect(t, dsn)
	for _, sql := range []string{
		`INSERT INTO communities (id, name, region) VALUES ('c1', 'One', 'NZ'), ('c2', 'Two', 'AU')`,
		`DELETE FROM schema_migrations WHERE version = 7`,
	} {
		if _, err := conn.Exec(ctx, sql); err != nil {
			t.Fatalf("%.60s: %v", sql, err)
		}
	}
	for _, u := range users {
		if _, err := conn.Exec(ctx, `INSERT INTO users (community_id, id, username, username_key) VALUES ($1, $2, $3, $4)`,
			u[0], u[1], u[2], u[3]); err != nil {
			t.Fatal(err)
		}
	}
	return dsn
}

func TestMigrateUsernameKeysNFC(t *testing.T) {
	ctx := context.Background()
	dsn := beforeNFC(t,
		[4]string{"c1", "u1", "Jose\u0301", "jose\u0301"}, // decomposed: the old key kept the combining accent
		[4]string{"c1", "u2", "Zo\u00eb", "zo\u00eb"},     // composed: no change
		[4]string{"c1", "u3", "\u212Aate", "kate"},        // Kelvin sign: NFC is K, the key stays
		[4]string{"c2", "u4", "Jos\u00e9", "jos\u00e9"},   // another community: no clash with u1
	)
	s, err := pgstore.Open(ctx, dsn)
	if err != nil {
		t.Fatalf("Open before 0007: %v", err)
	}
	defer s.Close()
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
			t.Errorf("username %+q has the key %+q after the migration; want %+q", name, key, user.UsernameKey(name))
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	for name, id := range map[string]string{"JOS\u00c9": "u1", "jose\u0301": "u1", "zoe\u0308": "u2", "KATE": "u3"} {
		if u, err := s.UserByUsername(ctx, "c1", name); err != nil || u.ID != id {
			t.Errorf("UserByUsername(%+q) = %q, %v; want %s", name, u.ID, err, id)
		}
	}
	if _, err := s.CreateUser(ctx, "c1", user.User{ID: "u5", Username: "jos\u00e9"}); !errors.Is(err, user.ErrDuplicateUsername) {
		t.Errorf("CreateUser(jos\u00e9) beside Jose\u0301: %v; want ErrDuplicateUsername", err)
	}
}

func TestMigrateUsernameKeysNFCClash(t *testing.T) {
	ctx := context.Background()
	dsn := beforeNFC(t, [4]string{"c1", "u1", "Jose\u0301", "jose\u0301"}, [4]string{"c1", "u2", "jos\u00e9", "jos\u00e9"})
	_, err := pgstore.Open(ctx, dsn)
	if err == nil || !strings.Contains(err.Error(), `"u1"`) || !strings.Contains(err.Error(), `"u2"`) || !strings.Contains(err.Error(), "rename one") {
		t.Fatalf("Open: %v; want an error naming both users", err)
	}
	conn := connect(t, dsn)
	if n := queryInt(t, conn, "SELECT count(*) FROM schema_migrations WHERE version = 7"); n != 0 {
		t.Error("migration 0007 recorded after it failed")
	}
}

func TestReportHiddenUsernames(t *testing.T) {
	ctx := context.Background()
	dsn := beforeNFC(t,
		[4]string{"c1", "u1", "jsmith\u200b", "jsmith\u200b"},
		[4]string{"c1", "u2", "\u200fjsmith", "\u200fjsmith"},
		[4]string{"c2", "u3", "jos\u00e9", "jos\u00e9"}, // not ASCII, but clean
		[4]string{"c2", "u4", "plain", "plain"},
	)
	var buf syncbuf.Buffer
	s, err := pgstore.Open(ctx, dsn, pgstore.WithLogger(slog.New(slog.NewTextHandler(&buf, nil))))
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer s.Close()
	var warning string
	for line := range strings.Lines(buf.String()) {
		if strings.Contains(line, "level=WARN") && strings.Contains(line, "invisible") {
			warning = line
		}
	}
	if warning == "" {
		t.Fatalf("no warning of the hidden usernames in the log:\n%s", buf.String())
	}
	for _, want := range []string{"count=2", "c1/u1", "c1/u2"} {
		if !strings.Contains(warning, want) {
			t.Errorf("warning %q lacks %q", warning, want)
		}
	}
	for _, secret := range []string{"jsmith", "u3", "u4"} {
		if strings.Contains(warning, secret) {
			t.Errorf("warning %q names %q", warning, secret)
		}
	}
	// They still work: found by their stored usernames.
	if u, err := s.UserByUsername(ctx, "c1", "jsmith\u200b"); err != nil || u.ID != "u1" {
		t.Errorf("UserByUsername of a reported user = %q, %v", u.ID, err)
	}
}
