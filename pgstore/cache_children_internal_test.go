package pgstore

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/procurekit/procure/datafile"
	"github.com/procurekit/procure/supplier"
)

// childDocs gives each supplier the contacts and addresses read for it,
// each list in the order read, whatever the documents of other suppliers
// read in between, across blocks (a document larger than a block gets
// one of its own); a supplier with none gets none, and a document that
// does not decode fails the load naming its supplier.
func TestChildDocs(t *testing.T) {
	at := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	contact := func(name string) supplier.Contact {
		return supplier.Contact{ID: uuid.New(), Name: name, ModifiedDate: at, CreatedDate: at}
	}
	addr := func(company string) supplier.RemittanceAddress {
		return supplier.RemittanceAddress{ID: uuid.New(), CompanyName: supplier.NewText(company), ModifiedDate: at, CreatedDate: at}
	}
	a, b, none := uuid.New(), uuid.New(), uuid.New()
	want := map[uuid.UUID]*supplier.Record{a: {}, b: {}, none: {}}
	k := newChildDocs()
	put := func(id uuid.UUID, v any) {
		raw, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if want[id] == nil {
			want[id] = &supplier.Record{}
		}
		switch v := v.(type) {
		case supplier.Contact:
			want[id].Contacts = append(want[id].Contacts, v)
			k.add(id, raw, false)
		case supplier.RemittanceAddress:
			want[id].RemittanceAddresses = append(want[id].RemittanceAddresses, v)
			k.add(id, raw, true)
		}
	}
	// Interleaved, as a table's rows come; one name long enough to need
	// a block of its own, and enough documents to fill several blocks.
	put(a, contact("Zed"))
	put(b, contact("Amy"))
	put(a, contact(strings.Repeat("Long ", childBlockSize/4)))
	put(b, addr("Beta"))
	for i := range 40000 {
		put([]uuid.UUID{a, b}[i%2], contact(fmt.Sprintf("Contact %05d of a padded name", i)))
	}
	put(a, addr("Alpha"))
	put(a, addr("Aardvark"))
	put(uuid.New(), contact("Orphan")) // a supplier the load does not read
	if len(k.blocks) < 3 {
		t.Fatalf("%d blocks: the test meant to cross several", len(k.blocks))
	}
	d := datafile.NewDecoder()
	for _, id := range []uuid.UUID{a, b, none} {
		got := supplier.Record{Detail: supplier.Detail{Summary: supplier.Summary{ID: id}}}
		if err := k.attach(d, &got); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want[id].Contacts, got.Contacts); diff != "" {
			t.Errorf("supplier %s: contacts (-read +attached):\n%.2000s", id, diff)
		}
		if diff := cmp.Diff(want[id].RemittanceAddresses, got.RemittanceAddresses); diff != "" {
			t.Errorf("supplier %s: addresses (-read +attached):\n%s", id, diff)
		}
	}

	bad := uuid.New()
	k.add(bad, []byte(`{"id": 7}`), false)
	err := k.attach(d, &supplier.Record{Detail: supplier.Detail{Summary: supplier.Summary{ID: bad}}})
	if err == nil || !strings.Contains(err.Error(), bad.String()) || !strings.Contains(err.Error(), "contact") {
		t.Fatalf("attach of an undecodable contact: %v; want an error naming the supplier and the contact", err)
	}
	var syn *json.UnmarshalTypeError
	if !errors.As(err, &syn) && !strings.Contains(err.Error(), "id") {
		t.Fatalf("attach of an undecodable contact: %v; want the decoder's error wrapped", err)
	}
}
