package user_test

import (
	"context"
	"errors"
	"reflect"
	"strconv"
	"sync"
	"testing"

	"github.com/procurekit/procure"
	"github.com/procurekit/procure/user"
)

// probeStore wraps a user.Store to watch UpdateUser: whether a call is
// inside apply (where a store holds its lock or transaction), how many
// commits were tried, and, on the first interfere calls, a write of
// another client that lands between the Service's read and its commit.
type probeStore struct {
	user.Store
	mu        sync.Mutex
	inside    bool
	updates   int
	interfere int // how many of the next UpdateUser calls another write precedes (-1: all)
}

func (p *probeStore) UpdateUser(ctx context.Context, community, id string, apply func(*user.User) error) (user.User, error) {
	p.mu.Lock()
	p.updates++
	other := p.interfere != 0
	if p.interfere > 0 {
		p.interfere--
	}
	p.mu.Unlock()
	if other {
		if _, err := p.Store.UpdateUser(ctx, community, id, func(u *user.User) error {
			u.Phone += "x" // another client's change
			return nil
		}); err != nil {
			return user.User{}, err
		}
	}
	return p.Store.UpdateUser(ctx, community, id, func(u *user.User) error {
		p.setInside(true)
		defer p.setInside(false)
		return apply(u)
	})
}

func (p *probeStore) setInside(v bool) {
	p.mu.Lock()
	p.inside = v
	p.mu.Unlock()
}

func (p *probeStore) isInside() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.inside
}

func (p *probeStore) calls() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.updates
}

func newProbe(tb testing.TB) (*user.Service, *probeStore) {
	tb.Helper()
	_, store := newService(tb)
	p := &probeStore{Store: store}
	return &user.Service{Store: p, AutoRoles: store}, p
}

// Issue 19 item 1: the caller's change, the whole-user checks and the
// auto-roles run before Store.UpdateUser, never inside its apply (under
// memstore's lock or in a PostgreSQL transaction); a change the checks
// refuse never reaches the store.
func TestModifyWorksOutsideTheStore(t *testing.T) {
	ctx := context.Background()
	svc, p := newProbe(t)
	runs := 0
	got, err := svc.Modify(ctx, commA, "a-1", 0, func(u *user.User) error {
		runs++
		if p.isInside() {
			t.Error("change runs inside Store.UpdateUser's apply")
		}
		u.FirstName = " Alicia "
		return nil
	})
	if err != nil {
		t.Fatalf("Modify: %v", err)
	}
	if runs != 1 || p.calls() != 1 || got.FirstName != "Alicia" || got.Version != 2 {
		t.Errorf("change ran %d times, UpdateUser %d; got %q version %d; want 1, 1, Alicia, 2", runs, p.calls(), got.FirstName, got.Version)
	}

	// A change that breaks the rules is refused before any store write:
	// a list far over the limit (a huge SCIM PATCH), an invisible
	// character in the username.
	refused := []struct {
		name   string
		change func(*user.User)
	}{
		{"roles over the limit", func(u *user.User) {
			for i := range 70000 {
				u.Roles = append(u.Roles, user.Code{Code: "R" + strconv.Itoa(i)})
			}
		}},
		{"invisible username", func(u *user.User) { u.Username = "Alice\u200b" }},
		{"empty username", func(u *user.User) { u.Username = " " }},
	}
	for _, tt := range refused {
		t.Run(tt.name, func(t *testing.T) {
			svc, p := newProbe(t)
			_, err := svc.Modify(ctx, commA, "a-1", 0, func(u *user.User) error { tt.change(u); return nil })
			var ve *procure.ValidationError
			if !errors.As(err, &ve) || ve.Source != procure.SourceBody {
				t.Fatalf("Modify = %v; want a validation error of the body", err)
			}
			if n := p.calls(); n != 0 {
				t.Errorf("UpdateUser called %d times for a refused change; want 0", n)
			}
		})
	}
}

