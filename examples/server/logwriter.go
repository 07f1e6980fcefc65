package main

import (
	"bufio"
	"io"
	"sync"
	"time"
)

// logWriter buffers the log on its way to w and writes it out every
// interval (and when the buffer fills, and at Close): the request log is a
// line per request, and a write system call per line cost the supplier
// list 5-15% of its throughput at 40,000 requests a second on two cores
// (bench/README.md). A line reaches w at most interval late.
type logWriter struct {
	mu   sync.Mutex
	buf  *bufio.Writer
	stop chan struct{}
	done chan struct{}
}

func newLogWriter(w io.Writer, interval time.Duration) *logWriter {
	lw := &logWriter{buf: bufio.NewWriterSize(w, 64<<10), stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(lw.done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-lw.stop:
				return
			case <-t.C:
				lw.flush()
			}
		}
	}()
	return lw
}

func (lw *logWriter) Write(p []byte) (int, error) {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	return lw.buf.Write(p)
}

func (lw *logWriter) flush() {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	if lw.buf.Buffered() > 0 {
		_ = lw.buf.Flush() // stderr gone: nothing to tell
	}
}

// Close stops the timer and writes out what is buffered; nothing is
// written to w after it returns.
func (lw *logWriter) Close() {
	close(lw.stop)
	<-lw.done
	lw.flush()
}
