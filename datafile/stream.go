package datafile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"runtime"
	"strconv"
	"sync"

	"github.com/google/uuid"

	"github.com/procurekit/procure/supplier"
	"github.com/procurekit/procure/user"
)

// Handler receives a data file from Stream, entry by entry, in file order.
//
// Every value it receives has been validated and normalised exactly as
// Parse validates and normalises it, and belongs to the handler: Stream
// keeps no reference to it.
type Handler interface {
	// Supplier receives supplier index of community community (both
	// counted from 0). A community's suppliers may arrive before its
	// own fields are known (a data file may list "suppliers" before "id"):
	// Community follows them once the community's object is complete.
	Supplier(community, index int, rec *supplier.Record) error
	// Community receives community index once its object is complete
	// and valid, with every field but Suppliers, which is nil: its
	// suppliers, n of them, went to Supplier before.
	Community(index int, c *Community, n int) error
}

// UserHandler is a Handler that takes a community's users one at a time,
// as Handler takes its suppliers, so that a community of a million users
// is never held as a whole by Stream. Stream finds it by type assertion
// (as database/sql finds a driver's optional interfaces).
//
// User receives user index of community community (both counted from 0),
// validated and normalised as Parse validates and normalises the users of
// a File, before the community's Community call, which then has nil Users.
// Like suppliers, a community's users may arrive before its own fields are
// known.
type UserHandler interface {
	Handler
	User(community, index int, u *user.User) error
}

// MaxEntryBytes bounds the JSON text of one entry of a data file other
// than a supplier (a user, a token, a service account, a budget, an
// auto-role, a community's id, name or region, an object key), and
// MaxSupplierBytes that of one supplier with its contacts and remittance
// addresses. An entry over its bound is the file's fault: an error naming
// the entry and the line where it starts. The bounds keep what Stream
// holds at once small whatever the file; values of keys a data file does
// not have are skipped without being held at all.
const (
	MaxEntryBytes    = 1 << 20
	MaxSupplierBytes = 16 << 20
)

// StreamFile is Stream on the data file at path. Errors start with the path.
func StreamFile(path string, h Handler) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := Stream(f, h); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// Stream reads a data file from r and hands its suppliers and communities
// to h one at a time, so that neither the file nor a decoded File is ever
// held in memory as a whole: memory stays bounded by a few megabytes of
// input plus what h keeps.
//
// Stream is the one reader of data files (Parse collects what it hands
// over). Errors name the entry's JSON path, and the line and column for
// malformed JSON or a value that does not decode. A key repeated in a
// community object is an error (encoding/json would silently keep the last
// one; in a data file it is a mistake). A community's own fields (id,
// region, tokens, ...) are checked when its object ends, since they may
// follow its suppliers, so a bad supplier is reported before a bad field
// of its own community.
//
// Suppliers are decoded and validated on all cores; h is called on the
// caller's goroutine, in file order, and the first bad entry in file order
// is the one reported. When h returns an error, Stream stops and returns
// it unchanged; so is an error of r. Every other error is the file's fault
// and matches procure.ErrInvalid (errors.Is).
//
// Records of the shape data files hold are decoded by a hand-written
// decoder and checked by hand-written rules, each of which hands anything
// unusual to encoding/json and supplier.Record.Validate, the definitions
// (tests hold the two paths to the same results). Values that repeat
// across suppliers (cities, countries, bank names, payment terms, tags,
// keywords, ...) come out as shared strings, and a record's other strings
// share a few larger allocations: strings are immutable, so this changes
// nothing for the handler but the memory and the time it takes.
func Stream(r io.Reader, h Handler) error {
	_, err := stream(r, h)
	return err
}

