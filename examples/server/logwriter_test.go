package main

import (
	"strings"
	"testing"
	"time"

	"github.com/procurekit/procure/internal/syncbuf"
)

func TestLogWriter(t *testing.T) {
	var out syncbuf.Buffer
	lw := newLogWriter(&out, 20*time.Millisecond)
	if _, err := lw.Write([]byte("one\n")); err != nil {
		t.Fatal(err)
	}
	if out.String() != "" {
		t.Errorf("a line reached the output before the interval: %q", out.String())
	}
	deadline := time.Now().Add(5 * time.Second)
	for out.String() != "one\n" && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if out.String() != "one\n" {
		t.Fatalf("after the interval the output is %q; want the line", out.String())
	}
	if _, err := lw.Write([]byte("two\n")); err != nil {
		t.Fatal(err)
	}
	lw.Close()
	if got := out.String(); got != "one\ntwo\n" {
		t.Errorf("after Close the output is %q; want both lines", got)
	}
	// A large burst is written as the buffer fills, whole lines in order.
	var big syncbuf.Buffer
	lw = newLogWriter(&big, time.Hour)
	line := strings.Repeat("x", 99) + "\n"
	for range 2000 {
		if _, err := lw.Write([]byte(line)); err != nil {
			t.Fatal(err)
		}
	}
	if big.String() == "" {
		t.Error("200 KB of log stayed in the buffer")
	}
	lw.Close()
	if got := big.String(); got != strings.Repeat(line, 2000) {
		t.Errorf("after Close: %d bytes; want %d, in order", len(got), 2000*len(line))
	}
}
