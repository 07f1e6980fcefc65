package memstore_test

import (
	"context"
	"errors"
	"testing"

	"github.com/procurekit/procure/auth"
	"github.com/procurekit/procure/datafile"
	"github.com/procurekit/procure/memstore"
)

// auth.KeyHashStore: the account of a key, active or not, found by the
// key's hash alone; an unknown key is auth.ErrUnknown.
func TestServiceAccountByKeyHash(t *testing.T) {
	ctx := context.Background()
	s, err := memstore.LoadReader((&datafile.File{Communities: []datafile.Community{{
		ID: "c1", Region: datafile.NZ,
		ServiceAccounts: []datafile.ServiceAccount{{ID: "sa-c1", Keys: []datafile.Key{{Key: "key-old", Active: false}, {Key: "key-new", Active: true}},
			AllowedIPs: []string{"10.0.0.0/8"}}},
	}}}).Reader())
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"key-new", "key-old"} {
		a, err := s.ServiceAccountByKeyHash(ctx, auth.HashSecret(key))
		if err != nil || a.ID != "sa-c1" || a.Community != "c1" || len(a.Keys) != 2 || len(a.AllowedIPs) != 1 {
			t.Errorf("%s: %+v, %v; want sa-c1 of c1 with its 2 keys", key, a, err)
		}
		a.Keys[0].Active = true // a copy: the store is not changed
	}
	if a, _ := s.ServiceAccountByKeyHash(ctx, auth.HashSecret("key-old")); a.Keys[0].Active {
		t.Error("changing a returned account changed the store")
	}
	if _, err := s.ServiceAccountByKeyHash(ctx, auth.HashSecret("no-such-key")); !errors.Is(err, auth.ErrUnknown) {
		t.Errorf("unknown key: %v; want auth.ErrUnknown", err)
	}
}
