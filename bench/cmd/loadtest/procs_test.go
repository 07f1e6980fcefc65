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

func TestWaitReady(t *testing.T) {
	refused := errors.New("connection refused")
	tests := []struct {
		name    string
		answers []int // per call: a status, or 0 for a connection error; the last repeats
		wantErr string
	}{
		{"up after two refusals", []int{0, 0, 200}, ""},
		{"up after loading", []int{0, 503, 503, 200}, ""},
		{"loading for ever", []int{503}, "srv not ready after 700ms (last error: srv answers 503: denied)"},
		{"up with the wrong answer", []int{0, 401}, "srv is up but answers 401: denied"},
		{"never up", []int{0}, "srv not ready after 700ms (last error: connection refused)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &proc{name: "srv", logPath: filepath.Join(t.TempDir(), "none.log"), done: make(chan struct{})}
			calls := 0
			ask := func(context.Context) (int, []byte, error) {
				a := tt.answers[min(calls, len(tt.answers)-1)]
				calls++
				if a == 0 {
					return 0, nil, refused
				}
				return a, []byte("denied"), nil
			}
			err := waitReady(context.Background(), p, ask, 700*time.Millisecond)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("waitReady = %v, want an error containing %q", err, tt.wantErr)
			}
		})
	}
}
