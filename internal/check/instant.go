package check

import "time"

// The instants the service accepts, stores and writes: the years 1 to 9999
// in UTC. RFC 3339, and so every date-time on the wire, has a four-digit
// year; an instant outside these years (9999-12-31T23:30:00-01:00 is in
// year 10000 in UTC) could be stored but never written back, and every
// read of it would fail (docs: values.md "Dates").
var (
	// MinInstant is the first instant accepted: 0001-01-01T00:00:00Z.
	MinInstant = time.Date(1, time.January, 1, 0, 0, 0, 0, time.UTC)
	// MaxInstant is the last instant accepted, to the nanosecond; a store
	// keeps microseconds, so the last one it holds is
	// 9999-12-31T23:59:59.999999Z.
	MaxInstant = time.Date(9999, time.December, 31, 23, 59, 59, 999_999_999, time.UTC)
)

// InstantRule words the rule Instant checks, for the field that breaks it.
const InstantRule = "must be a date-time within the years 1 to 9999 in UTC (0001-01-01T00:00:00Z to 9999-12-31T23:59:59.999999Z)"

// Instant reports whether t, converted to UTC, falls within the years 1 to
// 9999. It is the one definition of that rule: the validator tag
// "instant", the data file's fast path and every hand-written check of an
// instant (query parameters, token expiry) call it.
func Instant(t time.Time) bool {
	return !t.Before(MinInstant) && !t.After(MaxInstant)
}
