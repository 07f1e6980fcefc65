package user_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/google/uuid"

	"github.com/procurekit/procure"
	"github.com/procurekit/procure/datafile"
	"github.com/procurekit/procure/memstore"
	"github.com/procurekit/procure/user"
)

const (
	commA = "community-a"
	commB = "community-b"
)

// newService returns a Service over a memstore whose community A adds the
// auto-roles EMPLOYEE and REQUESTER, with the users alice (A), bob (A,
// disabled) and carol (B).
func newService(tb testing.TB) (*user.Service, *memstore.Store) {
	tb.Helper()
	s, err := memstore.LoadReader((&datafile.File{Communities: []datafile.Community{
		{ID: commA, Region: datafile.DEMO, AutoRoles: []string{"EMPLOYEE", "REQUESTER"}, Users: []user.User{
			{ID: "a-1", Username: "Alice", Email: "alice@example.com", Enabled: true, Roles: user.Codes("BUYER"),
				Attributes: []user.Attribute{{Name: "costCentre", Value: "CC1"}}},
			{ID: "a-2", Username: "bob", Enabled: false},
		}},
		{ID: commB, Region: datafile.NZ, Users: []user.User{{ID: "b-1", Username: "carol", Enabled: true}}},
	}}).Reader())
	if err != nil {
		tb.Fatal(err)
	}
	return user.NewService(s), s
}

var equateEmpty = cmp.Options{cmpopts.EquateEmpty(), cmpopts.IgnoreFields(user.User{}, "Version")} // versions are the store's: not compared here

func TestServiceCreate(t *testing.T) {
	ctx := context.Background()
	t.Run("generated id, defaults, trimming, auto-roles", func(t *testing.T) {
		svc, store := newService(t)
		got, err := svc.Create(ctx, commA, user.Input{
			Username:  new("  dana.lee "),
			FirstName: new(" Dana"),
			Roles:     codes("BUYER", " EMPLOYEE "),
		})
		if err != nil {
			t.Fatalf("Create: %v", err)
		}
		// docs: users.md: an omitted id becomes a new UUID.
		id, err := uuid.Parse(got.ID)
		if err != nil || id.Version() != 4 || id.String() != got.ID {
			t.Errorf("generated id %q is not a canonical version 4 UUID", got.ID)
		}
		want := user.User{
			ID: got.ID, Username: "dana.lee", FirstName: "Dana",
			Enabled: true, // docs: users.md: enabled defaults to true
			// docs: users.md: auto-roles added, without duplicating EMPLOYEE.
			Roles: user.Codes("BUYER", "EMPLOYEE", "REQUESTER"),
		}
		if diff := cmp.Diff(want, got, equateEmpty); diff != "" {
			t.Errorf("Create (-want +got):\n%s", diff)
		}
		stored, err := store.UserByID(ctx, commA, got.ID)
		if err != nil || !cmp.Equal(want, stored, equateEmpty) {
			t.Errorf("stored = %+v, %v", stored, err)
		}
	})
	t.Run("given id, disabled, no auto-roles in B", func(t *testing.T) {
		svc, _ := newService(t)
		got, err := svc.Create(ctx, commB, user.Input{ID: new(" hr-77 "), Username: new("dave"), Enabled: new(false)})
		if err != nil {
			t.Fatal(err)
		}
		want := user.User{ID: "hr-77", Username: "dave"}
		if diff := cmp.Diff(want, got, equateEmpty); diff != "" {
			t.Errorf("Create (-want +got):\n%s", diff)
		}
	})
	t.Run("empty id is generated", func(t *testing.T) {
		svc, _ := newService(t)
		got, err := svc.Create(ctx, commB, user.Input{ID: new("  "), Username: new("erin")})
		if err != nil || uuid.Validate(got.ID) != nil {
			t.Fatalf("Create = %+v, %v; want a generated id", got, err)
		}
	})
	errs := []struct {
		name      string
		community string
		in        user.Input
		want      error
	}{
		{"username taken in another case", commA, user.Input{Username: new("ALICE")}, user.ErrDuplicateUsername},
		// docs: users.md: a given id must be unique across the whole service.
		{"id of another community's user", commA, user.Input{ID: new("b-1"), Username: new("new")}, user.ErrDuplicateID},
		{"invalid", commA, user.Input{Username: new("x"), Email: new("nope")}, procure.ErrInvalid},
		{"no username", commA, user.Input{FirstName: new("x")}, procure.ErrInvalid},
	}
	for _, tt := range errs {
		t.Run(tt.name, func(t *testing.T) {
			svc, store := newService(t)
			_, err := svc.Create(ctx, tt.community, tt.in)
			if !errors.Is(err, tt.want) {
				t.Fatalf("Create = %v, want %v", err, tt.want)
			}
			if _, err := store.UserByUsername(ctx, tt.community, "new"); !errors.Is(err, user.ErrNotFound) {
				t.Errorf("a failed create stored a user: %v", err)
			}
		})
	}
}

