package procure_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/procurekit/procure/internal/pgtest"
	"github.com/procurekit/procure/internal/syncbuf"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// TestREADME runs the README's shell commands as a reader would, in order,
// in one shell, against the example programs built from this tree: every
// ```sh block, except one marked <!-- readme-test: skip (why) --> on the
// line before it, and except `go run ./examples/server` (the test runs it
// itself, on free ports that replace 8080, 8081 and 8090 in the commands)
// and `go test` (this is it). The connector runs in the background, as in
// a second terminal. A command must exit 0, and the output must hold each
// "# ..." line written under it, the parts between "..." in order (text
// after three spaces is an annotation). The embedding block makes a module
// of its own, the Go program after it is its main.go, and the block after
// that runs in the module (it must build it), as a reader would. A
// connector started with -addr listens there (8091 to 8094 are other free
// ports); one started on a port where an earlier one still listens is an
// error, as a reader who kept the earlier one running would meet it
// ("address already in use"). `export HOLDS_DSN=...`
// is given a throwaway PostgreSQL database instead (internal/pgtest), so
// the test needs PostgreSQL, as the store tests do.
func TestREADME(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the example programs")
	}
	for _, tool := range []string{"bash", "curl", "sed"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s is missing (.ci/run installs it)", tool)
			}
			t.Skipf("%s is missing", tool)
		}
	}
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := shellBlocks(string(readme))
	if len(blocks) < 5 {
		t.Fatalf("found %d shell blocks in README.md", len(blocks))
	}

	root, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	mains, _ := filepath.Glob("examples/*/main.go")
	for _, m := range mains {
		dir := filepath.Dir(m)
		out, err := exec.Command("go", "build", "-o", filepath.Join(bin, filepath.Base(dir)), "./"+dir).CombinedOutput()
		if err != nil {
			t.Fatalf("go build ./%s: %v\n%s", dir, err, out)
		}
	}
	ports := map[string]string{}
	for _, p := range []string{"8080", "8081", "8090", "8091", "8092", "8093", "8094"} {
		ports[p] = freePort(t)
	}
	adminToken := "readme-admin-token"
	if m := regexp.MustCompile(`PROCURE_ADMIN_TOKEN=([^\s"']+)`).FindStringSubmatch(string(readme)); m != nil {
		adminToken = m[1]
	}

	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	server := exec.CommandContext(ctx, filepath.Join(bin, "server"), "-addr", "127.0.0.1:"+ports["8080"], "-admin-addr", "127.0.0.1:"+ports["8081"])
	server.Env = append(os.Environ(), "PROCURE_ADMIN_TOKEN="+adminToken)
	serverLog := &syncbuf.Buffer{}
	server.Stdout, server.Stderr = serverLog, serverLog
	srv := start(t, server)
	t.Cleanup(func() { cancel(); <-srv.done })
	srv.waitPort(t, ports["8080"])
	waitReadyz(t, "http://127.0.0.1:"+ports["8080"]+"/readyz") // it listens before its data has loaded

	sh := newShell(t, root, bin)
	work := t.TempDir() // where the embedding block makes its module
	if err := os.Symlink(root, filepath.Join(work, "procure")); err != nil {
		t.Fatal(err)
	}
	inModule, built := false, false
	for _, b := range blocks {
		if b.skip {
			continue
		}
		if b.module {
			sh.run(t, "cd "+shellQuote(work), nil)
		}
		for _, c := range b.commands {
			cmd := c.text
			for from, to := range ports {
				cmd = strings.ReplaceAll(cmd, "127.0.0.1:"+from, "127.0.0.1:"+to)
			}
			switch {
			case strings.HasPrefix(cmd, "go test"):
				continue
			case regexp.MustCompile(`^(\S+=\S+ )*go run \./examples/server\b`).MatchString(cmd):
				continue // running already
			case strings.HasPrefix(cmd, "go run ./examples/connector"):
				port := ports["8090"]
				if m := regexp.MustCompile(`-addr 127\.0\.0\.1:(\d+)`).FindStringSubmatch(cmd); m != nil {
					port = m[1] // a later -addr overrides the one put first
				}
				cmd = strings.Replace(cmd, "go run ./examples/connector", `"$BIN/connector" -addr 127.0.0.1:`+ports["8090"], 1)
				sh.background(t, cmd, port)
				continue
			case regexp.MustCompile(`^export HOLDS_DSN=\S+$`).MatchString(cmd):
				cmd = "export HOLDS_DSN=" + shellQuote(pgtest.NewDatabase(t))
			}
			cmd = regexp.MustCompile(`go run \./examples/(\w+)`).ReplaceAllString(cmd, `"$$BIN/$1"`)
			sh.run(t, cmd, c.want)
		}
		switch {
		case b.module:
			if b.program == "" {
				t.Fatal("the module block is not followed by a Go program")
			}
			sh.write(t, "main.go", b.program)
			inModule = true // the next block builds it, in the module
		case inModule:
			sh.run(t, "cd "+shellQuote(root), nil)
			inModule, built = false, true
		}
	}
	if !built {
		t.Error("the README never builds the embedding module's program (a block after the Go program)")
	}
	if t.Failed() {
		t.Logf("server log:\n%s", serverLog.String())
	}
}

