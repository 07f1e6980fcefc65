// Package gotool finds this repository and builds its commands, for the
// benchmark programs under bench/ that run the example programs as
// separate processes.
package gotool

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Module is the module path the programs expect to run in.
const Module = "github.com/procurekit/procure"

// ModuleRoot returns the directory of this repository's go.mod, found with
// `go env GOMOD` from the working directory.
func ModuleRoot(ctx context.Context) (string, error) {
	out, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", errors.New("not inside a Go module: run this from the procure repository")
	}
	b, err := os.ReadFile(gomod)
	if err != nil {
		return "", err
	}
	if first, _, _ := strings.Cut(string(b), "\n"); strings.TrimSpace(first) != "module "+Module {
		return "", fmt.Errorf("%s is not the %s module: run this from the procure repository", gomod, Module)
	}
	return filepath.Dir(gomod), nil
}

// Build compiles packages of the module at root into dir, one binary
// each, named after the package's last path element.
func Build(ctx context.Context, root, dir string, pkgs ...string) error {
	for _, pkg := range pkgs {
		cmd := exec.CommandContext(ctx, "go", "build", "-o", filepath.Join(dir, filepath.Base(pkg)), pkg)
		cmd.Dir = root
		if b, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("go build %s: %w\n%s", pkg, err, b)
		}
	}
	return nil
}
