// Package budget implements account code validation (Interface C; docs: account-codes.md).
//
// When a buyer checks out a requisition, the platform asks the customer's
// finance system for a verdict on every line: Valid, Invalid or Warning. The
// pieces of this package, from the platform's side to the customer's:
//
//   - Request, Line and Result are the exchange in Go terms; amounts are
//     decimals (shopspring/decimal), never floats. A Line may be split
//     across accounts (Split, by percentage or amount); Line.Shares
//     allocates it exactly in the minor units of the request's Currency
//     (MinorUnits), and Request.Validate holds every rule of the exchange.
//   - Validator is what answers a Request: the finance system seen through
//     accountcodeapi.Client (the XML exchange over HTTP), or one of the
//     connector validators below, or anything else a caller plugs in.
//   - CheckReply enforces the one rule every reply obeys: exactly one result
//     per request line, matched by line number, with a known status. Every
//     component of the library applies it; a reply that breaks it is a
//     failed check (ErrMalformedReply), never a pass.
//   - Gate turns the verdicts into what the buyer may do at checkout:
//     proceed, hard stop, soft stop (with an acknowledgement that lets the
//     same checkout proceed on the next try) or unavailable. It fails
//     closed: an error, a timeout or a malformed reply never proceeds.
//     Gate.Release and Gate.Confirm end or keep what a requisition holds,
//     through a validator that is a Committer.
//
// On the customer's side, the connector (httpapi.AccountCodeHandler serving
// POST /account-code-validation) delegates to one of two validators:
//
//   - TableValidator: the budget table option. Amounts are summed per
//     account within a request; an account absent from the table is
//     Invalid; a sum within the budget is Valid and one over it Invalid, or
//     Warning where so configured. The table comes from a CSV file or an SQL
//     query (database/sql, any driver) and may be refreshed at an interval,
//     keeping the last good table when a refresh fails.
//     With a HoldStore (MemHolds in memory, or package pgholds in
//     PostgreSQL, shared by several connectors) it also holds what each
//     requisition's check claims, so concurrent checkouts never spend an
//     account's money twice; holds end on Release, expire, or become
//     commitments on Confirm (TableValidator is a Committer), and every
//     check, release, confirm and expiry can go to an AuditLog. Package
//     holdstest is the conformance suite of HoldStore.
//   - ProcedureValidator: the stored-procedure option. Operator-supplied SQL
//     receives the lines as JSON text plus the optional username,
//     organisation unit and finance year, and returns the verdicts as JSON
//     text.
//
// This package never imports net/http; the HTTP client and handler live in
// package httpapi.
package budget
