package datafile

import (
	"io"

	"github.com/procurekit/procure/supplier"
)

// StreamPeak is Stream, returning also the largest read buffer it held.
func StreamPeak(r io.Reader, h Handler) (int, error) { return stream(r, h) }

// SurelyValid is the fast check of a supplier (fastcheck.go).
func SurelyValid(r *supplier.Record) bool { return surelyValid(r) }

// DecodeRecord is the fast decoder of a supplier (fastdecode.go).
func DecodeRecord(raw []byte, r *supplier.Record) bool { return decodeRecord(raw, r, newMemo()) }

// FastCheckUnknown is a rule of the supplier types' tags the fast check
// cannot check ("" when it checks them all).
func FastCheckUnknown() string { return recordPlan().unknown }
