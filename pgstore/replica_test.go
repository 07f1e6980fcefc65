package pgstore_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/procurekit/procure/auth"
	"github.com/procurekit/procure/internal/pgtest"
	"github.com/procurekit/procure/paging"
	"github.com/procurekit/procure/pgstore"
	"github.com/procurekit/procure/supplier"
	"github.com/procurekit/procure/user"
)

// Nodes reading from a streaming replica whose replay is paused
// (pg_wal_replay_pause), from the supplier cache and without it: a node
// reads its own write at once, though its replica, which it still counts
// fresh, lacks it; and a node falls back to the primary instead of
// serving older data - a supplier written, a user created and a token
// revoked on another node are seen within the one-second bound (docs:
// live-data.md), though the replica still lacks them all. Once replay
// resumes, the node reads from the replica again.
func TestReplicaPausedFallsBackToPrimary(t *testing.T) {
	ctx := context.Background()
	r := pgtest.NewReplicatedDatabase(t)
	writer := database{dsn: r.Primary}.open(t) // node A: the primary only
	if err := writer.Import(ctx, fixture()); err != nil {
		t.Fatal(err)
	}
	tokens, err := writer.Tokens(ctx, "c1")
	if err != nil {
		t.Fatal(err)
	}
	var tokenID string
	for _, tk := range tokens {
		if tk.Hash == auth.HashSecret("demo-token-c1") {
			tokenID = tk.ID
		}
	}
	replicaHas := func(sql string, args ...any) bool {
		var n int
		if err := connect(t, r.Replica).QueryRow(ctx, sql, args...).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n > 0
	}

	for i, cached := range []bool{false, true} {
		name := map[bool]string{false: "database", true: "cache"}[cached]
		t.Run(name, func(t *testing.T) {
			opts := []pgstore.Option{pgstore.WithReadDSN(r.Replica)}
			if cached {
				opts = append(opts, pgstore.WithSupplierCache(), pgstore.WithCredentialCache())
			}
			// Node B only reads; node C writes too.
			b, c := database{dsn: r.Primary, opts: opts}.open(t), database{dsn: r.Primary, opts: opts}.open(t)
			waitForReplica(t, b)
			waitForReplica(t, c)
			names := func(s *pgstore.Store) []string {
				return listC1(t, s, func(x supplier.Summary) string { return x.Name.String() })
			}
			before := names(b)
			// Without the cache the list came from the replica; with it,
			// the cache's polls go there.
			for deadline := time.Now().Add(10 * time.Second); ; {
				if onReplica, _ := pgstore.ReplicaReads(b); onReplica > 0 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("node B read nothing from its replica before the pause")
				}
				time.Sleep(20 * time.Millisecond)
			}

			// Node C's own write is read at once, while its replica, paused
			// a moment ago, still counts as fresh but lacks the write.
			for attempt := 0; ; attempt++ {
				r.PauseReplay(t)
				if pgstore.ReadsFromReplica(c) {
					break
				}
				if attempt == 5 {
					t.Fatal("node C never read from its replica right after the pause")
				}
				r.ResumeReplay(t)
				waitForReplica(t, c)
			}
			own := supplier.Record{Detail: supplier.Detail{Summary: supplier.Summary{
				ID: id(80 + i), Name: supplier.NewText("Written On C " + name), ProfileType: supplier.ProfileCompany}}}
			if _, err := c.PutSupplier(ctx, "c1", own); err != nil {
				t.Fatal(err)
			}
			if got, err := c.Supplier(ctx, "c1", own.ID); err != nil || got.Name != own.Name {
				t.Fatalf("node C's read of its own write: %q, %v", got.Name, err)
			}
			if got := names(c); !slices.Contains(got, own.Name.String()) {
				t.Fatalf("node C's list right after its own write lacks it: %q", got)
			}
			if replicaHas(`SELECT count(*) FROM suppliers WHERE id = $1`, own.ID) {
				t.Fatal("the paused replica has node C's write: the test proves nothing")
			}

			// Another node's writes, within the bound.
			other := supplier.Record{Detail: supplier.Detail{Summary: supplier.Summary{
				ID: id(70 + i), Name: supplier.NewText("Written On A " + name), ProfileType: supplier.ProfileCompany}}}
			if _, err := writer.PutSupplier(ctx, "c1", other); err != nil {
				t.Fatal(err)
			}
			username := "paused." + name
			if _, err := writer.CreateUser(ctx, "c1", user.User{ID: "paused-" + name, Username: username, Enabled: true}); err != nil {
				t.Fatal(err)
			}
			if cached { // the second round: the token is revoked once
				if err := writer.RevokeToken(ctx, "c1", tokenID); err != nil {
					t.Fatal(err)
				}
			}
			written := time.Now()
			time.Sleep(time.Until(written.Add(time.Second)))
			if got := names(b); !slices.Contains(got, other.Name.String()) || !slices.Contains(got, own.Name.String()) || len(got) != len(before)+2 {
				t.Fatalf("node B's list a second after the writes: %q; want %q with node A's and node C's", got, before)
			}
			if got, err := b.Supplier(ctx, "c1", other.ID); err != nil || got.Name != other.Name {
				t.Fatalf("node B's read of node A's supplier a second after: %q, %v", got.Name, err)
			}
			if u, err := b.UserByUsername(ctx, "c1", username); err != nil || u.Username != username {
				t.Fatalf("node B's read of node A's user a second after: %v, %v", u, err)
			}
			if tk, err := b.TokenByHash(ctx, auth.HashSecret("demo-token-c1")); err != nil || tk.Revoked != cached {
				t.Fatalf("node B's lookup of the token a second after: revoked %v, %v; want %v", tk.Revoked, err, cached)
			}
			// From the primary: the paused replica has none of it.
			if replicaHas(`SELECT count(*) FROM suppliers WHERE id = $1`, other.ID) ||
				replicaHas(`SELECT count(*) FROM users WHERE username = $1`, username) {
				t.Fatal("the paused replica has node A's writes: the test proves nothing")
			}
			if _, onPrimary := pgstore.ReplicaReads(b); onPrimary == 0 {
				t.Fatal("node B sent no read to the primary while its replica was paused")
			}

			r.ResumeReplay(t)
			waitForReplica(t, b)
			onReplica, _ := pgstore.ReplicaReads(b)
			if got := names(b); !slices.Contains(got, other.Name.String()) || !slices.Contains(got, own.Name.String()) {
				t.Fatalf("node B's list after the replica caught up: %q", got)
			}
			if _, err := b.UserByUsername(ctx, "c1", username); err != nil {
				t.Fatalf("node B's read of node A's user after the replica caught up: %v", err)
			}
			if after, _ := pgstore.ReplicaReads(b); after == onReplica {
				t.Fatal("node B did not read from its replica again once it caught up")
			}
		})
	}
}

