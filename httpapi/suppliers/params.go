package suppliers

import (
	"time"

	"github.com/procurekit/procure/internal/check"
)

// parseModifiedSince reads the modifiedSince parameter (docs: filters.md). It returns the instant, or a rule in words when v is not
// accepted. Accepted:
//
//   - an RFC 3339 date-time with a UTC offset: 2026-05-01T09:30:00+12:00,
//     2026-05-01T09:30:00Z, with fractional seconds of any length
//     (2026-05-01T09:30:00.123456Z) and, as RFC 3339 allows, a lower-case
//     t or z;
//   - a space where the offset's + belongs (2026-05-01T09:30:00 12:00):
//     an unencoded + in a query string decodes to a space;
//   - a full date, 2026-05-01, meaning 00:00 UTC that day.
//
// Anything else is rejected, strictly to the RFC 3339 grammar: two-digit
// fields, hours 00-23, minutes and seconds 00-59, offsets up to 23:59, and
// a day that exists in its month. Digits of a fraction beyond nanoseconds
// round the instant up, so that `modifiedDate >= value` stays exact. The
// instant, in UTC, must fall within the years 1 to 9999 (check.Instant, the
// rule of every instant the service reads: docs: values.md "Dates"), so
// 9999-12-31T23:30:00-01:00 (year 10000 in UTC) is refused.
func parseModifiedSince(v string) (time.Time, string) {
	t, rule := parseInstantParam(v)
	if rule == "" && !check.Instant(t) {
		return time.Time{}, check.InstantRule
	}
	return t, rule
}

// parseInstantParam is parseModifiedSince but for the range of the years.
func parseInstantParam(v string) (time.Time, string) {
	const (
		ruleFormat = "must be an RFC 3339 date-time with a UTC offset (2026-05-01T09:30:00+12:00 or 2026-05-01T09:30:00Z) or a date (2026-05-01)"
		ruleOffset = "must include a UTC offset: Z or +hh:mm or -hh:mm"
	)
	if len(v) < 10 {
		return time.Time{}, ruleFormat
	}
	year, ok1 := digits(v[0:4])
	month, ok2 := digits(v[5:7])
	day, ok3 := digits(v[8:10])
	if !ok1 || !ok2 || !ok3 || v[4] != '-' || v[7] != '-' || month < 1 || month > 12 || day < 1 || day > daysIn(year, month) {
		return time.Time{}, ruleFormat
	}
	if len(v) == 10 {
		return time.Date(year, time.Month(month), day, 0, 0, 0, 0, time.UTC), ""
	}
	if len(v) < 19 || (v[10] != 'T' && v[10] != 't') || v[13] != ':' || v[16] != ':' {
		return time.Time{}, ruleFormat
	}
	hour, ok1 := digits(v[11:13])
	min, ok2 := digits(v[14:16])
	sec, ok3 := digits(v[17:19])
	if !ok1 || !ok2 || !ok3 || hour > 23 || min > 59 || sec > 59 {
		return time.Time{}, ruleFormat
	}
	rest := v[19:]
	nsec := 0
	if len(rest) > 0 && rest[0] == '.' {
		i := 1
		scale := 100_000_000
		roundUp := false
		for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
			d := int(rest[i] - '0')
			if scale > 0 {
				nsec += d * scale
				scale /= 10
			} else if d != 0 {
				roundUp = true
			}
			i++
		}
		if i == 1 {
			return time.Time{}, ruleFormat
		}
		if roundUp {
			nsec++ // may reach 1e9: time.Date carries it into the seconds
		}
		rest = rest[i:]
	}
	var offset int
	switch {
	case rest == "":
		return time.Time{}, ruleOffset
	case rest == "Z" || rest == "z":
	case len(rest) == 6 && (rest[0] == '+' || rest[0] == '-' || rest[0] == ' ') && rest[3] == ':':
		oh, ok1 := digits(rest[1:3])
		om, ok2 := digits(rest[4:6])
		if !ok1 || !ok2 || oh > 23 || om > 59 {
			return time.Time{}, ruleFormat
		}
		offset = (oh*60 + om) * 60
		if rest[0] == '-' {
			offset = -offset
		}
	default:
		return time.Time{}, ruleFormat
	}
	t := time.Date(year, time.Month(month), day, hour, min, sec, nsec, time.UTC)
	return t.Add(-time.Duration(offset) * time.Second), ""
}

// digits parses a field of ASCII digits; no sign, no space.
func digits(s string) (int, bool) {
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

func daysIn(year, month int) int {
	return time.Date(year, time.Month(month)+1, 0, 0, 0, 0, 0, time.UTC).Day()
}
