// Package datafile reads the JSON data file that seeds a store
// (docs: datafile.md): communities with their bearer tokens,
// service accounts, auto-roles, suppliers, users and budgets.
//
// Stream and StreamFile read a file, decoding and validating on all cores,
// and hand it over entry by entry, so that files too large to hold twice
// (a million suppliers is some gigabytes of JSON) are read in bounded
// memory: no array is held whole, a community's users go one by one to a
// Handler that is also a UserHandler, the values of keys a data file does
// not have are skipped as they are read, and one entry is bounded
// (MaxEntryBytes, MaxSupplierBytes). Parse and ReadFile are the same
// reader collecting the whole file into a File.
//
// Secrets in a data file are plain text; stores hash them on load and keep
// only the hashes. Errors name the offending entry by its JSON path
// ("communities[0].suppliers[12].emails.ordersEmailAddress: must be a valid
// email address") or, for malformed JSON, by line and column.
package datafile

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/procurekit/procure"
	"github.com/procurekit/procure/auth"
	"github.com/procurekit/procure/internal/check"
	"github.com/procurekit/procure/supplier"
	"github.com/procurekit/procure/user"
)

// File is a whole data file.
type File struct {
	Communities []Community `json:"communities"`
}

// Region is one of the service's regional tenants (docs: tenancy.md "Regions").
type Region string

// The regions.
const (
	AU   Region = "AU"
	NZ   Region = "NZ"
	US   Region = "US"
	DEMO Region = "DEMO"
)

// Community is a customer organisation and everything it owns.
type Community struct {
	ID              string            `json:"id"`
	Name            string            `json:"name"`
	Region          Region            `json:"region"`
	Tokens          []Token           `json:"tokens,omitempty"`
	ServiceAccounts []ServiceAccount  `json:"serviceAccounts,omitempty"`
	AutoRoles       []string          `json:"autoRoles,omitempty"`
	Suppliers       []supplier.Record `json:"suppliers,omitempty"`
	Users           []user.User       `json:"users,omitempty"`
	Budgets         []Budget          `json:"budgets,omitempty"`
}

// Token is a bearer token of the supplier API.
type Token struct {
	Token   string     `json:"token"`
	Scopes  []string   `json:"scopes"`
	Expires *time.Time `json:"expires,omitempty"`
	Revoked bool       `json:"revoked,omitempty"`
}

// ServiceAccount is a user-API caller with its keys and IP allowlist.
type ServiceAccount struct {
	ID         string   `json:"id"`
	Keys       []Key    `json:"keys"`
	AllowedIPs []string `json:"allowedIPs,omitempty"`
}

// Key is one API key of a service account.
type Key struct {
	Key    string `json:"key"`
	Active bool   `json:"active"`
}

// Budget is one row of a community's budget table.
type Budget struct {
	Account string          `json:"account"`
	Budget  decimal.Decimal `json:"budget"`
}

