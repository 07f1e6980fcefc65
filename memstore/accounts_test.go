package memstore_test

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/procurekit/procure/auth"
	"github.com/procurekit/procure/datafile"
	"github.com/procurekit/procure/memstore"
	"github.com/procurekit/procure/user"
)

// Demo-only keys: these are test fixtures, not real secrets.
const (
	demoKeyOld = "test-key-old-0001"
	demoKeyNew = "test-key-new-0002"
)

func accountsFile() *datafile.File {
	return &datafile.File{Communities: []datafile.Community{
		{ID: "c1", Name: "One", Region: datafile.DEMO, ServiceAccounts: []datafile.ServiceAccount{{
			ID:         "sa-1",
			Keys:       []datafile.Key{{Key: demoKeyOld, Active: false}, {Key: demoKeyNew, Active: true}},
			AllowedIPs: []string{"203.0.113.7", "198.51.100.0/24", "2001:db8::/32", "2001:db8:1::1", "10.1.2.3/8"},
		}}},
		{ID: "c2", Name: "Two", Region: datafile.AU, ServiceAccounts: []datafile.ServiceAccount{{
			ID: "sa-2", Keys: []datafile.Key{{Key: "test-key-c2", Active: true}},
		}}},
	}}
}

func TestServiceAccountsLoad(t *testing.T) {
	s, err := memstore.LoadReader(accountsFile().Reader())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	got, err := s.ServiceAccount(ctx, "sa-1")
	if err != nil {
		t.Fatal(err)
	}
	want := auth.ServiceAccount{
		ID: "sa-1", Community: "c1",
		// docs: tenancy.md: secrets are kept only as SHA-256 hashes.
		// A file's key gets the id of its hash.
		Keys: []auth.Key{
			{ID: auth.KeyID(auth.HashSecret(demoKeyOld)), Hash: auth.HashSecret(demoKeyOld), Active: false},
			{ID: auth.KeyID(auth.HashSecret(demoKeyNew)), Hash: auth.HashSecret(demoKeyNew), Active: true},
		},
		// docs: users.md "Authentication": a single address is a /32 or /128.
		AllowedIPs: []netip.Prefix{
			netip.MustParsePrefix("203.0.113.7/32"),
			netip.MustParsePrefix("198.51.100.0/24"),
			netip.MustParsePrefix("2001:db8::/32"),
			netip.MustParsePrefix("2001:db8:1::1/128"),
			netip.MustParsePrefix("10.0.0.0/8"),
		},
	}
	for _, k := range got.Keys {
		if k.CreatedAt.IsZero() {
			t.Errorf("key %s of a loaded account has no CreatedAt", k.ID)
		}
	}
	if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b netip.Prefix) bool { return a == b }), cmpopts.IgnoreFields(auth.Key{}, "CreatedAt")); diff != "" {
		t.Errorf("ServiceAccount (-want +got):\n%s", diff)
	}
	// The plain key is not in what the store hands out.
	if dump := fmt.Sprintf("%+v", got); strings.Contains(dump, demoKeyNew) || strings.Contains(dump, demoKeyOld) {
		t.Error("the store keeps a plain-text key")
	}
	// The result is a copy.
	got.Keys[1].Active = false
	got.AllowedIPs[0] = netip.MustParsePrefix("0.0.0.0/0")
	again, _ := s.ServiceAccount(ctx, "sa-1")
	if !again.Keys[1].Active || again.AllowedIPs[0] != want.AllowedIPs[0] {
		t.Error("changing a returned account changed the store")
	}

	other, err := s.ServiceAccount(ctx, "sa-2")
	if err != nil || other.Community != "c2" || len(other.AllowedIPs) != 0 {
		t.Errorf("sa-2 = %+v, %v; want community c2 and no allowlist", other, err)
	}
	for _, id := range []string{"sa-3", "SA-1", ""} {
		if _, err := s.ServiceAccount(ctx, id); !errors.Is(err, auth.ErrUnknown) {
			t.Errorf("ServiceAccount(%q) = %v, want auth.ErrUnknown", id, err)
		}
	}
}

