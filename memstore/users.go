package memstore

import "github.com/procurekit/procure/datafile"

// users: placeholder until its owner writes it.
type users struct{}

func (x *users) init() {}

func (x *users) load(c *datafile.Community) error { return nil }
