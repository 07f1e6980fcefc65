package users_test

import (
	"bytes"
	"context"
	"net/http"
	"testing"

	"github.com/procurekit/procure/httpapi/internal/apitest"
	"github.com/procurekit/procure/user"
)

// BenchmarkUsersUpdateHandler is the server's share of an update (PUT
// /v1/users), as the load test sends them: 100 existing users in turn,
// every field replaced, names changing with every request.
func BenchmarkUsersUpdateHandler(b *testing.B) {
	mux, store := benchUsersMux(b)
	svc := user.NewService(store)
	const users = 100
	bodies := make([][]byte, users)
	for i := range users {
		in, err := user.ParseInput(apitest.BenchUserBody(i))
		if err != nil {
			b.Fatal(err)
		}
		u, err := svc.Create(context.Background(), "bench", in)
		if err != nil {
			b.Fatal(err)
		}
		// The create body with the stored id in front: an update of
		// every field.
		bodies[i] = append([]byte(`{"id":"`+u.ID+`",`), apitest.BenchUserBody(i)[1:]...)
	}
	body := func(i int) []byte {
		p := bytes.Clone(bodies[i%users])
		// A new first name every request: "First<n>" becomes "Firsu<n>"
		// on odd rounds, so each update changes the stored user.
		if j := bytes.Index(p, []byte(`"firstName":"First`)); j >= 0 && (i/users)%2 == 1 {
			p[j+len(`"firstName":"Firs`)] = 'u'
		}
		return p
	}
	benchServe(b, mux, http.MethodPut, "/v1/users", body)
}
