package pgstore_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"

	"github.com/procurekit/procure"
	"github.com/procurekit/procure/auth"
	"github.com/procurekit/procure/datafile"
	"github.com/procurekit/procure/user"
)

// An import never writes into another community, however its upserts and
// another community's writes interleave (docs: datafile.md "Import").
//
// Each case makes the race happen every time rather than by chance:
// another community's row with an id (or secret) the file holds is
// inserted in a transaction left open before the import starts, so that
// any check the import makes before its upsert cannot see it; the test
// commits that transaction once the import waits on the row's lock. The
// import must then fail with a conflict naming the entry, change nothing,
// and leave the other community's row as that community wrote it. Run
// several rounds, with the file's entry first, in the middle and last.
func TestImportFencedByCommunity(t *testing.T) {
	ctx := context.Background()
	s, dsn := openStore(t, fixture())
	const n = 500 // entries of the kind in the file
	tests := []struct {
		name string
		// file is community c1 holding n entries of the kind, entry k
		// with the key key(round, k).
		file func(round int) *datafile.Community
		// grab inserts into c2 the row the file's entry k of the round
		// names.
		grab func(tx pgx.Tx, round, k int) error
		// intact fails when c2's row is no longer as grab wrote it.
		intact func(t *testing.T, round, k int)
		// release deletes the grabbed row again.
		release   string
		wantField string
	}{
		{
			name: "users",
			file: func(round int) *datafile.Community {
				c := &datafile.Community{ID: "c1", Region: datafile.NZ}
				for k := range n {
					c.Users = append(c.Users, user.User{ID: raceKey(round, k), Username: fmt.Sprintf("imported-%d-%d", round, k),
						Email: "imported@example.com", Roles: []user.Code{{Code: "ADMIN"}}, Enabled: true})
				}
				return c
			},
			grab: func(tx pgx.Tx, round, k int) error {
				_, err := tx.Exec(ctx, `INSERT INTO users (id, community_id, username, username_key) VALUES ($1, 'c2', 'victim', 'victim')`, raceKey(round, k))
				return err
			},
			intact: func(t *testing.T, round, k int) {
				u, err := s.UserByID(ctx, "c2", raceKey(round, k))
				if err != nil || u.Username != "victim" || u.Email != "" || len(u.Roles) != 0 {
					t.Errorf("c2's user %s after the import: %+v, %v; want it untouched (username victim, no email, no roles)", raceKey(round, k), u, err)
				}
				if _, err := s.UserByID(ctx, "c1", raceKey(round, k)); !errors.Is(err, user.ErrNotFound) {
					t.Errorf("c1 holds the user %s: %v", raceKey(round, k), err)
				}
			},
			release:   `DELETE FROM users WHERE id = $1`,
			wantField: "users[%d].id",
		},
		{
			name: "tokens",
			file: func(round int) *datafile.Community {
				c := &datafile.Community{ID: "c1", Region: datafile.NZ}
				for k := range n {
					c.Tokens = append(c.Tokens, datafile.Token{Token: raceKey(round, k), Scopes: []string{"suppliers:read", "extra"}})
				}
				return c
			},
			grab: func(tx pgx.Tx, round, k int) error {
				h := auth.HashSecret(raceKey(round, k))
				_, err := tx.Exec(ctx, `INSERT INTO tokens (hash, community_id, scopes) VALUES ($1, 'c2', '{suppliers:read}')`, h[:])
				return err
			},
			intact: func(t *testing.T, round, k int) {
				tok, err := s.TokenByHash(ctx, auth.HashSecret(raceKey(round, k)))
				if err != nil || tok.Community != "c2" || strings.Join(tok.Scopes, ",") != "suppliers:read" {
					t.Errorf("c2's token after the import: %+v, %v; want it untouched (c2, suppliers:read)", tok, err)
				}
			},
			release:   `DELETE FROM tokens WHERE hash = sha256(convert_to($1, 'UTF8'))`,
			wantField: "tokens[%d].token",
		},
		{
			name: "service accounts",
			file: func(round int) *datafile.Community {
				c := &datafile.Community{ID: "c1", Region: datafile.NZ}
				for k := range n {
					c.ServiceAccounts = append(c.ServiceAccounts, datafile.ServiceAccount{ID: raceKey(round, k), AllowedIPs: []string{"192.0.2.0/24"},
						Keys: []datafile.Key{{Key: "key-" + raceKey(round, k), Active: true}}})
				}
				return c
			},
			grab: func(tx pgx.Tx, round, k int) error {
				_, err := tx.Exec(ctx, `INSERT INTO service_accounts (id, community_id) VALUES ($1, 'c2')`, raceKey(round, k))
				return err
			},
			intact: func(t *testing.T, round, k int) {
				a, err := s.ServiceAccount(ctx, raceKey(round, k))
				if err != nil || a.Community != "c2" || len(a.AllowedIPs) != 0 || len(a.Keys) != 0 {
					t.Errorf("c2's account after the import: %+v, %v; want it untouched (c2, no allowlist, no keys)", a, err)
				}
			},
			release:   `DELETE FROM service_accounts WHERE id = $1`,
			wantField: "serviceAccounts[%d].id",
		},
	}
	conn := connect(t, dsn)
	round := 0
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, k := range []int{0, n / 2, n - 1} {
				round++
				before := snapshot(t, dsn)
				tx, err := conn.Begin(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if err := tt.grab(tx, round, k); err != nil {
					t.Fatal(err)
				}
				done := make(chan error, 1)
				f := &datafile.File{Communities: []datafile.Community{*tt.file(round)}}
				go func() { done <- s.Import(ctx, f) }()
				waitForLockWait(t, dsn, done)
				if err := tx.Commit(ctx); err != nil {
					t.Fatal(err)
				}
				err = <-done
				want := "communities[0]." + fmt.Sprintf(tt.wantField, k) + ": "
				if !errors.Is(err, procure.ErrConflict) || !strings.HasPrefix(err.Error(), want) {
					t.Fatalf("round %d (entry %d): Import error = %v; want procure.ErrConflict naming %s", round, k, err, want)
				}
				tt.intact(t, round, k)
				// Nothing else changed: without the row c2 wrote, the
				// database is as it was.
				if _, err := conn.Exec(ctx, tt.release, raceKey(round, k)); err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(before, snapshot(t, dsn)); diff != "" {
					t.Fatalf("round %d: the failed import changed the database (-before +after):\n%s", round, diff)
				}
			}
		})
	}
}

// raceKey is the id or secret of entry k of a round.
func raceKey(round, k int) string { return fmt.Sprintf("race-%d-%d", round, k) }

// waitForLockWait returns once some session of the database waits for a
// lock (the import, on the row the open transaction inserted), or fails
// the test when the import ends first or nothing waits within a minute.
func waitForLockWait(t *testing.T, dsn string, done chan error) {
	t.Helper()
	conn := connect(t, dsn)
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		select {
		case err := <-done:
			done <- err
			t.Fatalf("the import ended (%v) before it met the other community's row", err)
		default:
		}
		n := queryInt(t, conn, `SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`)
		if n > 0 {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatal("the import never waited for the other community's row")
}
