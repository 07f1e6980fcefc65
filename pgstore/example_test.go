package pgstore_test

import (
	"context"
	"log"
	"net/http"
	"os"

	"github.com/procurekit/procure/datafile"
	"github.com/procurekit/procure/httpapi"
	"github.com/procurekit/procure/pgstore"
	"github.com/procurekit/procure/user"
)

// A service node on PostgreSQL: open the store (which creates or migrates
// the schema), import the data file (idempotent: every node may do it at
// start), and mount both APIs with the store in every role that memstore
// would play. Any number of nodes may run this against one database.
func Example() {
	ctx := context.Background()
	store, err := pgstore.Open(ctx, os.Getenv("DATABASE_URL")) // e.g. postgres://procure@localhost:5432/procure
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()

	f, err := datafile.ReadFile("data.json")
	if err != nil {
		log.Fatal(err)
	}
	if err := store.Import(ctx, f); err != nil {
		log.Fatal(err)
	}

	mux := http.NewServeMux()
	httpapi.MountSuppliers(mux, httpapi.SupplierOptions{Store: store, Tokens: store})
	httpapi.MountUsers(mux, httpapi.UserOptions{Users: user.NewService(store), Accounts: store})
	log.Fatal(http.ListenAndServe("localhost:8080", mux))
}
