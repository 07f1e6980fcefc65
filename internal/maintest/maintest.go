// Package maintest runs an example program's main function, exit status
// and all, from the program's own tests: the test binary starts itself
// again as the program. A test of what a user sees - "prog -h prints its
// usage and exits 0" - then goes through main and os.Exit as the user's
// shell does, without building the program first.
//
// The program's TestMain calls Run first:
//
//	func TestMain(m *testing.M) {
//		maintest.Run(main)
//		os.Exit(m.Run())
//	}
//
// and a test calls Exec:
//
//	r := maintest.Exec(t, "-h")
//	if r.Code != 0 { ... }
package maintest

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// envArgs holds the program's arguments, as a JSON array, in the
// environment of a test binary that Exec started to be the program.
const envArgs = "PROCURE_MAINTEST_ARGS"

// Run, when the test binary was started by Exec, runs main with the
// arguments Exec was given and exits (0 when main returns); otherwise it
// returns at once and the tests run.
func Run(main func()) {
	raw, ok := os.LookupEnv(envArgs)
	if !ok {
		return
	}
	var args []string
	if err := json.Unmarshal([]byte(raw), &args); err != nil {
		os.Stderr.WriteString("maintest: " + envArgs + ": " + err.Error() + "\n")
		os.Exit(3)
	}
	os.Args = append([]string{os.Args[0]}, args...)
	main()
	os.Exit(0)
}

// Result is how a run of the program ended.
type Result struct {
	Code           int
	Stdout, Stderr string
}

// Exec runs the program (the test binary, through Run) with args and
// extra environment entries ("NAME=value"), and returns its exit status
// and output. Standard input is empty.
func Exec(tb testing.TB, args []string, env ...string) Result {
	tb.Helper()
	b, err := json.Marshal(args)
	if err != nil {
		tb.Fatal(err)
	}
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(append(os.Environ(), envArgs+"="+string(b)), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	var exit *exec.ExitError
	code := 0
	switch {
	case errors.As(err, &exit):
		code = exit.ExitCode()
	case err != nil:
		tb.Fatalf("running %v: %v", args, err)
	}
	return Result{Code: code, Stdout: out.String(), Stderr: errb.String()}
}

// Exit is a command line and how its run must end: the exit status, a
// text its standard error holds, and nothing on standard output.
type Exit struct {
	Args   []string
	Code   int
	Stderr string
}

// ExpectExits runs each command line of cases through Exec (with env)
// and reports, naming the program prog, every run that did not end as its
// case says. The programs' -h tests use it (the usage goes to standard
// error, and -h exits 0).
func ExpectExits(t *testing.T, prog string, cases []Exit, env ...string) {
	t.Helper()
	for _, c := range cases {
		r := Exec(t, c.Args, env...)
		if r.Code != c.Code || !strings.Contains(r.Stderr, c.Stderr) || r.Stdout != "" {
			t.Errorf("%s %s: exit %d, want %d; standard error must hold %q:\n%s\nstandard output (want none): %.200q",
				prog, strings.Join(c.Args, " "), r.Code, c.Code, c.Stderr, r.Stderr, r.Stdout)
		}
	}
}
