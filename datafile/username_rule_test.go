package datafile_test

import (
	"strings"
	"testing"

	"github.com/procurekit/procure/datafile"
	"github.com/procurekit/procure/supplier"
)

// Issue 19 item 10 in data files: a user whose username holds an
// invisible or bidirectional control character is refused, by Parse and
// by Stream alike, naming the user, the field and the rule (the user
// API's rule, user.User.Validate).
func TestDataFileUsernameCharacters(t *testing.T) {
	for _, name := range []string{`jsmith\u200b`, `\u200fjsmith`, `j\u00adsmith`, `\ufeffjsmith`} {
		file := `{"communities": [{"id": "c1", "name": "One", "region": "NZ", "users": [
			{"id": "u0", "username": "plain", "enabled": true},
			{"id": "u1", "username": "` + name + `", "enabled": true}]}]}`
		_, err := datafile.Parse(strings.NewReader(file))
		wantUsernameRule(t, "Parse", name, err)
		err = datafile.Stream(strings.NewReader(file), usernameRuleHandler{})
		wantUsernameRule(t, "Stream", name, err)
	}
	// A decomposed username is a username like any other.
	file := `{"communities": [{"id": "c1", "name": "One", "region": "NZ", "users": [
		{"id": "u1", "username": "Jose\u0301", "enabled": true}]}]}`
	if _, err := datafile.Parse(strings.NewReader(file)); err != nil {
		t.Errorf("a decomposed username: %v", err)
	}
}

func wantUsernameRule(tb testing.TB, how, name string, err error) {
	tb.Helper()
	if err == nil {
		tb.Errorf("%s of a username %s: no error", how, name)
		return
	}
	for _, want := range []string{"users[1].username", "invisible", "bidirectional"} {
		if !strings.Contains(err.Error(), want) {
			tb.Errorf("%s of a username %s: %v; want it to name %q", how, name, err, want)
		}
	}
}

// usernameRuleHandler takes whatever Stream hands over.
type usernameRuleHandler struct{}

func (usernameRuleHandler) Supplier(int, int, *supplier.Record) error     { return nil }
func (usernameRuleHandler) Community(int, *datafile.Community, int) error { return nil }
