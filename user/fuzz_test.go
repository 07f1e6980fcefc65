package user_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/procurekit/procure"
	"github.com/procurekit/procure/user"
)

// FuzzParseInput feeds request bodies of the user API to ParseInput and
// Prepare (issue 11). Run it with
//
//	go test -run='^$' -fuzz='^FuzzParseInput$' -fuzztime=2m -parallel=1 ./user/
func FuzzParseInput(f *testing.F) {
	for _, s := range []string{
		`{"username":"jdoe","email":"j@example.com","enabled":false,"roles":[{"code":"BUYER"}],"attributes":[{"name":"cc","value":"1"}]}`,
		`{"id":"u-1","username":" JDoe ","organisationUnits":[{"code":"OU1"}]}`,
		`{"username":"x","organisationsUnits":[{"code":"OU1"}]}`,
		`{"username":"x","organisationUnits":[{"code":"A"}],"organisationsUnits":[{"code":"B"}]}`,
		`{"username":"x","organisationUnits":[{"code":"A"}],"organisationsUnits":[{"code":" A "}]}`,
		`{"username":null,"enabled":null,"roles":null}`,
		`{"username":"x","roles":["BUYER"]}`,
		`{"username":"x","enabled":"yes"}`,
		`{"username":"a\u0000b"}`,
		`{"username":"x","approverGroups":[{"code":"A"},{"code":"A"}]}`,
		`[]`, `null`, `{`, ``, `{"username":"x"} {}`,
	} {
		f.Add([]byte(s))
	}
	opts := cmp.Options{cmpopts.EquateEmpty()}
	f.Fuzz(func(t *testing.T, data []byte) {
		in, err := user.ParseInput(data)
		if err != nil {
			var syn *json.SyntaxError
			var typ *json.UnmarshalTypeError
			var ve *procure.ValidationError
			switch {
			case errors.As(err, &syn), errors.As(err, &typ):
			case errors.As(err, &ve):
				if len(ve.Fields) == 0 || !strings.Contains(ve.Fields[0].Field, "Units") {
					t.Fatalf("ParseInput: %v; a validation error here names the organisation units", err)
				}
			default:
				// Other decoding failures of encoding/json (an unexpected
				// end) carry no type; they must still say something.
				if err.Error() == "" {
					t.Fatal("an empty error")
				}
			}
			return
		}
		// Accepted input round-trips: encoded again, it decodes equal.
		b, err := json.Marshal(in)
		if err != nil {
			t.Fatalf("Marshal: %v", err)
		}
		if strings.Contains(string(b), "organisationsUnits") {
			t.Fatalf("encoded with the second spelling: %s", b)
		}
		back, err := user.ParseInput(b)
		if err != nil {
			t.Fatalf("%s does not decode: %v", b, err)
		}
		if diff := cmp.Diff(in, back, opts); diff != "" {
			t.Fatalf("round trip of %q (-first +second):\n%s", data, diff)
		}
		for _, op := range []user.Op{user.OpCreate, user.OpUpdate} {
			p, err := in.Prepare(op)
			if err != nil {
				var ve *procure.ValidationError
				if !errors.As(err, &ve) || ve.Source != procure.SourceBody || len(ve.Fields) == 0 {
					t.Fatalf("Prepare: %v; want a body ValidationError", err)
				}
				for _, fe := range ve.Fields {
					if fe.Field == "" || fe.Rule == "" {
						t.Fatalf("Prepare: a field error without a field or rule: %+v", fe)
					}
				}
				continue
			}
			// A prepared input is stable: preparing it again changes
			// nothing, and its text is storable.
			p2, err := p.Prepare(op)
			if err != nil {
				t.Fatalf("a prepared input fails Prepare again: %v", err)
			}
			if diff := cmp.Diff(p, p2, opts); diff != "" {
				t.Fatalf("Prepare is not idempotent (-first +second):\n%s", diff)
			}
			if p.Username != nil && !user.Storable(*p.Username) {
				t.Fatalf("accepted username %q is not storable", *p.Username)
			}
		}
	})
}
