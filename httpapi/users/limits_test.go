package users_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/procurekit/procure/httpapi/internal/httpx"
	"github.com/procurekit/procure/httpapi/users"
)

// Tests of docs: limits.md (issue 11): each bound at the limit and
// one past it.

func TestUsersErrorDetailsBounded(t *testing.T) {
	// docs: limits.md: at most 20 field errors per 400, then
	// "and N more"; a list over 1,000 entries is one error.
	s := newUserServer(t)
	attrs := func(n int, entry string) string {
		return `{"username":"x","attributes":[` + strings.TrimSuffix(strings.Repeat(entry+",", n), ",") + `]}`
	}
	t.Run("1000 bad attributes", func(t *testing.T) {
		// Each has no name: 1000 errors, 20 of them named.
		r := req{method: http.MethodPost, path: "/v1/users", body: attrs(1000, `{"name":"","value":"v"}`)}
		got := s.do(t, r)
		checkUserResponse(t, r, got, 400, httpx.CodeInvalidField)
		m := errorMessage(t, got.body)
		if n := strings.Count(m, "attributes["); n != httpx.MaxErrorDetails {
			t.Errorf("the message names %d fields; want %d", n, httpx.MaxErrorDetails)
		}
		if !strings.HasPrefix(m, "attributes[0].name: is required; attributes[1].name: is required;") || !strings.HasSuffix(m, "attributes[19].name: is required; and 980 more") {
			t.Errorf("message %q; want the first 20 errors and \"; and 980 more\"", m)
		}
		if len(got.body) > 4096 {
			t.Errorf("the 400 body is %d bytes; want a few kilobytes at most", len(got.body))
		}
	})
	t.Run("80000 bad attributes", func(t *testing.T) {
		body := attrs(80_000, `{"name":""}`)
		if len(body) > users.MaxBodyBytes {
			t.Fatalf("the test body is %d bytes, over 1 MiB", len(body))
		}
		r := req{method: http.MethodPost, path: "/v1/users", body: body}
		got := s.do(t, r)
		checkUserResponse(t, r, got, 400, httpx.CodeInvalidField)
		if m := errorMessage(t, got.body); m != "attributes: at most 1000 entries (got 80000)" {
			t.Errorf("message %q; want the list limit alone", m)
		}
		if len(got.body) > 4096 {
			t.Errorf("the 400 body is %d bytes; want a few kilobytes at most", len(got.body))
		}
	})
	t.Run("exactly 20 errors have no tail", func(t *testing.T) {
		r := req{method: http.MethodPost, path: "/v1/users", body: attrs(20, `{"name":"","value":"v"}`)}
		got := s.do(t, r)
		checkUserResponse(t, r, got, 400, httpx.CodeInvalidField)
		if m := errorMessage(t, got.body); strings.Contains(m, "more") || strings.Count(m, "attributes[") != 20 {
			t.Errorf("message %q; want all 20 errors and no tail", m)
		}
	})
	t.Run("21 errors have a tail of 1", func(t *testing.T) {
		r := req{method: http.MethodPost, path: "/v1/users", body: attrs(21, `{"name":"","value":"v"}`)}
		got := s.do(t, r)
		if m := errorMessage(t, got.body); !strings.HasSuffix(m, "attributes[19].name: is required; and 1 more") {
			t.Errorf("message %q; want 20 errors and \"; and 1 more\"", m)
		}
	})
}

func TestUsersListLimits(t *testing.T) {
	// docs: limits.md: 1,000 entries per list, each list alike.
	s := newUserServer(t)
	codes := func(prefix string, n int) string {
		var b strings.Builder
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(`{"code":"` + prefix + strconv.Itoa(i) + `"}`)
		}
		return "[" + b.String() + "]"
	}
	for i, list := range []string{"organisationUnits", "roles", "buyerGroups", "approverGroups"} {
		name := "limit" + strconv.Itoa(i)
		t.Run(list, func(t *testing.T) {
			r := req{method: http.MethodPost, path: "/v1/users", body: `{"username":"` + name + `","` + list + `":` + codes("C", 1001) + `}`}
			got := s.do(t, r)
			checkUserResponse(t, r, got, 400, httpx.CodeInvalidField)
			if m := errorMessage(t, got.body); m != list+": at most 1000 entries (got 1001)" {
				t.Errorf("1001 entries: message %q", m)
			}
			r.body = `{"username":"` + name + `","` + list + `":` + codes("C", 1000) + `}`
			got = s.do(t, r)
			checkUserResponse(t, r, got, 200, "")
			u := decodeUser(t, got.body)
			n := map[string]int{"organisationUnits": len(u.OrganisationUnits), "roles": len(u.Roles), "buyerGroups": len(u.BuyerGroups), "approverGroups": len(u.ApproverGroups)}[list]
			if list == "roles" {
				n-- // the community's auto-role EMPLOYEE is added
			}
			if n != 1000 {
				t.Errorf("1000 entries stored as %d", n)
			}
		})
	}
	t.Run("attributes", func(t *testing.T) {
		attrs := func(n int) string {
			var b strings.Builder
			for i := range n {
				if i > 0 {
					b.WriteByte(',')
				}
				b.WriteString(`{"name":"n` + strconv.Itoa(i) + `","value":"v"}`)
			}
			return b.String()
		}
		r := req{method: http.MethodPost, path: "/v1/users", body: `{"username":"attrs","attributes":[` + attrs(1001) + `]}`}
		got := s.do(t, r)
		checkUserResponse(t, r, got, 400, httpx.CodeInvalidField)
		if m := errorMessage(t, got.body); m != "attributes: at most 1000 entries (got 1001)" {
			t.Errorf("1001 entries: message %q", m)
		}
		r.body = `{"username":"attrs","attributes":[` + attrs(1000) + `]}`
		got = s.do(t, r)
		checkUserResponse(t, r, got, 200, "")
		if n := len(decodeUser(t, got.body).Attributes); n != 1000 {
			t.Errorf("1000 entries stored as %d", n)
		}
	})
}

func TestUsersUnstorableText(t *testing.T) {
	// docs: limits.md: text PostgreSQL cannot hold (NUL, invalid
	// UTF-8) is a 400 on every store, never a 500. JSON cannot carry
	// invalid UTF-8 into a string (the decoder replaces it), but it can
	// carry a NUL.
	s := newUserServer(t)
	cases := []struct {
		name, body, message string
	}{
		{"NUL in the username", `{"username":"a\u0000b"}`, "username: must be UTF-8 text without NUL characters"},
		{"NUL in a name", `{"username":"nul1","firstName":"\u0000"}`, "firstName: must be UTF-8 text without NUL characters"},
		{"NUL in a role code", `{"username":"nul2","roles":[{"code":"R\u0000"}]}`, "roles[0].code: must be UTF-8 text without NUL characters"},
		{"NUL in an attribute", `{"username":"nul3","attributes":[{"name":"n","value":"\u0000"}]}`, "attributes[0].value: must be UTF-8 text without NUL characters"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := req{method: http.MethodPost, path: "/v1/users", body: c.body}
			got := s.do(t, r)
			checkUserResponse(t, r, got, 400, httpx.CodeInvalidField)
			if m := errorMessage(t, got.body); m != c.message {
				t.Errorf("message %q; want %q", m, c.message)
			}
		})
	}
	// A body that is not UTF-8 is not JSON (RFC 8259): refused whole,
	// rather than stored with U+FFFD where the bad bytes were.
	r := req{method: http.MethodPost, path: "/v1/users", body: "{\"username\":\"bad\xffname\"}"}
	got := s.do(t, r)
	checkUserResponse(t, r, got, 400, httpx.CodeMalformedRequest)
	if m := errorMessage(t, got.body); m != "the request body is not valid UTF-8 (JSON must be UTF-8)" {
		t.Errorf("message %q", m)
	}
	// A lookup by a username no store can hold is simply not found.
	for _, name := range []string{"a%00b", "%FF", "alice%C0%AE"} {
		r := req{method: http.MethodGet, path: "/v1/users/username/" + name}
		checkUserResponse(t, r, s.do(t, r), 404, httpx.CodeUserNotFound)
	}
}
