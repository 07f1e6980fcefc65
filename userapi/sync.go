package userapi

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/procurekit/procure/user"
)

// ErrIDMismatch: the desired user carries an id, and the username belongs
// to a user with another id. Sync does not guess which is right.
var ErrIDMismatch = errors.New("the username belongs to a user with another id")

// Outcome is what Sync did (or, in a Plan, would do) to a user.
type Outcome int

// The outcomes.
const (
	Unchanged Outcome = iota // the user already matched: nothing was written
	Created                  // the user did not exist and was created
	Updated                  // the user existed and was changed
)

func (o Outcome) String() string {
	switch o {
	case Unchanged:
		return "unchanged"
	case Created:
		return "created"
	case Updated:
		return "updated"
	}
	return fmt.Sprintf("Outcome(%d)", int(o))
}

// Plan is what Sync would do to bring one user in step, found by the
// pre-check without writing anything. Apply carries it out.
type Plan struct {
	// Outcome is the predicted outcome, and what Apply reports: Apply
	// reports what it sent (Updated for every update it sent, even when
	// the server's result equals what it held before), except Created for
	// an update by id whose id turned out to be unknown.
	Outcome Outcome
	// Current is the user the pre-check found by username, or nil.
	Current *user.User
	// Changes are the JSON names of the fields to write: every present
	// field when creating, the differing ones when updating.
	Changes []string
	// Input is the normalised request Apply sends; on an update its ID is
	// the current user's.
	Input user.Input
	// byID marks an update by the desired id after the username was not
	// found: a rename, or a create when the id is unknown too.
	byID bool
}

// ByID reports whether the plan updates the user by the desired id because
// the username was not found (a rename; a create if the id is unknown).
func (p Plan) ByID() bool { return p.byID }

// Sync brings one user in step with in, by the pre-check the spec
// documents (4.2): get the user by username, then create or update it.
//
// in is first normalised and checked locally as a create body (username
// required; id optional); a broken rule is a *procure.ValidationError and
// nothing is sent. Then:
//
//   - The username is not found and in has no id: create the user
//     (Created).
//   - The username is not found and in has an id: update that id (a
//     rename, Updated); if the id is unknown too, create the user with it
//     (Created).
//   - The username is found: when in has an id that is not the user's,
//     fail with ErrIDMismatch. Otherwise compare every field present in in
//     with the current user; fields absent from in are "no change". Text
//     and enabled compare exactly (a change in the case of the username is
//     a change); the coded lists compare as sets of codes and attributes
//     as sets of name/value pairs, so order does not matter. Roles are
//     compared as the server would store them: the desired roles plus the
//     community's auto-roles - those the server announced in the
//     pre-check (Procure-Auto-Roles) and those named by WithAutoRoles -
//     against the current roles. No difference: nothing is written
//     (Unchanged). A difference: update with the user's id (Updated).
//
// A create that loses a race (the username was created by someone else
// after the pre-check) is planned and applied once more, which then
// updates. The returned user is the user as stored after Sync.
func (c *Client) Sync(ctx context.Context, in user.Input) (Outcome, user.User, error) {
	p, err := c.Plan(ctx, in)
	if err != nil {
		return Unchanged, user.User{}, err
	}
	o, u, err := c.Apply(ctx, p)
	if err != nil && p.Outcome == Created && !p.byID && errors.Is(err, user.ErrDuplicateUsername) {
		if p, err = c.Plan(ctx, in); err != nil {
			return Unchanged, user.User{}, err
		}
		return c.Apply(ctx, p)
	}
	return o, u, err
}

// Plan runs Sync's pre-check and comparison without writing: the GET by
// username, and the decision. It is what a dry run reports.
func (c *Client) Plan(ctx context.Context, in user.Input) (Plan, error) {
	in, err := in.Prepare(user.OpCreate)
	if err != nil {
		return Plan{}, err
	}
	if in.ID != nil && *in.ID == "" {
		in.ID = nil // an empty id means none (the server generates one)
	}
	cur, announced, _, err := c.getForSync(ctx, *in.Username)
	switch {
	case IsNotFound(err) && in.ID != nil:
		return Plan{Outcome: Updated, Changes: without(in.Fields(), "id"), Input: in, byID: true}, nil
	case IsNotFound(err):
		return Plan{Outcome: Created, Changes: in.Fields(), Input: in}, nil
	case err != nil:
		return Plan{}, err
	}
	if in.ID != nil && *in.ID != cur.ID {
		return Plan{}, fmt.Errorf("%w: username %q is user %q, the desired user is %q", ErrIDMismatch, cur.Username, cur.ID, *in.ID)
	}
	changes := c.differences(in, cur, announced)
	if len(changes) == 0 {
		return Plan{Outcome: Unchanged, Current: &cur, Input: in}, nil
	}
	id := cur.ID
	in.ID = &id
	return Plan{Outcome: Updated, Current: &cur, Changes: changes, Input: in}, nil
}

