package pgstore_test

import (
	"context"
	"net/url"
	"testing"

	"github.com/procurekit/procure/datafile"
	"github.com/procurekit/procure/internal/pgtest"
	"github.com/procurekit/procure/pgstore"
	"github.com/procurekit/procure/supplier"
	"github.com/procurekit/procure/supplier/suppliertest"
)

// The supplier conformance suite on a database whose own collation is
// Swedish (ICU), where "Ärzte" sorts after "Zed" and "ü" with "y": the
// order and the query are the store's (docs: paging.md "Ordering"), not
// the database's, because the keys are computed in Go and compared as
// bytes.
func TestSupplierStoreConformanceSwedishDatabase(t *testing.T) {
	suppliertest.Run(t, func(t *testing.T, f *datafile.File) supplier.Store {
		ctx := context.Background()
		dsn := databaseWithCollation(t, "sv")
		s, err := pgstore.Open(ctx, dsn)
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		t.Cleanup(s.Close)
		if err := s.Import(ctx, f); err != nil {
			t.Fatalf("Import: %v", err)
		}
		return s
	})
}

// databaseWithCollation creates a database whose default collation is
// ICU's for locale, next to a pgtest database, and drops it at the end.
func databaseWithCollation(t *testing.T, locale string) string {
	t.Helper()
	ctx := context.Background()
	base := pgtest.NewDatabase(t)
	conn := connect(t, base)
	var icu bool
	if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT FROM pg_collation WHERE collprovider = 'i')`).Scan(&icu); err != nil {
		t.Fatal(err)
	}
	if !icu {
		t.Skip("this PostgreSQL is built without ICU")
	}
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	name := u.Path[1:] + "_" + locale
	if _, err := conn.Exec(ctx, `CREATE DATABASE `+name+` TEMPLATE template0 ENCODING 'UTF8' LOCALE_PROVIDER icu ICU_LOCALE '`+locale+`' LOCALE 'C'`); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := conn.Exec(ctx, `DROP DATABASE IF EXISTS `+name+` WITH (FORCE)`); err != nil {
			t.Logf("drop database %s: %v", name, err)
		}
	})
	u.Path = "/" + name
	return u.String()
}
