package httpapi

import (
	"github.com/procurekit/procure/accountcodeapi"
)

// The platform's side of Interface C moved to package accountcodeapi, the
// client of the interface beside userapi, the client of Interface B. These
// names keep existing programs compiling.

// DefaultAccountCodeTimeout is accountcodeapi.DefaultTimeout.
//
// Deprecated: use accountcodeapi.DefaultTimeout.
const DefaultAccountCodeTimeout = accountcodeapi.DefaultTimeout

// AccountCodeClientOptions is accountcodeapi.Options.
//
// Deprecated: use accountcodeapi.Options.
type AccountCodeClientOptions = accountcodeapi.Options

// AccountCodeClient is accountcodeapi.Client.
//
// Deprecated: use accountcodeapi.Client.
type AccountCodeClient = accountcodeapi.Client

// NewAccountCodeClient calls accountcodeapi.New.
//
// Deprecated: use accountcodeapi.New.
func NewAccountCodeClient(rawURL string, opts AccountCodeClientOptions) (*AccountCodeClient, error) {
	return accountcodeapi.New(rawURL, opts)
}
