// Package pgpool parses the connection string of procure's PostgreSQL
// stores (pgstore, budget/pgholds) into a pgx pool configuration that
// works both on a direct connection and through a connection pooler in
// transaction mode, such as PgBouncer's pool_mode = transaction, where
// consecutive transactions of one client may run on different server
// connections and session state does not survive a transaction.
//
// What breaks under transaction pooling is pgx's default way of running a
// query, QueryExecModeCacheStatement: it prepares a named statement once per
// connection and executes it by name afterwards, but the server connection
// that has the statement is not the next one the pooler hands out
// ("prepared statement ... does not exist", or "... already exists").
// ParseConfig therefore makes QueryExecModeCacheDescribe the default: each
// query is parsed as an unnamed statement in the same message sequence as
// its execution, so it needs nothing from an earlier transaction, and pgx
// remembers only the statement's description (the parameter and result
// types) on the client, which keeps parameters binary-encoded and typed
// (a json parameter sent as text in QueryExecModeExec or the simple
// protocol must be a string, never []byte; see bench/README.md "Session 7
// figures" for what each mode costs). A DSN that names
// default_query_exec_mode keeps its choice, for an operator who connects
// directly and wants the named statements' saving.
package pgpool

import (
	"errors"
	"net/url"
	"regexp"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// DefaultExecMode is the query exec mode of a pool whose DSN names none.
const DefaultExecMode = pgx.QueryExecModeCacheDescribe

// ErrDSN is the error of a connection string that does not parse. pgx's
// own message may quote the string, password included, so it is not
// passed on.
var ErrDSN = errors.New("the database URL does not parse")

// ParseConfig parses dsn (a URL such as postgres://user:pass@host:5432/db,
// or keyword=value pairs; pgxpool's pool_* parameters are understood) and
// sets DefaultExecMode unless dsn names default_query_exec_mode.
func ParseConfig(dsn string) (*pgxpool.Config, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, ErrDSN
	}
	if !namesExecMode(dsn) {
		cfg.ConnConfig.DefaultQueryExecMode = DefaultExecMode
	}
	return cfg, nil
}

// keywordExecMode finds the parameter in a keyword=value DSN.
var keywordExecMode = regexp.MustCompile(`(^|\s)default_query_exec_mode\s*=`)

// namesExecMode reports whether dsn sets default_query_exec_mode (pgx
// consumes the parameter, so the parsed configuration cannot tell a
// default from a choice).
func namesExecMode(dsn string) bool {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		u, err := url.Parse(dsn)
		return err == nil && u.Query().Has("default_query_exec_mode")
	}
	return keywordExecMode.MatchString(dsn)
}
