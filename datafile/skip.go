package datafile

import "fmt"

// maxSkipDepth is how deeply the arrays and objects of a skipped value may
// nest: encoding/json's own limit, so that skip accepts what json.Valid
// accepts.
const maxSkipDepth = 10000

// skip reads the next value, the value of a key a data file does not have,
// and checks that it is valid JSON as encoding/json's json.Valid does,
// without holding it: it reads the value token by token and lets the
// scanner drop each buffer it has passed, so a value of any size costs
// the scanner's read buffer and a byte per level of nesting. path names
// the value for an error at the end of input.
func (sc *scanner) skip(path string) error {
	if !sc.ws() {
		return sc.endError(path)
	}
	var stack []byte // the open arrays ('[') and objects ('{')
	for {
		// At the start of a value.
		if !sc.ws() {
			return sc.endError(path)
		}
		switch c := sc.buf[sc.i]; c {
		case '{', '[':
			if len(stack) == maxSkipDepth {
				p := sc.pos()
				return fmt.Errorf("line %s: malformed JSON: exceeded max depth", p)
			}
			stack = append(stack, c)
			sc.i++
			if !sc.ws() {
				return sc.endError(path)
			}
			closing := byte(']')
			if c == '{' {
				closing = '}'
			}
			if sc.buf[sc.i] == closing {
				sc.i++
				stack = stack[:len(stack)-1]
				break
			}
			if c == '{' {
				if err := sc.skipKey(path); err != nil {
					return err
				}
			}
			continue // the first element or member's value
		case '"':
			sc.i++
			if err := sc.skipString(path); err != nil {
				return err
			}
		case 't':
			if err := sc.skipLiteral("true", path); err != nil {
				return err
			}
		case 'f':
			if err := sc.skipLiteral("false", path); err != nil {
				return err
			}
		case 'n':
			if err := sc.skipLiteral("null", path); err != nil {
				return err
			}
		default:
			if c == '-' || '0' <= c && c <= '9' {
				if err := sc.skipNumber(path); err != nil {
					return err
				}
				break
			}
			return sc.syntax("looking for beginning of value")
		}
		// After a value: close what is complete, or read the separator
		// to the next value.
		for {
			if len(stack) == 0 {
				return nil
			}
			if !sc.ws() {
				return sc.endError(path)
			}
			top := stack[len(stack)-1]
			c := sc.buf[sc.i]
			if c == ',' {
				sc.i++
				if top == '{' {
					if !sc.ws() {
						return sc.endError(path)
					}
					if err := sc.skipKey(path); err != nil {
						return err
					}
				}
				break
			}
			if top == '[' && c == ']' || top == '{' && c == '}' {
				sc.i++
				stack = stack[:len(stack)-1]
				continue
			}
			if top == '[' {
				return sc.syntax("after array element")
			}
			return sc.syntax("after object key:value pair")
		}
	}
}

// peek makes sure a byte is there to read; false at the end of input.
// Bytes before the scanner's position may go.
func (sc *scanner) peek() bool {
	return sc.i < len(sc.buf) || sc.more(sc.i)
}

// skipKey reads an object key and its colon (white space skipped before
// the key).
func (sc *scanner) skipKey(path string) error {
	if sc.buf[sc.i] != '"' {
		return sc.syntax("looking for beginning of object key string")
	}
	sc.i++
	if err := sc.skipString(path); err != nil {
		return err
	}
	if !sc.ws() {
		return sc.endError(path)
	}
	if sc.buf[sc.i] != ':' {
		return sc.syntax("after object key")
	}
	sc.i++
	return nil
}

// skipString reads the rest of a string whose opening quote is read.
func (sc *scanner) skipString(path string) error {
	for {
		if !sc.peek() {
			return sc.endError(path)
		}
		for sc.i < len(sc.buf) {
			c := sc.buf[sc.i]
			switch {
			case c == '"':
				sc.i++
				return nil
			case c == '\\':
				sc.i++
				if err := sc.skipEscape(path); err != nil {
					return err
				}
				continue
			case c < 0x20:
				return sc.syntax("in string literal")
			}
			sc.i++
		}
	}
}

// skipEscape reads an escape whose backslash is read.
func (sc *scanner) skipEscape(path string) error {
	if !sc.peek() {
		return sc.endError(path)
	}
	switch sc.buf[sc.i] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		sc.i++
		return nil
	case 'u':
		sc.i++
		for range 4 {
			if !sc.peek() {
				return sc.endError(path)
			}
			c := sc.buf[sc.i]
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
				return sc.syntax("in \\u hexadecimal character escape")
			}
			sc.i++
		}
		return nil
	}
	return sc.syntax("in string escape code")
}

// skipLiteral reads true, false or null.
func (sc *scanner) skipLiteral(lit, path string) error {
	sc.i++
	for k := 1; k < len(lit); k++ {
		if !sc.peek() {
			return sc.endError(path)
		}
		if sc.buf[sc.i] != lit[k] {
			return sc.syntax(fmt.Sprintf("in literal %s (expecting %s)", lit, quoteChar(lit[k])))
		}
		sc.i++
	}
	return nil
}

// skipNumber reads a number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (sc *scanner) skipNumber(path string) error {
	digit := func() bool { return sc.peek() && '0' <= sc.buf[sc.i] && sc.buf[sc.i] <= '9' }
	digits := func() {
		for digit() {
			sc.i++
		}
	}
	// need reads at least one digit, or fails as encoding/json does.
	need := func(what string) error {
		if !sc.peek() {
			return sc.endError(path)
		}
		if !digit() {
			return sc.syntax(what)
		}
		digits()
		return nil
	}
	if sc.buf[sc.i] == '-' {
		sc.i++
	}
	if !sc.peek() {
		return sc.endError(path)
	}
	switch c := sc.buf[sc.i]; {
	case c == '0':
		sc.i++
	case '1' <= c && c <= '9':
		digits()
	default:
		return sc.syntax("in numeric literal")
	}
	if sc.peek() && sc.buf[sc.i] == '.' {
		sc.i++
		if err := need("after decimal point in numeric literal"); err != nil {
			return err
		}
	}
	if sc.peek() && (sc.buf[sc.i] == 'e' || sc.buf[sc.i] == 'E') {
		sc.i++
		if sc.peek() && (sc.buf[sc.i] == '+' || sc.buf[sc.i] == '-') {
			sc.i++
		}
		if err := need("in exponent of numeric literal"); err != nil {
			return err
		}
	}
	return nil
}
