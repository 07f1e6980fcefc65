package datafile_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/procurekit/procure/datafile"
)

// Errors from a type's own UnmarshalJSON (an unknown enum value, a bad UUID,
// date-time or decimal) and wrong JSON types name the entry by its JSON path
// and its line:column, like every other data-file error (datafile package
// doc; issue 2 part 8).
func TestParseNamesEntryOfDecodeErrors(t *testing.T) {
	// base is a valid file; each case replaces one marked value.
	const base = `{
  "communities": [
    {
      "id": "c1", "name": "One", "region": "AU",
      "tokens": [{"token": "t", "scopes": [], "expires": @EXPIRES@}],
      "suppliers": [
        {"id": "0f0f0f0f-0000-4000-8000-000000000001", "profileType": "COMPANY",
         "modifiedDate": "2026-01-01T00:00:00Z", "createdDate": "2026-01-01T00:00:00Z"},
        {"id": "0f0f0f0f-0000-4000-8000-000000000002", "profileType": @PROFILE@, "name": @NAME@,
         "modifiedDate": "2026-01-01T00:00:00Z", "createdDate": "2026-01-01T00:00:00Z",
         "contacts": [
           {"id": @CONTACTID@, "name": "Ann", "managedBy": @MANAGED@,
            "modifiedDate": "2026-01-01T00:00:00Z", "createdDate": "2026-01-01T00:00:00Z"}
         ]}
      ],
      "budgets": [{"account": "6100-200", "budget": @BUDGET@}]
    }
  ]
}`
	good := map[string]string{
		"@EXPIRES@":   `"2030-01-01T00:00:00Z"`,
		"@PROFILE@":   `"INDIVIDUAL"`,
		"@NAME@":      `"Ann Lee"`,
		"@CONTACTID@": `"0f0f0f0f-0000-4000-8000-0000000000c1"`,
		"@MANAGED@":   `"SUPPLIER"`,
		"@BUDGET@":    `125.50`,
	}
	build := func(marker, value string) string {
		s := base
		for m, v := range good {
			if m == marker {
				v = value
			}
			s = strings.ReplaceAll(s, m, v)
		}
		return s
	}
	// position is the 1-based line:column where marker's value starts.
	position := func(marker string) string {
		s := base
		for m, v := range good {
			if m != marker {
				s = strings.ReplaceAll(s, m, v)
			}
		}
		i := strings.Index(s, marker)
		line := strings.Count(s[:i], "\n") + 1
		col := i - strings.LastIndex(s[:i], "\n")
		return fmt.Sprintf("line %d:%d", line, col)
	}
	if _, err := datafile.Parse(strings.NewReader(build("", ""))); err != nil {
		t.Fatalf("the base file must be valid: %v", err)
	}

	tests := []struct {
		name, marker, value, want string
	}{
		{"unknown enum", "@PROFILE@", `"COMPNY"`,
			`communities[0].suppliers[1].profileType: must be one of COMPANY, INDIVIDUAL (got "COMPNY")`},
		{"enum in a nested entry", "@MANAGED@", `"BUYER"`,
			`communities[0].suppliers[1].contacts[0].managedBy: must be one of COMMUNITY, SUPPLIER (got "BUYER")`},
		{"bad uuid", "@CONTACTID@", `"c1"`,
			`communities[0].suppliers[1].contacts[0].id: must be a UUID such as 3f2b8a4e-1c2d-4e5f-8a9b-0c1d2e3f4a5b (got "c1")`},
		{"bad date-time", "@EXPIRES@", `"next year"`,
			`communities[0].tokens[0].expires: must be an RFC 3339 date-time such as 2026-05-01T09:30:00Z (got "next year")`},
		{"bad decimal", "@BUDGET@", `"lots"`,
			`communities[0].budgets[0].budget: must be a decimal number (got "lots")`},
		{"wrong JSON type", "@NAME@", `42`,
			`communities[0].suppliers[1].name: must be a JSON string (got number)`},
		{"enum of the wrong JSON type", "@PROFILE@", `7`,
			`communities[0].suppliers[1].profileType: must be a JSON string`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := datafile.Parse(strings.NewReader(build(tt.marker, tt.value)))
			if err == nil {
				t.Fatal("Parse succeeded; want an error")
			}
			want := position(tt.marker) + ": " + tt.want
			if err.Error() != want {
				t.Errorf("error:\n got %s\nwant %s", err, want)
			}
		})
	}
}

// ReadFile puts the file name first, so that `-data` errors name the file,
// the entry and the line.
func TestReadFileNamesFileAndEntry(t *testing.T) {
	dir := t.TempDir()
	path := dir + "/bad.json"
	const body = `{"communities": [{"id": "c1", "name": "One", "region": "AU",
  "suppliers": [{"id": "0f0f0f0f-0000-4000-8000-000000000001", "profileType": "COMPANY",
    "connectionState": "ONLINE",
    "modifiedDate": "2026-01-01T00:00:00Z", "createdDate": "2026-01-01T00:00:00Z"}]}]}`
	writeFile(t, path, body)
	_, err := datafile.ReadFile(path)
	want := path + `: line 3:24: communities[0].suppliers[0].connectionState: must be one of CONNECTED, PENDING, DISCONNECTED (got "ONLINE")`
	if err == nil || err.Error() != want {
		t.Errorf("error:\n got %v\nwant %s", err, want)
	}
}

func writeFile(tb testing.TB, path, body string) {
	tb.Helper()
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		tb.Fatal(err)
	}
}
