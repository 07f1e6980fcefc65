package userapi_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/procurekit/procure"
	"github.com/procurekit/procure/user"
	"github.com/procurekit/procure/userapi"
)

func TestSync(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name        string
		autoRoles   []string // of the community
		opts        []userapi.Option
		in          user.Input
		wantOutcome userapi.Outcome
		wantChanges []string
		wantWrites  int
		check       func(t *testing.T, u user.User)
	}{
		{
			name: "new user is created", in: user.Input{Username: new("dave"), Email: new("dave@example.com")},
			wantOutcome: userapi.Created, wantChanges: []string{"username", "email"}, wantWrites: 1,
			check: func(t *testing.T, u user.User) {
				if u.Username != "dave" || !u.Enabled || u.ID == "" {
					t.Errorf("created %+v", u)
				}
			},
		},
		{
			// Omitted fields are "no change"; present ones equal.
			name: "the case of the username is a change", in: user.Input{Username: new("ALICE"), FirstName: new("Alice")},
			wantOutcome: userapi.Updated, wantChanges: []string{"username"}, wantWrites: 1,
		},
		{
			name: "nothing differs", in: user.Input{Username: new("alice"), FirstName: new(" Alice "), Enabled: new(true)},
			wantOutcome: userapi.Unchanged, wantWrites: 0,
		},
		{
			name: "lists compare as sets",
			in: user.Input{Username: new("alice"), Roles: &[]user.Code{{Code: "APPROVER"}, {Code: "BUYER"}},
				Attributes: &[]user.Attribute{{Name: "grade", Value: "7"}, {Name: "cc", Value: "1"}}},
			wantOutcome: userapi.Unchanged, wantWrites: 0,
		},
		{
			name: "changed fields are updated", in: user.Input{Username: new("alice"), Email: new(""), Enabled: new(false), Attributes: &[]user.Attribute{{Name: "cc", Value: "2"}, {Name: "grade", Value: "7"}}},
			wantOutcome: userapi.Updated, wantChanges: []string{"email", "enabled", "attributes"}, wantWrites: 1,
			check: func(t *testing.T, u user.User) {
				if u.Email != "" || u.Enabled || u.FirstName != "Alice" || u.Attributes[0].Value != "2" {
					t.Errorf("updated %+v", u)
				}
			},
		},
		{
			// The server announces its auto-roles in the pre-check: the
			// client needs no WithAutoRoles to leave the user alone.
			name: "auto-role announced by the server", autoRoles: []string{"APPROVER"},
			in:          user.Input{Username: new("alice"), Roles: &[]user.Code{{Code: "BUYER"}}},
			wantOutcome: userapi.Unchanged, wantWrites: 0,
		},
		{
			// A role the HRIS removed is still a change, auto-roles or not.
			name: "a removed role is a change", autoRoles: []string{"EMPLOYEE"},
			in:          user.Input{Username: new("alice"), Roles: &[]user.Code{{Code: "BUYER"}, {Code: "EMPLOYEE"}}},
			wantOutcome: userapi.Updated, wantChanges: []string{"roles"}, wantWrites: 1,
			check: func(t *testing.T, u user.User) {
				if !cmp.Equal(u.Roles, user.Codes("BUYER", "EMPLOYEE")) {
					t.Errorf("roles %v; want BUYER, EMPLOYEE", u.Roles)
				}
			},
		},
		{
			// A user the server holds without an auto-role (from a data
			// file) would gain it: a change.
			name: "a missing auto-role is a change", autoRoles: []string{"EMPLOYEE"},
			in:          user.Input{Username: new("alice"), Roles: &[]user.Code{{Code: "BUYER"}, {Code: "APPROVER"}}},
			wantOutcome: userapi.Updated, wantChanges: []string{"roles"}, wantWrites: 1,
		},
		{
			name: "auto-role named by WithAutoRoles", autoRoles: []string{"APPROVER"}, opts: []userapi.Option{userapi.WithAutoRoles("APPROVER")},
			in:          user.Input{Username: new("alice"), Roles: &[]user.Code{{Code: "BUYER"}}},
			wantOutcome: userapi.Unchanged, wantWrites: 0,
		},
		{
			name: "rename by id", in: user.Input{ID: new("u-1"), Username: new("alice.smith")},
			wantOutcome: userapi.Updated, wantChanges: []string{"username"}, wantWrites: 1,
			check: func(t *testing.T, u user.User) {
				if u.ID != "u-1" || u.Username != "alice.smith" || u.FirstName != "Alice" {
					t.Errorf("renamed %+v", u)
				}
			},
		},
		{
			name: "unknown id and username: created with the id", in: user.Input{ID: new("hr-9"), Username: new("erin")},
			wantOutcome: userapi.Created, wantChanges: []string{"username"}, wantWrites: 2,
			check: func(t *testing.T, u user.User) {
				if u.ID != "hr-9" {
					t.Errorf("created %+v", u)
				}
			},
		},
		{
			name: "matching id", in: user.Input{ID: new("u-1"), Username: new("alice"), Phone: new("555")},
			wantOutcome: userapi.Updated, wantChanges: []string{"phone"}, wantWrites: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t, tt.autoRoles...)
			c := newClient(t, s, tt.opts...)
			plan, err := c.Plan(ctx, tt.in)
			if err != nil {
				t.Fatalf("Plan: %v", err)
			}
			if s.writeCount() != 0 {
				t.Fatal("Plan wrote")
			}
			if diff := cmp.Diff(tt.wantChanges, plan.Changes, equateEmpty); diff != "" {
				t.Errorf("plan changes (-want +got):\n%s", diff)
			}
			outcome, u, err := c.Sync(ctx, tt.in)
			if err != nil {
				t.Fatalf("Sync: %v", err)
			}
			if outcome != tt.wantOutcome {
				t.Errorf("outcome = %v, want %v", outcome, tt.wantOutcome)
			}
			if got := s.writeCount(); got != tt.wantWrites {
				t.Errorf("%d writes, want %d", got, tt.wantWrites)
			}
			if tt.check != nil {
				tt.check(t, u)
			}
			// The returned user is the stored one.
			stored, err := s.store.UserByUsername(ctx, "demo", u.Username)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(stored, u, equateEmpty); diff != "" {
				t.Errorf("returned user differs from the stored one (-stored +returned):\n%s", diff)
			}
			// A second run changes nothing and writes nothing.
			before := s.writeCount()
			if o, _, err := c.Sync(ctx, tt.in); err != nil || o != userapi.Unchanged {
				t.Errorf("second Sync = %v, %v; want unchanged", o, err)
			}
			if s.writeCount() != before {
				t.Errorf("second Sync wrote")
			}
		})
	}
}