// Apply carries out a plan made by Plan and returns the outcome and the
// user as stored.
func (c *Client) Apply(ctx context.Context, p Plan) (Outcome, user.User, error) {
	switch {
	case p.Outcome == Unchanged && p.Current != nil:
		return Unchanged, p.Current.Clone(), nil
	case p.Outcome == Created:
		u, err := c.Create(ctx, p.Input)
		if err != nil {
			return Unchanged, user.User{}, err
		}
		return Created, u, nil
	case p.Outcome == Updated && p.byID:
		u, err := c.Update(ctx, p.Input)
		if IsNotFound(err) {
			if u, err = c.Create(ctx, p.Input); err != nil {
				return Unchanged, user.User{}, err
			}
			return Created, u, nil
		}
		if err != nil {
			return Unchanged, user.User{}, err
		}
		return Updated, u, nil
	case p.Outcome == Updated && p.Current != nil:
		u, err := c.Update(ctx, p.Input)
		if err != nil {
			return Unchanged, user.User{}, err
		}
		return Updated, u, nil // what was sent, whatever the server made of it
	}
	return Unchanged, user.User{}, errors.New("userapi: Apply: the plan was not made by Plan")
}

// differences lists the JSON names of the fields present in in that differ
// from cur, by Sync's rules; autoRoles are the roles the server announced
// it adds.
func (c *Client) differences(in user.Input, cur user.User, autoRoles []string) []string {
	var out []string
	text := func(name string, want *string, have string) {
		if want != nil && *want != have {
			out = append(out, name)
		}
	}
	list := func(name string, want *[]user.Code, have []user.Code, ignore map[string]bool) {
		if want != nil && !sameCodes(*want, have, ignore) {
			out = append(out, name)
		}
	}
	text("username", in.Username, cur.Username)
	text("externalId", in.ExternalID, cur.ExternalID)
	text("firstName", in.FirstName, cur.FirstName)
	text("lastName", in.LastName, cur.LastName)
	text("displayName", in.DisplayName, cur.DisplayName)
	text("email", in.Email, cur.Email)
	text("phone", in.Phone, cur.Phone)
	if in.Enabled != nil && *in.Enabled != cur.Enabled {
		out = append(out, "enabled")
	}
	list("organisationUnits", in.OrganisationUnits, cur.OrganisationUnits, nil)
	if in.Roles != nil && !sameCodes(c.storedRoles(*in.Roles, autoRoles), cur.Roles, nil) {
		out = append(out, "roles")
	}
	list("buyerGroups", in.BuyerGroups, cur.BuyerGroups, nil)
	if in.Attributes != nil && !sameAttributes(*in.Attributes, cur.Attributes) {
		out = append(out, "attributes")
	}
	list("approverGroups", in.ApproverGroups, cur.ApproverGroups, nil)
	return out
}

// sameCodes reports whether a and b hold the same codes, in any order,
// leaving out the codes in ignore.
func sameCodes(a, b []user.Code, ignore map[string]bool) bool {
	set := func(cs []user.Code) []string {
		out := make([]string, 0, len(cs))
		for _, c := range cs {
			if !ignore[c.Code] {
				out = append(out, c.Code)
			}
		}
		slices.Sort(out)
		return slices.Compact(out)
	}
	return slices.Equal(set(a), set(b))
}

// sameAttributes reports whether a and b hold the same name/value pairs in
// any order.
func sameAttributes(a, b []user.Attribute) bool {
	if len(a) != len(b) {
		return false
	}
	m := make(map[user.Attribute]int, len(a))
	for _, x := range a {
		m[x]++
	}
	for _, x := range b {
		if m[x] == 0 {
			return false
		}
		m[x]--
	}
	return true
}

// storedRoles returns the roles the server would store for desired: the
// desired ones plus the auto-roles (announced, and named by
// WithAutoRoles), as a set.
func (c *Client) storedRoles(desired []user.Code, announced []string) []user.Code {
	out := slices.Clone(desired)
	for _, r := range announced {
		out = append(out, user.Code{Code: r})
	}
	for r := range c.autoRoles {
		out = append(out, user.Code{Code: r})
	}
	return out
}

func without(names []string, drop string) []string {
	return slices.DeleteFunc(names, func(n string) bool { return n == drop })
}

// ErrNoIDLookup: the server offers no lookup of a user by id (it has no
// SCIM endpoint beside the user API), so Resolve cannot settle a plan.
var ErrNoIDLookup = errors.New("userapi: the server cannot look a user up by id (no SCIM endpoint at /scim/v2)")

// Resolve settles a plan that updates by id (Plan.ByID: the username was
// not found and the desired user has an id), which Plan alone cannot: the
// user API looks users up by username only. It asks the server whether
// the id is a user's, through the SCIM endpoint beside the user API (GET
// /scim/v2/Users/{id} with the same API key; docs: scim.md), and returns
// the plan Apply carries out: Created when the id is unknown (in this
// community), or an update of that user - a rename - with the fields that
// differ, compared as Plan compares them. Any other plan is returned as
// it is.
//
// A server without the SCIM endpoint is ErrNoIDLookup, with the plan
// unchanged. Resolve writes nothing; a dry run calls it, Sync has no need
// (Apply tries the update and creates when the id is unknown).
func (c *Client) Resolve(ctx context.Context, p Plan) (Plan, error) {
	if !p.byID || p.Input.ID == nil {
		return p, nil
	}
	username, found, err := c.usernameOf(ctx, *p.Input.ID)
	switch {
	case err != nil:
		return p, err
	case !found:
		return Plan{Outcome: Created, Changes: p.Input.Fields(), Input: p.Input}, nil
	}
	cur, announced, _, err := c.getForSync(ctx, username)
	if IsNotFound(err) || err == nil && cur.ID != *p.Input.ID {
		// Renamed or deleted between the two lookups: as unsettled as
		// before.
		return p, nil
	}
	if err != nil {
		return p, err
	}
	return Plan{Outcome: Updated, Current: &cur, Changes: c.differences(p.Input, cur, announced), Input: p.Input}, nil
}
