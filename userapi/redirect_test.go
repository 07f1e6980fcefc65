package userapi_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/procurekit/procure/userapi"
)

// Go copies custom headers such as Service-API-Key to wherever a redirect
// points; the client must not follow a redirect off its base URL's origin,
// whether it made its own http.Client or was given one.
func TestRedirectToAnotherOriginKeepsKey(t *testing.T) {
	var leaked, reached atomic.Int64
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached.Add(1)
		if r.Header.Get("Service-API-Key") != "" {
			leaked.Add(1)
		}
		http.Error(w, "nothing here", http.StatusNotFound)
	}))
	defer evil.Close()
	redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, evil.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	defer redirector.Close()

	for _, tc := range []struct {
		name string
		opts []userapi.Option
	}{
		{"default client", nil},
		{"caller's client", []userapi.Option{userapi.WithHTTPClient(&http.Client{})}},
		{"caller's client that follows everything", []userapi.Option{userapi.WithHTTPClient(&http.Client{
			CheckRedirect: func(*http.Request, []*http.Request) error { return nil },
		})}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := userapi.New(redirector.URL, testAccount, testKey, tc.opts...)
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.GetByUsername(context.Background(), "alice")
			if !errors.Is(err, userapi.ErrRedirect) {
				t.Fatalf("GetByUsername through a cross-origin redirect = %v; want ErrRedirect", err)
			}
			if reached.Load() != 0 || leaked.Load() != 0 {
				t.Fatalf("the other origin was reached %d times, %d with the key", reached.Load(), leaked.Load())
			}
		})
	}
}

// A redirect within the base URL's origin is followed as before.
func TestRedirectWithinOriginFollowed(t *testing.T) {
	s := newServer(t)
	mux := http.NewServeMux()
	mux.HandleFunc("/old/", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/v1/users/username/alice", http.StatusTemporaryRedirect)
	})
	mux.Handle("/", s.Config.Handler)
	same := httptest.NewServer(mux)
	defer same.Close()
	c, err := userapi.New(same.URL+"/old", testAccount, testKey)
	if err != nil {
		t.Fatal(err)
	}
	if u, err := c.GetByUsername(context.Background(), "alice"); err != nil || u.ID != "u-1" {
		t.Fatalf("GetByUsername through a same-origin redirect = %+v, %v", u, err)
	}
}
