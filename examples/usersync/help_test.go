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

// -h prints the usage on standard error and exits 0, through main as a
// shell runs it, before the API key is looked for; a command line that is
// wrong exits 2.
func TestHelpExitStatus(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"-h"}, 0, "usage: " + apiKeyEnv + "=... usersync -url URL -account ID -file PATH [flags]"},
		{[]string{"-help"}, 0, "-dry-run"},
		{[]string{"-nope"}, 2, "flag provided but not defined: -nope"},
		{[]string{"-file", "users.csv"}, 2, "usersync: -account is required"},
	} {
		r := maintest.Exec(t, tc.args, apiKeyEnv+"=")
		if r.Code != tc.code || !strings.Contains(r.Stderr, tc.want) {
			t.Errorf("usersync %s: exit %d, want %d; stderr must hold %q:\n%s", strings.Join(tc.args, " "), r.Code, tc.code, tc.want, r.Stderr)
		}
	}
}