// Issue 13 part 7: with auto-roles, Sync writes nothing for a user that is
// unchanged once the server's additions are accounted for, reports
// exactly what it sent, and the plan (a dry run) agrees with the real
// run - with no client option naming the auto-roles. Against a server
// that does not announce them, the plan says update and Sync reports the
// update it sent.
func TestSyncAutoRolesPinned(t *testing.T) {
	ctx := context.Background()
	in := user.Input{Username: new("hana"), FirstName: new("Hana"), Roles: &[]user.Code{{Code: "BUYER"}}}
	for _, tt := range []struct {
		name       string
		announce   bool
		opts       []userapi.Option
		wantSecond userapi.Outcome
		wantWrites int // by the second Sync
	}{
		{"announced", true, nil, userapi.Unchanged, 0},
		{"not announced, no option", false, nil, userapi.Updated, 1},
		{"not announced, WithAutoRoles", false, []userapi.Option{userapi.WithAutoRoles("EMPLOYEE")}, userapi.Unchanged, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t, "EMPLOYEE")
			if !tt.announce {
				s.stripAutoRoles = true
			}
			c := newClient(t, s, tt.opts...)
			if o, u, err := c.Sync(ctx, in); err != nil || o != userapi.Created || !cmp.Equal(u.Roles, user.Codes("BUYER", "EMPLOYEE")) {
				t.Fatalf("first Sync = %v, %+v, %v; want created with the auto-role", o, u, err)
			}
			plan, err := c.Plan(ctx, in)
			if err != nil {
				t.Fatal(err)
			}
			before := s.writeCount()
			o, _, err := c.Sync(ctx, in)
			if err != nil {
				t.Fatal(err)
			}
			writes := s.writeCount() - before
			if plan.Outcome != o || o != tt.wantSecond || writes != tt.wantWrites {
				t.Errorf("second run: plan %v, Sync %v with %d writes; want %v both and %d writes", plan.Outcome, o, writes, tt.wantSecond, tt.wantWrites)
			}
			if (o == userapi.Updated) != (writes == 1) {
				t.Errorf("Sync reported %v after %d writes", o, writes)
			}
		})
	}
}