func TestServiceAccountsLoadErrors(t *testing.T) {
	tests := []struct {
		name    string
		change  func(f *datafile.File)
		wantErr string
	}{
		{"duplicate id across communities", func(f *datafile.File) {
			f.Communities[1].ServiceAccounts[0].ID = "sa-1"
		}, `communities[1].serviceAccounts[0].id: duplicate service account id "sa-1"`},
		{"bad allowlist entry", func(f *datafile.File) {
			f.Communities[0].ServiceAccounts[0].AllowedIPs = []string{"10.0.0.0/8", "10.0.0.300"}
		}, `communities[0].serviceAccounts[0].allowedIPs[1]: must be an IP address or CIDR (got "10.0.0.300")`},
		{"empty key", func(f *datafile.File) {
			f.Communities[0].ServiceAccounts[0].Keys[1].Key = ""
		}, `communities[0].serviceAccounts[0].keys[1].key: is required`},
		{"missing id", func(f *datafile.File) {
			f.Communities[1].ServiceAccounts[0].ID = ""
		}, `communities[1].serviceAccounts[0].id: is required`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := accountsFile()
			tt.change(f)
			_, err := memstore.LoadReader(f.Reader())
			if err == nil || err.Error() != tt.wantErr {
				t.Fatalf("Load error = %v\nwant %s", err, tt.wantErr)
			}
			if strings.Contains(err.Error(), "test-key") {
				t.Errorf("error quotes a key: %v", err)
			}
		})
	}
}

func TestAddServiceAccount(t *testing.T) {
	s := memstore.New()
	key, hash := auth.NewAPIKey()
	if err := s.AddServiceAccount(auth.ServiceAccount{ID: "sa", Community: "c", Keys: []auth.Key{{Hash: hash, Active: true}}}); err != nil {
		t.Fatal(err)
	}
	a := auth.ServiceKey{Accounts: s}
	p, err := a.Authenticate(context.Background(), "sa", key, netip.MustParseAddr("192.0.2.1"))
	if err != nil || p.Community != "c" {
		t.Fatalf("Authenticate with the issued key = %+v, %v", p, err)
	}
	if err := s.AddServiceAccount(auth.ServiceAccount{ID: "sa"}); err == nil {
		t.Error("AddServiceAccount without a community succeeded")
	}
}

func TestUsersLoadErrors(t *testing.T) {
	base := func() *datafile.File {
		return &datafile.File{Communities: []datafile.Community{
			{ID: "c1", Region: datafile.DEMO, Users: []user.User{{ID: "u1", Username: "Ann"}}},
			{ID: "c2", Region: datafile.DEMO, Users: []user.User{{ID: "u2", Username: "ann"}}},
		}}
	}
	tests := []struct {
		name    string
		change  func(f *datafile.File)
		wantErr string
	}{
		{"duplicate username in another case", func(f *datafile.File) {
			f.Communities[0].Users = append(f.Communities[0].Users, user.User{ID: "u3", Username: "ANN"})
		}, `communities[0].users[1].username: duplicate username "ANN" (usernames compare case-insensitively)`},
		{"duplicate id across communities", func(f *datafile.File) {
			f.Communities[1].Users[0].ID = "u1"
		}, `communities[1]: users[0].id: duplicate user id "u1"`},
		{"missing username", func(f *datafile.File) {
			f.Communities[1].Users[0].Username = ""
		}, `communities[1].users[0].username: is required`},
		{"empty auto-role", func(f *datafile.File) {
			f.Communities[0].AutoRoles = []string{"EMPLOYEE", " "}
		}, `communities[0].autoRoles[1]: must be a role code of 1 to 255 characters`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := base()
			tt.change(f)
			_, err := memstore.LoadReader(f.Reader())
			if err == nil || err.Error() != tt.wantErr {
				t.Fatalf("Load error = %v\nwant %s", err, tt.wantErr)
			}
		})
	}
	t.Run("same username in two communities", func(t *testing.T) {
		if _, err := memstore.LoadReader(base().Reader()); err != nil {
			t.Fatal(err)
		}
	})
}

func TestSetAutoRoles(t *testing.T) {
	s := memstore.New()
	ctx := context.Background()
	if err := s.SetAutoRoles("c", []string{" EMPLOYEE", "EMPLOYEE", "REQUESTER "}); err != nil {
		t.Fatal(err)
	}
	got, _ := s.AutoRoles(ctx, "c")
	if diff := cmp.Diff([]string{"EMPLOYEE", "REQUESTER"}, got); diff != "" {
		t.Errorf("AutoRoles (-want +got):\n%s", diff)
	}
	if err := s.SetAutoRoles("c", []string{strings.Repeat("R", 256)}); err == nil {
		t.Error("a 256-character auto-role was accepted")
	}
	if got, _ := s.AutoRoles(ctx, "c"); len(got) != 2 {
		t.Errorf("a rejected SetAutoRoles changed the roles to %v", got)
	}
	if err := s.SetAutoRoles("c", nil); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.AutoRoles(ctx, "c"); got != nil {
		t.Errorf("AutoRoles after removal = %v", got)
	}
}
