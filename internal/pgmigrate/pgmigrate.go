// Package pgmigrate applies a package's embedded, versioned SQL migrations
// to PostgreSQL, the way pgstore and budget/pgholds each keep their schema:
// files named NNNN_description.sql, applied in version order, each once,
// all in one transaction under a transaction-level advisory lock, so that
// nodes starting together apply each migration once and a failed one
// leaves the database as it was.
package pgmigrate

import (
	"context"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// Migration is one versioned SQL file.
type Migration struct {
	Version int
	Name    string // the file's name, e.g. 0001_init.sql
	SQL     string
}

// Load returns the migrations/*.sql files of fsys in version order. A
// file's name starts with a positive version number and an underscore; a
// version may appear once.
func Load(fsys fs.FS) ([]Migration, error) {
	names, err := fs.Glob(fsys, "migrations/*.sql")
	if err != nil {
		return nil, err
	}
	var out []Migration
	for _, name := range names {
		base := path.Base(name)
		num, _, ok := strings.Cut(base, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v <= 0 {
			return nil, fmt.Errorf("migration %s: the name must start with a positive version number and an underscore", base)
		}
		b, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, err
		}
		out = append(out, Migration{Version: v, Name: base, SQL: string(b)})
	}
	slices.SortFunc(out, func(a, b Migration) int { return a.Version - b.Version })
	for i := 1; i < len(out); i++ {
		if out[i].Version == out[i-1].Version {
			return nil, fmt.Errorf("migrations %s and %s have the same version", out[i-1].Name, out[i].Name)
		}
	}
	return out, nil
}

// Options say where Apply records what it applied and how it serialises.
type Options struct {
	// Table records the applied versions (created when missing).
	Table string
	// Lock is the key of the transaction-level advisory lock held while
	// migrating.
	Lock int64
	// Hook, when not nil, runs after each migration's SQL in the same
	// transaction (a data repair that SQL alone cannot express).
	Hook func(ctx context.Context, tx pgx.Tx, m Migration) error
}

// Applied is a migration Apply ran, with how long it took.
type Applied struct {
	Migration
	Took time.Duration
}

// Apply applies those of ms the database lacks, in one transaction begun
// on db; it returns what it ran once that transaction has committed. A
// version the database has and ms lacks comes from a newer build, whose
// schema is a superset (migrations only add): it is left alone. The
// statement timeout does not apply to migrations (nor to waiting for
// another node's).
func Apply(ctx context.Context, db interface {
	Begin(context.Context) (pgx.Tx, error)
}, ms []Migration, o Options) ([]Applied, error) {
	var ran []Applied
	err := pgx.BeginFunc(ctx, db, func(tx pgx.Tx) error {
		ran = ran[:0]
		if _, err := tx.Exec(ctx, "SET LOCAL statement_timeout = 0"); err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", o.Lock); err != nil {
			return fmt.Errorf("migrate: lock: %w", err)
		}
		table := pgx.Identifier{o.Table}.Sanitize()
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS `+table+` (
			version    integer PRIMARY KEY,
			name       text NOT NULL,
			applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
		rows, err := tx.Query(ctx, "SELECT version FROM "+table)
		if err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
		applied, err := pgx.CollectRows(rows, pgx.RowTo[int])
		if err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
		for _, m := range ms {
			if slices.Contains(applied, m.Version) {
				continue
			}
			start := time.Now()
			// Without arguments pgx uses the simple protocol, which runs a
			// file of several statements.
			if _, err := tx.Exec(ctx, m.SQL); err != nil {
				return fmt.Errorf("migration %s: %w", m.Name, err)
			}
			if o.Hook != nil {
				if err := o.Hook(ctx, tx, m); err != nil {
					return fmt.Errorf("migration %s: %w", m.Name, err)
				}
			}
			if _, err := tx.Exec(ctx, "INSERT INTO "+table+" (version, name) VALUES ($1, $2)", m.Version, m.Name); err != nil {
				return fmt.Errorf("migration %s: %w", m.Name, err)
			}
			ran = append(ran, Applied{m, time.Since(start)})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return ran, nil
}
