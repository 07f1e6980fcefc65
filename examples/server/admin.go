package main

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"strings"

	"github.com/procurekit/procure/httpapi"
)

// adminTokenEnv names the environment variable that holds the admin token.
const adminTokenEnv = "PROCURE_ADMIN_TOKEN"

// newLogger is the program's logger on w, in cfg's format and level.
func newLogger(cfg config, w io.Writer) *slog.Logger {
	opts := &slog.HandlerOptions{Level: cfg.logLevel}
	return slog.New(httpapi.NewLogHandler(w, opts, cfg.logFormat == "json"))
}

// storeKind says which store serves, for the log: "memory", or
// "postgres" with the host and database but never the user or password.
func storeKind(cfg config) string {
	if cfg.postgres == "" {
		return "memory"
	}
	u, err := url.Parse(cfg.postgres)
	if err != nil || u.Scheme == "" {
		return "postgres" // a key=value DSN: nothing safe to show
	}
	return "postgres " + u.Host + u.Path
}

// adminToken is the admin token from the environment, or a new one (made
// is then true: it is printed once). A token from the environment must be
// at least httpapi.MinAdminTokenBytes long with no surrounding white space
// (a trailing newline from a file would never match a request's token).
func adminToken() (token string, made bool, err error) {
	token = os.Getenv(adminTokenEnv)
	switch {
	case token == "":
		var b [32]byte
		rand.Read(b[:]) // never fails (crypto/rand, Go 1.24+)
		return "procure_at_" + hex.EncodeToString(b[:]), true, nil
	case strings.TrimSpace(token) != token:
		return "", false, fmt.Errorf("%s starts or ends with white space; set it to the token alone", adminTokenEnv)
	case len(token) < httpapi.MinAdminTokenBytes:
		return "", false, fmt.Errorf("%s is %d bytes long; use at least %d (e.g. openssl rand -hex 32)", adminTokenEnv, len(token), httpapi.MinAdminTokenBytes)
	}
	return token, false, nil
}

// newAdminHandler mounts the admin API over store with cfg.adminToken.
func newAdminHandler(store backend, cfg config, log *slog.Logger) (http.Handler, error) {
	as, ok := store.(httpapi.AdminStore)
	if !ok {
		return nil, fmt.Errorf("-admin-addr: the %s store does not support the admin API's writes", storeKind(cfg))
	}
	mux := http.NewServeMux()
	httpapi.MountAdmin(mux, httpapi.AdminOptions{
		Token:          cfg.adminToken,
		Store:          as,
		Import:         importFunc(store, log),
		MaxImportBytes: cfg.maxImport,
		Logger:         log,
		Guard:          cfg.guard,
	})
	return mux, nil
}

// printAdminBanner tells where the admin API is and, when the server made
// the token, the token: printed this once, never logged.
func printAdminBanner(w io.Writer, base, generated string) {
	if base == "" {
		return
	}
	fmt.Fprintf(w, "admin API on %s%s (OpenAPI: %s%s/openapi.json)\n", base, httpapi.AdminBasePath, base, httpapi.AdminBasePath)
	if generated != "" {
		fmt.Fprintf(w, "  admin token (shown once; set %s to choose your own): %s\n", adminTokenEnv, generated)
	} else {
		fmt.Fprintf(w, "  admin token: from %s\n", adminTokenEnv)
	}
	fmt.Fprintln(w)
}
