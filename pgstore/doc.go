// Package pgstore is the PostgreSQL backend: every store interface of the
// library - supplier.Store, user.Store, auth.TokenStore, auth.KeyStore, the
// community's auto-roles and its budget table - over one PostgreSQL
// database that any number of stateless service nodes share.
//
// Open connects (pgx/v5, pgxpool) and brings the schema up to date: the
// versioned SQL files of migrations/ are embedded in the binary and applied
// in one transaction under a PostgreSQL advisory lock, so nodes that start
// together do not race, and each applied version is recorded in the table
// schema_migrations. Import loads a data file (datafile.File) with COPY in
// one transaction.
//
// Behaviour is that of memstore, which the conformance suites
// (supplier/suppliertest, user/usertest) check for both stores: the same
// ordering (DECISIONS.md "Paging": case-insensitive, empty values last in
// both directions, ties on id ascending), the same prefix query, the same
// errors. Uniqueness of user ids and of usernames per community is enforced
// by unique indexes, so concurrent creates on several nodes never produce a
// duplicate.
//
// How the lists stay fast at millions of suppliers: suppliers are written
// only by Import, which replaces a community's suppliers whole and stores
// each supplier's position in each of the six orders of the list; a page,
// however deep, is a range scan on (community, position), the unfiltered
// total is kept per community, and the total of a modifiedSince filter is
// one index probe. The prefix query is a range scan of one table of search
// terms (the lower-cased name, legal business name, supplierId and
// keywords) that one index serves.
package pgstore
