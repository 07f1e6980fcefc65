package budget

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"time"
)

// The events of the audit log.
const (
	AuditCheck   = "check"
	AuditRelease = "release"
	AuditConfirm = "confirm"
	AuditExpire  = "expire"
)

// AuditEntry is one record of the audit log (docs: account-codes.md
// "Audit log"): a check, release, confirm or expiry, as it happened.
type AuditEntry struct {
	Time        time.Time `json:"time"`
	Event       string    `json:"event"`
	Caller      string    `json:"caller,omitempty"`
	Requisition string    `json:"requisition,omitempty"`
	// Held reports whether a check holds its amounts now.
	Held bool `json:"held,omitempty"`
	// Changed is how many holds a release, confirm or expiry ended or
	// turned into commitments.
	Changed  int            `json:"changed,omitempty"`
	Accounts []AuditAccount `json:"accounts,omitempty"`
	Lines    []AuditLine    `json:"lines,omitempty"`
}

// AuditAccount is one account of a check, or one hold that ended.
type AuditAccount struct {
	Account string `json:"account"`
	// Amount is what the check allocated to the account (over its lines
	// and splits), or what the hold held.
	Amount string `json:"amount"`
	// Available is the budget less what other requisitions held, before
	// the check; empty when the table has no such account or for a hold
	// that ended.
	Available string `json:"available,omitempty"`
}

// AuditLine is one line's verdict.
type AuditLine struct {
	Line    int    `json:"line"`
	Status  Status `json:"status"`
	Message string `json:"message,omitempty"`
}

// AuditLog receives every audit entry before the reply that it records is
// sent. Record returns an error when the entry could not be kept; the
// caller then fails the request.
type AuditLog interface {
	Record(ctx context.Context, e AuditEntry) error
}

type callerKey struct{}

// WithCaller returns ctx carrying the caller's address, for the audit log.
func WithCaller(ctx context.Context, addr string) context.Context {
	return context.WithValue(ctx, callerKey{}, addr)
}

// CallerOf returns the address WithCaller put in ctx, or "".
func CallerOf(ctx context.Context) string {
	s, _ := ctx.Value(callerKey{}).(string)
	return s
}

// AuditFile is an AuditLog that appends JSON lines to a file. Reopen opens
// the file again at the same path, for log rotation (the connector calls it
// on SIGHUP). It is safe for concurrent use.
type AuditFile struct {
	path string
	mu   sync.Mutex
	f    *os.File
}

// OpenAuditFile opens (creating it when needed) the file at path for
// appending.
func OpenAuditFile(path string) (*AuditFile, error) {
	f, err := openAppend(path)
	if err != nil {
		return nil, err
	}
	return &AuditFile{path: path, f: f}, nil
}

func openAppend(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("audit log: %w", err)
	}
	return f, nil
}

// Record writes e as one line.
func (a *AuditFile) Record(_ context.Context, e AuditEntry) error {
	b, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("audit log: %w", err)
	}
	b = append(b, '\n')
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, err := a.f.Write(b); err != nil {
		return fmt.Errorf("%w: audit log: %w", ErrUnavailable, err)
	}
	return nil
}

// Reopen closes the file and opens the path again. On failure the old
// file stays in use.
func (a *AuditFile) Reopen() error {
	f, err := openAppend(a.path)
	if err != nil {
		return err
	}
	a.mu.Lock()
	old := a.f
	a.f = f
	a.mu.Unlock()
	return old.Close()
}

// Close closes the file.
func (a *AuditFile) Close() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.f.Close()
}