func TestSyncErrors(t *testing.T) {
	ctx := context.Background()
	s := newServer(t)
	c := newClient(t, s)
	_, _, err := c.Sync(ctx, user.Input{ID: new("u-2"), Username: new("alice")})
	if !errors.Is(err, userapi.ErrIDMismatch) {
		t.Errorf("Sync with another user's id = %v, want ErrIDMismatch", err)
	}
	_, _, err = c.Sync(ctx, user.Input{Username: new("x"), Email: new("not-an-email")})
	var ve *procure.ValidationError
	if !errors.As(err, &ve) || ve.Fields[0].Field != "email" {
		t.Errorf("Sync of an invalid user = %v, want a local validation error", err)
	}
	if s.writeCount() != 0 {
		t.Error("a failed Sync wrote")
	}
	// A rename onto a username taken by another user.
	_, _, err = c.Sync(ctx, user.Input{ID: new("u-2"), Username: new("ALICE")})
	if !errors.Is(err, userapi.ErrIDMismatch) {
		t.Errorf("rename onto a taken username = %v", err)
	}
}

func TestSyncLostCreateRace(t *testing.T) {
	// Someone creates the user between the pre-check and the create: Sync
	// plans again and updates instead.
	ctx := context.Background()
	s := newServer(t)
	c := newClient(t, s)
	var once bool
	s.before = func(r *http.Request) {
		if r.Method == http.MethodPost && !once {
			once = true
			if _, err := s.store.CreateUser(ctx, "demo", user.User{ID: "other", Username: "frank", Enabled: true}); err != nil {
				t.Error(err)
			}
		}
	}
	o, u, err := c.Sync(ctx, user.Input{Username: new("frank"), FirstName: new("Frank")})
	if err != nil || o != userapi.Updated || u.ID != "other" || u.FirstName != "Frank" {
		t.Fatalf("Sync = %v, %+v, %v; want the racing user updated", o, u, err)
	}
}

func ExampleClient_Sync() {
	s, err := startServer()
	if err != nil {
		panic(err)
	}
	defer s.Close()
	c, err := userapi.New(s.URL, testAccount, testKey)
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	for _, in := range []user.Input{
		{Username: new("grace"), Email: new("grace@example.com")},        // new
		{Username: new("GRACE"), Email: new("grace@example.com")},        // a case change of the username
		{Username: new("GRACE"), Email: new("grace@example.com")},        // same again
		{Username: new("grace"), Enabled: new(false), Phone: new("555")}, // disable, add a phone, and the case again
	} {
		outcome, u, err := c.Sync(ctx, in)
		fmt.Println(outcome, u.Username, u.Enabled, err)
	}
	// Output:
	// created grace true <nil>
	// updated GRACE true <nil>
	// unchanged GRACE true <nil>
	// updated grace false <nil>
}

