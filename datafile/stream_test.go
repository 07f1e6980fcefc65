package datafile_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"

	"github.com/procurekit/procure/datafile"
	"github.com/procurekit/procure/supplier"
	"github.com/procurekit/procure/supplier/suppliertest"
)

// collector rebuilds a File from what Stream hands out, and checks the
// order of the calls.
type collector struct {
	tb      testing.TB
	f       datafile.File
	pending []supplier.Record
	ci      int
}

func (c *collector) Supplier(ci, si int, rec *supplier.Record) error {
	if ci != c.ci || si != len(c.pending) {
		c.tb.Errorf("Supplier(%d, %d) after %d suppliers of community %d", ci, si, len(c.pending), c.ci)
	}
	c.pending = append(c.pending, *rec)
	return nil
}

func (c *collector) Community(ci int, com *datafile.Community, n int) error {
	if ci != c.ci || n != len(c.pending) || com.Suppliers != nil {
		c.tb.Errorf("Community(%d, n=%d, %d suppliers) after %d suppliers of community %d", ci, n, len(com.Suppliers), len(c.pending), c.ci)
	}
	com.Suppliers = c.pending
	c.pending = nil
	c.f.Communities = append(c.f.Communities, *com)
	c.ci++
	return nil
}

func stream(tb testing.TB, data string) (*datafile.File, error) {
	tb.Helper()
	c := &collector{tb: tb}
	// One byte at a time: every value crosses a buffer boundary.
	err := datafile.Stream(iotest.OneByteReader(strings.NewReader(data)), c)
	return &c.f, err
}

var decimalEqual = cmp.Comparer(func(a, b decimal.Decimal) bool { return a.Equal(b) })

// Stream hands out exactly what Parse returns (validated, normalised), on
// the supplier conformance suite's fixture, which holds every optional
// part, nulls, unicode and nanosecond dates.
func TestStreamEqualsParse(t *testing.T) {
	data, err := json.MarshalIndent(suppliertest.Fixture(t), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	// A second copy with escapes in strings (the slow path) and a
	// repeated community id.
	escaped := bytes.ReplaceAll(data, []byte(`"name": "`), []byte(`"name": "\u0041\"`))
	for name, file := range map[string][]byte{"fixture": data, "escaped": escaped} {
		t.Run(name, func(t *testing.T) {
			want, err := datafile.Parse(bytes.NewReader(file))
			if err != nil {
				t.Fatal(err)
			}
			got, err := stream(t, string(file))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got, decimalEqual); diff != "" {
				t.Fatalf("Stream differs from Parse (-Parse +Stream):\n%s", diff)
			}
		})
	}
}

const sup1 = `{"id": "0f0f0f0f-0000-4000-8000-000000000001", "name": "Ann's", "profileType": "COMPANY",
   "modifiedDate": "2026-01-01T00:00:00.1234567+13:00", "createdDate": "2026-01-01T00:00:00Z"}`

// docs: datafile.md does not fix the order of a community's keys:
// "suppliers" may come before "id", and keys a community does not have are
// ignored (as Parse ignores them), at any level.
func TestStreamAnyKeyOrder(t *testing.T) {
	data := `{"version": [1, {"x": null}], "communities": [
  {"suppliers": [` + sup1 + `], "extra": {"a": [1, 2, "]"]}, "Region": "NZ", "name": "Late", "id": "late"},
  {"id": "early", "region": "AU", "suppliers": null, "users": [{"id": "u1", "username": " ann "}]}
], "trailer": true}`
	want, err := datafile.Parse(strings.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	got, err := stream(t, data)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got, decimalEqual); diff != "" {
		t.Fatalf("Stream differs from Parse (-Parse +Stream):\n%s", diff)
	}
	if got.Communities[0].ID != "late" || len(got.Communities[0].Suppliers) != 1 || got.Communities[1].Users[0].Username != "ann" {
		t.Errorf("communities: %+v", got.Communities)
	}
	// Normalised as Parse normalises: UTC, microseconds.
	if m := got.Communities[0].Suppliers[0].ModifiedDate; m.Location().String() != "UTC" || m.Nanosecond()%1000 != 0 {
		t.Errorf("modifiedDate %v is not normalised", m)
	}
}