// ReadFile reads and validates the data file at path. Errors start with the
// path.
func ReadFile(path string) (*File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	file, err := Parse(bufio.NewReaderSize(f, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return file, nil
}

// Parse decodes and validates a data file: Stream, collected into a File.
// Supplier date-times are normalised (supplier.Record.Normalize).
func Parse(r io.Reader) (*File, error) {
	var c collector
	if err := Stream(r, &c); err != nil {
		return nil, err
	}
	return &c.f, nil
}

// collector is the Handler of Parse: it keeps everything.
type collector struct {
	f    File
	recs []supplier.Record // of the community whose object has not ended
}

func (c *collector) Supplier(_, _ int, rec *supplier.Record) error {
	c.recs = append(c.recs, *rec)
	return nil
}

func (c *collector) Community(_ int, com *Community, _ int) error {
	com.Suppliers, c.recs = c.recs, nil
	c.f.Communities = append(c.f.Communities, *com)
	return nil
}

// Validate checks the rules a file must keep beyond JSON types: required
// ids, known regions, unique ids, valid suppliers (supplier.Record.Validate),
// users that keep the user API's rules after trimming (user.User.Validate),
// valid auto-role codes, valid CIDRs. The first broken entry is reported.
func (f *File) Validate() error {
	if len(f.Communities) == 0 {
		return errNoCommunity
	}
	var v checker
	for ci := range f.Communities {
		c := &f.Communities[ci]
		if err := v.head(ci, c); err != nil {
			return err
		}
		supplierIDs := make(map[uuid.UUID]struct{}, len(c.Suppliers))
		for si := range c.Suppliers {
			s := &c.Suppliers[si]
			if err := checkSupplier(ci, si, s); err != nil {
				return err
			}
			if err := uniqueSupplier(supplierIDs, ci, si, s); err != nil {
				return err
			}
		}
		if err := v.tail(ci, c); err != nil {
			return err
		}
	}
	return nil
}

var errNoCommunity = errors.New("communities: must hold at least one community")

// checker holds what must be unique across the communities of a file.
type checker struct {
	communityIDs map[string]bool
	tokens       map[string]bool
	accounts     map[string]bool
	userIDs      map[string]bool
}

func communityPath(ci int) string { return "communities[" + strconv.Itoa(ci) + "]" }

// head checks a community's id, region, tokens and service accounts.
func (v *checker) head(ci int, c *Community) error {
	if v.communityIDs == nil {
		v.communityIDs = map[string]bool{}
		v.tokens = map[string]bool{}
		v.accounts = map[string]bool{}
		v.userIDs = map[string]bool{}
	}
	at := communityPath(ci)
	if strings.TrimSpace(c.ID) == "" {
		return fmt.Errorf("%s.id: is required", at)
	}
	if v.communityIDs[c.ID] {
		return fmt.Errorf("%s.id: duplicate community id %q", at, c.ID)
	}
	v.communityIDs[c.ID] = true
	switch c.Region {
	case AU, NZ, US, DEMO:
	default:
		return fmt.Errorf("%s.region: must be one of AU, NZ, US, DEMO (got %q)", at, c.Region)
	}
	for ti, t := range c.Tokens {
		tat := fmt.Sprintf("%s.tokens[%d]", at, ti)
		if t.Token == "" {
			return fmt.Errorf("%s.token: is required", tat)
		}
		if v.tokens[t.Token] {
			// Never echo the secret itself.
			return fmt.Errorf("%s.token: the same token appears twice", tat)
		}
		v.tokens[t.Token] = true
		if t.Expires != nil && !check.Instant(*t.Expires) {
			return fmt.Errorf("%s.expires: %s", tat, check.InstantRule)
		}
	}
	for ai, a := range c.ServiceAccounts {
		aat := fmt.Sprintf("%s.serviceAccounts[%d]", at, ai)
		if a.ID == "" {
			return fmt.Errorf("%s.id: is required", aat)
		}
		if v.accounts[a.ID] {
			return fmt.Errorf("%s.id: duplicate service account id %q", aat, a.ID)
		}
		v.accounts[a.ID] = true
		for ki, k := range a.Keys {
			if k.Key == "" {
				return fmt.Errorf("%s.keys[%d].key: is required", aat, ki)
			}
		}
		for ii, ip := range a.AllowedIPs {
			if _, err := auth.ParsePrefix(ip); err != nil {
				return fmt.Errorf("%s.allowedIPs[%d]: must be an IP address or CIDR (got %q)", aat, ii, ip)
			}
		}
	}
	return nil
}

// checkSupplier checks supplier si of community ci (supplier.Record.Validate).
func checkSupplier(ci, si int, s *supplier.Record) error {
	if surelyValid(s) {
		return nil
	}
	if err := s.Validate(); err != nil {
		sat := communityPath(ci) + ".suppliers[" + strconv.Itoa(si) + "]"
		var v *procure.ValidationError
		if errors.As(err, &v) {
			return v.Prefix(sat)
		}
		return fmt.Errorf("%s: %w", sat, err)
	}
	return nil
}

// uniqueSupplier records s's id in seen, or reports it as a duplicate.
func uniqueSupplier(seen map[uuid.UUID]struct{}, ci, si int, s *supplier.Record) error {
	if _, dup := seen[s.ID]; dup {
		return fmt.Errorf("%s.suppliers[%d].id: duplicate supplier id %s", communityPath(ci), si, s.ID)
	}
	seen[s.ID] = struct{}{}
	return nil
}

// tail checks a community's auto-roles, users and budgets.
func (v *checker) tail(ci int, c *Community) error {
	usernames := map[string]bool{}
	for ui := range c.Users {
		// The rules of the user API (user.User.Validate) on the
		// trimmed values that Parse keeps.
		u := c.Users[ui].Normalize()
		if err := v.user(ci, ui, &u, usernames); err != nil {
			return err
		}
	}
	return v.rest(ci, c)
}

// user checks user ui of community ci, normalised (user.User.Normalize),
// against the rules of the user API and the ids of the file's users and
// the usernames of its community so far.
func (v *checker) user(ci, ui int, u *user.User, usernames map[string]bool) error {
	if v.userIDs == nil {
		v.userIDs = map[string]bool{}
	}
	uat := communityPath(ci) + ".users[" + strconv.Itoa(ui) + "]"
	if err := u.Validate(); err != nil {
		var v *procure.ValidationError
		if errors.As(err, &v) {
			return fmt.Errorf("%s", v.Prefix(uat).Error())
		}
		return fmt.Errorf("%s: %w", uat, err)
	}
	if v.userIDs[u.ID] {
		return fmt.Errorf("%s.id: duplicate user id %q", uat, u.ID)
	}
	v.userIDs[u.ID] = true
	key := user.UsernameKey(u.Username)
	if usernames[key] {
		return fmt.Errorf("%s.username: duplicate username %q (usernames compare case-insensitively)", uat, u.Username)
	}
	usernames[key] = true
	return nil
}

// rest checks a community's auto-roles and budgets.
func (v *checker) rest(ci int, c *Community) error {
	at := communityPath(ci)
	for ri, r := range c.AutoRoles {
		if r = strings.TrimSpace(r); r == "" || utf8.RuneCountInString(r) > user.MaxTextLength {
			return fmt.Errorf("%s.autoRoles[%d]: must be a role code of 1 to %d characters", at, ri, user.MaxTextLength)
		}
	}
	accountsSeen := map[string]bool{}
	for bi, b := range c.Budgets {
		if strings.TrimSpace(b.Account) == "" {
			return fmt.Errorf("%s.budgets[%d].account: is required", at, bi)
		}
		if accountsSeen[b.Account] {
			return fmt.Errorf("%s.budgets[%d].account: duplicate account %q", at, bi, b.Account)
		}
		accountsSeen[b.Account] = true
	}
	return nil
}