// Resolve settles a plan that updates by id, which the user API cannot
// look up, by asking the SCIM endpoint beside it: a known id is an update
// (a rename) with the fields that differ, an unknown one a create; a
// server without the endpoint says so and leaves the plan as it was.
func TestResolve(t *testing.T) {
	ctx := context.Background()
	s := newServer(t)
	c := newClient(t, s)

	rename := user.Input{ID: new("u-1"), Username: new("alice.smith"), FirstName: new("Alice")}
	p, err := c.Plan(ctx, rename)
	if err != nil || !p.ByID() || p.Outcome != userapi.Updated || p.Current != nil {
		t.Fatalf("Plan of a renamed user: %+v, %v; want an update by id, unsettled", p, err)
	}
	r, err := c.Resolve(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if r.ByID() || r.Outcome != userapi.Updated || r.Current == nil || r.Current.Username != "alice" || !cmp.Equal(r.Changes, []string{"username"}) {
		t.Errorf("Resolve of a known id: outcome %v, current %+v, changes %v; want an update of alice, changing the username", r.Outcome, r.Current, r.Changes)
	}
	if s.writeCount() != 0 {
		t.Errorf("Resolve wrote %d times", s.writeCount())
	}
	o, u, err := c.Apply(ctx, r)
	if err != nil || o != userapi.Updated || u.ID != "u-1" || u.Username != "alice.smith" {
		t.Errorf("Apply of the settled plan: %v, %+v, %v", o, u, err)
	}

	create := user.Input{ID: new("u-new"), Username: new("newbie"), Email: new("newbie@example.com")}
	p, err = c.Plan(ctx, create)
	if err != nil || !p.ByID() {
		t.Fatalf("Plan of a new user with an id: %+v, %v", p, err)
	}
	r, err = c.Resolve(ctx, p)
	if err != nil || r.Outcome != userapi.Created || r.ByID() || !cmp.Equal(r.Changes, []string{"id", "username", "email"}) {
		t.Errorf("Resolve of an unknown id: %+v, %v; want a create of every field", r, err)
	}
	if o, u, err := c.Apply(ctx, r); err != nil || o != userapi.Created || u.ID != "u-new" {
		t.Errorf("Apply of the settled create: %v, %+v, %v", o, u, err)
	}

	// A plan by username is settled already.
	p, err = c.Plan(ctx, user.Input{Username: new("bob/ops+1@example.com"), Enabled: new(true)})
	if err != nil {
		t.Fatal(err)
	}
	if r, err := c.Resolve(ctx, p); err != nil || r.Outcome != p.Outcome || r.Current == nil || r.Current.ID != "u-2" {
		t.Errorf("Resolve of a plan by username: %+v, %v; want it as it was", r, err)
	}

	// A server without the SCIM endpoint.
	s.mu.Lock()
	s.noSCIM = true
	s.mu.Unlock()
	p, err = c.Plan(ctx, user.Input{ID: new("u-9"), Username: new("zed")})
	if err != nil {
		t.Fatal(err)
	}
	if r, err := c.Resolve(ctx, p); !errors.Is(err, userapi.ErrNoIDLookup) || !r.ByID() || r.Outcome != userapi.Updated {
		t.Errorf("Resolve without SCIM: %+v, %v; want ErrNoIDLookup and the plan unsettled", r, err)
	}

	// A failing endpoint is an *Error with its status: 5xx is retryable.
	s.mu.Lock()
	s.noSCIM = false
	s.before = func(r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/scim/") {
			panic(http.ErrAbortHandler)
		}
	}
	s.mu.Unlock()
	if _, err := c.Resolve(ctx, p); err == nil || errors.Is(err, userapi.ErrNoIDLookup) || !userapi.Retryable(err) {
		t.Errorf("Resolve when the connection breaks: %v; want a retryable error", err)
	}
}
