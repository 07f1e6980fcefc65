package memstore_test

import (
	"testing"

	"github.com/procurekit/procure/datafile"
	"github.com/procurekit/procure/memstore"
	"github.com/procurekit/procure/user"
	"github.com/procurekit/procure/user/usertest"
)

// openUsers opens a memstore holding f, for the user store conformance
// suite.
func openUsers(t *testing.T, f *datafile.File) user.Store {
	t.Helper()
	s, err := memstore.LoadReader(f.Reader())
	if err != nil {
		t.Fatalf("memstore.LoadReader: %v", err)
	}
	return s
}

func TestUserStore(t *testing.T) {
	usertest.Run(t, openUsers)
}
