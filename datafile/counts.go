package datafile

// Outcome counts the entities of one kind an import read, by what it did
// with each (docs: datafile.md "Import"): created (the store did not hold
// it), updated (the store held it with other values, and now holds the
// file's) or unchanged (the store held it as the file has it, and nothing
// was written).
type Outcome struct {
	Created   int `json:"created"`
	Updated   int `json:"updated"`
	Unchanged int `json:"unchanged"`
}

// Total is how many entities of the kind the file held.
func (o Outcome) Total() int { return o.Created + o.Updated + o.Unchanged }

// The kinds of entity an import counts (ImportCounts), as the admin API's
// answer names them.
const (
	KindCommunities         = "communities"
	KindSuppliers           = "suppliers"
	KindContacts            = "contacts"
	KindRemittanceAddresses = "remittanceAddresses"
	KindTokens              = "tokens"
	KindServiceAccounts     = "serviceAccounts"
	KindUsers               = "users"
	KindBudgets             = "budgets"
)

// Kinds lists every kind an import counts, communities first.
var Kinds = []string{
	KindCommunities, KindSuppliers, KindContacts, KindRemittanceAddresses,
	KindTokens, KindServiceAccounts, KindUsers, KindBudgets,
}

// ImportCounts is what an import did with a data file, by kind (Kinds).
// What each kind's "updated" covers: a community's name, region and
// auto-roles; a supplier's own fields with its keywords and dates (its
// contacts and addresses count on their own); a token's scopes, expiry
// and revocation; a service account's allowlist and keys (a key added or
// deactivated updates its account); a user's fields; a budget's amount
// (compared as a number: 100.00 is 100).
type ImportCounts map[string]Outcome

// NewImportCounts returns counts with every kind at zero.
func NewImportCounts() ImportCounts {
	c := make(ImportCounts, len(Kinds))
	for _, k := range Kinds {
		c[k] = Outcome{}
	}
	return c
}

// Add adds o to kind's counts.
func (c ImportCounts) Add(kind string, o Outcome) {
	n := c[kind]
	n.Created += o.Created
	n.Updated += o.Updated
	n.Unchanged += o.Unchanged
	c[kind] = n
}

// Totals returns how many entities of each kind the file held: the
// counts an import reported before it told its outcomes apart, and what
// the admin API's answer still holds at its top level.
func (c ImportCounts) Totals() map[string]int {
	out := make(map[string]int, len(c))
	for k, o := range c {
		out[k] = o.Total()
	}
	return out
}

// Sum is the outcomes of every kind added up.
func (c ImportCounts) Sum() Outcome {
	var s Outcome
	for _, o := range c {
		s.Created += o.Created
		s.Updated += o.Updated
		s.Unchanged += o.Unchanged
	}
	return s
}
