package pgstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/procurekit/procure"
)

var _ procure.CommunityStore = (*Store)(nil)

// PutCommunity implements procure.CommunityStore: it creates the community
// or replaces its name, region and auto-roles, keeping everything it owns
// (suppliers, users, credentials, budgets, and the counters the supplier
// writes keep). Auto-roles are stored trimmed of white space, each once,
// in their order, as memstore keeps them.
func (s *Store) PutCommunity(ctx context.Context, c procure.Community) (procure.Community, error) {
	defer s.timeWrite("PutCommunity", time.Now())
	defer s.creds.invalidate() // after the commit: this node sees the auto-roles at its next lookup
	if err := c.Validate(procure.SourceBody); err != nil {
		return procure.Community{}, err
	}
	roles := []string{}
	for _, r := range c.AutoRoles {
		r = strings.TrimSpace(r)
		if !slices.Contains(roles, r) {
			roles = append(roles, r)
		}
	}
	_, err := s.pool.Exec(ctx, `INSERT INTO communities (id, name, region, auto_roles) VALUES ($1, $2, $3, $4)
		ON CONFLICT (id) DO UPDATE SET name = excluded.name, region = excluded.region, auto_roles = excluded.auto_roles`,
		c.ID, c.Name, c.Region, roles)
	if err != nil {
		return procure.Community{}, fmt.Errorf("pgstore: put community: %w", err)
	}
	c.AutoRoles = roles
	return c, nil
}

// Community implements procure.CommunityStore.
func (s *Store) Community(ctx context.Context, id string) (procure.Community, error) {
	if !storable(id) {
		return procure.Community{}, fmt.Errorf("community %q: %w", id, procure.ErrUnknownCommunity)
	}
	c := procure.Community{ID: id}
	err := s.pool.QueryRow(ctx, `SELECT name, region, auto_roles FROM communities WHERE id = $1`, id).
		Scan(&c.Name, &c.Region, &c.AutoRoles)
	if errors.Is(err, pgx.ErrNoRows) {
		return procure.Community{}, fmt.Errorf("community %q: %w", id, procure.ErrUnknownCommunity)
	}
	if err != nil {
		return procure.Community{}, fmt.Errorf("pgstore: community: %w", err)
	}
	if c.AutoRoles == nil {
		c.AutoRoles = []string{}
	}
	return c, nil
}

// Communities implements procure.CommunityStore.
func (s *Store) Communities(ctx context.Context) ([]procure.Community, error) {
	// COLLATE "C": byte order, as memstore sorts.
	rows, err := s.pool.Query(ctx, `SELECT id, name, region, auto_roles FROM communities ORDER BY id COLLATE "C"`)
	if err != nil {
		return nil, fmt.Errorf("pgstore: communities: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (procure.Community, error) {
		var c procure.Community
		err := row.Scan(&c.ID, &c.Name, &c.Region, &c.AutoRoles)
		if c.AutoRoles == nil {
			c.AutoRoles = []string{}
		}
		return c, err
	})
	if err != nil {
		return nil, fmt.Errorf("pgstore: communities: %w", err)
	}
	if out == nil {
		out = []procure.Community{}
	}
	return out, nil
}