func TestServiceUpdate(t *testing.T) {
	ctx := context.Background()
	alice := user.User{ID: "a-1", Username: "Alice", Email: "alice@example.com", Enabled: true,
		Roles: user.Codes("BUYER"), Attributes: []user.Attribute{{Name: "costCentre", Value: "CC1"}}}
	tests := []struct {
		name string
		in   user.Input
		want func(u *user.User)
	}{
		{
			// docs: users.md: present fields replace, omitted ones keep their value.
			name: "present fields replace, omitted keep",
			in:   user.Input{ID: new("a-1"), Username: new("Alice"), FirstName: new("Alice"), Phone: new(" 555 ")},
			want: func(u *user.User) {
				u.FirstName, u.Phone = "Alice", "555"
				u.Roles = user.Codes("BUYER", "EMPLOYEE", "REQUESTER")
			},
		},
		{
			name: "empty and null clear",
			in:   user.Input{ID: new("a-1"), Username: new("Alice"), Email: new(""), Attributes: &[]user.Attribute{}},
			want: func(u *user.User) {
				u.Email, u.Attributes = "", nil
				u.Roles = user.Codes("BUYER", "EMPLOYEE", "REQUESTER")
			},
		},
		{
			// docs: users.md "Enabled": enabled true -> false.
			name: "disable",
			in:   user.Input{ID: new("a-1"), Username: new("Alice"), Enabled: new(false)},
			want: func(u *user.User) {
				u.Enabled = false
				u.Roles = user.Codes("BUYER", "EMPLOYEE", "REQUESTER")
			},
		},
		{
			// docs: users.md: auto-roles are added on update too, even when roles are replaced.
			name: "roles replaced, auto-roles kept",
			in:   user.Input{ID: new("a-1"), Username: new("Alice"), Roles: codes("REQUESTER", "APPROVER")},
			want: func(u *user.User) { u.Roles = user.Codes("REQUESTER", "APPROVER", "EMPLOYEE") },
		},
		{
			name: "rename",
			in:   user.Input{ID: new("a-1"), Username: new("alice.smith")},
			want: func(u *user.User) {
				u.Username = "alice.smith"
				u.Roles = user.Codes("BUYER", "EMPLOYEE", "REQUESTER")
			},
		},
		{
			// docs: users.md: a user may change the case of its own username.
			name: "case of own username",
			in:   user.Input{ID: new("a-1"), Username: new("ALICE")},
			want: func(u *user.User) {
				u.Username = "ALICE"
				u.Roles = user.Codes("BUYER", "EMPLOYEE", "REQUESTER")
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			svc, store := newService(t)
			got, err := svc.Update(ctx, commA, tt.in)
			if err != nil {
				t.Fatalf("Update: %v", err)
			}
			want := alice.Clone()
			tt.want(&want)
			if diff := cmp.Diff(want, got, equateEmpty); diff != "" {
				t.Errorf("Update (-want +got):\n%s", diff)
			}
			stored, err := store.UserByID(ctx, commA, "a-1")
			if err != nil || !cmp.Equal(want, stored, equateEmpty) {
				t.Errorf("stored = %+v, %v", stored, err)
			}
		})
	}

	t.Run("enable again keeps enabled when omitted", func(t *testing.T) {
		svc, _ := newService(t)
		// docs: users.md "Enabled": enabled false -> true.
		u, err := svc.Update(ctx, commA, user.Input{ID: new("a-2"), Username: new("bob"), Enabled: new(true)})
		if err != nil || !u.Enabled {
			t.Fatalf("enable = %+v, %v", u, err)
		}
		// docs: users.md: an omitted enabled keeps its current value.
		u, err = svc.Update(ctx, commA, user.Input{ID: new("a-2"), Username: new("bob"), FirstName: new("Bob")})
		if err != nil || !u.Enabled {
			t.Fatalf("update without enabled = %+v, %v; want still enabled", u, err)
		}
	})

	errs := []struct {
		name      string
		community string
		in        user.Input
		want      error
	}{
		{"unknown id", commA, user.Input{ID: new("nope"), Username: new("x")}, user.ErrNotFound},
		// docs: tenancy.md: another community's user is not found.
		{"another community's user", commB, user.Input{ID: new("a-1"), Username: new("Alice")}, user.ErrNotFound},
		{"username of another user", commA, user.Input{ID: new("a-2"), Username: new("ALICE")}, user.ErrDuplicateUsername},
		{"no id", commA, user.Input{Username: new("Alice")}, procure.ErrInvalid},
		{"no username", commA, user.Input{ID: new("a-1")}, procure.ErrInvalid},
		{"duplicate codes", commA, user.Input{ID: new("a-1"), Username: new("Alice"), BuyerGroups: codes("G", " G")}, procure.ErrInvalid},
	}
	for _, tt := range errs {
		t.Run(tt.name, func(t *testing.T) {
			svc, store := newService(t)
			if _, err := svc.Update(ctx, tt.community, tt.in); !errors.Is(err, tt.want) {
				t.Fatalf("Update = %v, want %v", err, tt.want)
			}
			stored, err := store.UserByID(ctx, commA, "a-1")
			if err != nil || !cmp.Equal(alice, stored, equateEmpty) {
				t.Errorf("a failed update changed alice: %+v, %v", stored, err)
			}
		})
	}
}

