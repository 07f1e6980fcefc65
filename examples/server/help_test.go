package main

import (
	"testing"

	"github.com/procurekit/procure/internal/maintest"
)

// -h prints the usage on standard error and exits 0, through main as a
// shell runs it; a flag that does not exist exits 2.
func TestHelpExitStatus(t *testing.T) {
	maintest.ExpectExits(t, "server", []maintest.Exit{
		{Args: []string{"-h"}, Code: 0, Stderr: "usage: server [-addr host:port]"},
		{Args: []string{"-help"}, Code: 0, Stderr: "-admin-addr address"},
		{Args: []string{"-nope"}, Code: 2, Stderr: "flag provided but not defined: -nope"},
		{Args: []string{"stray"}, Code: 2, Stderr: `server: unexpected argument "stray"`},
	})
}
