package pgstore_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/procurekit/procure/datafile"
	"github.com/procurekit/procure/pgstore"
	"github.com/procurekit/procure/user"
	"github.com/procurekit/procure/user/usertest"
)

// The user conformance suite, unchanged, on stores with the user cache
// on: the cache behaves as the database does, and the suite's reads went
// through it.
func TestUserCacheConformance(t *testing.T) {
	inSetups(t, func(t *testing.T, su setup) {
		var served, fromDB atomic.Int64
		t.Run("suite", func(t *testing.T) {
			usertest.Run(t, func(t *testing.T, f *datafile.File) user.Store {
				s, _ := openIn(t, su, f, pgstore.WithUserCache())
				t.Cleanup(func() {
					served.Add(pgstore.UserCacheServed(s))
					fromDB.Add(pgstore.UserDBReads(s))
				})
				return s
			})
		})
		if served.Load() == 0 {
			t.Fatalf("no read of the suite was served by the user cache (%d from the database)", fromDB.Load())
		}
		t.Logf("user reads: %d from the cache, %d from the database", served.Load(), fromDB.Load())
	})
}

// userLookup is one read of a user view: by username or by id.
type userLookup struct{ byName, id string }

// userView is what a node shows of community c1's users for lookups: one
// line per lookup.
func userView(t *testing.T, s *pgstore.Store, lookups []userLookup) []string {
	t.Helper()
	ctx := context.Background()
	var out []string
	for _, l := range lookups {
		var u user.User
		var err error
		if l.id != "" {
			u, err = s.UserByID(ctx, "c1", l.id)
		} else {
			u, err = s.UserByUsername(ctx, "c1", l.byName)
		}
		switch {
		case errors.Is(err, user.ErrNotFound):
			out = append(out, fmt.Sprintf("%+v: not found", l))
		case err != nil:
			t.Fatalf("%+v: %v", l, err)
		default:
			out = append(out, fmt.Sprintf("%+v: %s %s v%d enabled=%t email=%s roles=%v", l, u.ID, u.Username, u.Version, u.Enabled, u.Email, u.Roles))
		}
	}
	return out
}

// A node with the user cache answers user reads from memory, its own
// writes included, without a query: UserDBReads counts every read that
// goes to the database, and stays at zero here. The same reads on a node
// without the cache count one each (the counter counts).
func TestUserCacheServesWithoutQueries(t *testing.T) {
	ctx := context.Background()
	lookups := []userLookup{{byName: "jdoe"}, {byName: "JDOE"}, {id: "u1"}, {id: "u2"}, {byName: "nobody"},
		{byName: "jane"}, {id: "u9"}, {byName: "newbie"}}
	_, dsn := openStore(t, fixture())
	plain := database{dsn: dsn}.open(t)
	cached := database{dsn: dsn}.open(t, pgstore.WithUserCache())

	check := func(step string) {
		t.Helper()
		beforeDB, beforeServed := pgstore.UserDBReads(cached), pgstore.UserCacheServed(cached)
		want := userView(t, plain, lookups)
		got := userView(t, cached, lookups)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("%s: the cached node (-database +cache):\n%s", step, diff)
		}
		if n := pgstore.UserDBReads(cached) - beforeDB; n != 0 {
			t.Fatalf("%s: %d of %d reads went to the database; want none", step, n, len(lookups))
		}
		if n := pgstore.UserCacheServed(cached) - beforeServed; n != int64(len(lookups)) {
			t.Fatalf("%s: the cache served %d of %d reads", step, n, len(lookups))
		}
	}
	check("first reads (the community loads)")
	if n := pgstore.UserDBReads(plain); n != int64(len(lookups)) {
		t.Fatalf("the node without the cache counted %d database reads; want %d", n, len(lookups))
	}
	if _, err := cached.CreateUser(ctx, "c1", user.User{ID: "u9", Username: "Newbie", Enabled: true}); err != nil {
		t.Fatal(err)
	}
	check("after a create on this node")
	rename := func(u *user.User) error {
		u.Username, u.Email, u.Enabled = "Jane", "jane@example.com", false
		return nil
	}
	if _, err := cached.UpdateUser(ctx, "c1", "u1", rename); err != nil {
		t.Fatal(err)
	}
	check("after a rename and deactivation on this node")
	if _, err := cached.UpdateUser(ctx, "c1", "u1", func(*user.User) error { return user.ErrUnchanged }); err != nil {
		t.Fatal(err)
	}
	check("after an unchanged update")
}

// Two nodes with the user cache on, sharing one database: a create, a
// rename, a deactivation and an import on node A are seen by node A's next
// reads, and by node B's once one second has passed (docs: live-data.md
// "Visibility"), both from their caches; until then node B shows the state
// before the step or after it, never another. Then node B creates a user
// with the username node A gave up, with its polls held: it reads its own
// user at once (the database settles the username its cache sees twice).
func TestUserCacheTwoNodes(t *testing.T) { inSetups(t, testUserCacheTwoNodes) }

