package pgstore

import (
	"context"
	"slices"
	"testing"

	"github.com/procurekit/procure/datafile"
	"github.com/procurekit/procure/internal/pgtest"
	"github.com/procurekit/procure/user"
)

// put keeps the latest state of each user, whatever order the states
// come in, and the username keys the cached users hold.
func TestUserComPut(t *testing.T) {
	v := func(id, name string, version int64) user.User {
		return user.User{ID: id, Username: name, Version: version}
	}
	tests := []struct {
		name    string
		puts    []user.User
		want    []string            // id:username@version, by id
		wantKey map[string][]string // username key -> ids
	}{
		{"in order", []user.User{v("u1", "Ann", 1), v("u1", "Bea", 2)}, []string{"u1:Bea@2"}, map[string][]string{"bea": {"u1"}}},
		{"an older state after a newer one", []user.User{v("u1", "Bea", 2), v("u1", "Ann", 1)}, []string{"u1:Bea@2"}, map[string][]string{"bea": {"u1"}}},
		{"the same state twice", []user.User{v("u1", "Ann", 1), v("u1", "Ann", 1)}, []string{"u1:Ann@1"}, map[string][]string{"ann": {"u1"}}},
		{"a name given up and taken", []user.User{v("u1", "Ann", 1), v("u1", "Bea", 2), v("u2", "ANN", 1)},
			[]string{"u1:Bea@2", "u2:ANN@1"}, map[string][]string{"bea": {"u1"}, "ann": {"u2"}}},
		{"a name taken before the news it was given up", []user.User{v("u1", "Ann", 1), v("u2", "ann", 1)},
			[]string{"u1:Ann@1", "u2:ann@1"}, map[string][]string{"ann": {"u1", "u2"}}},
		{"then the news", []user.User{v("u1", "Ann", 1), v("u2", "ann", 1), v("u1", "Cy", 2)},
			[]string{"u1:Cy@2", "u2:ann@1"}, map[string][]string{"ann": {"u2"}, "cy": {"u1"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			uc := &userCom{byID: map[string]*cachedUser{}, byKey: map[string][]string{}}
			for _, u := range tt.puts {
				uc.put(u)
			}
			var got []string
			for id, e := range uc.byID {
				got = append(got, id+":"+e.u.Username+"@"+string(rune('0'+e.u.Version)))
			}
			slices.Sort(got)
			if !slices.Equal(got, tt.want) {
				t.Errorf("users %q, want %q", got, tt.want)
			}
			if len(uc.byKey) != len(tt.wantKey) {
				t.Errorf("keys %v, want %v", uc.byKey, tt.wantKey)
			}
			for k, ids := range tt.wantKey {
				if !slices.Equal(uc.byKey[k], ids) {
					t.Errorf("key %q: %v, want %v", k, uc.byKey[k], ids)
				}
			}
		})
	}
}

// openUserNodes opens two stores on a new database, the first with the
// user cache, and imports community c1 holding users.
func openUserNodes(t *testing.T, users ...user.User) (cached, other *Store) {
	t.Helper()
	ctx := context.Background()
	dsn := pgtest.NewDatabase(t)
	cached, err := Open(ctx, dsn, WithUserCache())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cached.Close)
	if other, err = Open(ctx, dsn); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(other.Close)
	f := &datafile.File{Communities: []datafile.Community{{ID: "c1", Name: "One", Region: datafile.NZ, Users: users}}}
	if err := cached.Import(ctx, f); err != nil {
		t.Fatal(err)
	}
	return cached, other
}

// holdUserPolls keeps s's user cache from polling until the returned
// function is called.
func holdUserPolls(s *Store) (release func()) {
	s.users.pollMu.Lock()
	return s.users.pollMu.Unlock
}

// A poll that read a user before this node wrote it, and applies after
// the write did, leaves the node's own, newer state: the node's reads
// never go back.
func TestUserCachePollAfterOwnWrite(t *testing.T) {
	ctx := context.Background()
	s, other := openUserNodes(t, user.User{ID: "u1", Username: "ann", Email: "old@example.com"})
	defer holdUserPolls(s)()
	if _, err := s.UserByID(ctx, "c1", "u1"); err != nil { // loads c1
		t.Fatal(err)
	}
	// Another node changes u1: the poll reads that state.
	if _, err := other.UpdateUser(ctx, "c1", "u1", func(u *user.User) error { u.Email = "poll@example.com"; return nil }); err != nil {
		t.Fatal(err)
	}
	p, err := s.users.pollRead()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(p.rows, func(r polledUser) bool { return r.u.Email == "poll@example.com" }) {
		t.Fatalf("the poll read %+v; want u1 at poll@example.com", p.rows)
	}
	// This node writes u1 again before the poll applies.
	if _, err := s.UpdateUser(ctx, "c1", "u1", func(u *user.User) error { u.Email = "own@example.com"; return nil }); err != nil {
		t.Fatal(err)
	}
	s.users.pollApply(p)
	u, err := s.UserByID(ctx, "c1", "u1")
	if err != nil || u.Email != "own@example.com" || u.Version != 3 {
		t.Fatalf("after the late poll: %+v, %v; want own@example.com at version 3", u, err)
	}
	if n := s.userReads.Load(); n != 0 {
		t.Fatalf("%d reads went to the database", n)
	}
}
