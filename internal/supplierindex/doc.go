// Package supplierindex is the supplier index of one community: the read
// engine of the supplier API behind memstore and behind pgstore's
// per-node cache. It serves the supplier list in every order with its
// filters (query, modifiedSince), one supplier, its contacts and its
// remittance addresses, and takes changes while it serves them.
//
//	ix, err := supplierindex.New(records)        // or a Builder, one record at a time
//	page, err := ix.List(query, nil)             // supplier.ListQuery, paging checked
//	d, err := ix.Supplier(id)                    // errors match supplier.ErrNotFound
//	ix.Apply(changed, deleted)                   // whole records, as stored
//
// Names sort as people read them and queries match ignoring case and
// accents (docs: paging.md, filters.md): the index compares the names'
// sort keys and the texts' match keys of internal/textkey, computed once
// per value when a record is loaded or applied (keys.go).
//
// The index takes records over (in normal form, valid: the store that
// holds them has checked them) and never writes into them; it keeps each
// supplier's summary and keywords as given and packs the rest into one
// string (packed.go), from which a read makes the values it returns: a
// record is then a few pointers for the collector to follow rather than
// some forty, and one run of memory for a read at random. It does not
// stamp dates nor validate: memstore does both before a write, and
// pgstore's cache applies what the database committed. Everything is safe
// for concurrent use.
//
// Package layout: this package holds the index and its list planner;
// internal/wavelet (the wavelet matrix over ranks, and its bit vector),
// internal/fenwick (counts of the replaced and deleted suppliers by rank)
// and internal/blist (ordered block lists) are its containers.
//
// # Design
//
// Suppliers change at runtime while lists keep the costs of an immutable
// index. An Index holds:
//
//   - a base: an immutable supplierSet, the indexes a load builds (every
//     order as a permutation and its inverse, wavelet matrices over the
//     ranks for modifiedSince and the query's terms);
//   - an overlay of the changes since the base was built: a bit per base
//     supplier that a change replaced or deleted ("dead"), with a bit per
//     rank and a Fenwick tree per 64 ranks for each order counting the
//     dead by rank, and the records applied since ("delta"), each placed
//     by binary search among the base's ranks in every order, kept in six
//     ordered block lists and a term index, and the filter views
//     (below). Changes mutate the overlay in place under the index's lock,
//     held for microseconds; the binary searches run before it.
//
// A list merges the base's matches, without the dead, with the delta's
// by rank: a delta item goes before the base rank it was placed at.
// Without filters the page's first item is found by binary search over
// the delta items (the merged position of delta item j is j plus the
// base ranks below it less the dead there, counted with a bit per rank
// and a small tree). modifiedSince alone sorted by modifiedDate is a
// range of that unfiltered list. Any other filter is served through a
// filter view once asked for twice (view.go): the overlay's matches of
// that filter (query, modifiedSince, or both sorted by modifiedDate) in
// that order, kept sorted by every change; a page is then one walk of the
// base's wavelet matrix in which a subtree of ranks counts its live base
// matches plus the view's delta items placed in it, so the walk skips to a
// deep page as the base's own does, and a first page merges from the
// first match. One planner (Index.List, list.go) chooses among these.
// Costs, for n suppliers and an overlay of d changes:
//
//   - a default or sorted page, however deep: O(log n log d + page);
//   - totals of a filtered list: O(log n + log d) for query or
//     modifiedSince alone (the overlay's query matches are counted like
//     the base's, matching terms less matching pairs);
//   - a filtered page through a view, however deep: the base's walk with
//     two binary searches in the view per level, O(log n log d + page
//     log n);
//   - the first request of a filter (no view yet) and query with
//     modifiedSince sorted by name or createdDate: the base walk plus the
//     overlay's m matches found per request (from the term index, the
//     modifiedDate order, or a scan), O(m) to O(m log m);
//   - a change: six binary searches on the base's compact key tables, a
//     few block moves in the overlay's lists, and per view a match test
//     and at most two block moves. At most maxViews filters have a view
//     per index, the least recently used making way; a view holds two
//     words per match.
//
// When the overlay reaches compactAt(n) changes, a goroutine rebuilds the
// base from the live records (the records are shared, not copied), on
// one core so reads keep the others, then replays the changes made
// meanwhile into a fresh overlay and swaps both in under the lock.
//
// Why this design rather than the alternatives: a fully dynamic index
// (balanced trees per order) would make changes cheap but lose the
// wavelet matrices, which serve any filter in any order at O(log n) per
// item; rebuilding per change costs seconds for a large community; an
// overlay that reads scan is cheap to change but makes every read O(d).
// Indexing the overlay the same way as the base, by rank, keeps
// unfiltered reads within a few binary searches of an unchanged index
// while a change costs six binary searches on compact key tables and a
// few block moves.
//
// Why views for filtered lists: the overlay's first matches of a prefix
// query in an order are a two-dimensional question (a prefix range of
// terms, the smallest ranks in the order) that no small dynamic index
// answers in O(log d): a term index per order splits a prefix range into
// one run per distinct term, thousands for a two-letter query (every
// written name is a term of its own), and a dead-supplier index per
// order still leaves modifiedSince's dates as a second dimension. A view
// answers exactly the filters in use, pays the old per-request cost once,
// and costs a change little. A filter asked for once (a type-ahead's
// intermediate prefixes) never builds one.
//
// The figures (writes, lists while writing, memory per supplier) are in
// bench/README.md.
package supplierindex
