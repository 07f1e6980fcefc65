package datafile

import (
	"errors"

	"github.com/procurekit/procure"
	"github.com/procurekit/procure/supplier"
	"github.com/procurekit/procure/user"
)

// invalidError marks an error of Stream that is the data file's fault
// (malformed JSON, a key repeated, no community) and carries no
// *procure.ValidationError: errors.Is(err, procure.ErrInvalid) holds for
// it, so a caller such as the admin API's import tells the file's
// mistakes (a 400) from a failure of the reader or of its Handler (passed
// on unchanged). Its text is the wrapped error's, line included.
type invalidError struct{ err error }

func (e *invalidError) Error() string        { return e.err.Error() }
func (e *invalidError) Unwrap() error        { return e.err }
func (e *invalidError) Is(target error) bool { return target == procure.ErrInvalid }

// handlerGuard remembers the error its Handler returned, so that Stream
// can pass it on unmarked.
type handlerGuard struct {
	h   Handler
	err error
}

func (g *handlerGuard) Supplier(ci, si int, rec *supplier.Record) error {
	if err := g.h.Supplier(ci, si, rec); err != nil {
		g.err = err
		return err
	}
	return nil
}

func (g *handlerGuard) Community(i int, c *Community, n int) error {
	if err := g.h.Community(i, c, n); err != nil {
		g.err = err
		return err
	}
	return nil
}

// users returns the guard as a UserHandler when its Handler is one, and
// nil otherwise.
func (g *handlerGuard) users() UserHandler {
	if _, ok := g.h.(UserHandler); !ok {
		return nil
	}
	return userGuard{g}
}

// userGuard is a handlerGuard whose Handler is a UserHandler.
type userGuard struct{ *handlerGuard }

func (g userGuard) User(ci, ui int, u *user.User) error {
	if err := g.h.(UserHandler).User(ci, ui, u); err != nil {
		g.err = err
		return err
	}
	return nil
}

// markInvalid marks err as the file's fault unless it is nil, the
// handler's error herr, the reader's error rerr, or matches
// procure.ErrInvalid already.
func markInvalid(err, herr, rerr error) error {
	switch {
	case err == nil, errors.Is(err, procure.ErrInvalid),
		herr != nil && errors.Is(err, herr), rerr != nil && errors.Is(err, rerr):
		return err
	}
	return &invalidError{err}
}
