package datafile_test

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/procurekit/procure"
	"github.com/procurekit/procure/datafile"
	"github.com/procurekit/procure/supplier"
)

// Stream's errors tell the file's mistakes (procure.ErrInvalid, the line
// kept in the text) from its reader's and its handler's, which pass
// unchanged: the admin API's import answers the first 400 and the others
// as they are.
func TestStreamErrorsOfTheFile(t *testing.T) {
	for name, file := range map[string]string{
		"syntax":       "{\"communities\": [\n  {\"id\": \"x\",, }]}",
		"truncated":    "{\"communities\": [\n  {\"id\": \"x\"",
		"no community": `{"communities": []}`,
		"repeated key": `{"communities": [{"id": "x", "region": "AU", "id": "y"}]}`,
		"rule":         `{"communities": [{"id": "x", "region": "EU"}]}`,
		"type":         "{\"communities\": [{\"id\": \"x\", \"region\": \"AU\",\n \"suppliers\": [{\"id\": 7}]}]}",
	} {
		err := datafile.Stream(strings.NewReader(file), nopHandler{})
		if !errors.Is(err, procure.ErrInvalid) || !strings.Contains(err.Error(), ":") {
			t.Errorf("%s: %v (ErrInvalid: %v)", name, err, errors.Is(err, procure.ErrInvalid))
		}
	}
	readErr := errors.New("connection reset")
	err := datafile.Stream(io.MultiReader(strings.NewReader(`{"communities": [`), errReader{readErr}), nopHandler{})
	if !errors.Is(err, readErr) || errors.Is(err, procure.ErrInvalid) {
		t.Errorf("a reader's error: %v", err)
	}
	handlerErr := errors.New("database is down")
	err = datafile.Stream(strings.NewReader(`{"communities": [{"id": "x", "region": "AU"}]}`), nopHandler{err: handlerErr})
	if err != handlerErr {
		t.Errorf("the handler's error: %v, want it unchanged", err)
	}
}

type nopHandler struct{ err error }

func (h nopHandler) Supplier(int, int, *supplier.Record) error     { return h.err }
func (h nopHandler) Community(int, *datafile.Community, int) error { return h.err }

type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }
