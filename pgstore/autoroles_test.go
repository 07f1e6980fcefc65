package pgstore_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/procurekit/procure"
	"github.com/procurekit/procure/internal/metricstest"
	"github.com/procurekit/procure/pgstore"
)

// With the credential cache, AutoRoles (read by every answer of the user
// API) is answered from memory: repeated reads make no statement; the
// node that puts the community sees the new roles at once, another node
// within the one-second bound (docs: live-data.md), and an unknown
// community is remembered as having none.
func TestAutoRolesCached(t *testing.T) {
	ctx := context.Background()
	n1 := openCredStore(t, pgstore.WithCredentialCache())
	reg := prometheus.NewRegistry()
	n2, err := pgstore.Open(ctx, n1.dsn, pgstore.WithCredentialCache(), pgstore.WithMetrics(reg))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n2.Close)
	if _, err := n1.PutCommunity(ctx, procure.Community{ID: "c1", Region: "AU", AutoRoles: []string{"EMPLOYEE"}}); err != nil {
		t.Fatal(err)
	}
	roles := func(s *pgstore.Store, community string) []string {
		t.Helper()
		r, err := s.AutoRoles(ctx, community)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	for _, s := range []*pgstore.Store{n1.Store, n2} {
		if got := roles(s, "c1"); !slices.Equal(got, []string{"EMPLOYEE"}) {
			t.Fatalf("AutoRoles = %v, want [EMPLOYEE]", got)
		}
	}

	// Repeated reads on a node are served from memory (the cache's
	// misses are its database reads).
	lookups := func(result string) float64 {
		t.Helper()
		v, _ := metricstest.Gather(t, reg).Value(t, "procure_credential_cache_lookups_total", "result", result)
		return v
	}
	misses := lookups("miss")
	for range 50 {
		if got := roles(n2, "c1"); !slices.Equal(got, []string{"EMPLOYEE"}) {
			t.Fatalf("AutoRoles = %v, want [EMPLOYEE]", got)
		}
		if got := roles(n2, "nope"); got != nil {
			t.Fatalf("AutoRoles of an unknown community = %v", got)
		}
	}
	if n := lookups("miss") - misses; n > 4 { // an entry may expire mid-loop: a reload per community
		t.Errorf("100 AutoRoles on one node read the database %v times", n)
	}
	// A caller changing the slice changes nothing cached.
	roles(n2, "c1")[0] = "CHANGED"
	if got := roles(n2, "c1"); !slices.Equal(got, []string{"EMPLOYEE"}) {
		t.Fatalf("AutoRoles after a caller's change = %v", got)
	}

	if _, err := n1.PutCommunity(ctx, procure.Community{ID: "c1", Region: "AU", AutoRoles: []string{"EMPLOYEE", "BUYER"}}); err != nil {
		t.Fatal(err)
	}
	want := []string{"EMPLOYEE", "BUYER"}
	if got := roles(n1.Store, "c1"); !slices.Equal(got, want) {
		t.Errorf("the writing node: AutoRoles = %v right after its write, want %v", got, want)
	}
	deadline := time.Now().Add(time.Second)
	for !slices.Equal(roles(n2, "c1"), want) {
		if time.Now().After(deadline) {
			t.Fatalf("the other node still reads %v a second after the write", roles(n2, "c1"))
		}
		time.Sleep(20 * time.Millisecond)
	}
}
