package user

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// randomBody is a request body drawn from a grammar around the plain
// bodies fastWire takes: exact and other spellings of the keys, unknown
// and repeated keys, strings with escapes and non-ASCII bytes, nulls,
// numbers and nested values where none belong, lists with odd entries,
// white space, and now and then malformed JSON.
func randomBody(rng *rand.Rand) string {
	keys := []string{"id", "username", "externalId", "firstName", "lastName", "displayName", "email", "phone",
		"enabled", "organisationUnits", "organisationsUnits", "roles", "buyerGroups", "attributes", "approverGroups"}
	odd := []string{"UserName", "EMAIL", "foo", "organisationunits", "Roles", "code", "", "e\\u006dail"}
	ws := func() string {
		if rng.IntN(4) == 0 {
			return []string{" ", "\n", "\t", " \r\n "}[rng.IntN(4)]
		}
		return ""
	}
	str := func() string {
		switch rng.IntN(12) {
		case 0:
			return `"a\"b"`
		case 1:
			return `"caf\u00e9"`
		case 2:
			return `"Müller"`
		case 3:
			return `""`
		case 4:
			return `"  padded  "`
		case 5:
			return "\"tab\there\""
		case 6:
			return "\"bad \xff byte\""
		}
		return fmt.Sprintf(`"v%d-%s"`, rng.IntN(1000), []string{"x", "OU-FIN", "BUYER", "a@b.example", "+64 4 555"}[rng.IntN(5)])
	}
	oddValue := func() string {
		return []string{"12", "-1.5e3", "{}", `{"a":1}`, "[1]", "true", "null", `[{"code":"x"}]`}[rng.IntN(8)]
	}
	entry := func(attr bool) string {
		if rng.IntN(12) == 0 {
			return []string{"null", "{}", "7", `"x"`, `{"code":null}`, `{"Code":"a"}`, `{"code":"a","extra":1}`, `{"code":"a","code":"b"}`}[rng.IntN(8)]
		}
		if attr {
			var parts []string
			if rng.IntN(8) != 0 {
				parts = append(parts, ws()+`"name"`+ws()+":"+ws()+str())
			}
			if rng.IntN(8) != 0 {
				parts = append(parts, `"value":`+str())
			}
			if rng.IntN(10) == 0 {
				parts = append(parts, `"name":`+str())
			}
			rng.Shuffle(len(parts), func(i, j int) { parts[i], parts[j] = parts[j], parts[i] })
			return "{" + strings.Join(parts, ",") + ws() + "}"
		}
		return "{" + ws() + `"code":` + ws() + str() + "}"
	}
	list := func(attr bool) string {
		switch rng.IntN(10) {
		case 0:
			return "null"
		case 1:
			return "[]"
		case 2:
			return oddValue()
		}
		var es []string
		for range 1 + rng.IntN(3) {
			es = append(es, ws()+entry(attr)+ws())
		}
		return "[" + strings.Join(es, ",") + "]"
	}
	var members []string
	for range rng.IntN(10) {
		var key string
		if rng.IntN(12) == 0 {
			key = odd[rng.IntN(len(odd))]
		} else {
			key = keys[rng.IntN(len(keys))]
		}
		var v string
		switch {
		case rng.IntN(15) == 0:
			v = oddValue()
		case key == "enabled":
			v = []string{"true", "false", "null", `"true"`}[rng.IntN(4)]
		case key == "attributes":
			v = list(true)
		case strings.HasSuffix(key, "Units") || key == "roles" || key == "buyerGroups" || key == "approverGroups":
			v = list(false)
		case rng.IntN(10) == 0:
			v = "null"
		default:
			v = str()
		}
		members = append(members, ws()+`"`+key+`"`+ws()+":"+ws()+v+ws())
	}
	body := ws() + "{" + strings.Join(members, ",") + "}" + ws()
	switch rng.IntN(25) {
	case 0:
		body = body[:rng.IntN(len(body))]
	case 1:
		body += "x"
	case 2:
		body = "[" + body + "]"
	}
	return body
}

// The fast path gives what encoding/json gives, error or Input, on every
// body; and it does take the plain bodies (else the test would compare
// encoding/json with itself).
func TestFastWireIsEncodingJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(22, 5))
	fast, slow := 0, 0
	for range 30000 {
		body := randomBody(rng)
		checkFastWire(t, []byte(body))
		if fastWire([]byte(body), newWireUser(), false) {
			fast++
		} else {
			slow++
		}
	}
	t.Logf("%d bodies on the fast path, %d on encoding/json's", fast, slow)
	if fast < 3000 || slow < 3000 {
		t.Errorf("%d bodies on the fast path, %d on encoding/json's: the grammar no longer exercises both", fast, slow)
	}
	for _, body := range []string{
		`{"username":"jane","enabled":true,"roles":[{"code":"BUYER"}],"attributes":[{"name":"a","value":"b"}]}`,
		` { "roles" : [ { "code" : "A" } , {} ] , "attributes" : [ { "value" : "v" , "name" : "n" } ] } `,
		`{}`,
	} {
		if !fastWire([]byte(body), newWireUser(), true) {
			t.Errorf("a plain body took the slow path: %s", body)
		}
		checkFastWire(t, []byte(body))
	}
}

func checkFastWire(t *testing.T, body []byte) {
	t.Helper()
	want, werr := parseInput(body, pathJSON)
	for _, path := range []int{pathFast, pathFastShared} {
		got, gerr := parseInput(body, path)
		if fmt.Sprint(werr) != fmt.Sprint(gerr) {
			t.Fatalf("body %s:\nencoding/json: %v\nfast path %d:   %v", body, werr, path, gerr)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("body %s: (-encoding/json +fast path %d)\n%s", body, path, diff)
		}
	}
}

// FuzzFastWire holds the fast path to encoding/json on any input:
//
//	go test -run='^$' -fuzz='^FuzzFastWire$' -fuzztime=1m -parallel=1 ./user/
func FuzzFastWire(f *testing.F) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 50 {
		f.Add([]byte(randomBody(rng)))
	}
	f.Fuzz(func(t *testing.T, body []byte) { checkFastWire(t, body) })
}

// BenchmarkParseInputPaths is the reason fastWire exists: a typical
// create body decoded by it and by encoding/json.
func BenchmarkParseInputPaths(b *testing.B) {
	body := []byte(`{"username":"user0001234@example.com","externalId":"E0001234","firstName":"First1234","lastName":"Last1234",` +
		`"displayName":"First1234 Last1234 (OU-34)","email":"user0001234@example.com","phone":"+64 4 555 1234","enabled":true,` +
		`"organisationUnits":[{"code":"OU-34"}],"roles":[{"code":"BUYER"},{"code":"APPROVER"}],"buyerGroups":[{"code":"BG-14"}],` +
		`"attributes":[{"name":"costCentre","value":"CC-234"}],"approverGroups":[{"code":"AG-4"}]}`)
	for _, tc := range []struct {
		name string
		path int
	}{{"fast-shared", pathFastShared}, {"fast", pathFast}, {"encoding-json", pathJSON}} {
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := parseInput(body, tc.path); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
