package pgstore_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/procurekit/procure/datafile"
	"github.com/procurekit/procure/pgstore"
	"github.com/procurekit/procure/user"
)

// BenchmarkUserRead measures a user read by username and by id, of a
// random user of a community of 10,000, from the database (no cache) and
// from the user cache (WithUserCache). Run it with
//
//	go test -run '^$' -bench BenchmarkUserRead -count 6 ./pgstore
func BenchmarkUserRead(b *testing.B) {
	ctx := context.Background()
	const n = 10_000
	f := &datafile.File{Communities: []datafile.Community{{ID: "c1", Name: "One", Region: datafile.NZ}}}
	for i := range n {
		f.Communities[0].Users = append(f.Communities[0].Users, user.User{ID: fmt.Sprintf("id-%05d", i), Username: fmt.Sprintf("User.%05d", i),
			Email: fmt.Sprintf("user%d@example.com", i), Enabled: true, Roles: user.Codes("BUYER", "APPROVER")})
	}
	_, dsn := openStore(b, f)
	stores := []struct {
		name string
		s    user.Store
	}{
		{"database", database{dsn: dsn}.open(b)},
		{"cache", database{dsn: dsn}.open(b, pgstore.WithUserCache())},
	}
	for _, st := range stores {
		for _, by := range []string{"username", "id"} {
			b.Run("store="+st.name+"/by="+by, func(b *testing.B) {
				r := rand.New(rand.NewPCG(1, 2))
				for b.Loop() {
					i := r.IntN(n)
					var err error
					if by == "id" {
						_, err = st.s.UserByID(ctx, "c1", fmt.Sprintf("id-%05d", i))
					} else {
						_, err = st.s.UserByUsername(ctx, "c1", fmt.Sprintf("user.%05d", i))
					}
					if err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
