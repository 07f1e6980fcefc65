// Package jsontext writes JSON strings exactly as encoding/json does, for
// the hand-written encoders of the library (the supplier API's responses,
// the stored-procedure exchange, the data generator), so that there is one
// escaping routine and it matches the standard library byte for byte;
// and, for the hand-written decoders, Kind, the JSON type of a value as
// encoding/json's errors name it.
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
//
// Runs of plain bytes are skipped eight at a time (plainWord), faster than
// byte by byte (BenchmarkAppendString; figures in bench/README.md).
func AppendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	word := 0 // bytes from here on are tested a word at a time
	for i := 0; i < len(s); {
		if i >= word {
			for i+8 <= len(s) {
				x := uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
					uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
				if !plainWord(x) {
					break
				}
				i += 8
			}
			if i == len(s) {
				break
			}
			word = i + 8 // this word needs a look byte by byte
		}
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

// AppendNonEmpty appends key (a member's name with its punctuation, such
// as `,"email":`) and s as a JSON string, unless s is empty: a string
// member with encoding/json's omitempty option.
func AppendNonEmpty(b []byte, key, s string) []byte {
	if s == "" {
		return b
	}
	b = append(b, key...)
	return AppendString(b, s)
}

// plainWord reports whether none of the eight bytes of x needs escaping:
// all are ASCII, none a control character, '"', '\\', '<', '>' or '&'. It
// tests the eight at once (the "has a zero byte" and "has a byte less
// than n" tests of bit-twiddling lore, which never miss a byte; a false
// alarm only sends the word through the byte-by-byte path).
func plainWord(x uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	bad := x | (x-0x20*ones)&^x // a high bit: not ASCII, or < 0x20
	q := (x | 0x04*ones) ^ 0x26*ones
	bad |= (q - ones) &^ q // '"' (0x22) or '&' (0x26)
	a := (x | 0x02*ones) ^ 0x3e*ones
	bad |= (a - ones) &^ a // '<' (0x3c) or '>' (0x3e)
	e := x ^ '\\'*ones
	bad |= (e - ones) &^ e
	return bad&highs == 0
}
