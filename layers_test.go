package procure_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/procurekit/procure"

// layers ranks every package of the module, bottom first: a package may
// import only packages of a lower layer (never one of its own layer, never
// one above it). So a store never imports another store, a domain package
// never reaches a backend or HTTP, and a new package must be placed here
// before it builds into the map of doc.go. Paths are relative to the
// module; a path ending in "/..." covers the packages below it.
var layers = [][]string{
	// Leaves: helpers that know nothing of the domain.
	{"internal/jsontext", "internal/syncbuf", "internal/pgmigrate", "internal/pgtest",
		"internal/textkey", "internal/wavelet", "internal/fenwick", "internal/blist", "internal/maintest",
		"internal/metricstest", "internal/pgpool", "internal/storemetrics", "internal/cputime", "internal/gcheadroom",
		"bench/internal/..."},
	// The shared error types, Community and this map.
	{"."},
	// What every domain package builds on: paging, and the validator that
	// names fields in the shared ValidationError.
	{"paging", "internal/check"},
	// The domain packages.
	{"supplier", "user", "auth", "budget"},
	// What reads or writes the domain's values: data files, the XML
	// exchange, the in-memory supplier index.
	{"datafile", "internal/acxml", "internal/supplierindex"},
	// Conformance suites, run by every backend.
	{"supplier/suppliertest", "user/usertest", "auth/authtest", "datafile/importtest", "budget/holdstest"},
	// Backends and clients.
	{"memstore", "pgstore", "budget/pgholds", "accountcodeapi", "userapi"},
	// HTTP: what the API packages share, then the API packages, then the
	// package that mounts them all.
	{"httpapi/internal/httpx"},
	{"httpapi/internal/supplierjson", "httpapi/internal/apitest"},
	{"httpapi/suppliers", "httpapi/users", "httpapi/scim", "httpapi/accountcode", "httpapi/health"},
	// The admin API reads suppliers with the supplier API's parameters.
	{"httpapi/admin"},
	{"httpapi"},
	// Programs.
	{"examples/...", "bench/..."},
}

// layerOf returns the layer of the package at rel, or -1.
func layerOf(rel string) int {
	best, bestLen := -1, -1
	for i, l := range layers {
		for _, p := range l {
			switch {
			case p == rel:
				return i
			case strings.HasSuffix(p, "/..."):
				prefix := strings.TrimSuffix(p, "/...")
				if (rel == prefix || strings.HasPrefix(rel, prefix+"/")) && len(prefix) > bestLen {
					best, bestLen = i, len(prefix)
				}
			}
		}
	}
	return best
}

// moduleImports returns, per package directory relative to the module
// root, the module packages its files import: of its non-test files when
// tests is false, of its test files otherwise.
func moduleImports(t *testing.T, tests bool) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); p != "." && (strings.HasPrefix(name, ".") || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") != tests {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		dir := filepath.ToSlash(filepath.Dir(p))
		if _, ok := out[dir]; !ok {
			out[dir] = nil
		}
		for _, im := range f.Imports {
			ip, _ := strconv.Unquote(im.Path.Value)
			if ip == module {
				ip = "."
			} else if rest, ok := strings.CutPrefix(ip, module+"/"); ok {
				ip = rest
			} else {
				continue
			}
			if ip != dir && !slices.Contains(out[dir], ip) {
				out[dir] = append(out[dir], ip)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestLayers checks the library's import graph against layers: every
// package has a layer, and imports only packages of lower layers.
func TestLayers(t *testing.T) {
	if _, err := os.Stat("go.mod"); err != nil {
		t.Fatalf("run from the module root: %v", err)
	}
	for dir, imports := range moduleImports(t, false) {
		l := layerOf(dir)
		if l < 0 {
			t.Errorf("package %s has no layer: place it in layers (layers_test.go) and in doc.go's map", dir)
			continue
		}
		for _, ip := range imports {
			switch il := layerOf(ip); {
			case il < 0:
				t.Errorf("%s imports %s, which has no layer", dir, ip)
			case il >= l:
				t.Errorf("%s (layer %d) imports %s (layer %d): a package may import only packages below it", dir, l, ip, il)
			}
		}
	}
}

// TestStoresApart checks that no store's tests import another store
// either: each store is tested through the conformance suites, never by
// comparing it with the other.
func TestStoresApart(t *testing.T) {
	stores := []string{"memstore", "pgstore", "budget/pgholds"}
	for _, tests := range []bool{false, true} {
		for dir, imports := range moduleImports(t, tests) {
			for _, s := range stores {
				if dir != s && !strings.HasPrefix(dir, s+"/") {
					continue
				}
				for _, ip := range imports {
					if ip != s && slices.Contains(stores, ip) {
						t.Errorf("%s (tests %v) imports the store %s", dir, tests, ip)
					}
				}
			}
		}
	}
}

// TestLayerOf pins the lookup itself, so that a typo in layers cannot
// quietly pass every package.
func TestLayerOf(t *testing.T) {
	for _, c := range []struct {
		rel  string
		want int
	}{
		{".", 1},
		{"supplier", 3},
		{"memstore", 6},
		{"httpapi", 11},
		{"examples/server", 12},
		{"bench/internal/fixture", 0},
		{"nowhere", -1},
		{path.Join("httpapi", "internal", "httpx"), 7},
		{"httpapi/internal/nowhere", -1},
	} {
		if got := layerOf(c.rel); got != c.want {
			t.Errorf("layerOf(%q) = %d, want %d", c.rel, got, c.want)
		}
	}
}