type readmeBlock struct {
	commands []readmeCommand
	skip     bool
	module   bool   // the block makes a Go module (go mod init)
	program  string // the ```go block that follows a module block
}

type readmeCommand struct {
	text string
	want []string // the "# ..." lines under it
}

// shellBlocks returns the ```sh blocks of a Markdown text.
func shellBlocks(md string) []readmeBlock {
	var blocks []readmeBlock
	lines := strings.Split(md, "\n")
	prev := ""
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if !strings.HasPrefix(line, "```") {
			if strings.TrimSpace(line) != "" {
				prev = line
			}
			continue
		}
		lang := strings.TrimPrefix(line, "```")
		var body []string
		for i++; i < len(lines) && !strings.HasPrefix(lines[i], "```"); i++ {
			body = append(body, lines[i])
		}
		switch {
		case lang == "sh":
			b := readmeBlock{commands: splitCommands(body), skip: strings.HasPrefix(prev, "<!-- readme-test: skip")}
			b.module = strings.Contains(strings.Join(body, "\n"), "go mod init")
			blocks = append(blocks, b)
		case lang == "go" && len(blocks) > 0 && blocks[len(blocks)-1].module && blocks[len(blocks)-1].program == "":
			blocks[len(blocks)-1].program = strings.Join(body, "\n") + "\n"
		}
		prev = line
	}
	return blocks
}

