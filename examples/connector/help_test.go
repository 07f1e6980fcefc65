package main

import (
	"bytes"
	"context"
	"io"
	"net"
	"strings"
	"testing"

	"github.com/procurekit/procure/internal/maintest"
)

// -h prints the usage on standard error and exits 0, through main as a
// shell runs it; a flag that does not exist exits 2.
func TestHelpExitStatus(t *testing.T) {
	maintest.ExpectExits(t, "connector", []maintest.Exit{
		{Args: []string{"-h"}, Code: 0, Stderr: "usage: " + TokenEnv + "=<secret> connector"},
		{Args: []string{"-help"}, Code: 0, Stderr: "-holds-postgres DSN"},
		{Args: []string{"-nope"}, Code: 2, Stderr: "flag provided but not defined: -nope"},
		{Args: []string{"stray"}, Code: 2, Stderr: `connector: unexpected argument "stray"`},
	})
}

// A port in use is refused with what to do about it (the walkthroughs
// start several connectors, each on its own port), and exit status 1.
func TestPortInUse(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	addr := l.Addr().String()
	var stderr bytes.Buffer
	err = run(context.Background(), []string{"-addr", addr, "-table", "testdata/budgets.csv"}, io.Discard, &stderr)
	want := addr + " is in use (is another connector still running?): stop that one, or start this one with -addr and a free port: "
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("run on a port in use: %v; want an error starting %q", err, want)
	}
	if code := exitCode(err, &stderr); code != 1 {
		t.Errorf("exit status %d, want 1", code)
	}
}
