package main

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// The README's section "Operating the server" runs as written: its
// procurectl commands, in order, against an in-process server, with the
// shell variables they set (VAR=$(...), export) carried to the next, and
// each "# ..." line under a command found in its output (the parts
// between "..." in order; text after three spaces is an annotation), as
// the repository's TestREADME checks the whole README in a real shell.
// Lines that start the server, call curl or generate data are the
// shell's: they are skipped here, and so is the import (TestImport
// streams a file).
func TestReadmeWalkthrough(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(readme)
	start := strings.Index(text, "\n## Operating the server\n")
	if start < 0 {
		t.Fatal(`README.md has no section "Operating the server"`)
	}
	section := text[start+1:]
	if end := strings.Index(section, "\n## "); end >= 0 {
		section = section[:end]
	}
	ts := newTestServer(t, true)
	vars := map[string]string{}
	ran := 0
	var last *readmeRun
	for _, line := range shLines(section) {
		switch {
		case strings.HasPrefix(line, "#"):
			if last != nil {
				last.want(t, strings.TrimSpace(strings.TrimPrefix(line, "#")))
			}
			continue
		case strings.HasPrefix(line, "export "):
			for _, kv := range strings.Fields(strings.TrimPrefix(line, "export ")) {
				k, v, _ := strings.Cut(kv, "=")
				vars[k] = v
			}
			last = nil
			continue
		}
		assign, cmd := "", line
		if m := regexp.MustCompile(`^(\w+)=\$\((.*)\)$`).FindStringSubmatch(line); m != nil {
			assign, cmd = m[1], m[2]
		}
		rest, ok := strings.CutPrefix(cmd, "go run ./examples/procurectl ")
		if !ok || strings.HasPrefix(rest, "import ") {
			last = nil
			if assign != "" {
				vars[assign] = "(not run here)"
			}
			continue
		}
		args := shellWords(t, expand(rest, vars))
		for i, a := range args {
			// The README runs in the repository's root; the test, here.
			if _, err := os.Stat("../../" + a); err == nil && strings.Contains(a, "/") {
				args[i] = "../../" + a
			}
		}
		// The README's token and address are the walkthrough server's;
		// here the in-process server's.
		env := map[string]string{envToken: adminToken, envURL: ts.admin.URL}
		if vars[envToken] == "" || vars[envURL] == "" {
			t.Fatalf("%s: the README runs it before exporting %s and %s", line, envToken, envURL)
		}
		r := ts.runEnv(t, env, "", args...)
		if r.code != exitOK {
			t.Fatalf("README command %s: exit %d\n%s%s", line, r.code, r.stdout, r.stderr)
		}
		ran++
		if assign != "" {
			vars[assign] = strings.TrimSpace(r.stdout)
		}
		last = &readmeRun{line: line, out: r.stderr + r.stdout}
	}
	if ran < 12 {
		t.Errorf("ran %d procurectl commands of the README; the walkthrough has more", ran)
	}
	// The rotation ended with the old key deactivated and the new active.
	list := ts.ok(t, "", "key", "list", "-c", "kiwi-nz", "kiwi-hris")
	if !strings.Contains(list, vars["OLD_ID"]+"  inactive") || strings.Count(list, "  active  ") != 1 {
		t.Errorf("after the walkthrough:\n%s", list)
	}
}

type readmeRun struct {
	line, out string
}

// want checks that the output holds w's parts in order.
func (r *readmeRun) want(t *testing.T, w string) {
	t.Helper()
	if i := strings.Index(w, "   "); i >= 0 {
		w = w[:i]
	}
	at := 0
	for _, part := range strings.Split(w, "...") {
		if part = strings.TrimSpace(part); part == "" {
			continue
		}
		i := strings.Index(r.out[at:], part)
		if i < 0 {
			t.Errorf("README command %s: the output does not hold %q (# %s):\n%s", r.line, part, w, r.out)
			return
		}
		at += i + len(part)
	}
}

// shLines returns the lines of the ```sh blocks of a Markdown text.
func shLines(md string) []string {
	var out []string
	in := false
	for _, line := range strings.Split(md, "\n") {
		switch {
		case strings.HasPrefix(line, "```"):
			in = strings.TrimPrefix(line, "```") == "sh" && !in
		case in && strings.TrimSpace(line) != "":
			out = append(out, strings.TrimSpace(line))
		}
	}
	return out
}

// expand replaces $NAME and ${NAME} by their values.
func expand(s string, vars map[string]string) string {
	return os.Expand(s, func(k string) string { return vars[k] })
}

// shellWords splits a command line as the shell would, for the quoting
// the README uses ('...' and "..."); a comment ends it.
func shellWords(t *testing.T, s string) []string {
	t.Helper()
	var words []string
	var cur strings.Builder
	inWord := false
	var quote rune
	for _, c := range s {
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			} else {
				cur.WriteRune(c)
			}
		case c == '\'' || c == '"':
			quote, inWord = c, true
		case c == '#' && !inWord:
			return words
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(c)
			inWord = true
		}
	}
	if quote != 0 {
		t.Fatalf("unclosed quote in %s", s)
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words
}
