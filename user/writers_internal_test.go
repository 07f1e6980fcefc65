package user

import (
	"context"
	"errors"
	"testing"
)

// writers: one update per user at a time; other users never wait; a
// waiting update leaves when its context ends; nothing is kept once no
// update holds or waits for a user.
func TestWriters(t *testing.T) {
	var w writers
	ctx := context.Background()
	done, err := w.wait(ctx, "c1", "u1")
	if err != nil {
		t.Fatal(err)
	}
	// Another user, and the same id in another community, go at once.
	for _, k := range [][2]string{{"c1", "u2"}, {"c2", "u1"}} {
		d, err := w.wait(ctx, k[0], k[1])
		if err != nil {
			t.Fatalf("wait(%s, %s) while c1/u1 is held: %v", k[0], k[1], err)
		}
		d()
	}
	// The same user waits: with a context that has ended, it gives up.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := w.wait(cctx, "c1", "u1"); !errors.Is(err, context.Canceled) {
		t.Fatalf("wait for a held user with a cancelled context = %v; want context.Canceled", err)
	}
	// A waiter gets its turn once the holder is done.
	got := make(chan error, 1)
	go func() {
		d, err := w.wait(ctx, "c1", "u1")
		if err == nil {
			d()
		}
		got <- err
	}()
	done()
	if err := <-got; err != nil {
		t.Fatalf("waiter: %v", err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.held) != 0 {
		t.Errorf("%d users still tracked after every update ended", len(w.held))
	}
}
