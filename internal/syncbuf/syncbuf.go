// Package syncbuf is a bytes.Buffer that several goroutines may write to
// at once: the sink tests give loggers and programs whose output is read
// while handlers or refresh goroutines still write.
package syncbuf

import (
	"bytes"
	"sync"
)

// Buffer is a concurrency-safe bytes.Buffer. The zero value is ready.
type Buffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write appends p.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns what has been written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
