// Package jsontext writes JSON strings exactly as encoding/json does, for
// the hand-written encoders of the library (the supplier API's responses,
// the stored-procedure exchange, the data generator), so that there is one
// escaping routine and it matches the standard library byte for byte.
package jsontext

import "unicode/utf8"

// hexDigits are the digits of \u escapes, lower-case as encoding/json
// writes them.
const hexDigits = "0123456789abcdef"

// needsEscape marks the ASCII bytes encoding/json escapes in a string:
// control characters, the quote, the backslash and, for embedding in HTML,
// <, > and &.
var needsEscape = func() (t [utf8.RuneSelf]bool) {
	for c := range 0x20 {
		t[c] = true
	}
	t['"'], t['\\'], t['<'], t['>'], t['&'] = true, true, true, true, true
	return t
}()

// AppendString appends s as a JSON string exactly as encoding/json escapes
// it (with HTML escaping on): \" \\ \b \f \n \r \t, other control
// characters and < > & as \u00XX, invalid UTF-8 as \ufffd, and U+2028 and
// U+2029 as \u2028 and \u2029.
func AppendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if !needsEscape[c] {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
