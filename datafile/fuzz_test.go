package datafile_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/procurekit/procure"
	"github.com/procurekit/procure/datafile"
	"github.com/procurekit/procure/supplier/suppliertest"
)

// Fuzz targets of both data-file readers, Parse and Stream (issue 11). Run
// one with
//
//	go test -run='^$' -fuzz='^FuzzParse$' -fuzztime=2m -parallel=1 ./datafile/

// dataSeeds are small data files, good and bad, and the supplier
// conformance fixture (every optional part, nulls, unicode).
func dataSeeds(f *testing.F) {
	fixture, err := json.Marshal(suppliertest.Fixture(f))
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range [][]byte{
		fixture,
		[]byte(`{"communities":[]}`),
		[]byte(`{"communities":[{"id":"c","name":"C","region":"NZ","tokens":[{"token":"t","scopes":["suppliers:read"]}],
			"serviceAccounts":[{"id":"sa","keys":[{"key":"k","active":true}],"allowedIPs":["10.0.0.0/8","::1"]}],
			"autoRoles":["EMPLOYEE"],"users":[{"id":"u","username":"JDoe","roles":[{"code":"R"}]}],"budgets":[{"account":"A","budget":"1.50"}]}]}`),
		[]byte(`{"communities":[{"suppliers":[{"id":"e7420bd2-2732-5444-91f0-e275c82ebc64","name":"A"}],"id":"c","name":"C","region":"AU"}]}`),
		[]byte(`{"communities":[{"id":"c","name":"C","region":"XX"}]}`),
		[]byte(`{"communities":[{"id":"c","name":"C","region":"NZ","users":[{"id":"u","username":"a"},{"id":"v","username":"A"}]}]}`),
		[]byte(`{"communities":[{"id":"c","name":"C","region":"NZ","budgets":[{"account":"A","budget":"1e3"}]}]}`),
		[]byte(`{"communities":[{"id":"c\u0000","name":"C","region":"NZ"}]}`),
		[]byte(`{"communities":[{"id":"c","name":"C","region":"NZ","suppliers":[{"id":"not-a-uuid"}]}]}`),
		[]byte(`{"communities":`), []byte(`[]`), []byte(``), []byte(`{"communities":[{}]} x`),
	} {
		f.Add(s)
	}
}

var fileOpts = cmp.Options{decimalEqual, cmpopts.EquateEmpty()}

func checkRejected(t *testing.T, err error) {
	t.Helper()
	var ve *procure.ValidationError
	if errors.As(err, &ve) {
		if len(ve.Fields) == 0 {
			t.Fatalf("a ValidationError without fields: %v", err)
		}
		for _, fe := range ve.Fields {
			if fe.Field == "" || fe.Rule == "" {
				t.Fatalf("a field error without a field or a rule: %+v in %v", fe, err)
			}
		}
	}
	if err.Error() == "" {
		t.Fatal("an empty error")
	}
}

func FuzzParse(f *testing.F) {
	dataSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := datafile.Parse(bytes.NewReader(data))
		if err != nil {
			checkRejected(t, err)
			return
		}
		// Accepted input round-trips: the File encoded again parses to
		// the same File.
		b, err := json.Marshal(file)
		if err != nil {
			t.Fatalf("Marshal: %v", err)
		}
		again, err := datafile.Parse(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("the parsed file encoded again does not parse: %v\n%s", err, b)
		}
		if diff := cmp.Diff(file, again, fileOpts); diff != "" {
			t.Fatalf("round trip (-first +second):\n%s", diff)
		}
	})
}

func FuzzStream(f *testing.F) {
	dataSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		// The collector checks the order of the calls.
		c := &collector{tb: t}
		err := datafile.Stream(bytes.NewReader(data), c)
		parsed, perr := datafile.Parse(bytes.NewReader(data))
		if (err == nil) != (perr == nil) {
			t.Fatalf("Stream: %v; Parse: %v", err, perr)
		}
		if err != nil {
			checkRejected(t, err)
			if err.Error() != perr.Error() {
				t.Fatalf("Stream and Parse report different errors: %v / %v", err, perr)
			}
			// A handler's error stops Stream and comes back unchanged.
			stop := errors.New("enough")
			if serr := datafile.Stream(bytes.NewReader(data), &stopper{after: 1, err: stop}); serr == nil {
				t.Fatal("Stream accepted, with a failing handler, what it refused before")
			}
			return
		}
		if diff := cmp.Diff(parsed, &c.f, fileOpts); diff != "" {
			t.Fatalf("Stream and Parse differ (-parse +stream):\n%s", diff)
		}
		// A handler's error on the first supplier (if any) is returned as
		// it is.
		if len(c.f.Communities) > 0 && len(c.f.Communities[0].Suppliers) > 0 {
			stop := errors.New("enough")
			h := &stopper{after: 1, err: stop}
			if serr := datafile.Stream(bytes.NewReader(data), h); !errors.Is(serr, stop) || h.calls != 1 {
				t.Fatalf("Stream with a failing handler: %v after %d calls; want its error after 1", serr, h.calls)
			}
		}
	})
}
