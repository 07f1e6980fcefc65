package check

import "strings"

// PlainEmail reports whether s is an e-mail address of the plain ASCII
// shape nearly every real address has, one that the validator's "email"
// rule (the one e-mail rule of the library: net/mail.ParseAddress and the
// validator's RFC 5322 expression) surely accepts: a local part of
// dot-separated non-empty runs of letters, digits, '_', '+' and '-'; a
// domain of two or more dot-separated labels of letters, digits and inner
// hyphens, the last all letters and at least two long.
//
// It is the shared fast path of the hand-written checks that skip the
// validator (datafile's records, user.plainlyValid): false means "ask the
// validator", never "invalid". FuzzPlainEmail holds it to that.
func PlainEmail(s string) bool {
	at := strings.IndexByte(s, '@')
	if at <= 0 {
		return false
	}
	local, domain := s[:at], s[at+1:]
	prev := byte('.') // no leading dot, no two dots in a row
	for i := 0; i < len(local); i++ {
		c := local[i]
		switch {
		case c == '.':
			if prev == '.' {
				return false
			}
		case alnum(c) || c == '_' || c == '+' || c == '-':
		default:
			return false
		}
		prev = c
	}
	if prev == '.' {
		return false
	}
	labels := 0
	for domain != "" {
		label, rest, more := strings.Cut(domain, ".")
		if label == "" || !alnum(label[0]) || !alnum(label[len(label)-1]) {
			return false
		}
		for i := 1; i < len(label)-1; i++ {
			if !alnum(label[i]) && label[i] != '-' {
				return false
			}
		}
		labels++
		if !more {
			// The top-level label: letters only, two or more.
			if len(label) < 2 {
				return false
			}
			for i := 0; i < len(label); i++ {
				if c := label[i] | 0x20; c < 'a' || c > 'z' {
					return false
				}
			}
		} else if rest == "" {
			return false // a trailing dot
		}
		domain = rest
	}
	return labels >= 2
}

func alnum(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}