// Issue 19 item 1: a write that lands between the read and the commit
// makes the update start again from the newer user (the change runs
// again, nothing is lost); with a caller version it is a mismatch; under
// endless contention the update gives up with ErrContention, a 503.
func TestModifyRetries(t *testing.T) {
	ctx := context.Background()
	t.Run("retried on the newer user", func(t *testing.T) {
		svc, p := newProbe(t)
		p.interfere = 2
		runs := 0
		got, err := svc.Modify(ctx, commA, "a-1", 0, func(u *user.User) error {
			runs++
			u.LastName = "Smith"
			return nil
		})
		if err != nil {
			t.Fatalf("Modify: %v", err)
		}
		// Two other writes (phone "xx"), then this one: version 4.
		if runs != 3 || got.LastName != "Smith" || got.Phone != "xx" || got.Version != 4 {
			t.Errorf("change ran %d times; got last name %q phone %q version %d; want 3, Smith, xx, 4", runs, got.LastName, got.Phone, got.Version)
		}
	})
	t.Run("a version precondition is not retried", func(t *testing.T) {
		svc, p := newProbe(t)
		p.interfere = 1
		runs := 0
		_, err := svc.Modify(ctx, commA, "a-1", 1, func(u *user.User) error { runs++; u.LastName = "Smith"; return nil })
		if !errors.Is(err, user.ErrVersionMismatch) || runs != 1 {
			t.Fatalf("Modify = %v after %d runs; want ErrVersionMismatch after 1", err, runs)
		}
		u, err := p.UserByID(ctx, commA, "a-1")
		if err != nil || u.LastName != "" || u.Version != 2 {
			t.Errorf("stored %+v, %v; want only the other write (version 2)", u, err)
		}
	})
	t.Run("endless contention", func(t *testing.T) {
		svc, p := newProbe(t)
		p.interfere = -1
		runs := 0
		_, err := svc.Update(ctx, commA, user.Input{ID: new("a-1"), Username: new("Alice"), LastName: new("Smith")})
		if !errors.Is(err, user.ErrContention) || !errors.Is(err, procure.ErrUnavailable) {
			t.Fatalf("Update under endless contention = %v; want ErrContention (and ErrUnavailable)", err)
		}
		_, err = svc.Modify(ctx, commA, "a-1", 0, func(u *user.User) error { runs++; u.LastName = "Smith"; return nil })
		if !errors.Is(err, user.ErrContention) {
			t.Fatalf("Modify under endless contention = %v; want ErrContention", err)
		}
		if runs < 2 || runs > 100 {
			t.Errorf("change ran %d times; want a few retries, bounded", runs)
		}
		u, err := p.UserByID(ctx, commA, "a-1")
		if err != nil || u.LastName != "" {
			t.Errorf("stored %+v, %v; want no last name (every attempt lost)", u, err)
		}
	})
}

