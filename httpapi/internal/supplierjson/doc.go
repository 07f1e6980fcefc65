// Package supplierjson encodes the supplier API's answers by hand - the
// pages, a supplier in full, a contact, a remittance address - byte for
// byte as encoding/json would, and remembers the JSON of suppliers
// encoded before (Memo). The supplier API and the admin API, which
// answers a write with the stored supplier, share it.
package supplierjson
