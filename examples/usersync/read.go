package main

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/procurekit/procure"
	"github.com/procurekit/procure/user"
)

// row is one user of the export, with where it came from.
type row struct {
	line int // 1-based line of the file where the row starts
	in   user.Input
}

// problems collects what is wrong with a file, one message per broken
// rule, each with its line.
type problems struct {
	file string
	list []problem
}

type problem struct {
	line int
	text string
}

func (p *problems) add(line int, format string, args ...any) {
	p.list = append(p.list, problem{line: line, text: fmt.Sprintf(format, args...)})
}

// lines returns the problems as "FILE:LINE: message", in line order.
func (p *problems) lines() []string {
	slices.SortStableFunc(p.list, func(a, b problem) int { return a.line - b.line })
	out := make([]string, len(p.list))
	for i, x := range p.list {
		out[i] = fmt.Sprintf("%s:%d: %s", p.file, x.line, x.text)
	}
	return out
}

// addErr reports a user.Input's validation or decoding error.
func (p *problems) addErr(line int, err error) {
	var ve *procure.ValidationError
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &ve):
		for _, f := range ve.Fields {
			p.add(line, "%s: %s", f.Field, f.Rule)
		}
	case errors.As(err, &syn):
		p.add(line, "malformed JSON: %v", syn)
	case errors.As(err, &typ):
		field := typ.Field
		if field == "" {
			p.add(line, "must be a JSON object (a User), not %s", typ.Value)
			return
		}
		p.add(line, "%s: has the wrong JSON type (%s)", field, typ.Value)
	default:
		p.add(line, "%v", err)
	}
}

// column kinds of a CSV export.
type columnKind int

const (
	textColumn columnKind = iota
	enabledColumn
	codesColumn
	attributesColumn
)

// columns maps the lower-cased JSON name of each User field to its
// canonical name and kind.
var columns = map[string]struct {
	name string
	kind columnKind
}{
	"id": {"id", textColumn}, "username": {"username", textColumn}, "externalid": {"externalId", textColumn},
	"firstname": {"firstName", textColumn}, "lastname": {"lastName", textColumn},
	"displayname": {"displayName", textColumn}, "email": {"email", textColumn}, "phone": {"phone", textColumn},
	"enabled":           {"enabled", enabledColumn},
	"organisationunits": {"organisationUnits", codesColumn}, "organisationsunits": {"organisationUnits", codesColumn},
	"roles": {"roles", codesColumn}, "buyergroups": {"buyerGroups", codesColumn},
	"approvergroups": {"approverGroups", codesColumn}, "attributes": {"attributes", attributesColumn},
}

func knownColumns() string {
	return "id, username, externalId, firstName, lastName, displayName, email, phone, enabled, organisationUnits, roles, buyerGroups, approverGroups, attributes"
}

// readCSV reads a CSV export. A malformed file or header stops the
// reading; a row with too few or too many cells, or a bad cell, is
// reported and the reading goes on, so that every problem is listed at
// once. A row with a bad cell is kept without that cell's field, so that
// check reports what else is wrong with it.
func readCSV(r io.Reader, p *problems) []row {
	cr := csv.NewReader(r)
	cr.ReuseRecord = false
	header, err := cr.Read()
	if errors.Is(err, io.EOF) {
		p.add(1, "the file is empty: expected a header row naming User fields")
		return nil
	}
	if err != nil {
		p.add(csvLine(err, 1), "malformed CSV: %v", csvCause(err))
		return nil
	}
	if len(header) > 0 {
		header[0] = strings.TrimPrefix(header[0], "\ufeff") // a byte order mark, as spreadsheets write
	}
	type col struct {
		name string
		kind columnKind
	}
	cols := make([]col, len(header))
	seen := map[string]int{}
	for i, h := range header {
		c, ok := columns[strings.ToLower(strings.TrimSpace(h))]
		if !ok {
			p.add(1, "column %d %q: not a User field; the columns are %s", i+1, h, knownColumns())
			continue
		}
		if j, dup := seen[c.name]; dup {
			p.add(1, "column %d %q: the field %s is already column %d", i+1, h, c.name, j+1)
			continue
		}
		seen[c.name] = i
		cols[i] = col(c)
	}
	if _, ok := seen["username"]; !ok {
		p.add(1, "no username column: every row needs a username")
	}
	if len(p.list) > 0 {
		return nil
	}
	var rows []row
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return rows
		}
		if errors.Is(err, csv.ErrFieldCount) {
			// The row is read; only its length is wrong.
			p.add(csvLine(err, 0), "malformed CSV: wrong number of fields: %d, the header has %d", len(rec), len(header))
			continue
		}
		if err != nil {
			p.add(csvLine(err, 0), "malformed CSV: %v", csvCause(err))
			return nil
		}
		line, _ := cr.FieldPos(0)
		var in user.Input
		for i, cell := range rec {
			if !setCell(&in, cols[i].name, cols[i].kind, cell) {
				p.add(line, "%s: %s", cols[i].name, cellRule(cols[i].kind, cell))
			}
		}
		rows = append(rows, row{line: line, in: in})
	}
}

func csvLine(err error, def int) int {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return pe.Line
	}
	return def
}

