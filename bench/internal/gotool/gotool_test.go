package gotool_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/procurekit/procure/bench/internal/gotool"
)

func TestModuleRootAndBuild(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	ctx := context.Background()
	root, err := gotool.ModuleRoot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "bench", "internal", "gotool", "gotool.go")); err != nil {
		t.Fatalf("ModuleRoot = %s, which does not hold this package: %v", root, err)
	}
	dir := t.TempDir()
	if err := gotool.Build(ctx, root, dir, "./bench/baseline"); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(dir, "baseline")); err != nil || fi.Mode()&0o111 == 0 {
		t.Fatalf("built binary: %v, %v", fi, err)
	}
	if err := gotool.Build(ctx, root, dir, "./no/such/package"); err == nil {
		t.Fatal("building a missing package succeeded")
	}
}
