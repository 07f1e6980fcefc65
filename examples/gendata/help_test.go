package main

import (
	"os"
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
	maintest.ExpectExits(t, "gendata", []maintest.Exit{
		{Args: []string{"-h"}, Code: 0, Stderr: "usage: gendata [flags]"},
		{Args: []string{"-help"}, Code: 0, Stderr: "-suppliers int"},
		{Args: []string{"-nope"}, Code: 2, Stderr: "flag provided but not defined: -nope"},
	})
}