func TestServiceGet(t *testing.T) {
	ctx := context.Background()
	svc, _ := newService(t)
	for _, name := range []string{"alice", "ALICE", " Alice "} {
		u, err := svc.Get(ctx, commA, name)
		if err != nil || u.ID != "a-1" {
			t.Errorf("Get(%q) = %+v, %v", name, u, err)
		}
	}
	for _, name := range []string{"carol", "nobody", string(make([]byte, 300))} {
		if _, err := svc.Get(ctx, commA, name); !errors.Is(err, user.ErrNotFound) {
			t.Errorf("Get(%q) = %v, want ErrNotFound", name, err)
		}
	}
	_, err := svc.Get(ctx, commA, "  ")
	var ve *procure.ValidationError
	if !errors.As(err, &ve) || ve.Source != procure.SourcePath || ve.Fields[0].Field != "username" {
		t.Errorf("Get of a blank username = %v, want a path validation error", err)
	}
}

// staticRoles is a user.AutoRoler with fixed roles per community.
type staticRoles map[string][]string

func (s staticRoles) AutoRoles(_ context.Context, community string) ([]string, error) {
	return s[community], nil
}

type failingRoles struct{}

var errRoles = errors.New("config store down")

func (failingRoles) AutoRoles(context.Context, string) ([]string, error) { return nil, errRoles }

func TestServiceOptions(t *testing.T) {
	ctx := context.Background()
	_, store := newService(t)
	n := 0
	svc := &user.Service{
		Store:     store,
		AutoRoles: staticRoles{commB: {"GUEST"}},
		NewID:     func() string { n++; return fmt.Sprintf("custom-%d", n) },
	}
	u, err := svc.Create(ctx, commB, user.Input{Username: new("frank")})
	if err != nil {
		t.Fatal(err)
	}
	want := user.User{ID: "custom-1", Username: "frank", Enabled: true, Roles: user.Codes("GUEST")}
	if diff := cmp.Diff(want, u, equateEmpty); diff != "" {
		t.Errorf("Create (-want +got):\n%s", diff)
	}
	// The AutoRoles field overrides the store's: community A gets none here.
	u, err = svc.Create(ctx, commA, user.Input{Username: new("grace")})
	if err != nil || len(u.Roles) != 0 {
		t.Errorf("Create in A = %+v, %v; want no roles", u, err)
	}

	for _, bad := range []user.AutoRoler{failingRoles{}, staticRoles{commB: {"OK", ""}}, staticRoles{commB: {" PADDED"}}} {
		svc := &user.Service{Store: store, AutoRoles: bad}
		_, err := svc.Create(ctx, commB, user.Input{Username: new("henry")})
		if err == nil || errors.Is(err, procure.ErrInvalid) {
			t.Errorf("Create with bad auto-roles = %v; want an internal error", err)
		}
		if _, err := store.UserByUsername(ctx, commB, "henry"); !errors.Is(err, user.ErrNotFound) {
			t.Errorf("a create with bad auto-roles stored the user")
		}
	}
}

func ExampleService() {
	store, err := memstore.LoadReader((&datafile.File{Communities: []datafile.Community{
		{ID: "demo", Region: datafile.DEMO, AutoRoles: []string{"EMPLOYEE"}},
	}}).Reader())
	if err != nil {
		panic(err)
	}
	svc := user.NewService(store)
	ctx := context.Background()

	created, err := svc.Create(ctx, "demo", user.Input{
		ID:       new("hr-0042"),
		Username: new("  Jane.Doe@example.com "),
		Roles:    &[]user.Code{{Code: "BUYER"}},
	})
	fmt.Println(created.ID, created.Username, created.Enabled, created.Roles, err)

	// Disable her: only the fields sent change.
	updated, err := svc.Update(ctx, "demo", user.Input{ID: new("hr-0042"), Username: new("jane.doe@example.com"), Enabled: new(false)})
	fmt.Println(updated.Username, updated.Enabled, updated.Roles, err)

	got, err := svc.Get(ctx, "demo", "JANE.DOE@EXAMPLE.COM")
	fmt.Println(got.ID, err)

	_, err = svc.Create(ctx, "demo", user.Input{Username: new("JANE.DOE@example.com")})
	fmt.Println(errors.Is(err, user.ErrDuplicateUsername))
	// Output:
	// hr-0042 Jane.Doe@example.com true [{BUYER} {EMPLOYEE}] <nil>
	// jane.doe@example.com false [{BUYER} {EMPLOYEE}] <nil>
	// hr-0042 <nil>
	// true
}
