package user_test

import (
	"testing"

	"github.com/procurekit/procure/user"
)

// A typical create body, as the load test sends: names, email, one code in
// three lists, two attributes, and surrounding white space to trim.
const benchBody = `{"username":" jane.doe@example.com ","externalId":"E-10042","firstName":"Jane","lastName":"Doe",` +
	`"displayName":"Jane Doe (Finance)","email":"jane.doe@example.com","phone":"+64 4 555 0100","enabled":true,` +
	`"organisationUnits":[{"code":"OU-FIN"}],"roles":[{"code":"BUYER"},{"code":"APPROVER"}],"buyerGroups":[{"code":"BG-1"}],` +
	`"attributes":[{"name":"costCentre","value":"CC-0042"},{"name":"site","value":"Wellington"}]}`

// BenchmarkParseInput decodes a typical create body.
func BenchmarkParseInput(b *testing.B) {
	body := []byte(benchBody)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := user.ParseInput(body); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkNormalizeValidate is the check every create and update makes
// before the store is called (Input.Prepare): trimming, then the rules, for
// a valid input and one that breaks several rules (the 400 path).
func BenchmarkNormalizeValidate(b *testing.B) {
	valid, err := user.ParseInput([]byte(benchBody))
	if err != nil {
		b.Fatal(err)
	}
	invalid, err := user.ParseInput([]byte(`{"username":"","email":"not an address","roles":[{"code":"A"},{"code":"A"}],` +
		`"attributes":[{"name":"a-name-longer-than-twenty","value":"v"}]}`))
	if err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		in   user.Input
		ok   bool
	}{
		{"valid", valid, true},
		{"invalid", invalid, false},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := tc.in.Prepare(user.OpCreate); (err == nil) != tc.ok {
					b.Fatalf("Prepare: %v", err)
				}
			}
		})
	}
}
