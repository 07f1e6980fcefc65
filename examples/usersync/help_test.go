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

// -h prints the usage on standard error and exits 0, through main as a
// shell runs it, before the API key is looked for; a command line that is
// wrong exits 2.
func TestHelpExitStatus(t *testing.T) {
	maintest.ExpectExits(t, "usersync", []maintest.Exit{
		{Args: []string{"-h"}, Code: 0, Stderr: "usage: " + apiKeyEnv + "=... usersync -url URL -account ID -file PATH [flags]"},
		{Args: []string{"-help"}, Code: 0, Stderr: "-dry-run"},
		{Args: []string{"-nope"}, Code: 2, Stderr: "flag provided but not defined: -nope"},
		{Args: []string{"-file", "users.csv"}, Code: 2, Stderr: "usersync: -account is required"},
	}, apiKeyEnv+"=")
}