// Issue 19 item 13: an update whose result equals the stored user (after
// trimming and auto-roles) writes nothing: no store call, same Version.
func TestNoOpUpdatesWriteNothing(t *testing.T) {
	ctx := context.Background()
	svc, p := newProbe(t)
	// The first update adds alice's auto-roles: a real change.
	in := user.Input{ID: new("a-1"), Username: new("Alice"), FirstName: new("Alice")}
	first, err := svc.Update(ctx, commA, in)
	if err != nil || first.Version != 2 {
		t.Fatalf("first Update = version %d, %v; want 2", first.Version, err)
	}
	steps := []struct {
		name string
		do   func() (user.User, error)
	}{
		{"same update again", func() (user.User, error) { return svc.Update(ctx, commA, in) }},
		{"same values with spaces", func() (user.User, error) {
			return svc.Update(ctx, commA, user.Input{ID: new("a-1"), Username: new(" Alice "), FirstName: new("Alice ")})
		}},
		{"roles without the auto-roles", func() (user.User, error) {
			return svc.Update(ctx, commA, user.Input{ID: new("a-1"), Username: new("Alice"), Roles: codes("BUYER")})
		}},
		{"empty list for an empty one", func() (user.User, error) {
			return svc.Update(ctx, commA, user.Input{ID: new("a-1"), Username: new("Alice"), BuyerGroups: codes()})
		}},
		{"same version precondition", func() (user.User, error) { return svc.UpdateIf(ctx, commA, in, 2) }},
		{"Modify changing nothing", func() (user.User, error) {
			return svc.Modify(ctx, commA, "a-1", 0, func(u *user.User) error { return nil })
		}},
		{"Modify setting the same values", func() (user.User, error) {
			return svc.Modify(ctx, commA, "a-1", 2, func(u *user.User) error { u.Enabled = true; u.FirstName = "Alice "; return nil })
		}},
	}
	for _, st := range steps {
		got, err := st.do()
		if err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if got.Version != 2 || !got.SameValues(first) {
			t.Errorf("%s: got version %d %+v; want the stored user at version 2", st.name, got.Version, got)
		}
	}
	if n := p.calls(); n != 1 {
		t.Errorf("UpdateUser called %d times; want 1 (the first, real change)", n)
	}
	// A stale precondition is still refused, even when nothing would change.
	if _, err := svc.UpdateIf(ctx, commA, in, 1); !errors.Is(err, user.ErrVersionMismatch) {
		t.Errorf("no-op UpdateIf at an old version = %v; want ErrVersionMismatch", err)
	}
	// Role order is part of the user: a new order is a change.
	got, err := svc.Update(ctx, commA, user.Input{ID: new("a-1"), Username: new("Alice"), Roles: codes("EMPLOYEE", "BUYER")})
	if err != nil || got.Version != 3 {
		t.Errorf("reordered roles = version %d, %v; want 3", got.Version, err)
	}
}

// SameValues compares every field but Version: changing any one of them
// (found by reflection, so that a new field cannot be forgotten) makes
// two users differ; nil and empty lists are alike.
func TestSameValues(t *testing.T) {
	base := user.User{ID: "a", Username: "u", Enabled: true, Roles: user.Codes("R"), Attributes: []user.Attribute{{Name: "n", Value: "v"}}}
	typ := reflect.TypeFor[user.User]()
	for i := range typ.NumField() {
		f := typ.Field(i)
		if f.Name == "Version" {
			continue
		}
		for _, change := range changesOf(t, f) {
			c := base.Clone()
			change(reflect.ValueOf(&c).Elem().Field(i))
			if base.SameValues(c) || c.SameValues(base) {
				t.Errorf("changing %s: SameValues still true", f.Name)
			}
		}
	}
	other := base.Clone()
	other.Version = 9
	other.OrganisationUnits = []user.Code{}
	if !base.SameValues(other) {
		t.Error("a different Version or an empty list for a nil one made users differ")
	}
}

// changesOf returns ways to change a field of User: every string, bool
// and list of structs of strings, each string of an entry included.
func changesOf(tb testing.TB, f reflect.StructField) []func(reflect.Value) {
	tb.Helper()
	switch f.Type.Kind() {
	case reflect.String:
		return []func(reflect.Value){func(v reflect.Value) { v.SetString(v.String() + "!") }}
	case reflect.Bool:
		return []func(reflect.Value){func(v reflect.Value) { v.SetBool(!v.Bool()) }}
	case reflect.Slice:
		elem := f.Type.Elem()
		out := []func(reflect.Value){func(v reflect.Value) { v.Set(reflect.Append(v, reflect.New(elem).Elem())) }}
		for j := range elem.NumField() {
			if elem.Field(j).Type.Kind() != reflect.String {
				tb.Fatalf("User.%s: entries with a field of kind %s: teach the test", f.Name, elem.Field(j).Type.Kind())
			}
			out = append(out, func(v reflect.Value) {
				e := reflect.New(elem).Elem()
				e.Field(j).SetString("changed")
				if v.Len() == 0 {
					v.Set(reflect.Append(v, e))
					return
				}
				v.Set(reflect.AppendSlice(reflect.MakeSlice(v.Type(), 0, v.Len()), v))
				v.Index(0).Field(j).SetString(v.Index(0).Field(j).String() + "!")
			})
		}
		return out
	}
	tb.Fatalf("User.%s of kind %s: teach the test", f.Name, f.Type.Kind())
	return nil
}
