// Package pgpool makes the pgx pool configuration of procure's PostgreSQL
// stores (pgstore, budget/pgholds) from a connection string, so that they
// work both on a direct connection and through a connection pooler in
// transaction mode, such as PgBouncer's pool_mode = transaction, where
// consecutive transactions of one client may run on different server
// connections and session state does not survive a transaction.
//
// What breaks under transaction pooling is pgx's default way of running a
// query, QueryExecModeCacheStatement: it prepares a named statement once per
// connection and executes it by name afterwards, but the server connection
// that has the statement is not the next one the pooler hands out
// ("prepared statement ... does not exist", or "... already exists").
// QueryExecModeCacheDescribe needs nothing from an earlier transaction:
// each query is parsed as an unnamed statement in the message sequence of
// its execution, and pgx keeps only the statement's description (its
// parameter and result types) on the client, so parameters and results
// stay binary and typed. It costs the server a parse and a plan per
// execution, which a named statement saves: twice the time of the store's
// simplest reads on the database (bench/README.md "Session 8 figures:
// PgBouncer and replicas").
//
// Config therefore decides per connection string, unless the string names
// default_query_exec_mode itself: it connects once and compares the
// address it reached with the address the server says it listens on
// (inet_server_addr, inet_server_port), or, on a Unix socket, the socket
// it reached with the server's own (unix_socket_directories, port: see
// ownSocket). When they are the same nothing sits between client and
// server, and the named statements are used; anything else - another
// port, host or socket, which is what a pooler is - gets unnamed
// statements. On a Unix socket this matters most: a node on its
// database's own socket planned every statement again, and a supplier
// write held its community's lock three times as long (bench/README.md,
// "Session 16 figures").
//
// Through a pooler the pool is also larger (PoolerConns times pgxpool's
// default), unless the connection string names pool_max_conns: the
// node's connections are then the pooler's client connections, which
// cost the database nothing, and each round trip is longer by the
// pooler's hop, so more of them in flight keep the pooler's server
// connections busy (bench/README.md "Session 9 figures": the user API's
// writes through PgBouncer, +20% with 16 connections instead of 4). A
// Unix socket that is not the server's own keeps pgxpool's default: it
// may be the database's, reached by another path.
//
// In QueryExecModeExec and the simple protocol, which an operator may name,
// parameter types are not known to pgx: a json parameter must then be a
// string (a []byte is sent as bytea text, which no JSON column takes), as
// the stores' are.
package pgpool

import (
	"context"
	"errors"
	"net"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// ErrDSN is the error of a connection string that does not parse. pgx's
// own message may quote the string, password included, so it is not
// passed on.
var ErrDSN = errors.New("the database URL does not parse")

// Config parses dsn (a URL such as postgres://user:pass@host:5432/db, or
// keyword=value pairs; pgxpool's pool_* parameters are understood) and
// chooses its query exec mode as the package doc says: unless dsn names
// default_query_exec_mode, it connects once to see whether the connection
// is direct. direct reports what it found (false when dsn named the mode).
// Its connections encode google/uuid's UUID parameters from their bytes
// (RegisterUUID).
func Config(ctx context.Context, dsn string) (cfg *pgxpool.Config, direct bool, err error) {
	cfg, err = pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, false, ErrDSN
	}
	cfg.AfterConnect = registerTypes
	if NamesParam(dsn, "default_query_exec_mode") {
		return cfg, false, nil
	}
	peer, err := reached(ctx, cfg.ConnConfig)
	if err != nil {
		return nil, false, err
	}
	direct = peer == server
	cfg.ConnConfig.DefaultQueryExecMode = pgx.QueryExecModeCacheDescribe
	if direct {
		cfg.ConnConfig.DefaultQueryExecMode = pgx.QueryExecModeCacheStatement
	}
	if peer == pooler && !NamesParam(dsn, "pool_max_conns") {
		cfg.MaxConns *= PoolerConns
	}
	return cfg, direct, nil
}