func testUserCacheTwoNodes(t *testing.T, su setup) {
	ctx := context.Background()
	_, d := openIn(t, su, fixture())
	a, b := d.open(t, pgstore.WithUserCache()), d.open(t, pgstore.WithUserCache())
	db := database{dsn: d.direct}.open(t, pgstore.WithMaxConns(2))
	lookups := []userLookup{{byName: "jdoe"}, {byName: "jane"}, {id: "u1"}, {byName: "newbie"}, {id: "u9"}}
	view := func(s *pgstore.Store) []string { return userView(t, s, lookups) }
	if diff := cmp.Diff(view(a), view(b)); diff != "" {
		t.Fatalf("the nodes differ before any write (-a +b):\n%s", diff)
	}
	update := func(f func(*user.User)) func() error {
		return func() error {
			_, err := a.UpdateUser(ctx, "c1", "u1", func(u *user.User) error { f(u); return nil })
			return err
		}
	}
	steps := []struct {
		name  string
		write func() error
	}{
		{"create", func() error {
			_, err := a.CreateUser(ctx, "c1", user.User{ID: "u9", Username: "Newbie", Enabled: true})
			return err
		}},
		{"rename", update(func(u *user.User) { u.Username = "Jane" })},
		{"deactivate", update(func(u *user.User) { u.Enabled = false })},
		{"import", func() error {
			f := fixture()
			f.Communities[0].Users[0] = user.User{ID: "u1", Username: "Jane", Email: "imported@example.com", Roles: user.Codes("APPROVER")}
			return a.Import(ctx, f)
		}},
	}
	for _, st := range steps {
		allowed := [][]string{view(b)}
		if err := st.write(); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		written := time.Now()
		allowed = append(allowed, view(db))
		dbA, servedA := pgstore.UserDBReads(a), pgstore.UserCacheServed(a)
		if diff := cmp.Diff(view(db), view(a)); diff != "" {
			t.Fatalf("%s: node A's next reads (-database +A):\n%s", st.name, diff)
		}
		if pgstore.UserDBReads(a) != dbA || pgstore.UserCacheServed(a)-servedA != int64(len(lookups)) {
			t.Fatalf("%s: node A's next reads went to the database (%d of %d)", st.name, pgstore.UserDBReads(a)-dbA, len(lookups))
		}
		for time.Since(written) < time.Second {
			got := view(b)
			if !slices.ContainsFunc(allowed, func(s []string) bool { return slices.Equal(s, got) }) {
				t.Fatalf("%s: node B shows a state the database never had:\n%q\nallowed %q", st.name, got, allowed)
			}
			time.Sleep(50 * time.Millisecond)
		}
		dbB, servedB := pgstore.UserDBReads(b), pgstore.UserCacheServed(b)
		if diff := cmp.Diff(view(db), view(b)); diff != "" {
			t.Fatalf("%s: node B one second after the write (-database +B):\n%s", st.name, diff)
		}
		if pgstore.UserDBReads(b) != dbB || pgstore.UserCacheServed(b) == servedB {
			t.Fatalf("%s: node B's reads one second after the write went to the database", st.name)
		}
	}

	// Node B, its polls held, still holds u1 as "JDoe" at some version
	// while "JDoe" is free; it creates u10 "jdoe".
	if _, err := a.UpdateUser(ctx, "c1", "u1", func(u *user.User) error { u.Username = "JDoe"; return nil }); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second) // B follows: u1 is "JDoe" there
	release := pgstore.HoldUserPolls(b)
	if _, err := a.UpdateUser(ctx, "c1", "u1", func(u *user.User) error { u.Username = "Jane"; return nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := b.CreateUser(ctx, "c1", user.User{ID: "u10", Username: "jdoe", Enabled: true}); err != nil {
		t.Fatal(err)
	}
	u, err := b.UserByUsername(ctx, "c1", "JDOE")
	release()
	if err != nil || u.ID != "u10" {
		t.Fatalf("node B reads its own new user by username: %+v, %v; want u10", u, err)
	}
	if u, err := b.UserByID(ctx, "c1", "u10"); err != nil || u.Username != "jdoe" {
		t.Fatalf("node B reads its own new user by id: %+v, %v", u, err)
	}
}

// A node whose user cache cannot follow the database (its polls held past
// the bound) reads users from the database again.
func TestUserCacheBound(t *testing.T) {
	ctx := context.Background()
	s, _ := openStore(t, fixture(), pgstore.WithUserCache())
	if _, err := s.UserByUsername(ctx, "c1", "jdoe"); err != nil {
		t.Fatal(err)
	}
	if n := pgstore.UserDBReads(s); n != 0 {
		t.Fatalf("%d reads went to the database; want the first read from the cache it loads", n)
	}
	release := pgstore.HoldUserPolls(s)
	time.Sleep(time.Second) // past the bound
	if _, err := s.UserByUsername(ctx, "c1", "jdoe"); err != nil {
		t.Fatal(err)
	}
	release()
	if n := pgstore.UserDBReads(s); n != 1 {
		t.Fatalf("%d reads went to the database after a second without a poll; want 1", n)
	}
	if n := pgstore.UserCacheServed(s); n != 1 {
		t.Fatalf("the cache served %d reads; want 1 (the first)", n)
	}
}
