package users_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/procurekit/procure"
	"github.com/procurekit/procure/auth"
	"github.com/procurekit/procure/httpapi/internal/httpx"
	"github.com/procurekit/procure/httpapi/users"
	"github.com/procurekit/procure/user"
)

// docs: errors.md and "Limits": a backend that is down or timed out
// is a 503 UNAVAILABLE with Retry-After, logged as a warning; whichever
// store is behind (this test: a memstore whose calls fail as an
// unavailable database would).

type unavailableUsers struct{ user.Store }

var errDown = fmt.Errorf("pgstore: user: %w", procure.ErrUnavailable)

func (unavailableUsers) UserByUsername(context.Context, string, string) (user.User, error) {
	return user.User{}, errDown
}

func (unavailableUsers) CreateUser(context.Context, string, user.User) (user.User, error) {
	return user.User{}, errDown
}

type unavailableAccounts struct{}

func (unavailableAccounts) ServiceAccount(context.Context, string) (auth.ServiceAccount, error) {
	return auth.ServiceAccount{}, errDown
}

func TestUsersUnavailable(t *testing.T) {
	tests := []struct {
		name   string
		change func(*users.Options)
		r      req
	}{
		{"user store on get", func(o *users.Options) { o.Users = user.NewService(unavailableUsers{o.Users.Store}) },
			req{method: http.MethodGet, path: "/v1/users/username/alice"}},
		{"user store on create", func(o *users.Options) { o.Users = user.NewService(unavailableUsers{o.Users.Store}) },
			req{method: http.MethodPost, path: "/v1/users", body: `{"username":"x"}`}},
		// Authentication that cannot reach its store is a 503, not a 401.
		{"key store", func(o *users.Options) { o.Accounts = unavailableAccounts{} },
			req{method: http.MethodGet, path: "/v1/users/username/alice"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newUserServer(t, tt.change)
			got := s.do(t, tt.r)
			checkUserResponse(t, tt.r, got, 503, httpx.CodeUnavailable)
			if ra := got.header.Get("Retry-After"); ra != "5" {
				t.Errorf("Retry-After = %q; want 5", ra)
			}
			logs := s.logs.String()
			if !strings.Contains(logs, "level=WARN") || strings.Contains(logs, "level=ERROR") {
				t.Errorf("want a warning, not an error, in the log:\n%s", logs)
			}
		})
	}
}
