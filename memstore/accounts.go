package memstore

import "github.com/procurekit/procure/datafile"

// accounts: placeholder until its owner writes it.
type accounts struct{}

func (x *accounts) init() {}

func (x *accounts) load(c *datafile.Community) error { return nil }