// Errors name the entry by its JSON path and, for anything that does not
// decode, the line:column; where Parse reports the same problem, the
// message is identical.
func TestStreamErrors(t *testing.T) {
	head := "{\"communities\": [\n {\"id\": \"c1\", \"region\": \"NZ\", \"suppliers\": [\n  " + sup1 + ",\n  "
	tail := "\n ]}\n]}"
	tests := []struct {
		name, data, want string
		sameAsParse      bool
	}{
		{"unknown enum", head + `{"id": "0f0f0f0f-0000-4000-8000-000000000002", "profileType": "COMPNY"}` + tail,
			`line 5:65: communities[0].suppliers[1].profileType: must be one of COMPANY, INDIVIDUAL (got "COMPNY")`, true},
		{"wrong JSON type", head + `{"id": "0f0f0f0f-0000-4000-8000-000000000002", "name": 42}` + tail,
			`line 5:58: communities[0].suppliers[1].name: must be a JSON string (got number)`, true},
		{"bad uuid in a contact", head + `{"id": "0f0f0f0f-0000-4000-8000-000000000002", "contacts": [{"id": "c1"}]}` + tail,
			`line 5:70: communities[0].suppliers[1].contacts[0].id: must be a UUID such as 3f2b8a4e-1c2d-4e5f-8a9b-0c1d2e3f4a5b (got "c1")`, true},
		{"rule broken", head + `{"id": "0f0f0f0f-0000-4000-8000-000000000002", "profileType": "COMPANY", "defaultEmailAddress": "not-mail",
   "modifiedDate": "2026-01-01T00:00:00Z", "createdDate": "2026-01-01T00:00:00Z"}` + tail,
			`communities[0].suppliers[1].defaultEmailAddress: must be a valid email address`, true},
		{"duplicate supplier id", head + sup1 + tail,
			`communities[0].suppliers[1].id: duplicate supplier id 0f0f0f0f-0000-4000-8000-000000000001`, true},
		{"malformed JSON in a supplier", head + `{"id": "0f0f0f0f-0000-4000-8000-000000000002",, "name": "x"}` + tail,
			`line 5:50: malformed JSON: invalid character ',' looking for beginning of object key string`, true},
		{"missing comma between suppliers", head + sup1 + ` ` + sup1 + tail,
			`line 6:97: malformed JSON: invalid character '{' after array element`, false},
		{"truncated file", head + `{"id": "0f0f0f0f-0000-4000-8000-000000000002", "name": "cut here`,
			`line 5:67: malformed JSON: unexpected end of input in communities[0].suppliers[1]`, false},
		{"truncated after a supplier", head[:len(head)-4],
			`line 4:95: malformed JSON: unexpected end of input in an array`, false},
		{"bad region, found when the community ends", strings.Replace(head, `"NZ"`, `"EU"`, 1) + sup1[:0] + `{"id": "0f0f0f0f-0000-4000-8000-000000000002", "profileType": "COMPANY", "modifiedDate": "2026-01-01T00:00:00Z", "createdDate": "2026-01-01T00:00:00Z"}` + tail,
			`communities[0].region: must be one of AU, NZ, US, DEMO (got "EU")`, true},
		{"community of the wrong type", `{"communities": [42]}`,
			`line 1:18: communities[0]: must be a JSON object`, false},
		{"suppliers of the wrong type", `{"communities": [{"id": "c", "region": "NZ", "suppliers": {}}]}`,
			`line 1:59: communities[0].suppliers: must be a JSON array`, false},
		{"bad token expiry", `{"communities": [{"id": "c", "region": "NZ",` + "\n" + `  "tokens": [{"token": "t", "expires": "soon"}]}]}`,
			`line 2:40: communities[0].tokens[0].expires: must be an RFC 3339 date-time such as 2026-05-01T09:30:00Z (got "soon")`, true},
		{"key twice in a community", `{"communities": [{"id": "c", "region": "NZ", "id": "d"}]}`,
			`line 1:46: communities[0].id: the key appears twice in the community`, false},
		{"no community", `{"communities": []}`, `communities: must hold at least one community`, true},
		{"not an object", `[]`, `line 1:1: the data file must be a JSON object`, false},
		{"garbage after the file", `{"communities": [{"id": "c", "region": "NZ"}]} x`,
			`line 1:49: malformed JSON: invalid character 'x' after top-level value`, true},
		{"empty input", ``, `line 1:1: malformed JSON: unexpected end of input in the data file`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := stream(t, tt.data)
			if err == nil {
				t.Fatal("Stream succeeded; want an error")
			}
			if err.Error() != tt.want {
				t.Errorf("error:\n got %s\nwant %s", err, tt.want)
			}
			if !tt.sameAsParse {
				return
			}
			_, perr := datafile.Parse(strings.NewReader(tt.data))
			if perr == nil || perr.Error() != err.Error() {
				t.Errorf("Parse and Stream disagree:\n Parse  %v\n Stream %v", perr, err)
			}
		})
	}
}