// A read DSN that names a primary (not in recovery: promoted, say) is as
// fresh as the primary. One that cannot be reached costs reads nothing
// but the primary's load: every read goes to the primary and answers.
func TestReplicaUnreachable(t *testing.T) {
	ctx := context.Background()
	d := pgtest.NewDatabase(t)
	s, err := pgstore.Open(ctx, d, pgstore.WithReadDSN(d))
	if err != nil {
		t.Fatal(err)
	}
	waitForReplica(t, s)
	s.Close()
	// A replica on a port nothing listens on: Open connects to it once
	// (to choose its exec mode), so it fails...
	if _, err := pgstore.Open(ctx, d, pgstore.WithReadDSN("postgres://postgres@127.0.0.1:1/x?connect_timeout=2")); err == nil {
		t.Fatal("Open with a read replica that does not answer: no error")
	}
	// ...unless the DSN names the mode: then it opens, and reads go to
	// the primary.
	s, err = pgstore.Open(ctx, d, pgstore.WithReadDSN("postgres://postgres@127.0.0.1:1/x?connect_timeout=2&default_query_exec_mode=cache_describe"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Import(ctx, fixture()); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	if _, err := s.UserByUsername(ctx, "c1", "jdoe"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Supplier(ctx, "c1", id(1)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ListSuppliers(ctx, "c1", supplier.ListQuery{Page: paging.Request{Size: 5}}); err != nil {
		t.Fatal(err)
	}
	if onReplica, onPrimary := pgstore.ReplicaReads(s); onReplica != 0 || onPrimary < 3 {
		t.Fatalf("reads: %d to the replica, %d to the primary; want none and 3", onReplica, onPrimary)
	}
	if _, err := s.UserByUsername(ctx, "c1", "nobody"); !errors.Is(err, user.ErrNotFound) {
		t.Fatal(err)
	}
}

// A health check reads the primary without counting as this node's
// write, which would keep its reads off the replica for a moment; a write
// does keep them off until the replica has it.
func TestReplicaHealthChecksAreNoWrites(t *testing.T) {
	ctx := context.Background()
	s, _ := openIn(t, setupNamed("replica"), fixture())
	if err := s.Ready(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SchemaVersion(ctx); err != nil {
		t.Fatal(err)
	}
	if !pgstore.ReadsFromReplica(s) {
		t.Fatal("after health checks, the node's reads no longer go to its replica")
	}
	if _, err := s.PutSupplier(ctx, "c1", supplier.Record{Detail: supplier.Detail{Summary: supplier.Summary{
		ID: id(90), Name: supplier.NewText("New"), ProfileType: supplier.ProfileCompany}}}); err != nil {
		t.Fatal(err)
	}
	if pgstore.ReadsFromReplica(s) {
		t.Fatal("right after a write, the node's reads still go to its replica")
	}
}

// The user cache's loads and polls read the primary (a replica's snapshot
// says nothing of the primary's) without counting as this node's writes,
// which would keep its other reads off the replica after every poll.
func TestReplicaUserCachePollsAreNoWrites(t *testing.T) {
	ctx := context.Background()
	s, _ := openIn(t, setupNamed("replica"), fixture(), pgstore.WithUserCache())
	if _, err := s.UserByUsername(ctx, "c1", "nobody"); !errors.Is(err, user.ErrNotFound) {
		t.Fatal(err) // loads c1's users
	}
	wrote := pgstore.ReplicaWrote(s)
	time.Sleep(time.Second) // several polls
	if pgstore.UserCacheServed(s) == 0 {
		t.Fatal("the user cache served nothing")
	}
	if got := pgstore.ReplicaWrote(s); got != wrote {
		t.Fatalf("the user cache's polls counted as writes of the node (its last write moved by %v)", time.Duration(got-wrote))
	}
}

// A primary that other nodes write to all the time: the replica never
// holds the position the primary has reached a moment before the node
// asks it, but it holds one of a little earlier, within the bound, so the
// node still reads from it.
func TestReplicaFreshWhilePrimaryWrites(t *testing.T) {
	ctx := context.Background()
	s, d := openIn(t, setupNamed("replica"), fixture())
	other := connect(t, d.direct) // another node's writes, not this one's
	if _, err := other.Exec(ctx, `CREATE TABLE churn (n int)`); err != nil {
		t.Fatal(err)
	}
	stop, done := make(chan struct{}), make(chan error, 1)
	go func() {
		for {
			select {
			case <-stop:
				done <- nil
				return
			default:
			}
			if _, err := other.Exec(ctx, `INSERT INTO churn VALUES (1)`); err != nil {
				done <- err
				return
			}
		}
	}()
	fresh, samples := 0, 0
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		samples++
		if pgstore.ReadsFromReplica(s) {
			fresh++
		}
	}
	close(stop)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	// Compared with the position read just before, the replica was fresh at
	// a tenth of them.
	if fresh < samples/2 {
		t.Fatalf("while the primary was written to, reads would have gone to the replica at %d of %d moments only", fresh, samples)
	}
}
