package gcheadroom

import (
	"os"
	"testing"
)

func TestReadLimit(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		content string
		want    uint64
		ok      bool
	}{
		{"max\n", 0, false},
		{"4294967296\n", 4 << 30, true},
		{"0\n", 0, false},
	} {
		f := dir + "/limit"
		if err := os.WriteFile(f, []byte(c.content), 0o600); err != nil {
			t.Fatal(err)
		}
		if v, ok := readLimit(f); v != c.want || ok != c.ok {
			t.Errorf("readLimit(%q) = %d, %v; want %d, %v", c.content, v, ok, c.want, c.ok)
		}
	}
	if _, ok := readLimit(dir + "/missing"); ok {
		t.Error("readLimit of a missing file: ok")
	}
}
