package main

import (
	"os"
	"strings"
	"testing"

	"github.com/procurekit/procure/internal/maintest"
)

func TestMain(m *testing.M) {
	maintest.Run(main)
	os.Exit(m.Run())
}

// -h prints the usage on standard error and exits 0 (it once exited 2,
// as for a wrong flag), through main as a shell runs it; a wrong flag
// exits 2.
func TestHelpExitStatus(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"-h"}, 0, "usage: gendata [flags]"},
		{[]string{"-help"}, 0, "-suppliers int"},
		{[]string{"-nope"}, 2, "flag provided but not defined: -nope"},
	} {
		r := maintest.Exec(t, tc.args)
		if r.Code != tc.code || !strings.Contains(r.Stderr, tc.want) || r.Stdout != "" {
			t.Errorf("gendata %s: exit %d, want %d; stderr must hold %q:\n%s\nstdout: %.100q", strings.Join(tc.args, " "), r.Code, tc.code, tc.want, r.Stderr, r.Stdout)
		}
	}
}
