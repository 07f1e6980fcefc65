package syncbuf_test

import (
	"strings"
	"sync"
	"testing"

	"github.com/procurekit/procure/internal/syncbuf"
)

func TestConcurrentWrites(t *testing.T) {
	var b syncbuf.Buffer
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				if _, err := b.Write([]byte("x")); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	if got := b.String(); got != strings.Repeat("x", 800) {
		t.Errorf("got %d bytes, want 800", len(got))
	}
}