// stream is Stream, returning also the largest read buffer it held (which
// tests hold to a bound).
func stream(r io.Reader, h Handler) (peak int, err error) {
	st := &streamer{
		sc:    scanner{r: r, line: 1},
		jobs:  make(chan *batch, 2*runtime.GOMAXPROCS(0)),
		items: make(chan item, 4*runtime.GOMAXPROCS(0)),
		quit:  make(chan struct{}),
	}
	// The file's own mistakes match procure.ErrInvalid; the handler's and
	// the reader's errors pass unchanged. Runs after the clean-up below,
	// once the reader goroutine has stopped writing st.sc.
	g := &handlerGuard{h: h}
	defer func() { err, peak = markInvalid(err, g.err, st.sc.rerr), st.sc.peak }()
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m := newMemo()
			for b := range st.jobs {
				b.decode(m)
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(st.jobs)
		defer close(st.items)
		if err := st.file(); err != nil {
			st.emit(item{err: err})
		}
	}()
	// However consume ends (an error, or a panic in h), stop the reader
	// and the workers and wait for them: none outlives Stream.
	defer func() {
		close(st.quit)
		for it := range st.items {
			if it.batch != nil {
				<-it.batch.done
			}
		}
		wg.Wait()
	}()
	return 0, st.consume(g)
}

// item is what the reader hands to the consumer, in file order: a batch of
// suppliers, a user (index n), a finished community, or an error.
type item struct {
	batch     *batch
	user      *user.User
	community *Community
	ci, n     int
	err       error
}

// batch is a run of raw supplier objects of one community, decoded by a
// worker.
type batch struct {
	ci, first int
	raws      [][]byte
	at        []pos
	recs      []supplier.Record
	err       error // the first error, at index bad
	bad       int
	done      chan struct{}
}

const (
	batchRecords = 256
	batchBytes   = 512 << 10
)

// decode decodes, validates and normalises the batch's records, stopping
// at the first bad one.
func (b *batch) decode(m *memo) {
	defer close(b.done)
	b.recs = make([]supplier.Record, len(b.raws))
	for k, raw := range b.raws {
		rec := &b.recs[k]
		si := b.first + k
		if err := decodeSupplier(raw, rec, m); err != nil {
			path := communityPath(b.ci) + ".suppliers[" + strconv.Itoa(si) + "]"
			b.err, b.bad = chunkError(err, raw, reflect.TypeFor[supplier.Record](), path, b.at[k]), k
			return
		}
		if err := checkSupplier(b.ci, si, rec); err != nil {
			b.err, b.bad = err, k
			return
		}
		rec.Normalize()
		b.raws[k] = nil // the input buffer may go as soon as possible
	}
}

// streamer is one run of Stream: the reader, which splits the input and
// parses everything but suppliers (on its own goroutine), and the queues
// to the workers and the consumer.
type streamer struct {
	sc    scanner
	jobs  chan *batch
	items chan item
	quit  chan struct{}
	cur   *batch
	size  int
}

// emit queues it for the consumer; false when the consumer has stopped.
func (st *streamer) emit(it item) bool {
	select {
	case st.items <- it:
		return true
	case <-st.quit:
		return false
	}
}

var errStopped = errors.New("datafile: stream stopped")

// flush hands the current batch to the workers and the consumer.
func (st *streamer) flush() error {
	b := st.cur
	if b == nil {
		return nil
	}
	st.cur, st.size = nil, 0
	select {
	case st.jobs <- b:
	case <-st.quit:
		return errStopped
	}
	if !st.emit(item{batch: b}) {
		return errStopped
	}
	return nil
}