func csvCause(err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// setCell sets one field of in from a CSV cell; false means the cell is
// not a valid value of its kind.
func setCell(in *user.Input, name string, kind columnKind, cell string) bool {
	switch kind {
	case enabledColumn:
		switch strings.ToLower(strings.TrimSpace(cell)) {
		case "":
		case "true":
			in.Enabled = new(true)
		case "false":
			in.Enabled = new(false)
		default:
			return false
		}
		return true
	case codesColumn:
		codes := []user.Code{}
		for c := range strings.SplitSeq(cell, ";") {
			if c = strings.TrimSpace(c); c != "" {
				codes = append(codes, user.Code{Code: c})
			}
		}
		switch name {
		case "organisationUnits":
			in.OrganisationUnits = &codes
		case "roles":
			in.Roles = &codes
		case "buyerGroups":
			in.BuyerGroups = &codes
		case "approverGroups":
			in.ApproverGroups = &codes
		}
		return true
	case attributesColumn:
		attrs := []user.Attribute{}
		for a := range strings.SplitSeq(cell, ";") {
			if strings.TrimSpace(a) == "" {
				continue
			}
			name, value, ok := strings.Cut(a, "=")
			if !ok {
				return false
			}
			attrs = append(attrs, user.Attribute{Name: name, Value: value})
		}
		in.Attributes = &attrs
		return true
	}
	v := cell
	switch name {
	case "id":
		if strings.TrimSpace(v) != "" { // empty: none, the server generates one
			in.ID = &v
		}
	case "username":
		in.Username = &v
	case "externalId":
		in.ExternalID = &v
	case "firstName":
		in.FirstName = &v
	case "lastName":
		in.LastName = &v
	case "displayName":
		in.DisplayName = &v
	case "email":
		in.Email = &v
	case "phone":
		in.Phone = &v
	}
	return true
}

func cellRule(kind columnKind, cell string) string {
	switch kind {
	case enabledColumn:
		return "must be true, false or empty (got " + strconv.Quote(cell) + ")"
	case attributesColumn:
		return "must be name=value pairs separated by \";\" (got " + strconv.Quote(cell) + ")"
	}
	return "is not a valid value"
}

// readJSONL reads a JSON Lines export: one User object per line; blank
// lines are skipped.
func readJSONL(r io.Reader, p *problems) []row {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 2<<20)
	var rows []row
	line := 0
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if line == 1 {
			b = bytes.TrimPrefix(b, []byte("\ufeff"))
		}
		if len(b) == 0 {
			continue
		}
		in, err := user.ParseInput(b)
		if err != nil {
			// Every field of the line on its own, so that each one of the
			// wrong type is named; the others are checked as a row.
			in, errs := parseFields(b, err)
			for _, err := range errs {
				p.addErr(line, err)
			}
			if in != nil {
				rows = append(rows, row{line: line, in: *in})
			}
			continue
		}
		rows = append(rows, row{line: line, in: in})
	}
	if err := sc.Err(); err != nil {
		p.add(line+1, "cannot read the line: %v", err)
	}
	return rows
}

// parseFields decodes a JSON Lines row that user.ParseInput refused (with
// err) one field at a time: it returns every field's error and, when the
// line is a JSON object, the row of the fields that decode. A line that is
// not a JSON object is err alone.
func parseFields(line []byte, err error) (*user.Input, []error) {
	dec := json.NewDecoder(bytes.NewReader(line))
	if tok, terr := dec.Token(); terr != nil || tok != json.Delim('{') {
		return nil, []error{err}
	}
	var errs []error
	good := map[string]json.RawMessage{}
	for dec.More() {
		tok, terr := dec.Token()
		var value json.RawMessage
		if terr == nil {
			terr = dec.Decode(&value)
		}
		if terr != nil {
			return nil, []error{err} // malformed after all
		}
		name := tok.(string)
		one, merr := json.Marshal(map[string]json.RawMessage{name: value})
		if merr != nil {
			return nil, []error{err}
		}
		if _, ferr := user.ParseInput(one); ferr != nil {
			errs = append(errs, ferr)
			continue
		}
		good[name] = value
	}
	rest, merr := json.Marshal(good)
	if merr != nil {
		return nil, []error{err}
	}
	in, rerr := user.ParseInput(rest)
	if rerr != nil {
		// The fields decode one by one but not together (both spellings
		// of organisationUnits, different).
		return nil, append(errs, rerr)
	}
	if len(errs) == 0 {
		errs = append(errs, err) // refused whole, yet every field decodes: keep the reason
	}
	return &in, errs
}

// check normalises and validates every row as a create body (username
// required, id optional) and reports usernames and ids that appear twice:
// every problem of each row, a row that breaks a rule still compared with
// the others by username and id.
func check(rows []row, p *problems) {
	names := map[string]int{}
	ids := map[string]int{}
	for i := range rows {
		r := &rows[i]
		in, err := r.in.Prepare(user.OpCreate)
		if err != nil {
			p.addErr(r.line, err)
			in = r.in.Normalize()
		} else {
			r.in = in
		}
		if in.Username == nil || *in.Username == "" {
			continue
		}
		key := user.UsernameKey(*in.Username)
		if l, dup := names[key]; dup {
			p.add(r.line, "username: %q is also on line %d (usernames compare case-insensitively)", *in.Username, l)
		} else {
			names[key] = r.line
		}
		if in.ID != nil && *in.ID != "" {
			if l, dup := ids[*in.ID]; dup {
				p.add(r.line, "id: %q is also on line %d", *in.ID, l)
			} else {
				ids[*in.ID] = r.line
			}
		}
	}
}
