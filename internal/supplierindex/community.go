package supplierindex

import (
	"fmt"
	"math"
	"sort"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/procurekit/procure/paging"
	"github.com/procurekit/procure/supplier"
)

// Index is the supplier index of one community: an immutable indexed
// base and the overlay of changes since it was built. It is safe for
// concurrent use: a read holds its lock shared for the length of that
// read, Apply holds it exclusively for the length of its overlay update.
type Index struct {
	// mu guards ov, whose overlay Apply mutates in place, and maxMod.
	mu sync.RWMutex
	ov *overlay
	// maxMod is the largest modifiedDate, in microseconds, of every
	// supplier, contact and address the index has held (deleted ones
	// included), math.MinInt64 when none.
	maxMod int64
	// compaction state, guarded by mu: whether a compaction runs, and
	// the suppliers written since it took its snapshot.
	compacting bool
	changed    []uuid.UUID
	// limit is the overlay size that starts a compaction (0: the default,
	// see compactAt); tests set it.
	limit int
	// compacted, when set, is called after each compaction (tests).
	compacted func()
}

func newIndex(set *supplierSet) *Index {
	return &Index{ov: newOverlay(set), maxMod: set.maxMod}
}

// Builder collects the records of a new Index one at a time, turning each
// into its stored form as it is added, so that a load never holds a
// community's records twice. The zero value is ready to use; a Builder
// builds one Index.
type Builder struct {
	in   *interner
	recs recStore
}

// Add takes r, in normal form (supplier.Record's Normalize), over: the
// index keeps its summary's texts and keywords (the caller must not
// change them afterwards), makes its keywords share one copy with the
// other records of the build (changing r.Keywords in place), and packs
// the rest, its contacts sorted by name and its addresses by companyName
// (packed.go): r's other parts are the caller's again.
func (b *Builder) Add(r *supplier.Record) {
	if b.in == nil {
		b.in = newInterner()
	}
	b.recs.add(newSupplierRec(r, b.in))
}

// Packed is a supplier record as an index keeps it (Pack). A loader that
// decodes records on several goroutines packs each where it decoded it,
// and adds them in order with AddPacked: its decoded values are garbage
// at once, and the packing runs on every core. pgstore's cache loads
// this way.
type Packed struct{ rec supplierRec }

// Pack normalizes r (supplier.Record's Normalize), packs it and zeroes
// it: what Builder.Add would store of it. It may run on any goroutine.
func Pack(r *supplier.Record) Packed {
	r.Normalize()
	p := Packed{newSupplierRec(r, nil)}
	*r = supplier.Record{}
	return p
}

// AddPacked adds a packed record as Add would add the record it was
// packed from.
func (b *Builder) AddPacked(p Packed) {
	if b.in == nil {
		b.in = newInterner()
	}
	p.rec.keywords = b.in.ownKeywords(p.rec.keywords)
	p.rec.parts = b.in.ownString(p.rec.parts) // the packer's string is garbage at once
	b.recs.add(p.rec)
}

// Len is the number of records added.
func (b *Builder) Len() int { return b.recs.n }

// Build indexes the records added. Errors name a record by the order in
// which it was added: a nil or repeated id, too many suppliers, or
// searchable text beyond the index's limits.
func (b *Builder) Build() (*Index, error) {
	set, err := indexSuppliers(b.recs)
	b.recs, b.in = recStore{}, nil
	if err != nil {
		return nil, err
	}
	return newIndex(set), nil
}

// New returns the index of recs, which it takes over as Builder.Add does.
func New(recs []supplier.Record) (*Index, error) {
	var b Builder
	for i := range recs {
		b.Add(&recs[i])
	}
	return b.Build()
}

// List returns one page of the suppliers that match q, with the number of
// matches. q.Page is checked against supplier.ListPaging (its defaults
// applied). When dst has room for the page, the items are written into
// it (see supplier.Appender), so a caller that reuses dst allocates
// nothing.
//
// Cost, for n suppliers: every total count is O(log n). Without filters a
// page is index arithmetic, O(page size). With modifiedSince or query (or
// both, sorted by modifiedDate) a page is O(log n) per item (a wavelet
// matrix walk), or, when the matching terms are few, a sort of just
// those. Only query and modifiedSince together, sorted by name or
// createdDate, may cost more: then the cheaper of two exact plans is
// chosen (see listBoth). The overlay adds what the package documentation
// says.
func (x *Index) List(q supplier.ListQuery, dst []supplier.Summary) (paging.Page[supplier.Summary], error) {
	r, err := q.Page.Check(supplier.ListPaging)
	if err != nil {
		return paging.Page[supplier.Summary]{}, err
	}
	q.Page = r
	x.mu.RLock()
	items, total := x.ov.list(q, dst)
	x.mu.RUnlock()
	return paging.NewPage(items, total, r), nil
}

// Supplier returns one supplier in full, or an error matching
// supplier.ErrNotFound. The detail and its parts are made for the
// caller from the stored record (one allocation for the parts, packed.go);
// its strings are the index's, which no one writes.
func (x *Index) Supplier(id uuid.UUID) (supplier.Detail, error) {
	var d supplier.Detail
	if rec := x.current(id); rec != nil {
		detailOf(&d, &rec.summary, rec.parts)
		return d, nil
	}
	return d, notFound(id)
}

