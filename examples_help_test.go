package procure_test

import (
	"os"
	"path/filepath"
	"regexp"
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
			if strings.Contains(string(b), "func TestHelpExitStatus(") && strings.Contains(string(b), "maintest.ExpectExits(") {
				found = true
			}
		}
		if !found {
			t.Errorf("%s has no TestHelpExitStatus running -h through main (maintest.ExpectExits)", dir)
		}
	}
}

// The walkthroughs (README.md, docs/) start every connector on a port of
// its own, none of them the example server's (8080, and 8081 for its
// admin API): a reader who keeps each step's programs running never meets
// "address already in use". TestREADME runs the README's; this reads the
// docs' too.
func TestWalkthroughPorts(t *testing.T) {
	files, _ := filepath.Glob("docs/*.md")
	files = append(files, "README.md")
	connector := regexp.MustCompile(`(?m)^go run \./examples/connector\b(.*)$`)
	addr := regexp.MustCompile(`-addr \S*:(\d+)`)
	started := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		used := map[string]string{"8080": "the example server", "8081": "the example server's admin API"}
		for _, m := range connector.FindAllStringSubmatch(string(b), -1) {
			if strings.Contains(m[1], "-postgres ") && !strings.Contains(m[1], "-holds-postgres") {
				continue // the customer's database: an alternative to the table, not a step beside it
			}
			started++
			port := "8090"
			if a := addr.FindStringSubmatch(m[1]); a != nil {
				port = a[1]
			}
			if who, ok := used[port]; ok {
				t.Errorf("%s: %q listens on %s, where %s does", f, strings.TrimSpace(m[0]), port, who)
			}
			used[port] = "an earlier connector of the walkthrough"
		}
	}
	if started < 4 {
		t.Errorf("found %d connectors started in the walkthroughs; the README alone starts 4", started)
	}
}
