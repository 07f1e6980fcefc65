package memstore

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/procurekit/procure"
	"github.com/procurekit/procure/datafile"
)

var _ procure.CommunityStore = (*Store)(nil)

// communities is the registry of the store's communities: every write
// under a community id checks it (docs: live-data.md). A community's
// auto-roles live with the users (users.autoRoles), which apply them.
type communities struct {
	mu   sync.RWMutex
	byID map[string]procure.Community
}

func (x *communities) init() { x.byID = make(map[string]procure.Community) }

// fromFile is the registry entry of a data file's community.
func fromFile(c *datafile.Community) procure.Community {
	return procure.Community{ID: c.ID, Name: c.Name, Region: string(c.Region), AutoRoles: slices.Clone(c.AutoRoles)}
}

// publish registers c; x.mu is held.
func (x *communities) publish(c procure.Community) {
	c.AutoRoles = nil // kept by users
	x.byID[c.ID] = c
}

// hasCommunity reports whether the store holds the community id.
func (s *Store) hasCommunity(id string) bool {
	s.communities.mu.RLock()
	_, ok := s.communities.byID[id]
	s.communities.mu.RUnlock()
	return ok
}

// needCommunity returns an error matching procure.ErrUnknownCommunity
// unless the store holds the community id.
func (s *Store) needCommunity(id string) error {
	if !s.hasCommunity(id) {
		return unknownCommunity(id)
	}
	return nil
}

func unknownCommunity(id string) error {
	return fmt.Errorf("community %q: %w", id, procure.ErrUnknownCommunity)
}

// PutCommunity implements procure.CommunityStore: it creates the community
// or replaces its name, region and auto-roles, keeping everything it owns.
func (s *Store) PutCommunity(ctx context.Context, c procure.Community) (procure.Community, error) {
	defer s.timeWrite("PutCommunity", s.writeStart())
	if err := ctx.Err(); err != nil {
		return procure.Community{}, err
	}
	if err := c.Validate(procure.SourceBody); err != nil {
		return procure.Community{}, err
	}
	roles, err := checkAutoRoles(c.AutoRoles)
	if err != nil {
		return procure.Community{}, err
	}
	x := &s.communities
	x.mu.Lock()
	defer x.mu.Unlock()
	if err := s.SetAutoRoles(c.ID, roles); err != nil {
		return procure.Community{}, err
	}
	x.publish(c)
	c.AutoRoles = roles
	if c.AutoRoles == nil {
		c.AutoRoles = []string{}
	}
	return c, nil
}

// Community implements procure.CommunityStore.
func (s *Store) Community(ctx context.Context, id string) (procure.Community, error) {
	if err := ctx.Err(); err != nil {
		return procure.Community{}, err
	}
	s.communities.mu.RLock()
	c, ok := s.communities.byID[id]
	s.communities.mu.RUnlock()
	if !ok {
		return procure.Community{}, unknownCommunity(id)
	}
	roles, err := s.AutoRoles(ctx, id)
	if err != nil {
		return procure.Community{}, err
	}
	c.AutoRoles = roles
	if c.AutoRoles == nil {
		c.AutoRoles = []string{}
	}
	return c, nil
}

// Communities implements procure.CommunityStore.
func (s *Store) Communities(ctx context.Context) ([]procure.Community, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.communities.mu.RLock()
	out := make([]procure.Community, 0, len(s.communities.byID))
	for _, c := range s.communities.byID {
		out = append(out, c)
	}
	s.communities.mu.RUnlock()
	slices.SortFunc(out, func(a, b procure.Community) int { return strings.Compare(a.ID, b.ID) })
	// The auto-roles live with the users (communities.publish).
	s.users.mu.RLock()
	for i := range out {
		out[i].AutoRoles = append([]string{}, s.users.autoRoles[out[i].ID]...)
	}
	s.users.mu.RUnlock()
	return out, nil
}
