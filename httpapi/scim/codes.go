package scim

import (
	"bytes"
	"encoding/json"

	"github.com/procurekit/procure/user"
)

// The coded lists of a SCIM PATCH in one pass. A 1 MiB PATCH may carry a
// hundred thousand codes; encoding/json decodes them through reflection
// at several times the cost of reading them, which
// BenchmarkSCIMPatchWorstCase shows. scanCodes reads the two forms
// identity providers send - ["A", "B"] and [{"code": "A"}] - when every
// string is plain (no escapes), and leaves anything else to
// encoding/json; TestScanCodesAgreesWithJSON holds the two to one result.

// scanCodes reads value, a JSON array already known to be valid JSON and
// valid UTF-8 (the PATCH body was checked whole), as a coded list. n is
// the number of entries; codes holds them only when n is at most limit
// (a longer list is refused without keeping its entries). ok is false
// when value is not in a form scanCodes reads: the caller decodes it with
// encoding/json.
func scanCodes(value []byte, limit int) (codes []user.Code, n int, ok bool) {
	s := scanner{b: value}
	if !s.byte('[') {
		return nil, 0, false
	}
	if s.byte(']') {
		return []user.Code{}, 0, s.end()
	}
	for {
		var code []byte
		switch {
		case s.peek('"'):
			if code, ok = s.plainString(); !ok {
				return nil, 0, false
			}
		case s.byte('{'):
			if key, ok := s.plainString(); !ok || string(key) != "code" || !s.byte(':') {
				return nil, 0, false
			}
			if code, ok = s.plainString(); !ok || !s.byte('}') {
				return nil, 0, false
			}
		default:
			return nil, 0, false
		}
		n++
		if n <= limit {
			codes = append(codes, user.Code{Code: string(code)})
		} else {
			codes = nil
		}
		if s.byte(']') {
			return codes, n, s.end()
		}
		if !s.byte(',') {
			return nil, 0, false
		}
	}
}

// scanner reads JSON tokens from b, skipping white space before each.
type scanner struct {
	b []byte
	i int
}

func (s *scanner) space() {
	for s.i < len(s.b) && (s.b[s.i] == ' ' || s.b[s.i] == '\t' || s.b[s.i] == '\n' || s.b[s.i] == '\r') {
		s.i++
	}
}

// peek reports whether c is the next byte after white space.
func (s *scanner) peek(c byte) bool {
	s.space()
	return s.i < len(s.b) && s.b[s.i] == c
}

// byte consumes c when it is the next byte after white space.
func (s *scanner) byte(c byte) bool {
	if s.peek(c) {
		s.i++
		return true
	}
	return false
}

// plainString consumes a string without escapes and returns its bytes.
func (s *scanner) plainString() ([]byte, bool) {
	if !s.byte('"') {
		return nil, false
	}
	j := bytes.IndexByte(s.b[s.i:], '"')
	if j < 0 {
		return nil, false
	}
	str := s.b[s.i : s.i+j]
	if bytes.IndexByte(str, '\\') >= 0 {
		return nil, false
	}
	for _, c := range str {
		if c < 0x20 {
			return nil, false // a control character: not valid JSON text
		}
	}
	s.i += j + 1
	return str, true
}

// end reports whether only white space is left.
func (s *scanner) end() bool {
	s.space()
	return s.i == len(s.b)
}

// decodeCodesJSON is scanCodes's result through encoding/json: the entries
// of an array of strings or {"code": ...} objects.
func decodeCodesJSON(value []byte) ([]user.Code, int, error) {
	var raw []json.RawMessage
	if err := json.Unmarshal(value, &raw); err != nil {
		return nil, 0, err
	}
	codes, err := decodeCodeEntries(raw)
	return codes, len(raw), err
}