// ViewSupplier calls view with one supplier in full (supplier.Viewer),
// or returns an error matching supplier.ErrNotFound. The detail and its
// parts are made in memory that the next view reuses once view returns;
// its strings are the index's, which no one writes.
func (x *Index) ViewSupplier(id uuid.UUID, view func(*supplier.Detail) error) error {
	rec := x.current(id)
	if rec == nil {
		return notFound(id)
	}
	p := viewParts.Get().(*detailParts)
	detailInto(&p.detail, &rec.summary, rec.parts, p)
	err := view(&p.detail)
	groups, tags := p.groups, p.tags
	clear(groups) // (their strings keep no record's parts alive)
	clear(tags)
	*p = detailParts{groups: groups[:0], tags: tags[:0]}
	viewParts.Put(p)
	return err
}

// Contacts returns one page of a supplier's contacts in name order (p is
// checked against supplier.ContactPaging), or an error matching
// supplier.ErrNotFound; O(page size) beyond finding the supplier. The
// items are made for the caller from the stored record.
func (x *Index) Contacts(id uuid.UUID, p paging.Request) (paging.Page[supplier.Contact], error) {
	r, err := p.Check(supplier.ContactPaging)
	if err != nil {
		return paging.Page[supplier.Contact]{}, err
	}
	rec := x.current(id)
	if rec == nil {
		return paging.Page[supplier.Contact]{}, notFound(id)
	}
	k := numContacts(rec.parts)
	lo, hi := paging.Window(k, r)
	return paging.NewPage(contactsOf(rec.parts, lo, hi), k, r), nil
}

// RemittanceAddresses returns one page of a supplier's remittance
// addresses that match q (q.Page is checked against
// supplier.AddressPaging), or an error matching supplier.ErrNotFound.
// Sorted by modifiedDate it is O(log k + page size) for a supplier with k
// addresses; sorted by companyName with modifiedSince it walks the
// supplier's k addresses.
func (x *Index) RemittanceAddresses(id uuid.UUID, q supplier.AddressQuery) (paging.Page[supplier.RemittanceAddress], error) {
	r, err := q.Page.Check(supplier.AddressPaging)
	if err != nil {
		return paging.Page[supplier.RemittanceAddress]{}, err
	}
	rec := x.current(id)
	if rec == nil {
		return paging.Page[supplier.RemittanceAddress]{}, notFound(id)
	}
	items, total := rec.addresses(q.ModifiedSince, r)
	return paging.NewPage(items, total, r), nil
}

// Record returns the current record of the supplier id: its detail,
// keywords, contacts in name order and remittance addresses in
// companyName order, made for the caller from the stored record (a
// writer may change it to make the next version, which it hands to
// Apply; its strings are shared and immutable, as all strings are).
func (x *Index) Record(id uuid.UUID) (supplier.Record, bool) {
	rec := x.current(id)
	if rec == nil {
		return supplier.Record{}, false
	}
	all := make([]int, numAddrs(rec.parts))
	for i := range all {
		all[i] = i
	}
	r := supplier.Record{
		Keywords:            rec.keywords,
		Contacts:            contactsOf(rec.parts, 0, numContacts(rec.parts)),
		RemittanceAddresses: addrsOf(rec.parts, all),
	}
	detailOf(&r.Detail, &rec.summary, rec.parts)
	return r, true
}

// MaxModified is the latest modifiedDate of every supplier, contact and
// address the index has held, deleted ones included (the zero time when
// it has held none): a store that stamps writes stamps above it.
func (x *Index) MaxModified() time.Time {
	x.mu.RLock()
	m := x.maxMod
	x.mu.RUnlock()
	if m == math.MinInt64 {
		return time.Time{}
	}
	return time.UnixMicro(m).UTC()
}

// OverlaySize is the number of changes the index's reads merge with its
// base (tests and benchmarks).
func (x *Index) OverlaySize() int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.ov.size()
}

// current returns the current record of the supplier id, or nil.
func (x *Index) current(id uuid.UUID) *supplierRec {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.ov.find(id)
}

func notFound(id uuid.UUID) error { return fmt.Errorf("%w: %s", supplier.ErrNotFound, id) }

// addresses returns the page r of the record's addresses modified at or
// after since (zero: all).
func (rec *supplierRec) addresses(since time.Time, r paging.Request) ([]supplier.RemittanceAddress, int) {
	parts := rec.parts
	k := numAddrs(parts)
	desc := r.Sort.Desc
	byDate := r.Sort.Field == "modifiedDate"
	order := addrByName
	switch {
	case byDate && desc:
		order = addrByDateDesc
	case byDate:
		order = addrByDateAsc
	case desc:
		order = addrByNameDesc
	}
	// at returns the index of the i-th address in the requested order.
	at := func(i int) int { return addrOrderAt(parts, order, i) }
	if since.IsZero() {
		lo, hi := paging.Window(k, r)
		idx := make([]int, 0, hi-lo)
		for i := lo; i < hi; i++ {
			idx = append(idx, at(i))
		}
		return addrsOf(parts, idx), k
	}

	th := ceilMicros(since)
	// first is the number of addresses modified before since: in
	// ascending date order they come first.
	first := sort.Search(k, func(i int) bool {
		return addrModified(parts, addrOrderAt(parts, addrByDateAsc, i)) >= th
	})
	total := k - first
	lo, hi := paging.Window(total, r)
	idx := make([]int, 0, hi-lo)
	switch {
	case byDate && !desc:
		for i := lo; i < hi; i++ {
			idx = append(idx, at(first+i))
		}
	case byDate && desc:
		// Newest first: the matches are the first total of the order.
		for i := lo; i < hi; i++ {
			idx = append(idx, at(i))
		}
	default:
		seen := 0
		for i := 0; i < k && seen < hi; i++ {
			j := at(i)
			if addrModified(parts, j) < th {
				continue
			}
			if seen >= lo {
				idx = append(idx, j)
			}
			seen++
		}
	}
	return addrsOf(parts, idx), total
}
