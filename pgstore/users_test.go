package pgstore_test

import (
	"testing"

	"github.com/procurekit/procure/datafile"
	"github.com/procurekit/procure/user"
	"github.com/procurekit/procure/user/usertest"
)

// The user conformance suite, unchanged: pgstore behaves as memstore.
func TestUserStoreConformance(t *testing.T) {
	inSetups(t, func(t *testing.T, su setup) {
		usertest.Run(t, func(t *testing.T, f *datafile.File) user.Store {
			s, _ := openIn(t, su, f)
			return s
		})
	})
}
