package scim

import (
	"context"
	"errors"
	"net/http/httptest"
	"testing"

	"github.com/procurekit/procure"
)

// Heavy SCIM writes take one of the endpoint's slots; a light one never
// waits, and a request whose client leaves while waiting is ErrUnavailable.
func TestSCIMHeavySlots(t *testing.T) {
	a := &scimAPI{heavy: make(chan struct{}, 1)}
	heavy, light := make([]byte, heavyBodyBytes), make([]byte, heavyBodyBytes-1)
	r := httptest.NewRequest("PATCH", "/scim/v2/Users/x", nil)
	release, err := a.heavySlot(r, heavy)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.heavy) != 1 {
		t.Fatalf("%d slots taken; want 1", len(a.heavy))
	}
	// The only slot is taken: a light body goes on, a heavy one waits.
	if rel, err := a.heavySlot(r, light); err != nil {
		t.Fatalf("a light body waited: %v", err)
	} else {
		rel()
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := a.heavySlot(r.WithContext(ctx), heavy); !errors.Is(err, procure.ErrUnavailable) {
		t.Fatalf("a heavy body whose client left: %v; want ErrUnavailable", err)
	}
	release()
	if len(a.heavy) != 0 {
		t.Fatalf("%d slots taken after the release; want 0", len(a.heavy))
	}
	release, err = a.heavySlot(r, heavy)
	if err != nil {
		t.Fatalf("the freed slot: %v", err)
	}
	release()
}