// A handler's error stops the stream and comes back unchanged; no call
// follows it.
func TestStreamHandlerError(t *testing.T) {
	data, err := json.Marshal(suppliertest.Fixture(t))
	if err != nil {
		t.Fatal(err)
	}
	stop := errors.New("enough")
	h := &stopper{after: 3, err: stop}
	if err := datafile.Stream(bytes.NewReader(data), h); !errors.Is(err, stop) {
		t.Fatalf("Stream = %v, want the handler's error", err)
	}
	if h.calls != 3 {
		t.Errorf("the handler was called %d times, want 3 (none after its error)", h.calls)
	}
}

type stopper struct {
	after, calls int
	err          error
}

func (s *stopper) Supplier(int, int, *supplier.Record) error {
	s.calls++
	if s.calls >= s.after {
		return s.err
	}
	return nil
}

func (s *stopper) Community(int, *datafile.Community, int) error {
	s.calls++
	return nil
}

// StreamFile names the file in its errors, as ReadFile does.
func TestStreamFileNamesFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(path, []byte(`{"communities": [{"id": "c", "region": "EU"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	err := datafile.StreamFile(path, &collector{tb: t})
	want := fmt.Sprintf(`%s: communities[0].region: must be one of AU, NZ, US, DEMO (got "EU")`, path)
	if err == nil || err.Error() != want {
		t.Fatalf("StreamFile = %v, want %s", err, want)
	}
}

// A handler that panics leaves no goroutine of Stream behind: the panic
// comes through once the reader and the workers have stopped.
func TestStreamHandlerPanic(t *testing.T) {
	data, err := json.Marshal(suppliertest.Fixture(t))
	if err != nil {
		t.Fatal(err)
	}
	before := runtime.NumGoroutine()
	func() {
		defer func() {
			if r := recover(); r != "boom" {
				t.Errorf("recovered %v, want the handler's panic", r)
			}
		}()
		_ = datafile.Stream(bytes.NewReader(data), panicker{})
		t.Error("Stream returned; want the handler's panic")
	}()
	// Stream waits for its goroutines, but a goroutine that has called
	// wg.Done is still counted until it has returned: give the stragglers
	// a moment (a goroutine Stream leaked never goes).
	deadline := time.Now().Add(5 * time.Second)
	for after := runtime.NumGoroutine(); after > before; after = runtime.NumGoroutine() {
		if time.Now().After(deadline) {
			t.Errorf("%d goroutines before Stream, %d after", before, after)
			break
		}
		time.Sleep(time.Millisecond)
	}
}

type panicker struct{}

func (panicker) Supplier(int, int, *supplier.Record) error     { panic("boom") }
func (panicker) Community(int, *datafile.Community, int) error { return nil }

// File.Reader writes a File that Parse reads back equal, and gives an
// unwritable File's error at the first Read.
func TestFileReader(t *testing.T) {
	f := suppliertest.Fixture(t)
	back, err := datafile.Parse(f.Reader())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(f, back); diff != "" {
		t.Fatalf("Parse(f.Reader()) differs (-f +back):\n%s", diff)
	}
	f.Communities[0].Suppliers[0].ProfileType = "NOT_A_TYPE"
	if _, err := datafile.Parse(f.Reader()); err == nil || !strings.Contains(err.Error(), "NOT_A_TYPE") {
		t.Fatalf("Parse of an unwritable File = %v, want the encoding error", err)
	}
}
