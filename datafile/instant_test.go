package datafile_test

import (
	"strings"
	"testing"

	"github.com/procurekit/procure/datafile"
	"github.com/procurekit/procure/internal/check"
)

// docs: values.md "Dates": every instant of a data file must fall within
// the years 1 to 9999 in UTC. A supplier's date is checked alike whether
// its object decodes on the fast path (plain text) or through
// encoding/json (here: an escape in its name), and whether its rules are
// checked by hand (surelyValid) or by the validator; a token's expiry too.
func TestInstantsOfTheFile(t *testing.T) {
	const ok = `"2026-05-01T09:30:00Z"`
	supplierWith := func(name, field, value string) string {
		dates := map[string]string{"modifiedDate": ok, "createdDate": ok}
		s := `{"id": "0f0f0f0f-0000-4000-8000-000000000001", "name": "` + name + `", "profileType": "COMPANY"`
		if field == "tinLastVerifiedDate" {
			s += `, "tinLastVerifiedDate": ` + value
		} else if _, top := dates[field]; top {
			dates[field] = value
		}
		s += `, "modifiedDate": ` + dates["modifiedDate"] + `, "createdDate": ` + dates["createdDate"]
		if field == "contacts[0].createdDate" {
			s += `, "contacts": [{"id": "0f0f0f0f-0000-4000-8000-0000000000c1", "name": "Ann", "modifiedDate": ` + ok + `, "createdDate": ` + value + `}]`
		}
		return s + `}`
	}
	file := func(sup, expires string) string {
		return `{"communities": [{"id": "c1", "name": "C", "region": "NZ", "tokens": [{"token": "t", "scopes": ["suppliers:read"], "expires": ` +
			expires + `}], "suppliers": [` + sup + `]}]}`
	}
	tests := []struct {
		name, field, value string
		valid              bool
	}{
		{"tinLastVerifiedDate in year 10000 in UTC", "tinLastVerifiedDate", `"9999-12-31T23:30:00-01:00"`, false},
		{"tinLastVerifiedDate at the end of 9999 in UTC", "tinLastVerifiedDate", `"9999-12-31T23:30:00+01:00"`, true},
		{"modifiedDate in year 0 in UTC", "modifiedDate", `"0001-01-01T00:30:00+01:00"`, false},
		{"modifiedDate in year 0", "modifiedDate", `"0000-06-01T00:00:00Z"`, false},
		{"createdDate rounding nothing up", "createdDate", `"9999-12-31T23:59:59.999999999Z"`, true},
		{"a contact's createdDate in year 10000 in UTC", "contacts[0].createdDate", `"9999-12-31T23:00:00-02:00"`, false},
		{"a contact's createdDate early in year 1 in UTC", "contacts[0].createdDate", `"0001-01-01T00:30:00-01:00"`, true},
	}
	for _, tt := range tests {
		for _, path := range []struct{ how, name string }{{"fast", "Acme"}, {"slow", `Acm\u0065`}} {
			t.Run(tt.name+"/"+path.how, func(t *testing.T) {
				_, err := datafile.Parse(strings.NewReader(file(supplierWith(path.name, tt.field, tt.value), ok)))
				if tt.valid {
					if err != nil {
						t.Fatalf("Parse: %v", err)
					}
					return
				}
				want := "communities[0].suppliers[0]." + tt.field + ": " + check.InstantRule
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("Parse: %v\nwant %q", err, want)
				}
			})
		}
	}
	for _, tt := range []struct {
		value string
		valid bool
	}{
		{`"9999-12-31T23:30:00-01:00"`, false},
		{`"0001-01-01T00:30:00+01:00"`, false},
		{`"9999-12-31T23:30:00+01:00"`, true},
	} {
		_, err := datafile.Parse(strings.NewReader(file(supplierWith("Acme", "", ""), tt.value)))
		want := "communities[0].tokens[0].expires: " + check.InstantRule
		switch {
		case tt.valid && err != nil:
			t.Errorf("token expires %s: %v", tt.value, err)
		case !tt.valid && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("token expires %s: %v\nwant %q", tt.value, err, want)
		}
	}
}
