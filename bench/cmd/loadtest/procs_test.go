package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestWaitLog(t *testing.T) {
	tests := []struct {
		name    string
		lines   string // written to the log 300 ms after the wait starts
		exit    bool   // the process exits instead
		timeout time.Duration
		wantErr string
	}{
		{"the line appears", "msg=\"supplier cache loaded\" community=c\n", false, 10 * time.Second, ""},
		{"other lines only", "msg=listening\n", false, 1500 * time.Millisecond, `its log did not say "supplier cache loaded" within 1.5s`},
		{"the process exits", "", true, 10 * time.Second, `srv exited before its log said "supplier cache loaded"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			log := filepath.Join(t.TempDir(), "server.log")
			if err := os.WriteFile(log, []byte("msg=starting\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			p := &proc{name: "srv", logPath: log, done: make(chan struct{})}
			go func() {
				time.Sleep(300 * time.Millisecond)
				if tt.exit {
					p.err = errors.New("exit status 1")
					close(p.done)
					return
				}
				f, err := os.OpenFile(log, os.O_APPEND|os.O_WRONLY, 0)
				if err == nil {
					_, _ = f.WriteString(tt.lines)
					_ = f.Close()
				}
			}()
			err := waitLog(context.Background(), p, "supplier cache loaded", tt.timeout)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("waitLog = %v, want an error containing %q", err, tt.wantErr)
			}
		})
	}
}
