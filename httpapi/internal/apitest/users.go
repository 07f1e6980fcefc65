package apitest

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/procurekit/procure/datafile"
	"github.com/procurekit/procure/memstore"
	"github.com/procurekit/procure/user"
)

// Service accounts and keys of UserFixture: test fixtures, not real
// secrets.
const (
	KeyA        = "fixture-user-api-key-a"
	KeyAOld     = "fixture-user-api-key-a-old"
	KeyB        = "fixture-user-api-key-b"
	KeyLocked   = "fixture-user-api-key-locked"
	AccountA    = "sa-community-a"
	AccountB    = "sa-community-b"
	AccountLock = "sa-locked"
)

// UserFixture is the data of the user API and SCIM tests: community A (auto-role
// EMPLOYEE) with alice and bob, community B with carol, and three service
// accounts: one per community and one of A locked to 203.0.113.0/24.
func UserFixture() *datafile.File {
	return &datafile.File{Communities: []datafile.Community{
		{
			ID: "community-a", Name: "A", Region: datafile.DEMO, AutoRoles: []string{"EMPLOYEE"},
			ServiceAccounts: []datafile.ServiceAccount{
				{ID: AccountA, Keys: []datafile.Key{{Key: KeyAOld, Active: false}, {Key: KeyA, Active: true}}},
				{ID: AccountLock, Keys: []datafile.Key{{Key: KeyLocked, Active: true}}, AllowedIPs: []string{"203.0.113.0/24", "2001:db8::1"}},
			},
			Users: []user.User{
				{ID: "a-0001", Username: "Alice.Smith", FirstName: "Alice", Email: "alice@example.com", Enabled: true,
					OrganisationUnits: user.Codes("OU-SCI"), Roles: user.Codes("BUYER"),
					Attributes: []user.Attribute{{Name: "costCentre", Value: "CC-1"}}},
				{ID: "a-0002", Username: "bob/ops+1@example.com", Enabled: false},
			},
		},
		{
			ID: "community-b", Name: "B", Region: datafile.NZ,
			ServiceAccounts: []datafile.ServiceAccount{{ID: AccountB, Keys: []datafile.Key{{Key: KeyB, Active: true}}}},
			Users:           []user.User{{ID: "b-0001", Username: "carol", Enabled: true}},
		},
	}}
}

// The service account of BenchUserStore: demo data of the benchmarks, not
// a secret.
const (
	BenchAccount = "sa-bench"
	BenchKey     = "bench-fixture-key"
)

// BenchUserStore is a fresh memstore with the one community of the user
// benchmarks, "bench" (auto-role EMPLOYEE), and its service account.
func BenchUserStore(tb testing.TB) *memstore.Store {
	tb.Helper()
	store, err := memstore.LoadReader((&datafile.File{Communities: []datafile.Community{{
		ID: "bench", Region: datafile.DEMO, AutoRoles: []string{"EMPLOYEE"},
		ServiceAccounts: []datafile.ServiceAccount{{ID: BenchAccount, Keys: []datafile.Key{{Key: BenchKey, Active: true}}}},
	}}}).Reader())
	if err != nil {
		tb.Fatal(err)
	}
	return store
}

// BenchUserBody is a realistic create body of the user API: every field, a
// few codes.
func BenchUserBody(i int) []byte {
	return fmt.Appendf(nil, `{"username":"user%07d@example.com","externalId":"E%07d","firstName":"First%d","lastName":"Last%d",`+
		`"displayName":"First%d Last%d (OU-%d)","email":"user%07d@example.com","phone":"+64 4 555 %04d","enabled":true,`+
		`"organisationUnits":[{"code":"OU-%d"}],"roles":[{"code":"BUYER"},{"code":"APPROVER"}],"buyerGroups":[{"code":"BG-%d"}],`+
		`"attributes":[{"name":"costCentre","value":"CC-%d"}],"approverGroups":[{"code":"AG-%d"}]}`,
		i, i, i, i, i, i, i%50, i, i%10000, i%50, i%20, i%300, i%10)
}

// NullWriter is a ResponseWriter that keeps nothing but the status, for
// benchmarks of handlers.
type NullWriter struct {
	H      http.Header
	Status int
}

func (w *NullWriter) Header() http.Header         { return w.H }
func (w *NullWriter) WriteHeader(status int)      { w.Status = status }
func (w *NullWriter) Write(p []byte) (int, error) { return len(p), nil }
