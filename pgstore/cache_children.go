package pgstore

import (
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/procurekit/procure/datafile"
	"github.com/procurekit/procure/supplier"
)

// childDocs are the contacts' and remittance addresses' JSON documents of
// a community as a cache load read them, by supplier, not decoded (issue
// 22: the load's peak). A load reads them before the suppliers, and each
// supplier is then decoded with its contacts and addresses, packed
// (supplierindex.Pack) and dropped on the worker that decoded it. Before,
// every supplier was decoded and kept, then every contact and address
// decoded into it, and only then were they packed: at 1,000,000 suppliers
// the load's live heap reached 2.2 GB of decoded values, which the
// collector marked again at each of its cycles, back to back under a
// memory limit (GOMEMLIMIT=3000MiB: 32 collections in a load, half of its
// CPU). Documents held as bytes in large blocks hold no pointers: the
// collector marks a block without scanning it.
type childDocs struct {
	blocks [][]byte
	docs   []childDoc
	// bySupplier is each supplier's first and last document (docs[i].next
	// chains them in the order read).
	bySupplier map[uuid.UUID]childSpan
}

// childDoc is one document: where its bytes are, its kind, and the
// supplier's next document (-1: none).
type childDoc struct {
	block    int32
	off, n   uint32
	next     int32
	kindAddr bool // a remittance address; else a contact
}

type childSpan struct{ first, last int32 }

// childBlockSize is the size of the blocks the documents are copied into.
const childBlockSize = 4 << 20

func newChildDocs() *childDocs {
	return &childDocs{bySupplier: make(map[uuid.UUID]childSpan)}
}

// read appends the (supplier_id, doc) rows of rows, as contacts or as
// addresses (addr), and closes rows.
func (k *childDocs) read(rows pgx.Rows, addr bool) error {
	defer rows.Close()
	var id uuid.UUID
	for rows.Next() {
		if err := rows.Scan(&id, nil); err != nil {
			return err
		}
		// The raw value of a json column is its text in either format
		// (json's binary format is the text).
		raw := rows.RawValues()[1]
		if raw == nil {
			return fmt.Errorf("supplier %s: a document is NULL", id)
		}
		if len(k.docs) >= 1<<31-1 {
			return fmt.Errorf("more than %d contacts and addresses in a community", 1<<31-1)
		}
		k.add(id, raw, addr)
	}
	return rows.Err()
}

// add copies raw, a document of supplier id, into the blocks.
func (k *childDocs) add(id uuid.UUID, raw []byte, addr bool) {
	last := len(k.blocks) - 1
	if last < 0 || len(k.blocks[last])+len(raw) > cap(k.blocks[last]) {
		k.blocks = append(k.blocks, make([]byte, 0, max(childBlockSize, len(raw))))
		last++
	}
	blk := k.blocks[last]
	off := len(blk)
	k.blocks[last] = append(blk, raw...)
	i := int32(len(k.docs))
	k.docs = append(k.docs, childDoc{block: int32(last), off: uint32(off), n: uint32(len(raw)), next: -1, kindAddr: addr})
	if sp, ok := k.bySupplier[id]; ok {
		k.docs[sp.last].next = i
		sp.last = i
		k.bySupplier[id] = sp
	} else {
		k.bySupplier[id] = childSpan{first: i, last: i}
	}
}

// attach decodes with d the contacts and addresses of r, in the order
// read, and appends them to r's lists. It only reads k: any number of
// goroutines may attach at once.
func (k *childDocs) attach(d *datafile.Decoder, r *supplier.Record) error {
	sp, ok := k.bySupplier[r.ID]
	if !ok {
		return nil
	}
	for i := sp.first; i >= 0; i = k.docs[i].next {
		doc := &k.docs[i]
		raw := k.blocks[doc.block][doc.off : doc.off+doc.n]
		if doc.kindAddr {
			var a supplier.RemittanceAddress
			if err := d.RemittanceAddress(raw, &a); err != nil {
				return fmt.Errorf("supplier %s: remittance address: %w", r.ID, err)
			}
			r.RemittanceAddresses = append(r.RemittanceAddresses, a)
			continue
		}
		var c supplier.Contact
		if err := d.Contact(raw, &c); err != nil {
			return fmt.Errorf("supplier %s: contact: %w", r.ID, err)
		}
		r.Contacts = append(r.Contacts, c)
	}
	return nil
}
