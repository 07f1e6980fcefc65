// Package accountcode is the connector's side of account code validation,
// Interface C (docs: account-codes.md): Handler answers the platform's XML
// requests at POST /account-code-validation from a budget.Validator - a
// check of a requisition's lines, and the release or confirm of its holds
// - and lists an account's holds. The platform's side, a budget.Validator
// that asks a connector, is package accountcodeapi; the XML codec both
// use is internal/acxml.
package accountcode