// consume delivers the items to h in order.
func (st *streamer) consume(h Handler) error {
	var v checker
	var seen map[uuid.UUID]struct{}
	var uh UserHandler
	if g, ok := h.(*handlerGuard); ok {
		uh = g.users()
	} else {
		uh, _ = h.(UserHandler)
	}
	var users []user.User         // of the community being read, when h takes no users
	var usernames map[string]bool // of the community being read
	communities := 0
	for it := range st.items {
		switch {
		case it.err != nil:
			if errors.Is(it.err, errStopped) {
				continue
			}
			return it.err
		case it.batch != nil:
			b := it.batch
			<-b.done
			if seen == nil {
				seen = make(map[uuid.UUID]struct{}, 1024)
			}
			n := len(b.recs)
			if b.err != nil {
				n = b.bad
			}
			for k := range n {
				rec := &b.recs[k]
				if err := uniqueSupplier(seen, b.ci, b.first+k, rec); err != nil {
					return err
				}
				if err := h.Supplier(b.ci, b.first+k, rec); err != nil {
					return err
				}
			}
			if b.err != nil {
				return b.err
			}
			b.recs = nil
		case it.user != nil:
			if usernames == nil {
				usernames = map[string]bool{}
			}
			u := it.user.Normalize()
			if err := v.user(it.ci, it.n, &u, usernames); err != nil {
				return err
			}
			if uh == nil {
				users = append(users, u)
				continue
			}
			if err := uh.User(it.ci, it.n, &u); err != nil {
				return err
			}
		case it.community != nil:
			communities++
			seen, usernames = nil, nil
			c := it.community
			c.Users, users = users, nil
			if err := v.head(it.ci, c); err != nil {
				return err
			}
			if err := v.rest(it.ci, c); err != nil {
				return err
			}
			if err := h.Community(it.ci, c, it.n); err != nil {
				return err
			}
		}
	}
	if communities == 0 {
		return errNoCommunity
	}
	return nil
}

// file parses the top-level object.
func (st *streamer) file() error {
	sc := &st.sc
	if err := sc.expect('{', "the data file must be a JSON object"); err != nil {
		return err
	}
	err := sc.members(func(key string, _ pos) error {
		if !equalFoldASCII(key, "communities") {
			return sc.skip(key)
		}
		// (skip holds nothing of the value: see there.)
		return st.communities()
	})
	if err != nil {
		return err
	}
	if sc.ws() {
		return sc.syntax("after top-level value")
	}
	return sc.rerr
}

// communities parses the communities array (or null).
func (st *streamer) communities() error {
	sc := &st.sc
	if ok, err := sc.null(); ok || err != nil {
		return err
	}
	if err := sc.expect('[', "communities: must be a JSON array"); err != nil {
		return err
	}
	ci := 0
	return sc.elements(func() error {
		err := st.community(ci)
		ci++
		return err
	})
}

