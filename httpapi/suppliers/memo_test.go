package suppliers_test

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"path/filepath"
	"testing"
)

// The encoded-supplier memo never answers a changed supplier with its old
// JSON, even when the change keeps every date (an import of a file with
// the old modifiedDate): the list and the supplier in full are read until
// the memo holds them, the file is imported again with the supplier's name
// and a field deep in its detail changed, and both answers show the change.
func TestMemoSeesChangesThatKeepTheDates(t *testing.T) {
	store := loadTestStore(t)
	ts := newServer(t, store, store)
	list, one := base+"/suppliers?size=50", base+"/suppliers/"+acmeOffice
	get := func(target string) []byte {
		t.Helper()
		res := ts.do(t, http.MethodGet, target, "Bearer "+alphaToken)
		if res.status != http.StatusOK {
			t.Fatalf("GET %s: %d %s", target, res.status, res.body)
		}
		return res.body
	}
	for range 3 { // the memo takes a supplier at its second encoding
		get(list)
		get(one)
	}
	before := get(one)
	file, err := os.ReadFile(filepath.Join("testdata", "suppliers.json"))
	if err != nil {
		t.Fatal(err)
	}
	for old, new := range map[string]string{`"Acme Office Supplies"`: `"Acme Office Supplies Two"`, `"Westpac"`: `"Westpac North"`} {
		if bytes.Count(file, []byte(old)) != 1 {
			t.Fatalf("testdata holds %s %d times; the test expects once", old, bytes.Count(file, []byte(old)))
		}
		file = bytes.Replace(file, []byte(old), []byte(new), 1)
	}
	if _, err := store.ImportStream(context.Background(), bytes.NewReader(file)); err != nil {
		t.Fatal(err)
	}
	if got := get(list); !bytes.Contains(got, []byte(`"name":"Acme Office Supplies Two"`)) {
		t.Errorf("the list after the import still has the old name:\n%s", got)
	}
	after := get(one)
	if !bytes.Contains(after, []byte(`"name":"Acme Office Supplies Two"`)) || !bytes.Contains(after, []byte(`"bankName":"Westpac North"`)) {
		t.Errorf("the supplier after the import:\n%s", after)
	}
	// The dates did not move: only the memo's comparison can have seen it.
	if want := bytes.Replace(bytes.Replace(before, []byte(`"Acme Office Supplies"`), []byte(`"Acme Office Supplies Two"`), 1),
		[]byte(`"Westpac"`), []byte(`"Westpac North"`), 1); !bytes.Equal(after, want) {
		t.Errorf("the supplier after the import differs from before by more than the two fields:\nbefore %s\nafter  %s", before, after)
	}
}
