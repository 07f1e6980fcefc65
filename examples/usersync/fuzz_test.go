package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/procurekit/procure/user"
)

// Fuzz targets of the export readers (issue 11). CI runs the seed corpora;
// run one with
//
//	go test -run='^$' -fuzz='^FuzzReadCSV$' -fuzztime=2m -parallel=1 ./examples/usersync/

// read reads data as the command does (read, then check every row) and
// checks the shape of what it reports.
func read(t *testing.T, data []byte, csvFormat bool) ([]row, *problems) {
	t.Helper()
	p := &problems{file: "fuzz"}
	var rows []row
	if csvFormat {
		rows = readCSV(bytes.NewReader(data), p)
	} else {
		rows = readJSONL(bytes.NewReader(data), p)
	}
	check(rows, p)
	for _, l := range p.lines() {
		if !strings.HasPrefix(l, "fuzz:") || strings.HasPrefix(l, "fuzz:-") || strings.HasSuffix(l, ": ") {
			t.Fatalf("problem %q: want fuzz:LINE: message", l)
		}
	}
	return rows, p
}

// users applies each accepted row to an empty user, the form compared
// across a round trip (absent and empty are alike there).
func users(rows []row) []user.User {
	out := make([]user.User, len(rows))
	for i, r := range rows {
		r.in.ApplyTo(&out[i])
	}
	return out
}

var userOpts = cmp.Options{cmpopts.EquateEmpty()}

func seedFiles(f *testing.F, name string) {
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
}

func FuzzReadCSV(f *testing.F) {
	seedFiles(f, "users.csv")
	for _, s := range []string{
		"username,email,enabled,roles,attributes\njdoe,j@example.com,TRUE,BUYER;APPROVER,cc=1;site=x=y\n",
		"\ufeffUsername , organisationsUnits\n\" JDoe \",OU1\njdoe,OU2\n",
		"id,username\n,a\n,b\nx,c\nx,d\n",
		"username,enabled\na,maybe\n",
		"username,attributes\na,novalue\n",
		"email\nx@example.com\n",
		"username,nope\n",
		"username,username\n",
		"username\n\"unclosed\n",
		"",
	} {
		f.Add([]byte(s))
	}
	header := []string{"id", "username", "externalId", "firstName", "lastName", "displayName", "email", "phone", "enabled",
		"organisationUnits", "roles", "buyerGroups", "approverGroups", "attributes"}
	codes := func(cs []user.Code) string {
		var s []string
		for _, c := range cs {
			s = append(s, c.Code)
		}
		return strings.Join(s, ";")
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		rows, p := read(t, data, true)
		if len(p.list) > 0 {
			return
		}
		// Accepted input round-trips: written back as CSV with every
		// column, it reads as the same users.
		var out bytes.Buffer
		w := csv.NewWriter(&out)
		_ = w.Write(header)
		for _, u := range users(rows) {
			var attrs []string
			for _, a := range u.Attributes {
				attrs = append(attrs, a.Name+"="+a.Value)
			}
			_ = w.Write([]string{u.ID, u.Username, u.ExternalID, u.FirstName, u.LastName, u.DisplayName, u.Email, u.Phone,
				strconv.FormatBool(u.Enabled), codes(u.OrganisationUnits), codes(u.Roles), codes(u.BuyerGroups), codes(u.ApproverGroups),
				strings.Join(attrs, ";")})
		}
		w.Flush()
		back, p2 := read(t, out.Bytes(), true)
		if len(p2.list) > 0 {
			t.Fatalf("the users written back have problems: %v\n%s", p2.lines(), out.Bytes())
		}
		if diff := cmp.Diff(users(rows), users(back), userOpts); diff != "" {
			t.Fatalf("round trip (-first +second):\n%s", diff)
		}
	})
}

func FuzzReadJSONL(f *testing.F) {
	seedFiles(f, "users.jsonl")
	for _, s := range []string{
		`{"username":"jdoe","roles":[{"code":"BUYER"}]}` + "\n\n" + `{"username":"JDOE"}`,
		"\ufeff" + `{"username":"a","organisationsUnits":[{"code":"X"}]}`,
		`{"username":"a"} {"username":"b"}`,
		`{"username":"a","enabled":"yes"}`,
		`{"id":"x","username":"a"}` + "\n" + `{"id":"x","username":"b"}`,
		`[1,2]`, `{`, "\n\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		rows, p := read(t, data, false)
		if len(p.list) > 0 {
			return
		}
		var out bytes.Buffer
		for _, r := range rows {
			b, err := json.Marshal(r.in)
			if err != nil {
				t.Fatal(err)
			}
			out.Write(b)
			out.WriteByte('\n')
		}
		back, p2 := read(t, out.Bytes(), false)
		if len(p2.list) > 0 {
			t.Fatalf("the users written back have problems: %v\n%s", p2.lines(), out.Bytes())
		}
		if diff := cmp.Diff(users(rows), users(back), userOpts); diff != "" {
			t.Fatalf("round trip (-first +second):\n%s", diff)
		}
	})
}
