package httpx_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/procurekit/procure/httpapi/internal/httpx"
	"github.com/procurekit/procure/user"
)

// WriteJSON writes the same answer, byte for byte and with the same
// headers, whether a value encodes itself (JSONAppender: user.User) or
// encoding/json encodes it.
func TestWriteJSONAppenderMatchesEncoder(t *testing.T) {
	u := user.User{ID: "u-1", Username: "Zoë@example.com", FirstName: "<Zoë>", Enabled: true,
		Roles: user.Codes("REQUESTER"), Attributes: []user.Attribute{{Name: "cc", Value: "a&b"}}}
	type plain user.User // the same fields without the method: encoding/json's path
	if _, ok := any(&u).(httpx.JSONAppender); !ok {
		t.Fatal("*user.User is not a JSONAppender")
	}
	if _, ok := any((*plain)(&u)).(httpx.JSONAppender); ok {
		t.Fatal("the plain copy should not be one")
	}
	answers := map[string]*httptest.ResponseRecorder{}
	for name, v := range map[string]any{"appender": &u, "encoder": (*plain)(&u)} {
		rec := httptest.NewRecorder()
		httpx.WriteJSON(rec, http.StatusCreated, v)
		answers[name] = rec
	}
	a, e := answers["appender"], answers["encoder"]
	if a.Code != http.StatusCreated || a.Body.String() != e.Body.String() {
		t.Fatalf("appender: %d %q; encoder: %d %q", a.Code, a.Body, e.Code, e.Body)
	}
	want, _ := json.Marshal(&u)
	if a.Body.String() != string(want)+"\n" {
		t.Errorf("body %q; want encoding/json's %q and a newline", a.Body, want)
	}
	for _, h := range []string{"Content-Type", "Content-Length"} {
		if a.Header().Get(h) != e.Header().Get(h) {
			t.Errorf("%s: appender %q, encoder %q", h, a.Header().Get(h), e.Header().Get(h))
		}
	}
	if got := a.Header().Get("Content-Length"); got != strconv.Itoa(a.Body.Len()) {
		t.Errorf("Content-Length %s for %d bytes", got, a.Body.Len())
	}
}
