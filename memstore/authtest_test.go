package memstore_test

import (
	"testing"

	"github.com/procurekit/procure/auth/authtest"
	"github.com/procurekit/procure/memstore"
)

// The credential, community and budget write side passes the conformance
// suite; one process is its own peer.
func TestCredentialConformance(t *testing.T) {
	authtest.Run(t, authtest.Config{
		New: func(*testing.T) authtest.Store { return memstore.New() },
	})
}
