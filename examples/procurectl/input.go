package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"unicode/utf8"
)

// maxInputBytes is the admin API's bound on one body (1 MiB,
// httpapi.MaxAdminBodyBytes); a larger file is refused before it is sent.
const maxInputBytes = 1 << 20

// input is a JSON file given to a put command, kept whole so that errors
// can name its lines.
type input struct {
	name string // the file name as given, or "stdin"
	data []byte
}

// readInput reads the file arg, or standard input when arg is "" or "-".
func readInput(e *env, arg string) (*input, error) {
	in := &input{name: arg}
	var r io.Reader
	if arg == "" || arg == "-" {
		in.name, r = "stdin", e.stdin
	} else {
		f, err := os.Open(arg)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	}
	data, err := io.ReadAll(io.LimitReader(r, maxInputBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", in.name, err)
	}
	if len(data) > maxInputBytes {
		return nil, fmt.Errorf("%s: larger than 1 MiB, the admin API's bound for one body (procurectl import takes data files of any size)", in.name)
	}
	in.data = data
	return in, nil
}

// object checks that the input is exactly one JSON object and returns its
// members. A syntax error is reported at its line and column.
func (in *input) object() (map[string]json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(in.data))
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		return nil, in.decodeError(err)
	}
	var extra json.RawMessage
	if err := dec.Decode(&extra); err != io.EOF {
		off := skipSpace(in.data, dec.InputOffset())
		if err == nil {
			off = skipSpace(in.data, dec.InputOffset()-int64(len(extra)))
		}
		return nil, in.errorAt(off, "unexpected data after the JSON object (one object per file)")
	}
	start := skipSpace(in.data, 0)
	if raw[0] != '{' {
		return nil, in.errorAt(start, "want a JSON object, got "+kindOf(raw[0]))
	}
	if !utf8.Valid(in.data) {
		return nil, in.errorAt(int64(firstInvalidUTF8(in.data)), "not valid UTF-8")
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, in.decodeError(err)
	}
	return m, nil
}

// decodeError places a decoding error at its line and column.
func (in *input) decodeError(err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		// Offset counts the bytes read, the offending one included.
		return in.errorAt(max(syn.Offset-1, 0), syn.Error())
	case errors.As(err, &typ):
		return in.errorAt(typ.Offset, err.Error())
	case errors.Is(err, io.EOF):
		return fmt.Errorf("%s: empty: want a JSON object", in.name)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return in.errorAt(int64(len(in.data)), "unexpected end of JSON input")
	}
	return fmt.Errorf("%s: %w", in.name, err)
}

// errorAt is an error "name:line:col: msg" for the byte at off.
func (in *input) errorAt(off int64, msg string) error {
	line, col := position(in.data, off)
	return fmt.Errorf("%s:%d:%d: %s", in.name, line, col, msg)
}

// position turns a byte offset into a line and a column, both counted
// from 1; the column counts characters, not bytes.
func position(data []byte, off int64) (line, col int) {
	off = min(max(off, 0), int64(len(data)))
	before := data[:off]
	line = 1 + bytes.Count(before, []byte{'\n'})
	lineStart := bytes.LastIndexByte(before, '\n') + 1
	return line, 1 + utf8.RuneCount(before[lineStart:])
}

func skipSpace(data []byte, off int64) int64 {
	for off < int64(len(data)) {
		switch data[off] {
		case ' ', '\t', '\r', '\n':
			off++
		default:
			return off
		}
	}
	return off
}

func firstInvalidUTF8(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return len(b)
}

func kindOf(c byte) string {
	switch c {
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// refused turns the server's 400 about a body read from in into an error
// at the line and column of the first field it names; prefix is the
// body's own path in the file ("contacts[2]"), empty for the whole file.
// Other errors are returned as they are, with the file's name.
func (in *input) refused(err error, prefix string) error {
	se, ok := asServerError(err)
	if !ok || se.status != 400 {
		return err
	}
	field, _, found := strings.Cut(se.message, ": ")
	if !found || strings.ContainsAny(field, " ") {
		field = ""
	}
	if prefix != "" {
		field = strings.TrimSuffix(prefix+"."+field, ".")
		field = strings.ReplaceAll(field, ".[", "[")
	}
	off, ok := locate(in.data, field)
	if !ok {
		return fmt.Errorf("%s: %w", in.name, err)
	}
	line, col := position(in.data, off)
	return fmt.Errorf("%s:%d:%d: %w", in.name, line, col, err)
}

// locate returns the offset of the value at path ("a.b[2].c") in the
// JSON document data or, when that value is absent, of the nearest
// enclosing one that is present. It reports false only for a document it
// cannot read.
func locate(data []byte, path string) (int64, bool) {
	segs := splitPath(path)
	dec := json.NewDecoder(bytes.NewReader(data))
	off, err := find(dec, data, segs)
	return off, err == nil
}

// segment is one step of a path: a member name, or an index when key is
// empty and index >= 0.
type segment struct {
	key   string
	index int
}

func splitPath(path string) []segment {
	var segs []segment
	for _, part := range strings.Split(path, ".") {
		key, rest, _ := strings.Cut(part, "[")
		if key != "" {
			segs = append(segs, segment{key: key, index: -1})
		}
		for rest != "" {
			n, after, _ := strings.Cut(rest, "]")
			i, err := strconv.Atoi(n)
			if err != nil {
				return segs
			}
			segs = append(segs, segment{index: i})
			rest = strings.TrimPrefix(after, "[")
		}
	}
	return segs
}

// find reads the next value of dec and returns where the value at segs
// inside it starts (or the deepest present ancestor's start).
func find(dec *json.Decoder, data []byte, segs []segment) (int64, error) {
	start := skipSeparators(data, dec.InputOffset())
	if len(segs) == 0 {
		return start, nil
	}
	tok, err := dec.Token()
	if err != nil {
		return 0, err
	}
	s := segs[0]
	switch tok {
	case json.Delim('{'):
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return 0, err
			}
			if key, _ := k.(string); s.key != "" && key == s.key {
				return find(dec, data, segs[1:])
			}
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return 0, err
			}
		}
	case json.Delim('['):
		for i := 0; dec.More(); i++ {
			if s.key == "" && i == s.index {
				return find(dec, data, segs[1:])
			}
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return 0, err
			}
		}
	}
	return start, nil
}

// skipSeparators skips white space, commas and colons: from the offset
// after a token to the start of the next value.
func skipSeparators(data []byte, off int64) int64 {
	for off < int64(len(data)) {
		switch data[off] {
		case ' ', '\t', '\r', '\n', ',', ':':
			off++
		default:
			return off
		}
	}
	return off
}
