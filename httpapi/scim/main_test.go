package scim_test

import (
	"os"
	"testing"

	"github.com/procurekit/procure/internal/pgtest"
)

// TestMain stops the PostgreSQL server pgtest starts for the SCIM replays
// on PostgreSQL (replay_test.go).
func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }
