package main

import (
	"strings"
	"testing"

	"github.com/procurekit/procure/internal/maintest"
)

// -h prints the usage on standard error and exits 0, through main as a
// shell runs it; a flag that does not exist exits 2.
func TestHelpExitStatus(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"-h"}, 0, "usage: " + TokenEnv + "=<secret> connector"},
		{[]string{"-help"}, 0, "-holds-postgres DSN"},
		{[]string{"-nope"}, 2, "flag provided but not defined: -nope"},
		{[]string{"stray"}, 2, `connector: unexpected argument "stray"`},
	} {
		r := maintest.Exec(t, tc.args)
		if r.Code != tc.code || !strings.Contains(r.Stderr, tc.want) {
			t.Errorf("connector %s: exit %d, want %d; stderr must hold %q:\n%s", strings.Join(tc.args, " "), r.Code, tc.code, tc.want, r.Stderr)
		}
	}
}