// PoolerConns is how many times pgxpool's default pool size Config gives
// a connection string that reaches a pooler.
const PoolerConns = 4

// What a connection reached: the server itself, something else at
// another TCP address (a pooler), or a Unix socket that is not the
// server's own.
type peerKind int

const (
	unknown peerKind = iota
	server
	pooler
)

// ParseConfig parses dsn as Config does, without connecting: its mode is
// QueryExecModeCacheDescribe unless dsn names one. For a connection of a
// few statements (migrations), where named statements save nothing.
func ParseConfig(dsn string) (*pgxpool.Config, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, ErrDSN
	}
	if !NamesParam(dsn, "default_query_exec_mode") {
		cfg.ConnConfig.DefaultQueryExecMode = pgx.QueryExecModeCacheDescribe
	}
	cfg.AfterConnect = registerTypes
	return cfg, nil
}

// reached connects with cc and compares the peer's address with the
// server's own.
func reached(ctx context.Context, cc *pgx.ConnConfig) (peerKind, error) {
	conn, err := pgx.ConnectConfig(ctx, cc.Copy())
	if err != nil {
		return unknown, err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	var host *string
	var port *int32
	if err := conn.QueryRow(ctx, "SELECT host(inet_server_addr()), inet_server_port()", pgx.QueryExecModeSimpleProtocol).Scan(&host, &port); err != nil {
		return unknown, err
	}
	switch peer := conn.PgConn().Conn().RemoteAddr().(type) {
	case *net.TCPAddr:
		if host == nil || port == nil {
			// A TCP connection whose server does not know its own address.
			return pooler, nil
		}
		if ip := net.ParseIP(*host); ip != nil && ip.Equal(peer.IP) && int(*port) == peer.Port {
			return server, nil
		}
		return pooler, nil
	case *net.UnixAddr:
		var dirs, sport string
		if err := conn.QueryRow(ctx, "SELECT current_setting('unix_socket_directories'), current_setting('port')", pgx.QueryExecModeSimpleProtocol).Scan(&dirs, &sport); err != nil {
			return unknown, err
		}
		if ownSocket(peer.Name, dirs, sport) {
			return server, nil
		}
	}
	return unknown, nil
}

// ownSocket reports whether path, the Unix socket a connection reached,
// is one of the server's own: a file named .s.PGSQL.<port> in one of its
// unix_socket_directories (dirs, comma-separated), port being its port.
// A pooler answers the same query with the server's settings, but its
// socket cannot be one of the server's: two listeners cannot bind one
// file, so a pooler on the server's directory has another port. A
// directory reached through a symbolic link is compared where it leads;
// anything not shown to be the server's own socket is not (a pooler, for
// all Config knows: unnamed statements).
func ownSocket(path, dirs, port string) bool {
	if path == "" || port == "" {
		return false
	}
	want := ".s.PGSQL." + port
	if filepath.Base(path) != want {
		return false
	}
	dir := resolved(filepath.Dir(path))
	for d := range strings.SplitSeq(dirs, ",") {
		d = strings.TrimSpace(d)
		if d == "" || strings.HasPrefix(d, "@") { // none, or Linux's abstract namespace
			continue
		}
		if resolved(d) == dir {
			return true
		}
	}
	return false
}

// resolved is dir cleaned, through its symbolic links when it exists.
func resolved(dir string) string {
	if r, err := filepath.EvalSymlinks(dir); err == nil {
		return r
	}
	return filepath.Clean(dir)
}

// NamesParam reports whether dsn sets the parameter name (pgx consumes
// default_query_exec_mode and pool_max_conns, so the parsed configuration
// cannot tell a default from a choice).
func NamesParam(dsn, name string) bool {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		u, err := url.Parse(dsn)
		return err == nil && u.Query().Has(name)
	}
	return regexp.MustCompile(`(^|\s)` + regexp.QuoteMeta(name) + `\s*=`).MatchString(dsn)
}
