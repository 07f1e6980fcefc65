package memstore_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/procurekit/procure"
	"github.com/procurekit/procure/memstore"
	"github.com/procurekit/procure/user"
)

// eofSignal closes eof when r has returned io.EOF.
type eofSignal struct {
	r    io.Reader
	eof  chan struct{}
	done bool
}

func (e *eofSignal) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err == io.EOF && !e.done {
		e.done = true
		close(e.eof)
	}
	return n, err
}

// An import raced by another community's create of a user with one of the
// file's ids ends one of two ways, never a third: the import wins (the
// create is refused, the file is imported whole) or the create wins (the
// import is refused with a conflict and stores nothing, the other
// community's user is left as it was created). Each round creates the
// file's last user id in the other community, starting with the import or
// once it has read its file.
func TestImportRacedByCreate(t *testing.T) {
	ctx := context.Background()
	const users = 2000
	var importWon, createWon int
	for round := range 30 {
		s := memstore.New()
		for _, c := range []string{"a", "b"} {
			if _, err := s.ImportStream(ctx, strings.NewReader(`{"communities": [{"id": "`+c+`", "region": "NZ"}]}`)); err != nil {
				t.Fatal(err)
			}
		}
		var file strings.Builder
		file.WriteString(`{"communities": [{"id": "a", "region": "NZ", "users": [`)
		for k := range users {
			if k > 0 {
				file.WriteString(",")
			}
			fmt.Fprintf(&file, `{"id": "u%d", "username": "imported%d", "email": "i@example.com"}`, k, k)
		}
		file.WriteString(`]}]}`)
		last := fmt.Sprintf("u%d", users-1)

		var wg sync.WaitGroup
		var importErr, createErr error
		started := make(chan struct{})
		wg.Add(2)
		go func() {
			defer wg.Done()
			// Even rounds start the create with the import, odd ones when
			// the import has read its file (and checks and applies it).
			var r io.Reader = strings.NewReader(file.String())
			if round%2 == 0 {
				close(started)
			} else {
				r = &eofSignal{r: r, eof: started}
			}
			_, importErr = s.ImportStream(ctx, r)
		}()
		go func() {
			defer wg.Done()
			<-started
			_, createErr = s.CreateUser(ctx, "b", user.User{ID: last, Username: "victim", Enabled: true})
		}()
		wg.Wait()

		imported := 0
		for k := range users {
			if _, err := s.UserByID(ctx, "a", fmt.Sprintf("u%d", k)); err == nil {
				imported++
			}
		}
		victim, verr := s.UserByID(ctx, "b", last)
		switch {
		case importErr == nil && errors.Is(createErr, user.ErrDuplicateID):
			if imported != users || verr == nil {
				t.Fatalf("round %d: the import won, but a holds %d of %d users and b's user is %+v, %v", round, imported, users, victim, verr)
			}
			importWon++
		case createErr == nil && errors.Is(importErr, procure.ErrConflict):
			if imported != 0 || verr != nil || victim.Username != "victim" || victim.Email != "" {
				t.Fatalf("round %d: the create won, but a holds %d users and b's user is %+v, %v", round, imported, victim, verr)
			}
			if !strings.HasPrefix(importErr.Error(), fmt.Sprintf("communities[0].users[%d].id: ", users-1)) {
				t.Fatalf("round %d: import error %v; want one naming communities[0].users[%d].id", round, importErr, users-1)
			}
			createWon++
		default:
			t.Fatalf("round %d: import %v, create %v: want exactly one of them refused, as a conflict or a duplicate id", round, importErr, createErr)
		}
	}
	t.Logf("the import won %d rounds, the create %d", importWon, createWon)
}
