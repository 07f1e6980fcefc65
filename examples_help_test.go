package procure_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Every example program tests that -h prints its usage and exits 0
// through its main (internal/maintest): a program added without such a
// test fails here.
func TestEveryExampleTestsHelp(t *testing.T) {
	mains, err := filepath.Glob("examples/*/main.go")
	if err != nil || len(mains) == 0 {
		t.Fatalf("no example programs: %v", err)
	}
	for _, m := range mains {
		dir := filepath.Dir(m)
		tests, _ := filepath.Glob(filepath.Join(dir, "*_test.go"))
		found := false
		for _, f := range tests {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(b), "func TestHelpExitStatus(") && strings.Contains(string(b), "maintest.Exec(") {
				found = true
			}
		}
		if !found {
			t.Errorf("%s has no TestHelpExitStatus running -h through main (internal/maintest)", dir)
		}
	}
}