// splitCommands splits a block into commands (a command continues over
// lines while a quote is open or the line ends with a backslash), each
// with the comment lines under it.
func splitCommands(body []string) []readmeCommand {
	var cmds []readmeCommand
	var cur strings.Builder
	open := false // inside a quote at the end of the last line
	for _, line := range body {
		if !open && cur.Len() == 0 {
			trimmed := strings.TrimSpace(line)
			if trimmed == "" {
				continue
			}
			if strings.HasPrefix(trimmed, "#") {
				if len(cmds) > 0 {
					want := strings.TrimSpace(strings.TrimPrefix(trimmed, "#"))
					if i := strings.Index(want, "   "); i >= 0 {
						want = want[:i]
					}
					cmds[len(cmds)-1].want = append(cmds[len(cmds)-1].want, want)
				}
				continue
			}
		}
		cur.WriteString(line)
		cur.WriteString("\n")
		open = quoteOpen(cur.String())
		if !open && !strings.HasSuffix(line, `\`) {
			cmds = append(cmds, readmeCommand{text: strings.TrimSpace(cur.String())})
			cur.Reset()
		}
	}
	return cmds
}

// quoteOpen reports whether s ends inside a shell quote.
func quoteOpen(s string) bool {
	var q byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case q == '\'':
			if c == '\'' {
				q = 0
			}
		case c == '\\':
			i++
		case q == '"':
			if c == '"' {
				q = 0
			}
		case c == '\'' || c == '"':
			q = c
		case c == '#' && (i == 0 || s[i-1] == ' '):
			// A comment runs to the end of the line.
			for i < len(s) && s[i] != '\n' {
				i++
			}
		}
	}
	return q != 0
}

// shell is one bash process that runs the commands in turn, so that
// variables and the directory carry over as in a terminal.
type shell struct {
	in   io.Writer
	out  *bufio.Reader
	bg   []*proc
	env  []string
	root string
}

func newShell(t *testing.T, root, bin string) *shell {
	t.Helper()
	cmd := exec.Command("bash", "--norc", "--noprofile")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "BIN="+bin)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sh := &shell{in: in, out: bufio.NewReader(pr), root: root, env: cmd.Env}
	t.Cleanup(func() {
		for _, b := range sh.bg {
			b.stop()
		}
		in.Close()
		_ = cmd.Wait()
		pw.Close()
	})
	return sh
}

const doneMarker = "__readme_done__"

// run runs cmd and checks its exit status and output.
func (sh *shell) run(t *testing.T, cmd string, want []string) {
	t.Helper()
	if _, err := fmt.Fprintf(sh.in, "{\n%s\n} </dev/null 2>&1; echo; echo %s $?\n", cmd, doneMarker); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	deadline := time.AfterFunc(2*time.Minute, func() { t.Errorf("command still running after 2 minutes: %s", cmd) })
	defer deadline.Stop()
	for {
		line, err := sh.out.ReadString('\n')
		if err != nil {
			t.Fatalf("the shell ended during %s: %v\n%s", cmd, err, out.String())
		}
		if rest, ok := strings.CutPrefix(line, doneMarker+" "); ok {
			if status := strings.TrimSpace(rest); status != "0" {
				t.Errorf("README command exited %s:\n%s\noutput:\n%s", status, cmd, out.String())
			}
			break
		}
		out.WriteString(line)
	}
	got := out.String()
	for _, w := range want {
		at := 0
		for _, part := range strings.Split(w, "...") {
			part = strings.TrimSpace(part)
			if part == "" {
				continue
			}
			i := strings.Index(got[at:], part)
			if i < 0 {
				t.Errorf("README command:\n%s\noutput does not hold %q (from the line # %s):\n%s", cmd, part, w, got)
				break
			}
			at += i + len(part)
		}
	}
}

// background starts cmd as a second terminal would, and waits until it
// listens on port. A program started earlier on the same port is a
// walkthrough that collides with itself: an error (the earlier one is
// stopped, so that the rest still runs).
func (sh *shell) background(t *testing.T, cmd, port string) {
	t.Helper()
	sh.bg = slices.DeleteFunc(sh.bg, func(b *proc) bool {
		if b.port == port {
			t.Errorf("README: %s starts on a port where %v still listens: a reader who keeps the earlier one running gets \"address already in use\"", cmd, b.cmd.Args)
			b.stop()
			return true
		}
		return false
	})
	c := exec.Command("bash", "-c", "exec "+cmd)
	c.Dir = sh.root
	c.Env = append([]string{}, sh.env...)
	// The variables the commands so far exported, as a second terminal
	// where the reader exported them too would have them.
	for _, kv := range []string{"PROCURE_CONNECTOR_TOKEN", "PROCURE_ADMIN_TOKEN", "PROCURE_API_KEY", "HOLDS_DSN"} {
		if v, ok := sh.lookup(t, kv); ok {
			c.Env = append(c.Env, kv+"="+v)
		}
	}
	out := &syncbuf.Buffer{}
	c.Stdout, c.Stderr = out, out
	p := start(t, c)
	p.port = port
	sh.bg = append(sh.bg, p)
	p.waitPort(t, port)
}

// lookup reads a variable of the shell.
func (sh *shell) lookup(t *testing.T, name string) (string, bool) {
	t.Helper()
	if _, err := fmt.Fprintf(sh.in, "echo \"%s ${%s+set} ${%s}\"\n", doneMarker, name, name); err != nil {
		t.Fatal(err)
	}
	line, err := sh.out.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	f := strings.SplitN(strings.TrimSuffix(strings.TrimPrefix(line, doneMarker+" "), "\n"), " ", 2)
	if len(f) < 2 || f[0] != "set" {
		return "", false
	}
	return f[1], true
}

// write writes a file in the shell's directory.
func (sh *shell) write(t *testing.T, name, content string) {
	t.Helper()
	sh.run(t, "cat > "+name+" <<'README_EOF'\n"+content+"README_EOF", nil)
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return fmt.Sprint(l.Addr().(*net.TCPAddr).Port)
}

// proc is a program started in the background.
type proc struct {
	cmd  *exec.Cmd
	done chan struct{} // closed when it has exited
	port string        // where a background program listens
}

func start(t *testing.T, cmd *exec.Cmd) *proc {
	t.Helper()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &proc{cmd: cmd, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		close(p.done)
	}()
	return p
}

func (p *proc) stop() {
	_ = p.cmd.Process.Kill()
	<-p.done
}

// waitReadyz waits until url (a /readyz) answers 200.
func waitReadyz(t *testing.T, url string) {
	t.Helper()
	for start := time.Now(); time.Since(start) < 30*time.Second; time.Sleep(50 * time.Millisecond) {
		res, err := http.Get(url)
		if err != nil {
			continue
		}
		res.Body.Close()
		if res.StatusCode == http.StatusOK {
			return
		}
	}
	t.Fatalf("%s never answered 200", url)
}

// waitPort waits until something listens on port, failing if the program
// exits first.
func (p *proc) waitPort(t *testing.T, port string) {
	t.Helper()
	for start := time.Now(); time.Since(start) < 30*time.Second; time.Sleep(50 * time.Millisecond) {
		select {
		case <-p.done:
			out := ""
			if b, ok := p.cmd.Stdout.(*syncbuf.Buffer); ok {
				out = b.String()
			}
			t.Fatalf("%v exited before listening:\n%s", p.cmd.Args, out)
		default:
		}
		c, err := net.Dial("tcp", "127.0.0.1:"+port)
		if err == nil {
			c.Close()
			return
		}
	}
	t.Fatalf("nothing listens on %s after 30 s: %v", port, p.cmd.Args)
}