// community parses community ci's object.
func (st *streamer) community(ci int) error {
	sc := &st.sc
	at := communityPath(ci)
	if err := sc.expect('{', at+": must be a JSON object"); err != nil {
		return err
	}
	c := &Community{}
	n := 0
	seen := map[string]bool{}
	err := sc.members(func(key string, p pos) error {
		if seen[key] {
			return fmt.Errorf("line %s: %s.%s: the key appears twice in the community", p, at, key)
		}
		seen[key] = true
		if equalFoldASCII(key, "suppliers") {
			var err error
			n, err = st.suppliers(ci)
			return err
		}
		target := communityField(c, key)
		if target == nil {
			// An unknown key is ignored, as Parse ignores it, but it
			// must still be valid JSON.
			return sc.skip(at + "." + key)
		}
		if equalFoldASCII(key, "users") {
			return st.users(ci)
		}
		if array, ok := target.(arrayField); ok {
			return st.array(at+"."+key, array)
		}
		raw, p, err := sc.valueMax(at+"."+key, MaxEntryBytes)
		if err != nil {
			return err
		}
		if err := json.Unmarshal(raw, target); err != nil {
			return chunkError(err, raw, reflect.TypeOf(target).Elem(), at+"."+key, p)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if err := st.flush(); err != nil {
		return err
	}
	if !st.emit(item{community: c, ci: ci, n: n}) {
		return errStopped
	}
	return nil
}

// communityField is where the value of key decodes into, or nil for a key
// a Community does not have. Like encoding/json, an exact name is looked
// up first, then a case-insensitive one.
func communityField(c *Community, key string) any {
	fields := map[string]any{
		"id":              &c.ID,
		"name":            &c.Name,
		"region":          &c.Region,
		"tokens":          (*sliceField[Token])(&c.Tokens),
		"serviceAccounts": (*sliceField[ServiceAccount])(&c.ServiceAccounts),
		"autoRoles":       (*sliceField[string])(&c.AutoRoles),
		"users":           &c.Users,
		"budgets":         (*sliceField[Budget])(&c.Budgets),
	}
	if f, ok := fields[key]; ok {
		return f
	}
	for name, f := range fields {
		if equalFoldASCII(name, key) {
			return f
		}
	}
	return nil
}

// equalFoldASCII compares as encoding/json matches keys to field names
// (for the ASCII names of a data file).
func equalFoldASCII(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		if a[i]|0x20 != b[i]|0x20 || a[i]|0x20 < 'a' || a[i]|0x20 > 'z' {
			if a[i] != b[i] {
				return false
			}
		}
	}
	return true
}

// arrayField is a community's array that Stream reads element by element
// (each at most MaxEntryBytes), so that the array's text is never held
// whole.
type arrayField interface {
	// null sets the array to nil, as a JSON null does.
	null()
	// decode appends the element raw, or returns json.Unmarshal's error.
	decode(raw []byte) error
	// elem is the type of an element, for error messages.
	elem() reflect.Type
}

// sliceField is a []T as an arrayField (and, for a value that is not an
// array, a json.Unmarshaler with encoding/json's own errors).
type sliceField[T any] []T

func (f *sliceField[T]) null() { *f = nil }

func (f *sliceField[T]) decode(raw []byte) error {
	var v T
	if err := json.Unmarshal(raw, &v); err != nil {
		return err
	}
	*f = append(*f, v)
	return nil
}

func (f *sliceField[T]) elem() reflect.Type { return reflect.TypeFor[T]() }

func (f *sliceField[T]) UnmarshalJSON(b []byte) error { return json.Unmarshal(b, (*[]T)(f)) }

// elementsOf reads the array at (or null) whose elements are each at most
// max bytes, calling f with each element's index, raw text and position.
// A value that is not an array goes to notArray whole (at most max bytes),
// which words encoding/json's error for it.
func (st *streamer) elementsOf(at string, max int, f func(i int, raw []byte, p pos) error, notArray func(raw []byte, p pos) error) error {
	sc := &st.sc
	if !sc.ws() {
		return sc.endError(at)
	}
	switch sc.buf[sc.i] {
	case 'n':
		ok, err := sc.null()
		if ok || err != nil {
			return err
		}
		fallthrough
	default:
		raw, p, err := sc.valueMax(at, max)
		if err != nil {
			return err
		}
		return notArray(raw, p)
	case '[':
	}
	sc.i++
	i := 0
	return sc.elements(func() error {
		raw, p, err := sc.valueMax(at+"["+strconv.Itoa(i)+"]", max)
		if err != nil {
			return err
		}
		err = f(i, raw, p)
		i++
		return err
	})
}

// array reads a community's array field element by element.
func (st *streamer) array(at string, a arrayField) error {
	a.null()
	return st.elementsOf(at, MaxEntryBytes, func(i int, raw []byte, p pos) error {
		if err := a.decode(raw); err != nil {
			return chunkError(err, raw, a.elem(), at+"["+strconv.Itoa(i)+"]", p)
		}
		return nil
	}, func(raw []byte, p pos) error {
		if string(raw) == "null" {
			return nil
		}
		err := json.Unmarshal(raw, a)
		if err == nil {
			err = errors.New("must be a JSON array")
		}
		return chunkError(err, raw, reflect.PointerTo(reflect.SliceOf(a.elem())).Elem(), at, p)
	})
}

// users reads community ci's users element by element, handing each to
// the consumer, which checks it and passes it on.
func (st *streamer) users(ci int) error {
	at := communityPath(ci) + ".users"
	return st.elementsOf(at, MaxEntryBytes, func(i int, raw []byte, p pos) error {
		u := new(user.User)
		if err := json.Unmarshal(raw, u); err != nil {
			return chunkError(err, raw, reflect.TypeFor[user.User](), at+"["+strconv.Itoa(i)+"]", p)
		}
		if !st.emit(item{user: u, ci: ci, n: i}) {
			return errStopped
		}
		return nil
	}, func(raw []byte, p pos) error {
		if string(raw) == "null" {
			return nil
		}
		var us []user.User
		err := json.Unmarshal(raw, &us)
		if err == nil {
			err = errors.New("must be a JSON array")
		}
		return chunkError(err, raw, reflect.TypeFor[[]user.User](), at, p)
	})
}

// suppliers splits community ci's suppliers array into batches.
func (st *streamer) suppliers(ci int) (int, error) {
	sc := &st.sc
	if ok, err := sc.null(); ok || err != nil {
		return 0, err
	}
	at := communityPath(ci) + ".suppliers"
	if err := sc.expect('[', at+": must be a JSON array"); err != nil {
		return 0, err
	}
	si := 0
	err := sc.elements(func() error {
		raw, p, err := sc.valueMax(at+"["+strconv.Itoa(si)+"]", MaxSupplierBytes)
		if err != nil {
			return err
		}
		if st.cur == nil {
			st.cur = &batch{ci: ci, first: si, done: make(chan struct{})}
		}
		b := st.cur
		b.raws = append(b.raws, raw)
		b.at = append(b.at, p)
		st.size += len(raw)
		si++
		if len(b.raws) >= batchRecords || st.size >= batchBytes {
			return st.flush()
		}
		return nil
	})
	if err != nil {
		return si, err
	}
	return si, st.flush()
}

// pos is a line and column (1-based, in bytes), as errors show it.
type pos struct{ line, col int }

func (p pos) String() string { return strconv.Itoa(p.line) + ":" + strconv.Itoa(p.col) }

// plus is the position of byte off of raw, which starts at p.
func (p pos) plus(raw []byte, off int64) pos {
	off = max(0, min(off, int64(len(raw))))
	before := raw[:off]
	nl := bytes.Count(before, []byte{'\n'})
	if nl == 0 {
		return pos{p.line, p.col + int(off)}
	}
	return pos{p.line + nl, int(off) - bytes.LastIndexByte(before, '\n')}
}

// chunkError words the error of decoding raw (at p, the value at path)
// into a t: the path and the line and column in the file.
func chunkError(err error, raw []byte, t reflect.Type, path string, p pos) error {
	var syn *json.SyntaxError
	if errors.As(err, &syn) {
		return fmt.Errorf("line %s: malformed JSON: %w", p.plus(raw, syn.Offset), err)
	}
	if loc, ok := locate(raw, t); ok {
		full := path
		switch {
		case loc.path == "":
		case loc.path[0] == '[':
			full += loc.path
		default:
			full += "." + loc.path
		}
		return fmt.Errorf("line %s: %s: %s", p.plus(raw, loc.off), full, loc.rule)
	}
	var typ *json.UnmarshalTypeError
	if errors.As(err, &typ) {
		return fmt.Errorf("line %s: %s: must be a JSON %s (got %s)", p.plus(raw, typ.Offset), path, jsonType(typ.Type.Kind().String()), typ.Value)
	}
	return fmt.Errorf("line %s: %s: %w", p, path, err)
}

// scanner reads JSON structure from r without holding more than the value
// being read. Values it returns are slices of a buffer it never reuses, so
// they stay valid after the scanner moves on.
type scanner struct {
	r    io.Reader
	buf  []byte
	i    int   // next byte to read in buf
	off  int64 // file offset of buf[0]
	eof  bool
	rerr error
	peak int // the largest buffer allocated
	// The line counter: line is the line of file offset counted, which
	// starts at offset lineStart.
	line      int
	lineStart int64
	counted   int64
}

const readChunk = 1 << 20

// more reads more input, keeping buf[keep:]; false at the end of input.
// It reads into the buffer's free space while there is some (bytes handed
// out before are never written again), and otherwise moves what it keeps
// to a new buffer.
func (sc *scanner) more(keep int) bool {
	if sc.eof {
		return false
	}
	if len(sc.buf) == cap(sc.buf) {
		sc.count(sc.off + int64(keep))
		rest := sc.buf[keep:]
		nb := make([]byte, len(rest), max(readChunk, 2*len(rest)))
		sc.peak = max(sc.peak, cap(nb))
		copy(nb, rest)
		sc.off += int64(keep)
		sc.i -= keep
		sc.buf = nb
	}
	for {
		n, err := sc.r.Read(sc.buf[len(sc.buf):cap(sc.buf)])
		sc.buf = sc.buf[:len(sc.buf)+n]
		if err != nil {
			sc.eof = true
			if err != io.EOF {
				sc.rerr = err
			}
			return n > 0
		}
		if n > 0 {
			return true
		}
	}
}

// count advances the line counter to file offset to (in buf).
func (sc *scanner) count(to int64) {
	if to <= sc.counted {
		return
	}
	seg := sc.buf[sc.counted-sc.off : to-sc.off]
	if nl := bytes.Count(seg, []byte{'\n'}); nl > 0 {
		sc.line += nl
		sc.lineStart = sc.counted + int64(bytes.LastIndexByte(seg, '\n')) + 1
	}
	sc.counted = to
}

// pos is the position of the next byte.
func (sc *scanner) pos() pos {
	at := sc.off + int64(sc.i)
	sc.count(at)
	return pos{sc.line, int(at-sc.lineStart) + 1}
}

// ws skips white space; false at the end of input.
func (sc *scanner) ws() bool {
	for {
		for sc.i < len(sc.buf) {
			switch sc.buf[sc.i] {
			case ' ', '\t', '\n', '\r':
				sc.i++
			default:
				return true
			}
		}
		if !sc.more(sc.i) {
			return false
		}
	}
}

// endError is the error of input that ends too soon.
func (sc *scanner) endError(what string) error {
	if sc.rerr != nil {
		return sc.rerr
	}
	return fmt.Errorf("line %s: malformed JSON: unexpected end of input in %s", sc.pos(), what)
}

// syntax reports the byte at the scanner as malformed JSON. Like Parse
// (encoding/json's offsets), the position is the one after the byte.
func (sc *scanner) syntax(what string) error {
	c := sc.buf[sc.i]
	p := sc.pos()
	p.col++
	return fmt.Errorf("line %s: malformed JSON: invalid character %s %s", p, quoteChar(c), what)
}

func quoteChar(c byte) string {
	if c == '\'' {
		return `'\''`
	}
	if c == '"' {
		return `'"'`
	}
	s := strconv.Quote(string(rune(c)))
	return "'" + s[1:len(s)-1] + "'"
}

// expect reads the byte c, or fails with the rule (for a value of the
// wrong type) or a syntax error.
func (sc *scanner) expect(c byte, rule string) error {
	if !sc.ws() {
		return sc.endError("the data file")
	}
	got := sc.buf[sc.i]
	if got == c {
		sc.i++
		return nil
	}
	switch got {
	case '{', '[', '"', 't', 'f', 'n', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return fmt.Errorf("line %s: %s", sc.pos(), rule)
	}
	return sc.syntax("looking for beginning of value")
}

// null consumes a JSON null, if that is what comes next.
func (sc *scanner) null() (bool, error) {
	if !sc.ws() {
		return false, sc.endError("the data file")
	}
	if sc.buf[sc.i] != 'n' {
		return false, nil
	}
	raw, p, err := sc.valueMax("the data file", MaxEntryBytes)
	if err != nil {
		return false, err
	}
	if string(raw) != "null" {
		var v any
		return false, chunkError(json.Unmarshal(raw, &v), raw, reflect.TypeFor[any](), "value", p)
	}
	return true, nil
}

// members reads the members of an object whose '{' is read, calling f
// with each key, and where the key starts, when the scanner is at the
// value.
func (sc *scanner) members(f func(key string, at pos) error) error {
	if !sc.ws() {
		return sc.endError("an object")
	}
	if sc.buf[sc.i] == '}' {
		sc.i++
		return nil
	}
	for {
		raw, p, err := sc.valueMax("an object key", MaxEntryBytes)
		if err != nil {
			return err
		}
		var key string
		if raw[0] != '"' {
			p.col++ // after the byte, as syntax reports it
			return fmt.Errorf("line %s: malformed JSON: invalid character %s looking for beginning of object key string", p, quoteChar(raw[0]))
		}
		if err := json.Unmarshal(raw, &key); err != nil {
			return chunkError(err, raw, reflect.TypeFor[string](), "an object key", p)
		}
		if !sc.ws() {
			return sc.endError("an object")
		}
		if sc.buf[sc.i] != ':' {
			return sc.syntax("after object key")
		}
		sc.i++
		if err := f(key, p); err != nil {
			return err
		}
		if !sc.ws() {
			return sc.endError("an object")
		}
		switch sc.buf[sc.i] {
		case ',':
			sc.i++
			if !sc.ws() {
				return sc.endError("an object")
			}
		case '}':
			sc.i++
			return nil
		default:
			return sc.syntax("after object key:value pair")
		}
	}
}

// elements reads the elements of an array whose '[' is read, calling f
// when the scanner is at each.
func (sc *scanner) elements(f func() error) error {
	if !sc.ws() {
		return sc.endError("an array")
	}
	if sc.buf[sc.i] == ']' {
		sc.i++
		return nil
	}
	for {
		if err := f(); err != nil {
			return err
		}
		if !sc.ws() {
			return sc.endError("an array")
		}
		switch sc.buf[sc.i] {
		case ',':
			sc.i++
			if !sc.ws() {
				return sc.endError("an array")
			}
			if sc.buf[sc.i] == ']' {
				return sc.syntax("looking for beginning of value")
			}
		case ']':
			sc.i++
			return nil
		default:
			return sc.syntax("after array element")
		}
	}
}

// value reads the raw bytes of the next value, and where it starts. It
// finds the end of the value by its brackets and strings only: decoding
// the bytes checks the rest of the syntax. what names the value for an
// error at the end of input, or for a value over max bytes.
func (sc *scanner) valueMax(what string, max int) ([]byte, pos, error) {
	if !sc.ws() {
		return nil, pos{}, sc.endError(what)
	}
	p := sc.pos()
	for {
		end := valueEnd(sc.buf, sc.i, sc.eof)
		if end > 0 {
			if end-sc.i > max {
				return nil, pos{}, tooLarge(p, what, max)
			}
			raw := sc.buf[sc.i:end:end]
			sc.i = end
			return raw, p, nil
		}
		if len(sc.buf)-sc.i > max {
			return nil, pos{}, tooLarge(p, what, max)
		}
		if !sc.more(sc.i) {
			sc.i = len(sc.buf)
			return nil, pos{}, sc.endError(what)
		}
	}
}

func tooLarge(p pos, what string, max int) error {
	return fmt.Errorf("line %s: %s: the entry is larger than %d bytes, the most a data file's entry may hold", p, what, max)
}

// valueEnd returns the end of the value that starts at b[i], or -1 when b
// ends before it does (and more input may follow: eof false). A scalar
// other than a string ends at the first delimiter.
func valueEnd(b []byte, i int, eof bool) int {
	switch b[i] {
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				j := stringEnd(b, i+1)
				if j < 0 {
					return -1
				}
				i = j
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return -1
	case '"':
		return stringEnd(b, i+1)
	}
	for j := i; j < len(b); j++ {
		switch b[j] {
		case ',', ']', '}', ':', ' ', '\t', '\n', '\r', '"', '{', '[':
			if j == i {
				return j + 1 // a stray delimiter: decoding reports it
			}
			return j
		}
	}
	if eof && len(b) > i {
		return len(b)
	}
	return -1
}

// stringEnd returns the index after the quote that closes the string whose
// content starts at b[i], or -1.
func stringEnd(b []byte, i int) int {
	for {
		k := bytes.IndexByte(b[i:], '"')
		if k < 0 {
			return -1
		}
		q := i + k
		// The quote is escaped when an odd number of backslashes
		// precedes it.
		bs := 0
		for j := q - 1; j >= i && b[j] == '\\'; j-- {
			bs++
		}
		if bs%2 == 0 {
			return q + 1
		}
		i = q + 1
	}
}
