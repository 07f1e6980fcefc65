package datafile

import "github.com/procurekit/procure/supplier"

// Decoder decodes the JSON of a supplier, a contact or a remittance
// address exactly as json.Unmarshal does, faster: the data file's own
// decoder (fastdecode.go) takes the shape that encoding/json writes and
// hands anything else to json.Unmarshal, which stays the definition of the
// result and words the error. Its strings are allocated many at a time and
// the values that repeat (cities, bank names, tags) are kept once, so the
// values it decodes cost the garbage collector less for as long as they
// are kept. pgstore's supplier cache decodes its documents with it.
//
// A Decoder is not safe for concurrent use: give each goroutine its own.
// What it keeps from value to value is bounded (a few thousand repeated
// values and one block of strings).
type Decoder struct{ m *memo }

// NewDecoder returns a Decoder.
func NewDecoder() *Decoder { return &Decoder{m: newMemo()} }

// Record decodes a supplier object (any of its keys: a whole record, or
// the nested objects alone) into r, which it overwrites.
func (d *Decoder) Record(raw []byte, r *supplier.Record) error {
	return decodeSupplier(raw, r, d.m)
}

// Contact decodes a contact object into c, which it overwrites.
func (d *Decoder) Contact(raw []byte, c *supplier.Contact) error {
	return decodeWith(raw, c, d.m, (*fastDecoder).contact)
}

// RemittanceAddress decodes a remittance address object into a, which it
// overwrites.
func (d *Decoder) RemittanceAddress(raw []byte, a *supplier.RemittanceAddress) error {
	return decodeWith(raw, a, d.m, (*fastDecoder).remittance)
}
