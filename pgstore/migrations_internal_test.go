package pgstore

import (
	"testing"

	"github.com/procurekit/procure/internal/pgmigrate"
)

// The embedded migrations are well-formed and numbered from 1 without gaps.
func TestMigrationsFiles(t *testing.T) {
	ms, err := pgmigrate.Load(migrationFiles)
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range ms {
		if m.Version != i+1 {
			t.Errorf("migration %s: version %d; want %d (no gaps)", m.Name, m.Version, i+1)
		}
	}
}
