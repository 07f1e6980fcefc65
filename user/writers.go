package user

import (
	"context"
	"sync"
)

// writers lets one update of a user at a time through a Service, per
// user: the updates of one user that reach one node wait for each other
// before reading it, instead of all preparing from one version and all
// but one losing at the commit. It is not a store lock: a waiting update
// holds no lock or connection of the store, and updates of other users
// (of any community) never wait for it. Other nodes' writes are still
// caught by the version check at the commit.
//
// The zero value is ready to use.
type writers struct {
	mu   sync.Mutex
	held map[string]*turn
}

// turn is the queue of one user's updates: a channel with room for the
// one update under way (blocked senders are served in order), and how
// many updates hold or wait for it.
type turn struct {
	ch   chan struct{}
	refs int
}

// wait returns when no other update of the community's user id is under
// way through w, with the function that ends this one's turn; or the
// context's error, when it ends first.
func (w *writers) wait(ctx context.Context, community, id string) (done func(), err error) {
	key := community + "\x00" + id
	w.mu.Lock()
	if w.held == nil {
		w.held = map[string]*turn{}
	}
	t := w.held[key]
	if t == nil {
		t = &turn{ch: make(chan struct{}, 1)}
		w.held[key] = t
	}
	t.refs++
	w.mu.Unlock()
	select {
	case t.ch <- struct{}{}:
		return func() {
			<-t.ch
			w.leave(key, t)
		}, nil
	case <-ctx.Done():
		w.leave(key, t)
		return nil, context.Cause(ctx)
	}
}

// leave forgets t once no update holds or waits for it.
func (w *writers) leave(key string, t *turn) {
	w.mu.Lock()
	if t.refs--; t.refs == 0 {
		delete(w.held, key)
	}
	w.mu.Unlock()
}
