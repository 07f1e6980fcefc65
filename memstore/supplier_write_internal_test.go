package memstore

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/procurekit/procure"
	"github.com/procurekit/procure/datafile"
	"github.com/procurekit/procure/supplier"
	"github.com/procurekit/procure/supplier/suppliertest"
)

// TestStampClock pins the stamping rule against the clock: a stamp is the
// clock's time in UTC at microsecond precision, or one microsecond after
// the community's last when the clock has not moved past it (stood still,
// went back, or a loaded supplier, contact or address is dated later).
func TestStampClock(t *testing.T) {
	ctx := context.Background()
	future := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	loaded := suppliertest.NewRecord(uuid.New(), "Loaded")
	loaded.ModifiedDate, loaded.CreatedDate = future.Add(-time.Hour), future.Add(-time.Hour)
	loaded.DefaultContact.ModifiedDate, loaded.DefaultContact.CreatedDate = future.Add(-time.Hour), future.Add(-time.Hour)
	loaded.DefaultRemittanceAddress.ModifiedDate, loaded.DefaultRemittanceAddress.CreatedDate = future.Add(-time.Hour), future.Add(-time.Hour)
	loaded.Contacts = []supplier.Contact{{ID: uuid.New(), Name: "Later", ModifiedDate: future, CreatedDate: future}}

	file, err := json.Marshal(&datafile.File{Communities: []datafile.Community{{ID: "c", Name: "c", Region: datafile.NZ, Suppliers: []supplier.Record{loaded}}}})
	if err != nil {
		t.Fatal(err)
	}
	s, err := LoadReader(bytes.NewReader(file))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutCommunity(ctx, procure.Community{ID: "empty", Name: "e", Region: "NZ"}); err != nil {
		t.Fatal(err)
	}
	clockAt := time.Date(2026, 5, 1, 12, 0, 0, 123456789, time.FixedZone("NZST", 12*3600))
	s.suppliers.clock = func() time.Time { return clockAt }

	put := func(com, name string) time.Time {
		t.Helper()
		d, err := s.PutSupplier(ctx, com, suppliertest.NewRecord(uuid.NewSHA1(uuid.Nil, []byte(name)), name))
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.Supplier(ctx, com, d.ID)
		if err != nil || !got.ModifiedDate.Equal(d.ModifiedDate) {
			t.Fatalf("Supplier after PutSupplier: %v, %v", got.ModifiedDate, err)
		}
		return d.ModifiedDate
	}
	us := time.Microsecond
	steps := []struct {
		com  string
		want time.Time
	}{
		// The community's latest date is the contact's, in the future.
		{"c", future.Add(us)},
		{"c", future.Add(2 * us)},
		// An empty community follows the clock, truncated to microseconds.
		{"empty", clockAt.UTC().Truncate(us)},
		// The clock stands still: one microsecond more each time.
		{"empty", clockAt.UTC().Truncate(us).Add(us)},
		{"empty", clockAt.UTC().Truncate(us).Add(2 * us)},
	}
	for i, st := range steps {
		got := put(st.com, st.com+string(rune('a'+i)))
		if !got.Equal(st.want) || got.Location() != time.UTC {
			t.Errorf("step %d: stamped %s, want %s in UTC", i, got.Format(time.RFC3339Nano), st.want.Format(time.RFC3339Nano))
		}
	}
	// The clock goes back: stamps still increase.
	clockAt = clockAt.Add(-time.Hour)
	if got, want := put("empty", "back"), steps[4].want.Add(us); !got.Equal(want) {
		t.Errorf("clock went back: stamped %s, want %s", got.Format(time.RFC3339Nano), want.Format(time.RFC3339Nano))
	}
	// The clock moves on: stamps follow it again.
	clockAt = clockAt.Add(2 * time.Hour)
	if got, want := put("empty", "on"), clockAt.UTC().Truncate(us); !got.Equal(want) {
		t.Errorf("clock moved on: stamped %s, want %s", got.Format(time.RFC3339Nano), want.Format(time.RFC3339Nano))
	}
	// A contact write stamps contact and supplier alike, after the last.
	c, err := s.PutContact(ctx, "empty", uuid.NewSHA1(uuid.Nil, []byte("on")), supplier.Contact{ID: uuid.New(), Name: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if want := clockAt.UTC().Truncate(us).Add(us); !c.ModifiedDate.Equal(want) || !c.CreatedDate.Equal(want) {
		t.Errorf("contact stamped %s / %s, want %s", c.ModifiedDate, c.CreatedDate, want)
	}
}
